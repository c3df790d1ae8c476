/**
 * The gateway's own JSON-RPC client of one upstream connection, in place of
 * the SDK's Client on the request path: request ids, the requests in flight,
 * their timeouts (restarted by progress when asked, bounded in all), their
 * cancellation (`notifications/cancelled`, which also aborts an HTTP exchange),
 * progress, the upstream's own notifications and requests. What it needs of a
 * message was checked where the message entered (the transports parse and
 * check each envelope once), so nothing here parses or serialises again.
 *
 * What an upstream may send back is answers to requests in flight and progress
 * for them, besides its own notifications and requests. An answer or progress
 * for a request the client gave up on (timed out or cancelled) may still be on
 * its way when the client gives up: the race every revision tells both sides
 * to expect, so it is dropped quietly. Anything else (an answer to no request
 * ever sent, a second answer, progress under a token never given) is dropped
 * and reported as a stray, never looked into.
 *
 * A 2025 upstream's requests to the client (elicitation, sampling, roots) are
 * relayed to the client request that caused them, where they can be tied to
 * it (`InputRelay`): one on the answer stream of a `prompts/get` is that get's;
 * one on no stream of a request is the get's in flight when it is the only one
 * (`sole`, `exclusive`). The get's `onInputRequest` answers it, while the get's
 * timeout is paused; a handler that rejects ends the get (cancelled, then its
 * request answered with an error), and the get's end aborts every request of
 * the upstream still out for it and answers each: at once when the get was
 * answered, after the cancellation when it was cancelled (see `#cancel`). What
 * cannot be tied is answered by the gateway (no roots, or an error naming the
 * fix), never put to a client who may not be the one it was meant for.
 *
 * The client is era-agnostic: what the handshake settles (see handshake.ts)
 * and what each request carries are its caller's business.
 */
import { ProtocolError, SdkError, SdkErrorCode, type JSONRPCMessage, type Progress } from '@modelcontextprotocol/client';
import type { FaultKind } from '../diagnostics/faults.js';
import { withDeadline } from '../lib/deadline.js';
import { CODE, type RpcError } from '../protocol/errors.js';
import {
    AMBIGUOUS_INPUT_REQUEST,
    INPUT_METHODS,
    readInputRequest,
    UNRELATED_INPUT_REQUEST,
    type InputAnswer,
    type InputMethod,
    type InputRequest,
    type RelayPlan
} from '../protocol/input-requests.js';
import type { RequestId } from '../protocol/json-rpc.js';
import { META, traceEntries, type TraceContext } from '../protocol/meta.js';
import type { ResultGuard } from './result-schemas.js';
import { UpstreamFailedError, UpstreamRejectedError, type Forwarded } from '../catalog/upstream-port.js';
import type { UpstreamTransport } from './transports.js';
import type { CancelSignal } from '../lib/cancel-signal.js';

interface RpcRequestOptions {
    /**
     * How long to wait for the answer; with onProgress, each progress notification restarts this wait. Infinity: no
     * limit (a long-lived request, such as subscriptions/listen, which the connection's end settles).
     */
    timeoutMs: number;
    /** With onProgress: the longest the request may take in all, however much progress comes. */
    maxTotalTimeoutMs?: number | undefined;
    signal?: CancelSignal | undefined;
    /** Asks the upstream for progress (under a token of the client's own) and hears it. */
    onProgress?: ((progress: Progress) => void) | undefined;
    /**
     * For a `subscriptions/listen` request: hears `notifications/subscriptions/acknowledged` for it (the notification
     * names the request's id), with the notification types the upstream agreed to send.
     */
    onAcknowledged?: ((notifications: Params) => void) | undefined;
    /** What the request carries of the client request it serves; its cancellation carries the same request id. */
    forwarded?: Forwarded | undefined;
    /** Merged into this request's `_meta` (a stateless upstream's request names its revision and client there). */
    meta?: Params | undefined;
    /**
     * A 2025 session's `prompts/get`: the upstream's requests tied to it are answered here, within `inputBounds`
     * (both needed). Two fields of the request's own options rather than an object of their own: most gets ask
     * nothing, and the bounds are one object per session.
     */
    onInputRequest?: InputHandler | undefined;
    inputBounds?: InputBounds | undefined;
}

/** How a call answers the upstream's requests tied to it (CallControl.onInputRequest). */
export type InputHandler = (request: InputRequest, signal: AbortSignal) => Promise<InputAnswer>;

/** Within what a call answers the upstream's requests tied to it (config inputRequests). */
export interface InputBounds {
    /** The most of the upstream's requests out at once for the call (inputRequests.maxPerRound); more are refused. */
    readonly maxPerRound: number;
    /** Once the upstream asks, the call may take this long in all from its start (inputRequests.maxTotalMs). */
    readonly maxTotalMs: number;
}

/**
 * What a call fails with when its handler rejected with something other than the port's errors (UpstreamRejectedError,
 * UpstreamFailedError, passed as they are): it names no cause, the client just did not answer.
 */
export class NoAnswerError extends Error {
    override readonly name = 'NoAnswerError';

    constructor() {
        super('the client did not answer');
    }
}

/** Which of a 2025 upstream's requests can be tied to a call (protocol/input-requests.ts relayPlan), and roots. */
export interface InputRelay extends Pick<RelayPlan, 'answerStreams' | 'unrelated'> {
    /** roots/list is relayed (relayRoots); otherwise the gateway answers it with no roots. */
    readonly roots: boolean;
}

/** Nothing is tied to a call: every request of the upstream is the gateway's to answer. */
const NO_INPUT_RELAY: InputRelay = Object.freeze({ answerStreams: false, unrelated: 'none', roots: false });

/** What the client tells its owner. Each is called synchronously, as the message arrives. */
export interface RpcClientEvents {
    /** The upstream sent something, whatever it was: it is alive. */
    onHeard(): void;
    onListChanged(): void;
    /** A message dropped as a stray: what it was, in a word (never its content). */
    onStray(kind: 'answer' | 'progress'): void;
    /** The connection is gone; the requests in flight have failed. Called once, and not after close(). */
    onClosed(): void;
    /** `requestId`: the client request the failed exchange served, if any (its log line names it). */
    onError(error: Error, requestId?: string): void;
    /**
     * A request of the upstream's that was refused as its fault: one that cannot be tied to a call, or malformed;
     * `requestId`: the client request of the call it was tied to, if any.
     */
    onFault(kind: FaultKind, message: string, requestId?: string): void;
}

/** The timeout's data when a bound in all ended the request, rather than silence: which bound, and its value. */
interface TotalTimeoutData {
    maxTotalTimeout: number;
    setting: 'maxTotalTimeoutMs' | 'inputRequests.maxTotalMs';
}

type Params = Record<string, unknown>;

/** A call that answers the upstream's requests tied to it. */
type Relaying = Pending & { onInputRequest: InputHandler; inputBounds: InputBounds };

interface Pending {
    id: RequestId;
    /** Called only with a result its guard accepted. */
    resolve(value: unknown): void;
    reject(error: unknown): void;
    guard: ResultGuard<unknown>;
    method: string;
    timeoutMs: number;
    timer: NodeJS.Timeout | undefined;
    totalTimer: NodeJS.Timeout | undefined;
    onProgress: ((progress: Progress) => void) | undefined;
    onAcknowledged: ((notifications: Params) => void) | undefined;
    signal: CancelSignal | undefined;
    onAbort: (() => void) | undefined;
    forwarded: Forwarded | undefined;
    onInputRequest: InputHandler | undefined;
    inputBounds: InputBounds | undefined;
    /** The upstream's requests out for this call, each with what aborts its handler; undefined until the first. */
    asking: Map<RequestId, AbortController> | undefined;
    /** When it was sent (Date.now()): the start inputRequests.maxTotalMs counts from. */
    startedAt: number;
}

const METHOD_NOT_FOUND = { code: CODE.methodNotFound, message: 'Method not found' };
/** The gateway's answer to an upstream's request still out when the call it served ended. */
const CALL_ENDED = { code: CODE.internalError, message: 'The client request was cancelled' };
const NO_ROOTS = Object.freeze({ roots: Object.freeze([]) });
const INPUT_METHOD_SET: ReadonlySet<string> = new Set(INPUT_METHODS);
/**
 * What the gateway sends an upstream for one client's request: an unrelated request of the upstream's could be any
 * one's in flight, a completion's too (its argument values are that client's), so a get is its sole cause only when
 * no other is in flight. (List reads are the gateway's own, for every client: they never ask.)
 */
const CLIENT_METHODS: ReadonlySet<string> = new Set(['prompts/get', 'completion/complete']);
/** Two or more client requests in flight (CLIENT_METHODS): an unrelated request could be any one's. */
const AMBIGUOUS = Symbol('ambiguous');

/** How many given-up requests are remembered for their late answers: the oldest are forgotten first. */
const ABANDONED_REMEMBERED = 1024;
/**
 * How long a client request given up on (CLIENT_METHODS) may still be the cause of an unrelated request of the
 * upstream's: one sent before the upstream read the cancellation crosses it on the wire, and is that client's, not
 * the next get's. Unless the upstream answered it meanwhile (then it is done with it).
 */
export const LATE_QUESTION_MS = 5000;
/** How long close() waits for replies and cancellations still being sent before the transport is closed under them. */
const LAST_WORDS_MS = 2000;

export class RpcClient {
    readonly #transport: UpstreamTransport;
    readonly #events: RpcClientEvents;
    readonly #pending = new Map<RequestId, Pending>();
    /**
     * Requests given up on whose answer has not come (yet), in the order they were given up: when, for a client
     * request (LATE_QUESTION_MS), else -Infinity.
     */
    readonly #abandoned = new Map<RequestId, number>();
    /** The upstream's requests out, by its id, with the call each is tied to. */
    readonly #asked = new Map<RequestId, Pending>();
    readonly #relay: InputRelay;
    /** Replies and cancellations being sent, which nobody awaits but close(). */
    readonly #sending = new Set<Promise<void>>();
    #nextId = 0;
    #closed = false;

    constructor(transport: UpstreamTransport, events: RpcClientEvents, relay: InputRelay = NO_INPUT_RELAY) {
        this.#transport = transport;
        this.#events = events;
        this.#relay = relay;
        transport.onmessage = (message, relatedTo) => this.#receive(message, relatedTo);
        transport.onerror = (error, requestId) => events.onError(error, requestId);
        transport.onclose = () => {
            if (this.#end()) events.onClosed();
        };
    }

    get transport(): UpstreamTransport {
        return this.#transport;
    }

    /** Closed by its owner or by the connection: every request fails from now on. */
    get closed(): boolean {
        return this.#closed;
    }

    /** Requests in flight: bounded by the upstream's concurrency, whatever it sends or fails to answer. */
    get inFlight(): number {
        return this.#pending.size;
    }

    /**
     * Sends a request and resolves with its result once `guard` accepts it. Rejects with ProtocolError for an error
     * answer, SdkError for a timeout (RequestTimeout), an invalid result (InvalidResult) or a lost connection
     * (ConnectionClosed, NotConnected), an AbortError when `signal` aborts it, or what the transport failed with.
     */
    request<T>(method: string, params: Params | undefined, guard: ResultGuard<T>, options: RpcRequestOptions): Promise<T> {
        if (this.#closed) return Promise.reject(new SdkError(SdkErrorCode.NotConnected, 'Not connected'));
        const { signal, onProgress, forwarded } = options;
        if (signal?.aborted === true) return Promise.reject(cancelled());
        const id = this.#nextId++;
        const sent = this.#withMeta(params, options.meta, onProgress === undefined ? undefined : id, forwarded?.trace);
        const message = (sent === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: sent }) as JSONRPCMessage;
        return new Promise<T>((resolve, reject) => {
            const pending: Pending = {
                id,
                resolve,
                reject,
                guard,
                method,
                timeoutMs: options.timeoutMs,
                timer: Number.isFinite(options.timeoutMs) ? setTimeout(this.#timedOut, options.timeoutMs, id) : undefined,
                totalTimer:
                    onProgress === undefined || options.maxTotalTimeoutMs === undefined
                        ? undefined
                        : setTimeout(this.#timedOutInAll, options.maxTotalTimeoutMs, id, options.maxTotalTimeoutMs, 'maxTotalTimeoutMs'),
                onProgress,
                onAcknowledged: options.onAcknowledged,
                signal,
                onAbort: undefined,
                forwarded,
                onInputRequest: options.onInputRequest,
                inputBounds: options.inputBounds,
                asking: undefined,
                startedAt: Date.now()
            };
            if (signal !== undefined) {
                pending.onAbort = () => this.#cancel(id, cancelled(), 'cancelled');
                signal.addEventListener('abort', pending.onAbort, { once: true });
            }
            this.#pending.set(id, pending);
            this.#transport.send(message, forwarded).catch((error: unknown) => {
                // Never left: nothing from the upstream may settle it, and there is nothing to cancel.
                this.#settle(id)?.reject(error);
            });
        });
    }

    /** `params` with this request's `_meta`, its trace context and the progress token, if any; as it was when there is none. */
    #withMeta(params: Params | undefined, own: Params | undefined, progressToken: RequestId | undefined, trace: TraceContext | undefined): Params | undefined {
        if (own === undefined && progressToken === undefined && trace === undefined) return params;
        const meta: Params = { ...(params?._meta as Params | undefined), ...own };
        if (trace !== undefined) Object.assign(meta, traceEntries(trace));
        if (progressToken !== undefined) meta.progressToken = progressToken;
        return { ...params, _meta: meta };
    }

    notify(method: string, params?: Params, forwarded?: Forwarded): Promise<void> {
        if (this.#closed) return Promise.reject(new SdkError(SdkErrorCode.NotConnected, 'Not connected'));
        return this.#transport.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params }, forwarded);
    }

    /** Fails every request in flight at once, then closes the transport; the owner is not told (it asked). */
    async close(): Promise<void> {
        this.#end();
        // Closing aborts what is in flight: a held question refused or a call cancelled at shutdown would go unheard.
        if (this.#sending.size > 0) await withDeadline(this.#sent(), LAST_WORDS_MS, () => undefined);
        await this.#transport.close();
    }

    /** Resolves once nothing is being sent, including what a send in flight leads to (a cancellation's answers). */
    async #sent(): Promise<void> {
        while (this.#sending.size > 0) await Promise.all(this.#sending);
    }

    /** Whether this call ended the client. */
    #end(): boolean {
        if (this.#closed) return false;
        this.#closed = true;
        for (const id of [...this.#pending.keys()]) this.#settle(id)?.reject(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));
        return true;
    }

    #receive(message: JSONRPCMessage, relatedTo: RequestId | undefined): void {
        this.#events.onHeard();
        if ('method' in message) {
            if ('id' in message) this.#serverRequest(message.id, message.method, message.params, relatedTo);
            else this.#notification(message.method, message.params);
            return;
        }
        const pending = this.#settle(message.id);
        if (pending === undefined) {
            if (message.id === undefined || !this.#abandoned.delete(message.id)) this.#events.onStray('answer');
            return;
        }
        if ('error' in message) {
            const { code, message: text, data } = message.error;
            pending.reject(new ProtocolError(code, text, data));
        } else if (pending.guard(message.result)) {
            pending.resolve(message.result);
        } else {
            pending.reject(new SdkError(SdkErrorCode.InvalidResult, 'Invalid result'));
        }
    }

    #notification(method: string, params: Params | undefined): void {
        if (method === 'notifications/prompts/list_changed') return this.#events.onListChanged();
        if (method === 'notifications/progress') return this.#progress(params);
        if (method === 'notifications/subscriptions/acknowledged') return this.#acknowledged(params);
        if (method === 'notifications/cancelled') return this.#withdrawn(params?.requestId);
        // Logging, other lists' changes: nothing the gateway acts on.
    }

    /** Progress for a request that asked for it restarts its timeout and is handed on; a malformed one is dropped. */
    #progress(params: Params | undefined): void {
        const token = params?.progressToken;
        const id = typeof token === 'number' || typeof token === 'string' ? token : undefined;
        const pending = id === undefined ? undefined : this.#pending.get(id);
        if (pending?.onProgress === undefined) {
            if (id === undefined || !this.#abandoned.has(id)) this.#events.onStray('progress');
            return;
        }
        const { progress, total, message } = params!;
        if (typeof progress !== 'number' || (total !== undefined && typeof total !== 'number') || (message !== undefined && typeof message !== 'string')) return;
        pending.timer?.refresh();
        try {
            pending.onProgress({ progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) });
        } catch (error) {
            this.#events.onError(error instanceof Error ? error : new Error(String(error)), pending.forwarded?.requestId);
        }
    }

    /** An acknowledgement for a listen request in flight that asked to hear it; any other is dropped. */
    #acknowledged(params: Params | undefined): void {
        const named = (params?._meta as Params | undefined)?.[META.subscriptionId];
        const pending = typeof named === 'number' || typeof named === 'string' ? this.#pending.get(named) : undefined;
        const agreed = params?.notifications;
        if (pending?.onAcknowledged === undefined || typeof agreed !== 'object' || agreed === null || Array.isArray(agreed)) return;
        try {
            pending.onAcknowledged(agreed as Params);
        } catch (error) {
            this.#events.onError(error instanceof Error ? error : new Error(String(error)), pending.forwarded?.requestId);
        }
    }

    /**
     * The upstream's own requests: a ping is answered; a request for input goes to the call it is tied to, or is
     * answered by the gateway (no roots; an error naming the fix for the others); anything else is -32601.
     */
    #serverRequest(id: RequestId, method: string, params: Params | undefined, relatedTo: RequestId | undefined): void {
        if (method === 'ping') return this.#reply(id, { result: {} });
        if (!INPUT_METHOD_SET.has(method)) return this.#reply(id, { error: METHOD_NOT_FOUND });
        if (method === 'roots/list' && !this.#relay.roots) return this.#reply(id, { result: NO_ROOTS });
        const owner = this.#ownerOf(relatedTo);
        if (owner === undefined || owner === AMBIGUOUS) return this.#unrelated(id, method as InputMethod, owner === AMBIGUOUS);
        const request = readInputRequest(method, params);
        if (request === undefined || this.#asked.has(id)) {
            const reason = request === undefined ? `upstream sent an invalid ${method} request` : 'upstream reused the id of a request still out';
            this.#events.onFault('invalid_result', reason, owner.forwarded?.requestId);
            return this.#reply(id, { error: { code: CODE.invalidParams, message: `Invalid ${method} request` } });
        }
        const { maxPerRound } = owner.inputBounds;
        if ((owner.asking?.size ?? 0) >= maxPerRound) {
            this.#events.onFault('invalid_result', 'upstream asked more at once than inputRequests.maxPerRound', owner.forwarded?.requestId);
            return this.#reply(id, { error: { code: CODE.internalError, message: `Too many requests at once (inputRequests.maxPerRound ${maxPerRound})` } });
        }
        this.#ask(owner, id, request);
    }

    /**
     * The call a request of the upstream's is tied to: the one on whose answer stream it came, or (`sole`, `exclusive`)
     * the one prompts/get in flight; AMBIGUOUS when other client requests are too (CLIENT_METHODS); undefined when none, or the call takes no input.
     */
    #ownerOf(relatedTo: RequestId | undefined): Relaying | typeof AMBIGUOUS | undefined {
        let owner: Pending | undefined;
        if (relatedTo !== undefined) {
            if (this.#relay.answerStreams) owner = this.#pending.get(relatedTo);
        } else if (this.#relay.unrelated !== 'none') {
            if (this.#givenUpLately()) return AMBIGUOUS;
            for (const pending of this.#pending.values()) {
                if (!CLIENT_METHODS.has(pending.method)) continue;
                if (owner !== undefined) return AMBIGUOUS;
                owner = pending;
            }
        }
        return owner?.onInputRequest === undefined || owner.inputBounds === undefined ? undefined : (owner as Relaying);
    }

    /** Whether a client request given up on less than LATE_QUESTION_MS ago is unanswered: a question now may be its. */
    #givenUpLately(): boolean {
        const since = Date.now() - LATE_QUESTION_MS;
        for (const givenUpAt of this.#abandoned.values()) if (givenUpAt > since) return true;
        return false;
    }

    #unrelated(id: RequestId, method: InputMethod, ambiguous: boolean): void {
        // The gateway has no roots of its own (SDK servers ask right after initialized).
        if (method === 'roots/list') return this.#reply(id, { result: NO_ROOTS });
        const message = ambiguous ? AMBIGUOUS_INPUT_REQUEST : UNRELATED_INPUT_REQUEST;
        this.#events.onFault('unrelated_request', `upstream sent ${method} that cannot be tied to one client request; refused`);
        this.#reply(id, { error: { code: CODE.internalError, message } });
    }

    /** Puts the upstream's request to the call's handler, its timeout paused meanwhile; its answer goes back. */
    #ask(owner: Relaying, id: RequestId, request: InputRequest): void {
        const { maxTotalMs } = owner.inputBounds;
        if (owner.asking === undefined) {
            owner.asking = new Map();
            // Waiting on a person now: bounded by inputRequests.maxTotalMs in all rather than maxTotalTimeoutMs.
            clearTimeout(owner.totalTimer);
            const left = Math.max(1, owner.startedAt + maxTotalMs - Date.now());
            owner.totalTimer = setTimeout(this.#timedOutInAll, left, owner.id, maxTotalMs, 'inputRequests.maxTotalMs');
        }
        clearTimeout(owner.timer);
        owner.timer = undefined;
        const controller = new AbortController();
        owner.asking.set(id, controller);
        this.#asked.set(id, owner);
        let answer: Promise<InputAnswer>;
        try {
            answer = owner.onInputRequest(request, controller.signal);
        } catch (error) {
            answer = Promise.reject(error instanceof Error ? error : new Error(String(error)));
        }
        answer.then(
            given => this.#answered(owner, id, controller, given),
            (error: unknown) => this.#refused(owner, id, controller, request.method, error)
        );
    }

    #answered(owner: Pending, id: RequestId, controller: AbortController, answer: InputAnswer): void {
        if (!this.#release(owner, id, controller)) return;
        this.#reply(id, 'result' in answer ? { result: answer.result } : { error: answer.error });
        this.#resume(owner);
    }

    /**
     * The handler could not answer: the call is cancelled and fails with the handler's error when it is the port's
     * (anything else is a NoAnswerError), then the upstream's request is answered.
     */
    #refused(owner: Pending, id: RequestId, controller: AbortController, method: InputMethod, error: unknown): void {
        if (!this.#release(owner, id, controller)) return;
        const refused = error instanceof UpstreamRejectedError;
        const failure = refused || error instanceof UpstreamFailedError ? error : new NoAnswerError();
        const answer = { code: CODE.internalError, message: refused ? `The client cannot answer ${method}` : 'No answer from the client' };
        const reason = refused ? error.message : failure instanceof UpstreamFailedError ? failure.reason : failure.message;
        this.#cancel(owner.id, failure, reason, [[id, answer]]);
    }

    /** The upstream withdrew a request of its own (notifications/cancelled): its handler is aborted, never answered. */
    #withdrawn(id: unknown): void {
        const owner = typeof id === 'string' || typeof id === 'number' ? this.#asked.get(id) : undefined;
        const controller = owner?.asking?.get(id as RequestId);
        if (owner === undefined || controller === undefined) return;
        this.#release(owner, id as RequestId, controller);
        controller.abort(new DOMException('The upstream cancelled its request', 'AbortError'));
        this.#resume(owner);
    }

    /** Whether the request was still out for `owner` with this handler (and is no longer). */
    #release(owner: Pending, id: RequestId, controller: AbortController): boolean {
        if (owner.asking?.get(id) !== controller) return false;
        owner.asking.delete(id);
        this.#asked.delete(id);
        return true;
    }

    /** Nothing out any more for a call still in flight: its timeout starts again, whole. */
    #resume(owner: Pending): void {
        if (owner.asking?.size !== 0 || this.#pending.get(owner.id) !== owner || !Number.isFinite(owner.timeoutMs)) return;
        owner.timer = setTimeout(this.#timedOut, owner.timeoutMs, owner.id);
    }

    #reply(id: RequestId, body: { result: Params } | { error: RpcError }): void {
        this.#aside(this.#transport.send({ jsonrpc: '2.0', id, ...body }));
    }

    /** A message nobody awaits, kept until sent for close(); a failed send is the transport's to report (the upstream times out). */
    #aside(sending: Promise<void>): void {
        const sent = sending.catch(() => {});
        this.#sending.add(sent);
        void sent.then(() => this.#sending.delete(sent));
    }

    readonly #timedOut = (id: RequestId): void => {
        const timeoutMs = this.#pending.get(id)?.timeoutMs;
        this.#cancel(id, new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs }), 'timed out');
    };

    readonly #timedOutInAll = (id: RequestId, maxTotalTimeout: number, setting: TotalTimeoutData['setting']): void => {
        const data: TotalTimeoutData = { maxTotalTimeout, setting };
        this.#cancel(id, new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out in all', data), 'timed out in all');
    };

    /**
     * Fails a request still in flight and tells the upstream to stop working on it, except `initialize`, which a
     * client MUST NOT cancel (MCP 2024-11-05 and later): it is only abandoned, and the caller closes the connection.
     * The upstream's requests still out for it (and `answers`, already released) are answered once the cancellation
     * is sent: an upstream that saw its request fail first would end the call by itself, never seeing it cancelled
     * (over HTTP the two travel on separate POSTs, and a send resolves once the upstream took the message).
     */
    #cancel(id: RequestId, error: Error, reason: string, answers: [RequestId, RpcError][] = []): void {
        const pending = this.#settle(id, answers);
        // Sent even once close() began: it waits for them, and a question the gateway gave up on must hear so.
        const answerAll = () => {
            for (const [asked, answer] of answers) this.#reply(asked, { error: answer });
        };
        if (pending === undefined) return answerAll();
        pending.reject(error);
        this.#abandoned.set(id, CLIENT_METHODS.has(pending.method) ? Date.now() : -Infinity);
        if (this.#abandoned.size > ABANDONED_REMEMBERED) this.#abandoned.delete(this.#abandoned.keys().next().value!);
        if (pending.method === 'initialize') return answerAll();
        const requestId = pending.forwarded?.requestId;
        // The cancellation first, the open questions' answers once it went out; both kept for close() to wait on.
        const cancelled = this.notify('notifications/cancelled', { requestId: id, reason }, requestId === undefined ? undefined : { requestId });
        this.#aside(cancelled.then(answerAll, answerAll));
    }

    /**
     * Takes a request out of flight, with its timers and listener; undefined if it was not in flight. The upstream's
     * requests still out for it are aborted and answered at once, or added to `later` for the caller to answer.
     */
    #settle(id: RequestId | undefined, later?: [RequestId, RpcError][]): Pending | undefined {
        if (id === undefined) return undefined;
        const pending = this.#pending.get(id);
        if (pending === undefined) return undefined;
        this.#pending.delete(id);
        clearTimeout(pending.timer);
        clearTimeout(pending.totalTimer);
        if (pending.onAbort !== undefined) pending.signal?.removeEventListener('abort', pending.onAbort);
        if (pending.asking !== undefined) this.#endAsking(pending.asking, later);
        return pending;
    }

    /** A call ended with requests of the upstream's still out for it: each handler is aborted, each request answered (now, or by whoever holds `later`). */
    #endAsking(asking: Map<RequestId, AbortController>, later: [RequestId, RpcError][] | undefined): void {
        for (const [id, controller] of asking) {
            this.#asked.delete(id);
            if (later !== undefined) later.push([id, CALL_ENDED]);
            else if (!this.#closed) this.#reply(id, { error: CALL_ENDED });
            controller.abort(new DOMException('The request the question belongs to ended', 'AbortError'));
        }
        asking.clear();
    }
}

function cancelled(): DOMException {
    return new DOMException('Request cancelled', 'AbortError');
}

/** Whether a request failed because `maxTotalTimeoutMs` ran out (not because the upstream fell silent). */
export function isTotalTimeout(error: unknown): error is SdkError & { data: TotalTimeoutData } {
    return error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout && typeof (error.data as Partial<TotalTimeoutData> | undefined)?.maxTotalTimeout === 'number';
}
