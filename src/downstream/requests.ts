/**
 * One registry of the client requests in flight, for both transports: what
 * `notifications/cancelled` names, what a session's end or a client gone
 * cancels, what a shutdown waits for and then cancels. A request is in flight
 * from the moment it is taken until its answer is written (HTTP: its response
 * closed; stdio: its line written), so a shutdown never closes under an answer.
 *
 * Ids are unique per scope while in flight (MCP: ids are unique per sender
 * among its requests in flight; a second one would make a cancellation
 * ambiguous): a session's id, `stdio` (one channel: its 2025 session and its
 * 2026-07-28 requests share one id space), or a 2026-07-28 HTTP POST of its
 * own (its response object). A scope holding one request keeps it without a
 * map of its own: the common case costs one Map entry per request.
 */
import type { JSONRPCNotification } from '@modelcontextprotocol/client';
import { cancelledRequestId, type RequestId } from '../protocol/json-rpc.js';
import { whenIdle } from '../lib/when-idle.js';
import type { CancelSignal } from '../lib/cancel-signal.js';

/** Whose id space a request's id is unique in (see above). */
export type RequestScope = string | object;

/** A call is answered once; a listen (2026-07-28 subscriptions/listen) stays open until either side ends it. */
export type RequestKind = 'call' | 'listen';

/** Why a request was not taken: its id is in use in its scope, or the gateway is stopping. */
export type BeginRefusal = 'duplicate_id' | 'shutting_down';

/** The abort reason of a request the gateway stopped waiting for at shutdown: it is answered -32603, not dropped. */
const SHUTDOWN = new Error('Gateway is shutting down; the request was cancelled');

/** The abort reason of a request its client cancelled, or whose client or session went away: no answer is due. */
const CANCELLED = new Error('Request cancelled');

/** Whether `signal` was aborted by a shutdown (answer with an error) rather than by its client (answer nothing). */
export function abortedByShutdown(signal: CancelSignal): boolean {
    return signal.aborted && signal.reason === SHUTDOWN;
}

/**
 * One request in flight: aborted, it stops its work (it is the CancelSignal its calls are given); `done` once its
 * answer is written (or none is due). No AbortController: its signal alone cost ~10 us of CPU per request (with its
 * collection), and a request is rarely cancelled; its listeners are a plain list.
 */
export class Ticket implements CancelSignal {
    #open = true;
    /** Set once aborted: what it was aborted with. */
    #reason: Error | undefined;
    #listeners: (() => void)[] | undefined;
    /** What an abort ends besides its listeners: the wait of `until`, if one is under way. */
    #onAbort: ((reason: unknown) => void) | undefined;

    constructor(
        readonly scope: RequestScope,
        readonly id: RequestId,
        readonly kind: RequestKind,
        private readonly registry: RequestRegistry
    ) {}

    get aborted(): boolean {
        return this.#reason !== undefined;
    }

    get reason(): Error | undefined {
        return this.#reason;
    }

    /** As on an AbortSignal: called once on abort, unless removed first; never when added once aborted, nor twice. */
    addEventListener(_type: 'abort', listener: () => void): void {
        if (this.#reason !== undefined) return;
        if (this.#listeners === undefined) this.#listeners = [listener];
        else if (!this.#listeners.includes(listener)) this.#listeners.push(listener);
    }

    removeEventListener(_type: 'abort', listener: () => void): void {
        const index = this.#listeners?.indexOf(listener) ?? -1;
        if (index >= 0) this.#listeners!.splice(index, 1);
    }

    /** Once: its listeners are called, and the wait of `until` ends with `reason`. */
    abort(reason: Error): void {
        if (this.#reason !== undefined) return;
        this.#reason = reason;
        const listeners = this.#listeners;
        this.#listeners = undefined;
        for (const listener of listeners ?? []) {
            try {
                listener();
            } catch (error) {
                // As an AbortSignal's listener that throws: reported as uncaught, and the others still called.
                process.nextTick(() => {
                    throw error;
                });
            }
        }
        this.#onAbort?.(reason);
    }

    /**
     * `work`, or the abort reason as soon as the ticket is aborted: work that takes no signal (or is shared by other
     * waiters) still lets its request go. As lib/until-aborted.ts for a signal, but through a slot the ticket's abort
     * calls rather than a listener added and removed per request. One wait at a time: a request's service call.
     */
    until<T>(work: Promise<T>): Promise<T> {
        if (this.#reason !== undefined) return Promise.reject(this.#reason);
        return new Promise<T>((resolve, reject) => {
            this.#onAbort = reject;
            work.then(resolve, reject);
        });
    }

    /** The client cancelled it or went away: its work stops and no answer is sent. */
    cancel(): void {
        this.abort(CANCELLED);
    }

    done(): void {
        if (!this.#open) return;
        this.#open = false;
        this.registry.finish(this);
    }
}

type ScopeEntry = Ticket | Map<RequestId, Ticket>;

export class RequestRegistry {
    readonly #scopes = new Map<RequestScope, ScopeEntry>();
    readonly #counts: Record<RequestKind, number> = { call: 0, listen: 0 };
    readonly #idle: (() => void)[] = [];
    /** Work a transport has taken that is no request yet (an HTTP body being read): a shutdown waits for it too. */
    #held = 0;
    #refusing = false;

    countOf(kind: RequestKind): number {
        return this.#counts[kind];
    }

    /** Work taken that is no request yet (see hold). */
    get held(): number {
        return this.#held;
    }

    begin(scope: RequestScope, id: RequestId, kind: RequestKind): Ticket | BeginRefusal {
        if (this.#refusing) return 'shutting_down';
        const entry = this.#scopes.get(scope);
        if (entry instanceof Ticket ? entry.id === id : entry?.has(id)) return 'duplicate_id';
        const ticket = new Ticket(scope, id, kind, this);
        if (entry === undefined) this.#scopes.set(scope, ticket);
        else if (entry instanceof Ticket)
            this.#scopes.set(
                scope,
                new Map([
                    [entry.id, entry],
                    [id, ticket]
                ])
            );
        else entry.set(id, ticket);
        this.#counts[kind]++;
        return ticket;
    }

    /** `notifications/cancelled` from the client of `scope`: the request it names stops, unanswered. */
    cancelNamed(notification: JSONRPCNotification, scope: RequestScope): void {
        if (notification.method !== 'notifications/cancelled') return;
        const id = cancelledRequestId(notification);
        if (id !== undefined) this.#ticket(scope, id)?.cancel();
    }

    /** Every request of the scope stops, unanswered (its session ended, its channel closed). */
    cancelScope(scope: RequestScope): void {
        for (const ticket of this.#ticketsOf(scope)) ticket.cancel();
    }

    /** New requests are refused (`shutting_down`); those in flight carry on. */
    refuseNew(): void {
        this.#refusing = true;
    }

    /** Every request in flight stops and is answered -32603 (see abortedByShutdown); later ones are refused. */
    cancelAll(): void {
        this.#refusing = true;
        for (const scope of [...this.#scopes.keys()]) for (const ticket of this.#ticketsOf(scope)) ticket.abort(SHUTDOWN);
    }

    /** Resolves true once no call (and no held work) is left, or false after `timeoutMs`; listens are closed apart. */
    settled(timeoutMs: number): Promise<boolean> {
        return whenIdle(() => this.#idleNow(), this.#idle, timeoutMs);
    }

    /** Counts work that is not a request yet until the returned function is called (once is enough; more are ignored). */
    hold(): () => void {
        this.#held++;
        let held = true;
        return () => {
            if (!held) return;
            held = false;
            this.#held--;
            this.#wake();
        };
    }

    /** @internal a ticket's `done` */
    finish(ticket: Ticket): void {
        const entry = this.#scopes.get(ticket.scope);
        if (entry === ticket) this.#scopes.delete(ticket.scope);
        else if (entry instanceof Map && entry.get(ticket.id) === ticket) {
            entry.delete(ticket.id);
            if (entry.size === 0) this.#scopes.delete(ticket.scope);
        }
        this.#counts[ticket.kind]--;
        this.#wake();
    }

    #ticket(scope: RequestScope, id: RequestId): Ticket | undefined {
        const entry = this.#scopes.get(scope);
        return entry instanceof Ticket ? (entry.id === id ? entry : undefined) : entry?.get(id);
    }

    #ticketsOf(scope: RequestScope): Ticket[] {
        const entry = this.#scopes.get(scope);
        return entry === undefined ? [] : entry instanceof Ticket ? [entry] : [...entry.values()];
    }

    #idleNow(): boolean {
        return this.#counts.call === 0 && this.#held === 0;
    }

    #wake(): void {
        if (this.#idleNow()) for (const resolve of this.#idle.splice(0)) resolve();
    }
}
