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
 * The client is era-agnostic: what the handshake settles (see handshake.ts)
 * and what each request carries are its caller's business.
 */
import { ProtocolError, SdkError, SdkErrorCode, type JSONRPCMessage, type Progress } from '@modelcontextprotocol/client';
import { CODE } from '../protocol/errors.js';
import type { RequestId } from '../protocol/json-rpc.js';
import { META } from '../protocol/meta.js';
import type { ResultGuard } from './result-schemas.js';
import type { Forwarded } from '../catalog/upstream-port.js';
import type { UpstreamTransport } from './transports.js';

interface RpcRequestOptions {
    /**
     * How long to wait for the answer; with onProgress, each progress notification restarts this wait. Infinity: no
     * limit (a long-lived request, such as subscriptions/listen, which the connection's end settles).
     */
    timeoutMs: number;
    /** With onProgress: the longest the request may take in all, however much progress comes. */
    maxTotalTimeoutMs?: number | undefined;
    signal?: AbortSignal | undefined;
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
}

/** What the client tells its owner. Each is called synchronously, as the message arrives. */
export interface RpcClientEvents {
    /** The upstream sent something, whatever it was: it is alive. */
    onHeard(): void;
    onListChanged(): void;
    /** A message dropped as a stray: what it was, in a word (never its content). */
    onStray(kind: 'answer' | 'progress'): void;
    /** The connection is gone; the requests in flight have failed. Called once, and not after close(). */
    onClosed(): void;
    onError(error: Error): void;
}

/** The timeout's data when `maxTotalTimeoutMs` ended the request, rather than silence. */
interface TotalTimeoutData {
    maxTotalTimeout: number;
}

type Params = Record<string, unknown>;

interface Pending {
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
    signal: AbortSignal | undefined;
    onAbort: (() => void) | undefined;
    forwarded: Forwarded | undefined;
}

const METHOD_NOT_FOUND = { code: CODE.methodNotFound, message: 'Method not found' };

/** How many given-up requests are remembered for their late answers: the oldest are forgotten first. */
const ABANDONED_REMEMBERED = 1024;

export class RpcClient {
    readonly #transport: UpstreamTransport;
    readonly #events: RpcClientEvents;
    readonly #pending = new Map<RequestId, Pending>();
    /** Requests given up on whose answer has not come (yet), in the order they were given up. */
    readonly #abandoned = new Set<RequestId>();
    #nextId = 0;
    #closed = false;

    constructor(transport: UpstreamTransport, events: RpcClientEvents) {
        this.#transport = transport;
        this.#events = events;
        transport.onmessage = message => this.#receive(message);
        transport.onerror = error => events.onError(error);
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
        const sent = this.#withMeta(params, options.meta, onProgress === undefined ? undefined : id);
        const message = (sent === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: sent }) as JSONRPCMessage;
        return new Promise<T>((resolve, reject) => {
            const pending: Pending = {
                resolve,
                reject,
                guard,
                method,
                timeoutMs: options.timeoutMs,
                timer: Number.isFinite(options.timeoutMs) ? setTimeout(this.#timedOut, options.timeoutMs, id) : undefined,
                totalTimer:
                    onProgress === undefined || options.maxTotalTimeoutMs === undefined
                        ? undefined
                        : setTimeout(this.#timedOutInAll, options.maxTotalTimeoutMs, id, options.maxTotalTimeoutMs),
                onProgress,
                onAcknowledged: options.onAcknowledged,
                signal,
                onAbort: undefined,
                forwarded
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

    /** `params` with this request's `_meta` and the progress token, if any; as it was when there is none. */
    #withMeta(params: Params | undefined, own: Params | undefined, progressToken: RequestId | undefined): Params | undefined {
        if (own === undefined && progressToken === undefined) return params;
        return { ...params, _meta: { ...(params?._meta as Params | undefined), ...own, ...(progressToken === undefined ? {} : { progressToken }) } };
    }

    notify(method: string, params?: Params, forwarded?: Forwarded): Promise<void> {
        if (this.#closed) return Promise.reject(new SdkError(SdkErrorCode.NotConnected, 'Not connected'));
        return this.#transport.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params }, forwarded);
    }

    /** Fails every request in flight at once, then closes the transport; the owner is not told (it asked). */
    async close(): Promise<void> {
        this.#end();
        await this.#transport.close();
    }

    /** Whether this call ended the client. */
    #end(): boolean {
        if (this.#closed) return false;
        this.#closed = true;
        for (const id of [...this.#pending.keys()]) this.#settle(id)?.reject(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));
        return true;
    }

    #receive(message: JSONRPCMessage): void {
        this.#events.onHeard();
        if ('method' in message) {
            if ('id' in message) this.#answer(message.id, message.method);
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
        // Logging, other lists' changes, cancellations of its own requests: nothing the gateway acts on.
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
            this.#events.onError(error instanceof Error ? error : new Error(String(error)));
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
            this.#events.onError(error instanceof Error ? error : new Error(String(error)));
        }
    }

    /** The upstream's own requests: a ping is answered, nothing else is offered (the client declares no capability). */
    #answer(id: RequestId, method: string): void {
        const answer = method === 'ping' ? { jsonrpc: '2.0', id, result: {} } : { jsonrpc: '2.0', id, error: METHOD_NOT_FOUND };
        // A failed send is the transport's to report; the upstream will time its request out.
        this.#transport.send(answer as JSONRPCMessage).catch(() => {});
    }

    readonly #timedOut = (id: RequestId): void => {
        const timeoutMs = this.#pending.get(id)?.timeoutMs;
        this.#cancel(id, new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs }), 'timed out');
    };

    readonly #timedOutInAll = (id: RequestId, maxTotalTimeout: number): void => {
        const data: TotalTimeoutData = { maxTotalTimeout };
        this.#cancel(id, new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out in all', data), 'timed out in all');
    };

    /**
     * Fails a request still in flight and tells the upstream to stop working on it, except `initialize`, which a
     * client MUST NOT cancel (MCP 2024-11-05 and later): it is only abandoned, and the caller closes the connection.
     */
    #cancel(id: RequestId, error: Error, reason: string): void {
        const pending = this.#settle(id);
        if (pending === undefined) return;
        pending.reject(error);
        this.#abandoned.add(id);
        if (this.#abandoned.size > ABANDONED_REMEMBERED) this.#abandoned.delete(this.#abandoned.values().next().value!);
        if (pending.method === 'initialize') return;
        const requestId = pending.forwarded?.requestId;
        this.notify('notifications/cancelled', { requestId: id, reason }, requestId === undefined ? undefined : { requestId }).catch(() => {});
    }

    /** Takes a request out of flight, with its timers and listener; undefined if it was not in flight. */
    #settle(id: RequestId | undefined): Pending | undefined {
        if (id === undefined) return undefined;
        const pending = this.#pending.get(id);
        if (pending === undefined) return undefined;
        this.#pending.delete(id);
        clearTimeout(pending.timer);
        clearTimeout(pending.totalTimer);
        if (pending.onAbort !== undefined) pending.signal?.removeEventListener('abort', pending.onAbort);
        return pending;
    }
}

function cancelled(): DOMException {
    return new DOMException('Request cancelled', 'AbortError');
}

/** Whether a request failed because `maxTotalTimeoutMs` ran out (not because the upstream fell silent). */
export function isTotalTimeout(error: unknown): error is SdkError & { data: TotalTimeoutData } {
    return error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout && typeof (error.data as Partial<TotalTimeoutData> | undefined)?.maxTotalTimeout === 'number';
}
