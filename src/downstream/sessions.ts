/**
 * Open downstream sessions and the delivery of catalog changes to them.
 *
 * Each session remembers the fingerprint of the list it can see. A published
 * change notifies only the sessions whose fingerprint changed, once per
 * coalesced burst. A session with no open stream to receive it (Streamable
 * HTTP without a GET stream) keeps the notification pending and gets it when a
 * stream opens.
 */
import type { Server } from '@modelcontextprotocol/server';
import type { CatalogChange, CatalogView } from '../catalog/catalog.js';
import type { Bus } from '../lib/bus.js';
import { describeError, type Logger } from '../observability/logger.js';

/** A session's MCP server and the scope of the caller it serves. */
export interface SessionServer {
    server: Server;
    scope: string;
}

export type SessionTransport = 'http' | 'stdio';

export interface Session {
    readonly id: string;
    readonly transport: SessionTransport;
    readonly server: Server;
    /** Sessions with the same scope see the same prompts. */
    readonly scope: string;
    /** Fingerprint of the list this session was last told about. */
    fingerprint?: string | undefined;
    notificationPending: boolean;
    /** Whether the session can receive a server-initiated message now. */
    readonly canReceive: () => boolean;
}

export interface SessionRegistryOptions {
    changes: Bus<CatalogChange>;
    /** The view clients currently know: the baseline of a new session. */
    currentView: () => CatalogView | undefined;
    /** What a scope sees of a view, as a digest; cached by the caller, which drops it when the rules change. */
    fingerprint: (view: CatalogView, scope: string) => string;
    /** A list_changed notification was handed to a session's transport. */
    onNotified?: () => void;
    logger: Logger;
}

export class SessionRegistry {
    readonly #sessions = new Map<string, Session>();
    readonly #unsubscribe: () => void;

    constructor(private readonly options: SessionRegistryOptions) {
        this.#unsubscribe = options.changes.subscribe(change => this.#onChange(change.view));
    }

    get size(): number {
        return this.#sessions.size;
    }

    /** Open sessions by transport. */
    counts(): Record<SessionTransport, number> {
        const counts = { http: 0, stdio: 0 };
        for (const session of this.#sessions.values()) counts[session.transport]++;
        return counts;
    }

    /**
     * Never throws: it runs inside the transport's handling of initialize. A baseline that cannot be taken is left
     * unknown, so the next published change notifies the session (at worst once too often).
     */
    add(session: Session): void {
        try {
            const view = this.options.currentView();
            session.fingerprint = view === undefined ? undefined : this.options.fingerprint(view, session.scope);
        } catch (error) {
            session.fingerprint = undefined;
            this.options.logger.error({ session: session.id, err: describeError(error) }, 'view fingerprint failed; the session is notified of the next change');
        }
        this.#sessions.set(session.id, session);
    }

    /** Forgets the session; closing its transport is the caller's business. */
    delete(id: string): boolean {
        return this.#sessions.delete(id);
    }

    /** Delivers a notification held back while the session had no stream. */
    flushPending(session: Session): void {
        if (session.notificationPending) this.#notify(session);
    }

    close(): void {
        this.#unsubscribe();
        this.#sessions.clear();
    }

    #onChange(view: CatalogView): void {
        for (const session of this.#sessions.values()) {
            const fingerprint = this.options.fingerprint(view, session.scope);
            if (fingerprint === session.fingerprint) continue;
            session.fingerprint = fingerprint;
            this.#notify(session);
        }
    }

    #notify(session: Session): void {
        if (!session.canReceive()) {
            session.notificationPending = true;
            return;
        }
        session.notificationPending = false;
        this.options.onNotified?.();
        session.server.sendPromptListChanged().catch((error: unknown) => {
            this.options.logger.debug({ session: session.id, err: describeError(error) }, 'list_changed not delivered');
        });
    }
}
