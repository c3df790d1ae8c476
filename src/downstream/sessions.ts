/**
 * Downstream 2025-era sessions, in one table. A session is a small record,
 * what `initialize` settled, sealed into its id (session-seal.ts) so that any
 * replica can serve it: the table holds the sessions this process is serving
 * now, opened here or brought in from an id sealed elsewhere, with what lives
 * only here: open responses, the place in change delivery (its requests in
 * flight are the registry's, scoped by the session's id: requests.ts), and the
 * gateway's own requests to its client (client-requests.ts: what an upstream
 * asks, within what the client declared at initialize, which the record keeps).
 * No SDK server or transport per session.
 */
import type { JSONRPCResponse } from '@modelcontextprotocol/client';
import type { Caller } from '../catalog/service.js';
import { UpstreamRejectedError } from '../catalog/upstream-port.js';
import { GatewayConfigSchema } from '../config/schema.js';
import { missingCapabilityError } from '../protocol/errors.js';
import { capabilitiesOfBits, missingNeed, type InputAnswer, type InputCapabilities, type InputRequest } from '../protocol/input-requests.js';
import type { ClientInput } from '../catalog/interaction.js';
import { mintInstanceTag } from '../lib/instance-tag.js';
import { askIds, ClientRequests, type ClientRequestsOptions, type SendToClient } from './client-requests.js';
import type { Audience, ChangeDelivery } from './delivery.js';
import type { CacheScope, RequestContext } from './dispatcher.js';
import type { RequestRegistry } from './requests.js';
import type { SessionRevocations } from './revocations.js';
import { revisionOrLatest, type Revision } from '../protocol/revisions.js';
import type { SealedSession, SessionSeal } from './session-seal.js';

/** What replicas share of sessions (cluster/shared-sessions.ts): quotas and last uses. */
export interface SharedSessionState {
    /** Whether the quota key had room for the session; undefined when the shared state cannot say now. */
    admit(session: SealedSession, max: number): Promise<boolean | undefined>;
    release(session: SealedSession): void;
    seen(nonce: string, at: number): void;
    /** Last use on any replica, per nonce; undefined when the shared state cannot say now. */
    lastSeen(nonces: readonly string[]): Promise<(number | undefined)[] | undefined>;
    /** How late another replica's use may be written: a last use read is that much behind at most. */
    readonly lagMs: number;
}

export interface SessionRecord extends SealedSession {
    readonly id: string;
    /** When this process last served it. */
    lastSeen: number;
}

export type SessionTransport = 'http' | 'stdio';

export class Session implements RequestContext {
    /** Only 2026-07-28 list pages carry a cache scope; a session's never do. */
    readonly cacheScope: CacheScope = 'private';
    /** HTTP responses still open, the GET stream included: a session with one is never idle. */
    openResponses = 0;
    #record: SessionRecord;
    #revision: Revision;
    #input: InputCapabilities;
    /** The gateway's requests to the client, from the first one on. */
    #asks: ClientRequests | undefined;

    constructor(
        record: SessionRecord,
        readonly transport: SessionTransport,
        readonly caller: Caller,
        /** Where catalog changes reach this session. */
        readonly audience: Audience,
        private readonly asking: ClientRequestsOptions
    ) {
        this.#record = record;
        this.#revision = revisionOrLatest(record.protocolVersion);
        this.#input = capabilitiesOfBits(record.input ?? 0);
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

    /** What the client declared at initialize it can be asked (elicitation, sampling, roots), normalised. */
    get input(): InputCapabilities {
        return this.#input;
    }

    /** The gateway's requests out to the client now. */
    get asksOut(): number {
        return this.#asks?.size ?? 0;
    }

    /** A new `initialize` on a connection that is its own session (stdio). */
    renegotiate(record: SessionRecord): void {
        this.#record = record;
        this.#revision = revisionOrLatest(record.protocolVersion);
        this.#input = capabilitiesOfBits(record.input ?? 0);
    }

    /**
     * The client as the catalog asks it while serving one of its requests: on that request's stream (`send`; none:
     * it cannot be asked), within what it declared. The revision is read now: a request is served in the revision
     * it came in.
     */
    clientInput(send: SendToClient | undefined): ClientInput {
        const revision = this.#revision;
        const capabilities = this.#input;
        const ask = send === undefined ? undefined : (request: InputRequest, signal: AbortSignal) => this.#ask(request, revision, send, signal);
        return { capabilities, revision, ask, holder: '' };
    }

    /** What the client declared is checked here too: nothing it cannot answer is ever put to it. */
    #ask(request: InputRequest, revision: Revision, send: SendToClient, signal: AbortSignal): Promise<InputAnswer> {
        const need = missingNeed(this.#input, request);
        if (need !== undefined) {
            const { message, code, data } = missingCapabilityError(need);
            return Promise.reject(new UpstreamRejectedError(message, code, data));
        }
        this.#asks ??= new ClientRequests(this.asking, cancelled => this.audience.subscriber?.deliver(cancelled));
        return this.#asks.ask(request, revision, send, signal);
    }

    /** A response from the client: whether it answered a request of the gateway's that is out (client-requests.ts). */
    answered(response: JSONRPCResponse): boolean {
        return this.#asks?.take(response) ?? false;
    }

    touch(): void {
        this.#record.lastSeen = Date.now();
    }

    /** Nothing open and nothing asked since `time`. */
    idleSince(time: number): boolean {
        return this.openResponses === 0 && this.#record.lastSeen < time;
    }

    /** Leaves change delivery; the gateway's requests to the client end (their askers get an error). */
    end(): void {
        this.audience.leave();
        this.#asks?.cancelAll('The session ended before the client answered');
    }
}

export interface SessionTableOptions {
    delivery: ChangeDelivery;
    /** The caller a client's requests are served as (its policy is read per request). */
    callerFor: (clientId: string) => Caller;
    seal: SessionSeal;
    revocations: SessionRevocations;
    /** Requests in flight: a session's end cancels its own (their answers are dropped). */
    requests: RequestRegistry;
    /** Most sessions held at once (opened here or brought in). */
    max: number;
    /** sessions.maxLifetimeMs: how long a revocation by reload must be remembered (default: for good). */
    maxLifetimeMs?: number;
    /** Shared with other replicas (cluster.redis); without it, quotas and idleness are this process's own. */
    shared?: SharedSessionState | undefined;
    /** The gateway's requests to clients (default: a random instance tag, the config's answerTimeoutMs). */
    asking?: SessionAsking | undefined;
}

/** What the gateway's requests to its sessions' clients share. */
export interface SessionAsking {
    /** This gateway's instance tag (mintInstanceTag): every request id names it, so a replica tells its answers apart. */
    instance: string;
    /** inputRequests.answerTimeoutMs, read per request. */
    timeoutMs: () => number;
}

/** Without `asking`: the config's default answerTimeoutMs. */
const DEFAULT_ANSWER_TIMEOUT_MS = GatewayConfigSchema.shape.inputRequests.parse(undefined).answerTimeoutMs;

export type IdleVerdict = 'ended' | 'let-go' | 'keep';

/** Why a session id serves nothing: unknown, ended, expired or another client's (404), or no room here (503). */
export type SessionRefusal = 'session_not_found' | 'too_many_sessions';

export class SessionTable {
    readonly #sessions = new Map<string, Session>();
    /** Sessions held per quota key (see SealedSession.quotaKey). */
    readonly #perQuota = new Map<string, number>();
    /** Client id -> when a reload revoked its credentials: its sessions opened before then are over. */
    readonly #revokedAt = new Map<string, number>();

    /** This gateway's instance tag: the first part of every id of its requests to clients. */
    readonly instance: string;
    /** One id space for every session's requests to its client (a session's second life here never reuses one). */
    readonly #asking: ClientRequestsOptions;

    constructor(private readonly options: SessionTableOptions) {
        const { instance = mintInstanceTag(), timeoutMs = () => DEFAULT_ANSWER_TIMEOUT_MS } = options.asking ?? {};
        this.instance = instance;
        this.#asking = { mintId: askIds(instance), timeoutMs };
    }

    get size(): number {
        return this.#sessions.size;
    }

    /** Whether a new session would find room. */
    get full(): boolean {
        return this.#sessions.size >= this.options.max;
    }

    /** Held sessions by transport. */
    counts(): Record<SessionTransport, number> {
        const counts = { http: 0, stdio: 0 };
        for (const session of this.#sessions.values()) counts[session.transport]++;
        return counts;
    }

    /** The gateway's requests out to every session's client now. */
    asksOut(): number {
        let out = 0;
        for (const session of this.#sessions.values()) out += session.asksOut;
        return out;
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

    /** A new HTTP session: its id is the record sealed. */
    create(fields: Omit<SealedSession, 'nonce'>): Session {
        const { id, sealed } = this.options.seal.seal(fields);
        return this.open({ id, ...sealed, lastSeen: fields.createdAt }, 'http');
    }

    /**
     * The session an HTTP request names, held here or brought in from its sealed id: refused when the id opens
     * nowhere, has expired, was ended, or is another client's.
     */
    resolve(id: string, clientId: string, now: number): Session | SessionRefusal {
        const held = this.#sessions.get(id);
        const record = held?.record ?? this.options.seal.open(id, now);
        if (record === undefined || record.clientId !== clientId) return 'session_not_found';
        if (record.expiresAt <= now || this.options.revocations.has(record.nonce) || this.#revokedSince(record)) {
            if (held !== undefined) this.close(id);
            return 'session_not_found';
        }
        if (held !== undefined) return held;
        if (this.full) return 'too_many_sessions';
        return this.open({ id, ...record, lastSeen: now }, 'http');
    }

    open(record: SessionRecord, transport: SessionTransport): Session {
        const session = new Session(record, transport, this.options.callerFor(record.clientId), this.options.delivery.join(record.id, record.clientId), this.#asking);
        this.#sessions.set(record.id, session);
        this.#perQuota.set(record.quotaKey, this.countOf(record.quotaKey) + 1);
        return session;
    }

    /**
     * Counts a session just created against its client's quota, shared by the replicas when they share state (else,
     * or while the shared state cannot say, the sessions held here): false, and the session let go, when full.
     */
    async admit(session: Session, max: number): Promise<boolean> {
        const shared = await this.options.shared?.admit(session.record, max);
        // Held here already counts this one.
        if (shared ?? this.countOf(session.record.quotaKey) <= max) return true;
        this.close(session.id);
        return false;
    }

    /** The session was used now (what tells idle sessions apart, on every replica when they share state). */
    touch(session: Session): void {
        session.touch();
        this.options.shared?.seen(session.record.nonce, session.record.lastSeen);
    }

    /** Ends the session everywhere (DELETE, idle expiry): revoked, then closed here. */
    async end(session: Session): Promise<void> {
        const { nonce, expiresAt } = session.record;
        this.close(session.id);
        this.options.shared?.release(session.record);
        await this.options.revocations.add(nonce, expiresAt);
    }

    /**
     * A reload removed these clients or changed their credentials: every HTTP session of theirs ends (held here: ended
     * everywhere, its stream closed; sealed elsewhere: its id no longer opens here). Stdio has no credentials to revoke.
     * Resolves with how many sessions were held here, and how many of those had their GET stream open.
     */
    async endClients(clientIds: ReadonlySet<string>, now: number): Promise<{ sessions: number; streams: number }> {
        for (const [clientId, at] of this.#revokedAt) if (at <= now - (this.options.maxLifetimeMs ?? Infinity)) this.#revokedAt.delete(clientId);
        for (const clientId of clientIds) this.#revokedAt.set(clientId, now);
        const ending = [...this.#sessions.values()].filter(session => session.transport === 'http' && clientIds.has(session.record.clientId));
        const streams = ending.filter(session => session.audience.subscriber !== undefined).length;
        await Promise.all(ending.map(session => this.end(session)));
        return { sessions: ending.length, streams };
    }

    /** Opened before a reload revoked its client's credentials. */
    #revokedSince(record: SealedSession): boolean {
        const revokedAt = this.#revokedAt.get(record.clientId);
        return revokedAt !== undefined && record.createdAt < revokedAt;
    }

    /**
     * What becomes of sessions idle here. Nothing shared: they ended. Shared: 'ended' once quiet on every replica (by
     * their shared last use, which may be `lagMs` late); 'let-go' here when used on another replica since, or while
     * the shared state cannot say (the id stays good); 'keep' while the replica that saw the last use waits for the
     * quiet to show everywhere.
     */
    async judgeIdle(idle: readonly Session[], since: number): Promise<IdleVerdict[]> {
        const shared = this.options.shared;
        if (shared === undefined) return idle.map(() => 'ended');
        const lastSeen = await shared.lastSeen(idle.map(session => session.record.nonce));
        if (lastSeen === undefined) return idle.map(() => 'let-go');
        return idle.map((session, index) => {
            const anywhere = lastSeen[index] ?? session.record.lastSeen;
            if (anywhere > session.record.lastSeen) return 'let-go';
            return anywhere < since - shared.lagMs ? 'ended' : 'keep';
        });
    }

    /** Stops serving the session here (its id still opens elsewhere); false when it was not (or no longer) held. */
    close(id: string): boolean {
        const session = this.#sessions.get(id);
        if (session === undefined) return false;
        this.#sessions.delete(id);
        const quotaKey = session.record.quotaKey;
        const left = this.countOf(quotaKey) - 1;
        if (left > 0) this.#perQuota.set(quotaKey, left);
        else this.#perQuota.delete(quotaKey);
        session.end();
        this.options.requests.cancelScope(id);
        return true;
    }
}
