/**
 * What the catalog needs of an upstream, declared on the catalog's side: the
 * upstream layer's connections satisfy it as they are (by shape, no import
 * this way), and unit tests give the catalog small in-memory upstreams.
 *
 * The port's contract beyond the types: `listPrompts` reads every page and
 * returns only prompts that passed the upstream's limits, each with a digest
 * of its definition; `getPrompt` and `complete` throw `UpstreamRejectedError`
 * when the upstream rejected the client's request (its code and message pass)
 * and `UpstreamFailedError` when it failed (both declared here, with the
 * port: the upstream layer imports them, the one way it may import upward),
 * which the service maps to JSON-RPC errors.
 */
import type { CompleteRequest, CompleteResult, GetPromptResult, Progress, Prompt } from '@modelcontextprotocol/client';
import type { FaultKind } from '../diagnostics/faults.js';
import type { RelayedClient } from '../protocol/capabilities.js';
import { CODE, type RpcError } from '../protocol/errors.js';
import type { InputAnswer, InputRequest } from '../protocol/input-requests.js';
import type { TraceContext } from '../protocol/meta.js';
import type { TraceSpan } from '../diagnostics/tracer.js';
import type { CancelSignal } from '../lib/cancel-signal.js';

/** A prompt as an upstream listed it, within its limits. */
export interface ListedPrompt {
    prompt: Prompt;
    /** Digest of the definition: with the exposed name, it tells whether a client's view changed. */
    digest: string;
}

/**
 * A 2026-07-28 upstream's answer to `prompts/get` asking the client for input first (multi round-trip requests): the
 * client retries with `inputResponses`, and `requestState` as it was given.
 */
export interface InputRequired {
    resultType: 'input_required';
    inputRequests?: Record<string, unknown> | undefined;
    requestState?: string | undefined;
    _meta?: Record<string, unknown> | undefined;
}

/** What a client sends back to an InputRequired answer (the state already opened by the gateway). */
export interface Continuation {
    inputResponses?: Record<string, unknown> | undefined;
    requestState?: string | undefined;
}

export function isInputRequired(result: GetPromptResult | InputRequired): result is InputRequired {
    return (result as InputRequired).resultType === 'input_required';
}

/**
 * What an upstream call carries of the client request it serves: HTTP upstreams receive it as headers. A parameter
 * of each request, never read from the context it runs in, which a queue or a retry may have changed.
 */
export interface Forwarded {
    /** Sent as `X-Request-Id`. */
    readonly requestId?: string | undefined;
    /** The client request's `Mcp-Param-*` headers, passed on as they came (Streamable HTTP). */
    readonly headers?: Readonly<Record<string, string>> | undefined;
    /**
     * The W3C trace context the upstream request carries on (`_meta` on every transport, headers too over HTTP): the
     * client request's own (its `_meta`, else its HTTP headers), or with tracing on the gateway's span for the call.
     */
    readonly trace?: TraceContext | undefined;
    /** The call's CLIENT span (tracing on): told what its transport does again on its way (an answer stream resumed). */
    readonly span?: Pick<TraceSpan, 'event'> | undefined;
}

/**
 * How a caller follows one call: it may cancel it (signal), and hear its progress (which also keeps it alive); and
 * what the call carries of the client request it serves.
 */
export interface CallControl {
    signal?: CancelSignal | undefined;
    onProgress?: ((progress: Progress) => void) | undefined;
    forwarded?: Forwarded | undefined;
    /** Told a stateless upstream in the request's `_meta`; a 2025-era upstream was told its client at initialize. None when absent. */
    client?: RelayedClient | undefined;
    /**
     * A 2025 upstream's requests to the client, tied to this call (prompts/get only): each is handed here and its
     * answer sent back; while one is out, the call's timeout is paused (restarted on the answer). `signal` aborts when
     * the upstream cancels its request or the call ends. A rejection answers the upstream's request with an error and
     * cancels the call, which then fails with that very error when it is an UpstreamRejectedError (its code, message and
     * data reach the client: InputRefusedError) or an UpstreamFailedError (its fault counted); anything else fails it
     * as "the client did not answer". Absent: the upstream's requests are answered by the gateway (as unrelated ones).
     */
    onInputRequest?: ((request: InputRequest, signal: AbortSignal) => Promise<InputAnswer>) | undefined;
    /** Told the call's CLIENT span as it starts (tracing on): what requests waiting on shared work link to. */
    onSpan?: ((trace: TraceContext) => void) | undefined;
}

/**
 * The catalog tells only "ready" (requests can be sent) from every other state. An upstream's list is read
 * again after a list change, and dropped when it enters or leaves "ready". `announcing`: whether it announces its
 * changes (`announcesChanges`) changed while connected (a 2026-07-28 upstream's subscription acknowledged or dropped).
 */
export type UpstreamPortEvent =
    | { type: 'state'; upstreamId: string; state: string; previous: string }
    | { type: 'prompts-changed'; upstreamId: string; trace?: TraceContext | undefined }
    | { type: 'announcing'; upstreamId: string };

export interface UpstreamPort {
    readonly id: string;
    readonly state: string;
    readonly config: {
        /** The longest a list read keeps a reader waiting, before the last good list is served; none for lists read from memory. */
        readonly timeoutMs?: number;
        /** Whether its prompts are exposed as `<id><separator><name>`. */
        readonly namespace: boolean;
        /** How often its list is read again when it cannot announce changes (else caching.relistIntervalMs). */
        readonly relistIntervalMs?: number | undefined;
    };
    /**
     * Whether it tells of every change to its list through a live channel (list_changed on a 2025 session that
     * declared it, a 2026-07-28 subscription acknowledged and open, a watched folder): if not, its list is read again
     * on a schedule. Read after every list read, and on each `announcing` event.
     */
    readonly announcesChanges: boolean;
    readonly events: { subscribe(listener: (event: UpstreamPortEvent) => void): () => void };
    /**
     * `ttlMs`: how long the upstream itself says its list holds (a 2026-07-28 upstream's caching hint), if it says;
     * `traces`: the CLIENT spans of the calls that read it (tracing on), at most MAX_SPAN_LINKS.
     */
    listPrompts(): Promise<{ items: readonly ListedPrompt[]; ttlMs?: number | undefined; traces?: readonly TraceContext[] | undefined }>;
    getPrompt(name: string, args: Record<string, string> | undefined, control?: CallControl, continuation?: Continuation): Promise<GetPromptResult | InputRequired>;
    /** undefined when the upstream does not offer completions. */
    complete(params: CompleteRequest['params'], control?: CallControl): Promise<CompleteResult | undefined>;
    /** Counts a fault of this upstream and logs it. */
    reportFault(kind: FaultKind, message: string, details?: Record<string, unknown>): void;
}

/** The upstream (or the gateway on its behalf) rejected the client's request: its code and message are the client's to see. */
export class UpstreamRejectedError extends Error {
    override readonly name = 'UpstreamRejectedError';

    constructor(
        message: string,
        readonly code: number = CODE.invalidParams,
        readonly data?: unknown
    ) {
        super(message);
    }
}

/**
 * Thrown by an onInputRequest handler: the client cannot answer the upstream's request (it did not declare what it
 * needs). The call is cancelled upstream, the upstream's request answered with an error, and the call fails with this:
 * CODE.missingClientCapability and its data pass to the client.
 */
export class InputRefusedError extends UpstreamRejectedError {
    constructor(error: RpcError) {
        super(error.message, error.code, error.data);
    }
}

export class UpstreamFailedError extends Error {
    override readonly name = 'UpstreamFailedError';

    constructor(
        readonly upstreamId: string,
        readonly reason: string,
        /**
         * undefined when the failure is not the upstream's fault (e.g. the caller cancelled) or is counted
         * elsewhere (a lost connection, as `disconnected`). No default: `undefined` would take it.
         */
        readonly fault: FaultKind | undefined
    ) {
        super(`Upstream ${upstreamId} failed: ${reason}`);
    }
}
