/**
 * One connection to an upstream, from its handshake until it is lost: the
 * requests made on it and the watch over its liveness. It tells its owner once
 * when it is lost, whoever noticed (the transport closing, a request finding
 * the connection gone, the liveness watch); reconnecting is the owner's business.
 */
import { performance } from 'node:perf_hooks';
import type { Client, JSONRPCMessage, Progress } from '@modelcontextprotocol/client';
import { maxTotalTimeout } from '../config/schema.js';
import type { FaultKind } from '../observability/faults.js';
import { BulkheadFullError, BulkheadTimeoutError, type Bulkhead } from './bulkhead.js';
import { connectionEvidence, failureReason, toUpstreamError, UpstreamFailedError, type UpstreamRejectedError } from './errors.js';
import { Liveness } from './liveness.js';
import { openClient, type OpenClientOptions } from './open-client.js';
import type { WireProtocol } from './transports.js';

function isPromptListChanged(message: JSONRPCMessage): boolean {
    return 'method' in message && message.method === 'notifications/prompts/list_changed' && !('id' in message);
}

/** The check after a transport error: an upstream that is there answers a ping at once, whatever its timeoutMs. */
const CHECK_TIMEOUT_MS = 2000;

export interface SessionOptions extends Omit<OpenClientOptions, 'prepare'> {
    bulkhead: Bulkhead;
    reportFault: (kind: FaultKind, message: string, details: Record<string, unknown>) => void;
    onListChanged: () => void;
    /** Every request's time, from the call until it settled (a wait for a bulkhead slot included). */
    onRequest: (method: UpstreamMethod, seconds: number) => void;
    /** Called at most once, and never after close(). */
    onLost: (session: UpstreamSession, reason: string) => void;
}

/** The requests the gateway makes of an upstream (a closed list: it labels metrics). */
export type UpstreamMethod = 'prompts/list' | 'prompts/get' | 'completion/complete';

/** How a caller follows one request: it may cancel it, and hear its progress (which also keeps it alive). */
export interface CallControl {
    signal?: AbortSignal | undefined;
    onProgress?: ((progress: Progress) => void) | undefined;
}

export type RequestOptions = {
    timeout: number;
    signal?: AbortSignal | undefined;
    onprogress?: (progress: Progress) => void;
    resetTimeoutOnProgress?: boolean;
};

export class UpstreamSession {
    readonly #liveness: Liveness;
    #ended = false;

    private constructor(
        readonly client: Client,
        readonly wire: WireProtocol,
        private readonly options: SessionOptions
    ) {
        const { pingIntervalMs, timeoutMs } = options.config;
        this.#liveness = new Liveness({
            pingIntervalMs,
            pingTimeoutMs: timeoutMs,
            checkTimeoutMs: Math.min(timeoutMs, CHECK_TIMEOUT_MS),
            ping: timeout => client.ping({ timeout }),
            onDead: reason => this.#lose(reason)
        });
    }

    static async open(options: SessionOptions): Promise<UpstreamSession> {
        // The handlers must be in place before the handshake, the session exists only after it.
        const opening: { session?: UpstreamSession } = {};
        const opened = await openClient({
            ...options,
            prepare: (client, wire) => {
                client.setNotificationHandler('notifications/prompts/list_changed', options.onListChanged);
                client.onclose = () => {
                    if (opening.session !== undefined) opening.session.#lose('connection closed');
                };
                client.onerror = error => {
                    // The classified reason only: a raw error may quote what the upstream sent, or the request's headers.
                    options.log.debug({ reason: failureReason(error, options.config.timeoutMs) }, 'upstream transport error');
                    // Over HTTP, a response stream cut off mid-way is reported here only: its request would wait for its timeout.
                    if (wire !== 'stdio' && opening.session !== undefined) opening.session.#liveness.suspect();
                };
            }
        });
        const { client, transport } = opened;
        if (client.transport === undefined) {
            // Closed between the end of its handshake and here, while its onclose had no session to tell.
            throw new UpstreamFailedError(options.config.id, 'connection closed', undefined);
        }
        const session = (opening.session = new UpstreamSession(client, opened.wire, options));
        // Anything the upstream sends proves it is alive: a late response as much as a notification.
        const deliver = transport.onmessage;
        transport.onmessage = (message, extra) => {
            session.#liveness.heard();
            // The one notification upstreams send in floods skips the SDK client's schema checks of every message.
            if (isPromptListChanged(message)) return options.onListChanged();
            deliver?.(message, extra);
        };
        return session;
    }

    /**
     * One request through the upstream's bulkhead. The timeout covers the wait for a slot too, so no request takes
     * longer than `timeoutMs` in all; failures become UpstreamRejectedError or UpstreamFailedError and are counted.
     * A caller that follows progress asks for more: each progress notification restarts `timeoutMs`, and
     * `maxTotalTimeoutMs` bounds the whole request.
     */
    async call<T>(method: UpstreamMethod, request: (options: RequestOptions) => Promise<T>, control: CallControl = {}): Promise<T> {
        const started = performance.now();
        try {
            return await this.#call(request, control);
        } finally {
            this.options.onRequest(method, (performance.now() - started) / 1000);
        }
    }

    async #call<T>(request: (options: RequestOptions) => Promise<T>, control: CallControl): Promise<T> {
        const { timeoutMs } = this.options.config;
        const maxTotalTimeoutMs = maxTotalTimeout(this.options.config);
        const deadline = Date.now() + timeoutMs;
        const { onProgress, signal: callerSignal } = control;
        const totalTimer = onProgress === undefined ? undefined : AbortSignal.timeout(maxTotalTimeoutMs);
        const signal = totalTimer === undefined ? callerSignal : callerSignal === undefined ? totalTimer : AbortSignal.any([callerSignal, totalTimer]);
        const progress = onProgress === undefined ? {} : { onprogress: onProgress, resetTimeoutOnProgress: true };
        try {
            return await this.options.bulkhead.run(() => request({ timeout: Math.max(1, deadline - Date.now()), signal, ...progress }), { deadline, signal });
        } catch (error) {
            const failure =
                totalTimer?.aborted === true && callerSignal?.aborted !== true
                    ? new UpstreamFailedError(this.options.config.id, `timed out after ${maxTotalTimeoutMs} ms in all (maxTotalTimeoutMs)`, 'timeout')
                    : this.#failure(error, timeoutMs, signal);
            if (failure instanceof UpstreamFailedError && failure.fault !== undefined) {
                this.options.reportFault(failure.fault, 'upstream request failed', { reason: failure.reason });
            }
            // A cancelled request says nothing about the upstream (the SDK reports it like a timeout); nor does one
            // cut off by maxTotalTimeoutMs, as its progress showed the upstream alive.
            if (signal?.aborted !== true) {
                const evidence = connectionEvidence(error);
                if (evidence === 'gone') this.#lose(failureReason(error, timeoutMs));
                else if (evidence === 'no-answer') this.#liveness.requestTimedOut();
            }
            throw failure;
        }
    }

    /** Lost or closed: its requests fail, and it will not report anything again. */
    get ended(): boolean {
        return this.#ended;
    }

    /** Ends the session without telling the owner (it asked). */
    async close(): Promise<void> {
        this.#ended = true;
        this.#liveness.stop();
        await this.client.close().catch(() => {});
    }

    #failure(error: unknown, timeoutMs: number, signal: AbortSignal | undefined): UpstreamRejectedError | UpstreamFailedError {
        const id = this.options.config.id;
        if (signal?.aborted === true) return new UpstreamFailedError(id, 'cancelled', undefined);
        if (error instanceof BulkheadFullError) return new UpstreamFailedError(id, 'upstream busy, try again later', 'busy');
        if (error instanceof BulkheadTimeoutError) return new UpstreamFailedError(id, `timed out after ${timeoutMs} ms (waiting for a free slot)`, 'timeout');
        return toUpstreamError(id, error, timeoutMs);
    }

    #lose(reason: string): void {
        if (this.#ended) return;
        this.#ended = true;
        this.#liveness.stop();
        this.options.onLost(this, reason);
        // Rejects the requests still waiting on it at once (SDK "connection closed"), rather than at their timeout.
        this.client.close().catch(() => {});
    }
}
