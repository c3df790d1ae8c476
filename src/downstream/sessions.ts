/**
 * Downstream 2025-era sessions, in one table. A session is a small record,
 * what `initialize` settled (the only part another process would need: it is
 * what a sealed session id would carry), plus what lives only here while the
 * client is connected: its requests in flight, its open responses, and its
 * place in change delivery. No SDK server or transport per session.
 */
import type { Caller } from '../catalog/service.js';
import type { RequestId } from '../lib/json-rpc.js';
import type { Audience, ChangeDelivery } from './delivery.js';
import type { CacheScope, RequestContext } from './dispatcher.js';
import { revisionOf, type Revision } from './revisions.js';

export interface SessionRecord {
    readonly id: string;
    /** Only requests proving this client may use the session. */
    readonly clientId: string;
    /** Whose session quota it counts against: the client, or for the anonymous client the address that opened it. */
    readonly quotaKey: string;
    readonly protocolVersion: string;
    readonly clientCapabilities: Record<string, unknown>;
    readonly clientInfo: { readonly name: string; readonly version: string };
    /** Whether the gateway declared `completions` at initialize: completion/complete is served only then. */
    readonly completions: boolean;
    readonly createdAt: number;
    lastSeen: number;
}

export type SessionTransport = 'http' | 'stdio';

export class Session implements RequestContext {
    /** Only 2026-07-28 list pages carry a cache scope; a session's never do. */
    readonly cacheScope: CacheScope = 'private';
    /** Requests in flight by JSON-RPC id: `notifications/cancelled` and the end of the session abort them. */
    readonly requests = new Map<RequestId, AbortController>();
    /** HTTP responses still open, the GET stream included: a session with one is never idle. */
    openResponses = 0;
    #record: SessionRecord;
    #revision: Revision;

    constructor(
        record: SessionRecord,
        readonly transport: SessionTransport,
        readonly caller: Caller,
        /** Where catalog changes reach this session. */
        readonly audience: Audience
    ) {
        this.#record = record;
        this.#revision = revisionOf(record.protocolVersion);
    }

    get id(): string {
        return this.#record.id;
    }

    get record(): SessionRecord {
        return this.#record;
    }

    get completions(): boolean {
        return this.#record.completions;
    }

    /** What the session's protocol revision can carry. */
    get revision(): Revision {
        return this.#revision;
    }

    /** A new `initialize` on a connection that is its own session (stdio). */
    renegotiate(record: SessionRecord): void {
        this.#record = record;
        this.#revision = revisionOf(record.protocolVersion);
    }

    touch(): void {
        this.#record.lastSeen = Date.now();
    }

    /** Nothing open and nothing asked since `time`. */
    idleSince(time: number): boolean {
        return this.openResponses === 0 && this.#record.lastSeen < time;
    }

    /** Cancels every request in flight (their answers are dropped) and leaves change delivery. */
    end(): void {
        for (const request of this.requests.values()) request.abort();
        this.requests.clear();
        this.audience.leave();
    }
}

export interface SessionTableOptions {
    delivery: ChangeDelivery;
    /** The caller a client's requests are served as (its policy is read per request). */
    callerFor: (clientId: string) => Caller;
}

export class SessionTable {
    readonly #sessions = new Map<string, Session>();
    /** Open sessions per quota key (see SessionRecord.quotaKey). */
    readonly #perQuota = new Map<string, number>();

    constructor(private readonly options: SessionTableOptions) {}

    get size(): number {
        return this.#sessions.size;
    }

    /** Open sessions by transport. */
    counts(): Record<SessionTransport, number> {
        const counts = { http: 0, stdio: 0 };
        for (const session of this.#sessions.values()) counts[session.transport]++;
        return counts;
    }

    get(id: string): Session | undefined {
        return this.#sessions.get(id);
    }

    /** The caller a client's requests are served as (also for 2026-07-28 requests, which have no session). */
    callerFor(clientId: string): Caller {
        return this.options.callerFor(clientId);
    }

    values(): IterableIterator<Session> {
        return this.#sessions.values();
    }

    countOf(quotaKey: string): number {
        return this.#perQuota.get(quotaKey) ?? 0;
    }

    open(record: SessionRecord, transport: SessionTransport): Session {
        const session = new Session(record, transport, this.options.callerFor(record.clientId), this.options.delivery.join(record.id, record.clientId));
        this.#sessions.set(record.id, session);
        this.#perQuota.set(record.quotaKey, this.countOf(record.quotaKey) + 1);
        return session;
    }

    /** Ends the session and forgets it; false when it was not (or no longer) open. */
    close(id: string): boolean {
        const session = this.#sessions.get(id);
        if (session === undefined) return false;
        this.#sessions.delete(id);
        const quotaKey = session.record.quotaKey;
        const left = this.countOf(quotaKey) - 1;
        if (left > 0) this.#perQuota.set(quotaKey, left);
        else this.#perQuota.delete(quotaKey);
        session.end();
        return true;
    }
}
