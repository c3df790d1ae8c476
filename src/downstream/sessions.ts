/**
 * Open downstream sessions and the delivery of catalog changes to them: each
 * session gets one `notifications/prompts/list_changed` per coalesced burst. A
 * session with no open stream to receive it (Streamable HTTP without a GET
 * stream) keeps the notification pending and gets it when a stream opens.
 */
import type { Server } from '@modelcontextprotocol/server';
import type { CatalogChange } from '../catalog/catalog.js';
import type { Bus } from '../lib/bus.js';
import { describeError, type Logger } from '../observability/logger.js';

export interface Session {
    readonly id: string;
    readonly server: Server;
    notificationPending: boolean;
    /** Whether the session can receive a server-initiated message now. */
    readonly canReceive: () => boolean;
}

export class SessionRegistry {
    readonly #sessions = new Map<string, Session>();
    readonly #unsubscribe: () => void;

    constructor(
        changes: Bus<CatalogChange>,
        private readonly logger: Logger
    ) {
        this.#unsubscribe = changes.subscribe(() => {
            for (const session of this.#sessions.values()) this.notify(session);
        });
    }

    add(session: Session): void {
        this.#sessions.set(session.id, session);
    }

    /** Forgets the session; closing its transport is the caller's business. */
    delete(id: string): boolean {
        return this.#sessions.delete(id);
    }

    notify(session: Session): void {
        if (!session.canReceive()) {
            session.notificationPending = true;
            return;
        }
        session.notificationPending = false;
        session.server.sendPromptListChanged().catch((error: unknown) => {
            this.logger.debug({ session: session.id, err: describeError(error) }, 'list_changed not delivered');
        });
    }

    /** Delivers a notification held back while the session had no stream. */
    flushPending(session: Session): void {
        if (session.notificationPending) this.notify(session);
    }

    close(): void {
        this.#unsubscribe();
        this.#sessions.clear();
    }
}
