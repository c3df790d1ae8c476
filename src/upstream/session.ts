/**
 * One connection to an upstream, from its handshake until it is lost: the
 * requests made on it and the watch over its liveness. It tells its owner once
 * when it is lost, whoever noticed (the transport closing, a request finding
 * the connection gone, the liveness watch); reconnecting is the owner's business.
 *
 * A 2025 session the gateway relays input requests for (relayInputRequests)
 * hands each `prompts/get` its caller's `onInputRequest`; with `exclusive`, its
 * `prompts/get` go one at a time, so what the upstream asks meanwhile is that one's.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ProtocolError } from '@modelcontextprotocol/client';
import { CODE } from '../protocol/errors.js';
import { UpstreamFailedError, UpstreamRejectedError, type CallControl } from '../catalog/upstream-port.js';
import { maxTotalTimeout } from '../config/schema.js';
import type { FaultKind } from '../diagnostics/faults.js';
import { NO_RELAYED_CAPABILITIES } from '../protocol/capabilities.js';
import type { RelayPlan } from '../protocol/input-requests.js';
import { upstreamRequestMeta, type TraceContext } from '../protocol/meta.js';
import { requestedPromptName } from '../protocol/requested-prompt.js';
import type { Revision } from '../protocol/revisions.js';
import { Bulkhead, BulkheadFullError, BulkheadTimeoutError } from './bulkhead.js';
import { connectionEvidence, failureReason, toUpstreamError } from './errors.js';
import type { ServerProfile } from './handshake.js';
import { Liveness } from './liveness.js';
import { openClient, type OpenClientOptions } from './open-client.js';
import { isAnyResult, type ResultGuard } from './result-schemas.js';
import { isTotalTimeout, NoAnswerError, type InputBounds, type RpcClient } from './rpc-client.js';
import type { WireProtocol } from './transports.js';
import { ATTR, type SpanAttributes, type TraceSpan, type Tracer } from '../diagnostics/tracer.js';
import type { CancelSignal } from '../lib/cancel-signal.js';

/** The check after a transport error: an upstream that is there answers a ping at once, whatever its timeoutMs. */
const CHECK_TIMEOUT_MS = 2000;
/** A stateless upstream's subscription that ended is opened again after this pause. */
const RELISTEN_MS = 1000;

export interface SessionOptions extends Omit<OpenClientOptions, 'events'> {
    bulkhead: Bulkhead;
    /** Counts (and logs, rate-limited) a fault of the upstream. */
    reportFault: (kind: FaultKind, message: string, details: Record<string, unknown>) => void;
    onListChanged: () => void;
    /**
     * Whether it announces its changes (`announcesChanges`) changed: a 2026-07-28 upstream's subscription was
     * acknowledged, or it ended. Never called after the session ended.
     */
    onAnnouncingChanged: (session: UpstreamSession) => void;
    /** An answer to no request in flight, or progress for none, was dropped. */
    onStray: (kind: 'answer' | 'progress') => void;
    /** Every request's time, from the call until it settled (a wait for a bulkhead slot included), and its error if it failed. */
    onRequest: (method: UpstreamMethod, seconds: number, error: unknown) => void;
    /** Called at most once, and never after close(). */
    onLost: (session: UpstreamSession, reason: string) => void;
    /** Read per call, so a reload applies at once. */
    inputBounds: () => InputBounds;
    /** A CLIENT span per call, its context carried on to the upstream. */
    tracer: Tracer;
}

/** The call's control with the span's context carried on, and its input requests as span events. */
function tracedControl(control: CallControl, span: TraceSpan): CallControl {
    const traced: CallControl = { ...control, forwarded: { ...control.forwarded, trace: span.context, span } };
    const { onInputRequest } = control;
    if (onInputRequest !== undefined) {
        traced.onInputRequest = (request, signal) => {
            span.event('mcp.input.request', { [ATTR.method]: request.method });
            return onInputRequest(request, signal).then(
                answer => {
                    span.event('mcp.input.answer', { [ATTR.method]: request.method, [ATTR.inputOutcome]: 'result' in answer ? 'answered' : 'error' });
                    return answer;
                },
                (error: unknown) => {
                    span.event('mcp.input.answer', { [ATTR.method]: request.method, [ATTR.inputOutcome]: 'refused' });
                    throw error;
                }
            );
        };
    }
    return traced;
}

/** error.type of a failed call (the JSON-RPC code of a rejection, else what failed), and its status code if any. */
function failureType(error: unknown): [string, SpanAttributes?] {
    if (error instanceof UpstreamRejectedError) return [String(error.code), { [ATTR.statusCode]: String(error.code) }];
    if (error instanceof UpstreamFailedError) return [error.fault ?? (error.reason === 'cancelled' ? 'cancelled' : 'upstream_failed')];
    return [error instanceof Error ? error.name : 'error'];
}

/** The requests the gateway makes of an upstream (a closed list: it labels metrics). */
export type UpstreamMethod = 'prompts/list' | 'prompts/get' | 'completion/complete';

export class UpstreamSession {
    readonly #liveness: Liveness;
    #ended = false;
    #relisten: NodeJS.Timeout | undefined;
    /** A stateless upstream's subscription to its prompt list's changes is acknowledged and open. */
    #listening = false;
    /** What a stateless upstream's request names in `_meta` when it serves no client (list reads, liveness, listen). */
    readonly #meta: Record<string, unknown> | undefined;
    /** A 2025 session that was declared relayCapabilities: its prompts/get take their callers' onInputRequest. */
    readonly #relays: boolean;
    /** relayInputRequests: exclusive on a 2025 session: its prompts/get, one at a time (taken before a slot of the bulkhead). */
    readonly #exclusive: Bulkhead | undefined;
    /** What every span of its calls names of the upstream, made at its first span. */
    #spanBase: SpanAttributes | undefined;

    private constructor(
        readonly client: RpcClient,
        readonly profile: ServerProfile,
        readonly wire: WireProtocol,
        private readonly options: SessionOptions,
        relay: RelayPlan
    ) {
        const { pingIntervalMs, timeoutMs, maxQueue } = options.config;
        this.#relays = profile.revision.handshake && relay.declare;
        this.#exclusive = this.#relays && relay.unrelated === 'exclusive' ? new Bulkhead({ maxConcurrency: 1, maxQueue }) : undefined;
        this.#meta = upstreamRequestMeta(profile.revision, options.clientInfo, NO_RELAYED_CAPABILITIES.capabilities);
        this.#liveness = new Liveness({
            pingIntervalMs,
            pingTimeoutMs: timeoutMs,
            checkTimeoutMs: Math.min(timeoutMs, CHECK_TIMEOUT_MS),
            // 2026-07-28 has no ping: server/discover is as cheap, and any answer proves the server there.
            ping: timeout => client.request(this.revision.handshake ? 'ping' : 'server/discover', undefined, isAnyResult, { timeoutMs: timeout, meta: this.#meta }),
            onDead: reason => this.lose(reason)
        });
    }

    static async open(options: SessionOptions): Promise<UpstreamSession> {
        // The client reports from before its handshake; the session exists only after it.
        const opening: { session?: UpstreamSession } = {};
        const { client, profile, wire, relay } = await openClient({
            ...options,
            events: {
                // Anything the upstream sends proves it is alive: a late response as much as a notification.
                onHeard: () => opening.session?.heard(),
                onListChanged: options.onListChanged,
                onStray: options.onStray,
                onClosed: () => opening.session?.lose('connection closed'),
                onFault: (kind, message, requestId) => options.reportFault(kind, message, { requestId }),
                onError: (error, requestId) => {
                    // The classified reason only: a raw error may quote what the upstream sent, or the request's headers.
                    options.log.debug({ requestId, reason: failureReason(error, options.config.timeoutMs) }, 'upstream transport error');
                    // Over HTTP, a response stream cut off mid-way is reported here only: its request would wait for its timeout.
                    if (opening.session?.wire !== 'stdio') opening.session?.suspect();
                }
            }
        });
        // Closed between the end of its handshake and here, while its onClosed had no session to tell.
        if (client.closed) throw new UpstreamFailedError(options.config.id, 'connection closed', undefined);
        const session = (opening.session = new UpstreamSession(client, profile, wire, options, relay));
        if (session.revision.subscriptionsListen && profile.capabilities.prompts?.listChanged === true) session.#listen();
        return session;
    }

    /**
     * Whether the gateway hears of every change to its prompt list: a 2025 session's upstream that declared
     * `listChanged`, a stateless one while its subscription is acknowledged and open. One without the prompts
     * capability has nothing to change until it reconnects.
     */
    get announcesChanges(): boolean {
        const prompts = this.profile.capabilities.prompts;
        if (prompts === undefined) return true;
        return this.revision.subscriptionsListen ? this.#listening : prompts.listChanged === true;
    }

    /** The revision settled for the connection (its row: compared by identity, never recomputed from strings). */
    get revision(): Revision {
        return this.profile.revision;
    }

    /** Speaks the stateless era: no handshake, no ping, list changes on a subscription. */
    get stateless(): boolean {
        return this.revision.era === 'stateless';
    }

    /**
     * A stateless upstream tells list changes only on a `subscriptions/listen` stream: held open while the session
     * lives (the liveness watch sees to the connection), opened again after a pause when it ends or is refused. It
     * announces from the acknowledgement that it agreed to send prompt list changes until the stream ends (the owner
     * is told both, and reads the list again on the acknowledgement, as a change may have come meanwhile).
     */
    #listen(): void {
        if (this.#ended) return;
        const acknowledged = (agreed: Record<string, unknown>) => this.#setListening(agreed.promptsListChanged === true);
        const ended = () => {
            this.#setListening(false);
            if (!this.#ended) this.#relisten = setTimeout(() => this.#listen(), RELISTEN_MS).unref();
        };
        const filter = { notifications: { promptsListChanged: true } };
        this.client.request('subscriptions/listen', filter, isAnyResult, { timeoutMs: Infinity, onAcknowledged: acknowledged, meta: this.#meta }).then(ended, ended);
    }

    #setListening(listening: boolean): void {
        if (this.#ended || this.#listening === listening) return;
        this.#listening = listening;
        this.options.onAnnouncingChanged(this);
    }

    /**
     * One request through the upstream's bulkhead. The timeout covers the wait for a slot too, so no request takes
     * longer than `timeoutMs` in all; failures become UpstreamRejectedError or UpstreamFailedError and are counted.
     * A caller that follows progress asks for more: each progress notification restarts `timeoutMs`, and
     * `maxTotalTimeoutMs` bounds the whole request.
     */
    call<T>(method: UpstreamMethod, params: Record<string, unknown>, guard: ResultGuard<T>, control?: CallControl): Promise<T> {
        return this.#timed(method, params, guard, control, false) as Promise<T>;
    }

    /** As call(), for a method the upstream may not have: its method-not-found answer is undefined, not a failure. */
    callOptional<T>(method: UpstreamMethod, params: Record<string, unknown>, guard: ResultGuard<T>, control?: CallControl): Promise<T | undefined> {
        return this.#timed(method, params, guard, control, true);
    }

    /** Settled in one step (no async layers): the call, its failure turned into the caller's, counted, its span ended. */
    #timed<T>(method: UpstreamMethod, params: Record<string, unknown>, guard: ResultGuard<T>, control: CallControl = {}, optional: boolean): Promise<T | undefined> {
        const started = performance.now();
        const span = this.options.tracer.enabled ? this.#clientSpan(method, params, control.forwarded?.trace) : undefined;
        if (span !== undefined) control.onSpan?.(span.context);
        const settled = (failure: unknown) => {
            this.options.onRequest(method, (performance.now() - started) / 1000, failure);
            span?.end();
        };
        let running: Promise<T>;
        try {
            running = this.#call(method, params, guard, span === undefined ? control : tracedControl(control, span));
        } catch (error) {
            running = Promise.reject(error instanceof Error ? error : new Error(String(error)));
        }
        return running.then(
            result => {
                settled(undefined);
                return result;
            },
            (error: unknown) => {
                if (optional && error instanceof ProtocolError && error.code === CODE.methodNotFound) {
                    settled(undefined);
                    return undefined;
                }
                const failure = this.#failed(error, control.signal, control.forwarded?.requestId);
                span?.fail(...failureType(failure));
                settled(failure);
                throw failure;
            }
        );
    }

    /**
     * The CLIENT span of one call (OTel MCP conventions), a child of the client request's span (Forwarded.trace) or,
     * for the gateway's own reads, a root. Named for the upstream's own prompt.
     */
    #clientSpan(method: UpstreamMethod, params: Record<string, unknown>, parent: TraceContext | undefined): TraceSpan | undefined {
        const prompt = requestedPromptName(method, params);
        const span = this.options.tracer.start(prompt === undefined ? method : `${method} ${prompt}`, {
            kind: 'client',
            parent,
            attributes: { ...(this.#spanBase ??= this.#spanAttributes()), [ATTR.method]: method, [ATTR.prompt]: prompt }
        });
        if (params.inputResponses !== undefined) span?.event('mcp.input.retry', { [ATTR.inputResponses]: Object.keys(params.inputResponses as object).length });
        return span;
    }

    /** What every span of this session names of the upstream: never a URL's credentials, path or query, nor a command's arguments. */
    #spanAttributes(): SpanAttributes {
        const { config } = this.options;
        const common = { [ATTR.upstream]: config.id, [ATTR.protocolVersion]: this.revision.version };
        if (config.transport === 'stdio') return { ...common, [ATTR.serverAddress]: path.basename(config.command), [ATTR.transport]: 'pipe' };
        const url = new URL(config.url);
        const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
        return { ...common, [ATTR.serverAddress]: url.hostname, [ATTR.serverPort]: port, [ATTR.transport]: 'tcp' };
    }

    /** The request through the bulkhead (and, on a session that relays, its turn); fails with the raw error (see #timed). */
    #call<T>(method: UpstreamMethod, params: Record<string, unknown>, guard: ResultGuard<T>, control: CallControl): Promise<T> {
        const { config, bulkhead } = this.options;
        const now = Date.now();
        const deadline = now + config.timeoutMs;
        const { signal, onProgress, forwarded, client } = control;
        // relayInputRequests: off tells a stateless upstream no client capabilities either: it has nobody to ask.
        const relayed = client === undefined || config.relayInputRequests === 'off' ? undefined : client;
        const meta = relayed === undefined ? this.#meta : upstreamRequestMeta(this.profile.revision, this.options.clientInfo, relayed.capabilities);
        // Counted from the call, as the timeout is: the wait for a slot is part of the request.
        const totalDeadline = onProgress === undefined ? undefined : now + maxTotalTimeout(config);
        // Only on a session told relayCapabilities, for a caller that can ask its client.
        const onInputRequest = this.#relays && method === 'prompts/get' ? control.onInputRequest : undefined;
        const request = () =>
            this.client.request(method, params, guard, {
                timeoutMs: Math.max(1, deadline - Date.now()),
                signal,
                onProgress,
                forwarded,
                meta,
                maxTotalTimeoutMs: totalDeadline === undefined ? undefined : Math.max(1, totalDeadline - Date.now()),
                onInputRequest,
                inputBounds: onInputRequest === undefined ? undefined : this.options.inputBounds()
            });
        if (method !== 'prompts/get' || this.#exclusive === undefined) return bulkhead.run(request, { deadline, signal });
        // The wait for its turn counts in the same deadline: a get queued behind a question times out as one queued for a slot.
        return this.#exclusive.run(() => bulkhead.run(request, { deadline, signal }), { deadline, signal });
    }

    /** The failure a caller sees, counted and weighed as evidence about the connection; `requestId`: the caller's. */
    #failed(error: unknown, signal: CancelSignal | undefined, requestId: string | undefined): UpstreamRejectedError | UpstreamFailedError {
        const { config } = this.options;
        const failure = this.#failure(error, config.timeoutMs, signal);
        if (failure instanceof UpstreamFailedError && failure.fault !== undefined) {
            this.options.reportFault(failure.fault, 'upstream request failed', { requestId, reason: failure.reason });
        }
        // A cancelled request says nothing about the upstream; nor does one cut off by maxTotalTimeoutMs, as its
        // progress showed the upstream alive.
        if (signal?.aborted !== true && !isTotalTimeout(error)) {
            const evidence = connectionEvidence(error);
            if (evidence === 'gone') this.lose(failureReason(error, config.timeoutMs));
            else if (evidence === 'no-answer') this.#liveness.requestTimedOut();
        }
        return failure;
    }

    /** The upstream sent something. */
    private heard(): void {
        this.#liveness.heard();
    }

    /** The transport reported an error that may have cost the connection (the check is the connection's, no request's). */
    private suspect(): void {
        this.#liveness.suspect();
    }

    /** Lost or closed: its requests fail, and it will not report anything again. */
    get ended(): boolean {
        return this.#ended;
    }

    /** Ends the session without telling the owner (it asked). */
    async close(): Promise<void> {
        this.#ended = true;
        clearTimeout(this.#relisten);
        this.#liveness.stop();
        await this.client.close().catch(() => {});
    }

    #failure(error: unknown, timeoutMs: number, signal: CancelSignal | undefined): UpstreamRejectedError | UpstreamFailedError {
        const id = this.options.config.id;
        if (signal?.aborted === true) return new UpstreamFailedError(id, 'cancelled', undefined);
        if (isTotalTimeout(error)) {
            // A person's answers took too long: nothing said about the upstream.
            if (error.data.setting === 'inputRequests.maxTotalMs')
                return new UpstreamFailedError(id, `timed out after ${error.data.maxTotalTimeout} ms in all (inputRequests.maxTotalMs)`, undefined);
            return new UpstreamFailedError(id, `timed out after ${maxTotalTimeout(this.options.config)} ms in all (maxTotalTimeoutMs)`, 'timeout');
        }
        // The caller's handler gave up on a question of the upstream's: nothing said about the upstream.
        if (error instanceof NoAnswerError) return new UpstreamFailedError(id, error.message, undefined);
        if (error instanceof BulkheadFullError) return new UpstreamFailedError(id, 'upstream busy, try again later', 'busy');
        if (error instanceof BulkheadTimeoutError) return new UpstreamFailedError(id, `timed out after ${timeoutMs} ms (waiting for a free slot)`, 'timeout');
        return toUpstreamError(id, error, timeoutMs);
    }

    /** Whoever noticed (a request, maybe), what follows (the reconnect, its lines) is the connection's, no request's. */
    private lose(reason: string): void {
        if (this.#ended) return;
        this.#ended = true;
        clearTimeout(this.#relisten);
        this.#liveness.stop();
        this.options.onLost(this, reason);
        // Rejects the requests still waiting on it at once ("connection closed"), rather than at their timeout.
        this.client.close().catch(() => {});
    }
}
