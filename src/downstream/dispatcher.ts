/**
 * The MCP methods the gateway serves, for every transport (Streamable HTTP and
 * stdio hand it parsed, envelope-checked messages): `ping`, `prompts/list`,
 * `prompts/get`, `completion/complete`, and the notifications `initialized` and
 * `cancelled`. `initialize` itself is the transport's (it opens the session),
 * with the answer built here. A request of the stateless revision (2026-07-28)
 * is served from what it carries (its RequestContext): `server/discover` in
 * place of `ping`, `resultType` on every result, caching hints on lists;
 * `subscriptions/listen` is the transport's (it holds a stream open).
 *
 * The lists of tools, resources and resource templates are answered empty though neither capability is declared:
 * some clients (Codex) ask for tools whatever a server declares, and take -32601 as a failed server. Every other
 * method of tools and resources stays -32601.
 *
 * Errors: a method the gateway does not serve is -32601, malformed params
 * -32602 `Invalid params for <method>`, and the catalog's errors pass as they
 * are (it throws JSON-RPC errors). Anything else is -32603 "Internal error":
 * messages never carry exception text, inputs or internals; the log gets them.
 * A request cancelled by its client, or whose session ended, gets no answer; one
 * the gateway stopped waiting for at shutdown gets -32603. Which requests are in
 * flight (and so which ids are taken) is the transports' registry's (requests.ts).
 */
import { ProtocolError, type InitializeResult, type JSONRPCErrorResponse, type JSONRPCRequest, type JSONRPCResponse } from '@modelcontextprotocol/client';
import type { Caller, PromptService } from '../catalog/service.js';
import type { UsageEvent } from '../catalog/usage.js';
import { isInputRequired, type CallControl } from '../catalog/upstream-port.js';
import { describeError, type Logger } from '../diagnostics/logger.js';
import { ATTR, type SpanAttributes, type TraceSpan, type Tracer } from '../diagnostics/tracer.js';
import { NO_RELAYED_CAPABILITIES, relayedClient, relayedSession, type RelayedClient } from '../protocol/capabilities.js';
import { capabilityBits, inputCapabilities } from '../protocol/input-requests.js';
import { adaptGetPrompt, adaptProgress, adaptPromptList } from '../protocol/adapt.js';
import { CODE, errorForClient, REFUSALS, type RpcError } from '../protocol/errors.js';
import { META, requestTraceContext, type TraceContext } from '../protocol/meta.js';
import { requestedPromptName } from '../protocol/requested-prompt.js';
import { negotiateHandshake, SUPPORTED_VERSIONS, type Revision } from '../protocol/revisions.js';
import { GATEWAY_INFO } from '../version.js';
import type { ClientInput } from '../catalog/interaction.js';
import type { SendToClient } from './client-requests.js';
import { abortedByShutdown, type Ticket } from './requests.js';
import type { CancelSignal } from '../lib/cancel-signal.js';
import { completeParams, getParams, initializeParams, listParams, metaOf, type InitializeParams, type Params, type ProgressToken } from './params.js';

/** Who may keep a 2026-07-28 list page (cacheScope): anyone, or only the same caller. */
export type CacheScope = 'public' | 'private';

/**
 * What the dispatcher needs of who asks: a 2025-era session (sessions.ts) is one; a 2026-07-28 request gets one of
 * its own, from what it carries.
 */
export interface RequestContext {
    readonly caller: Caller;
    readonly revision: Revision;
    /** Whether completion/complete is served (the gateway declared `completions`). */
    readonly completions: boolean;
    /** For 2026-07-28 list pages: "public" only when every caller is served the same view. */
    readonly cacheScope: CacheScope;
    /**
     * A 2025-era session: its client as the catalog asks it what an upstream asks, on the stream of the request being
     * served (`send`). Absent for a 2026-07-28 request: its `_meta` says what it can answer, and it answers by retrying.
     */
    clientInput?(send: SendToClient | undefined): ClientInput;
    /** A 2026-07-28 request: what its sealed state is bound to besides its caller (the anonymous client's address over HTTP); '' when absent. */
    readonly holder?: string | undefined;
}

/** One request as its transport carries it. */
export interface Exchange {
    context: RequestContext;
    /**
     * Its ticket (requests.ts): aborted when the client cancels, goes away, or its session ends (the upstream call
     * stops, the answer is dropped), or at shutdown (answered -32603); its service call is waited for through it.
     */
    ticket: CancelSignal & Pick<Ticket, 'until'>;
    /**
     * Puts a message about this request where its answer goes, before the answer: a progress notification, or the
     * gateway's own request to a 2025 client (and its cancellation); false once that is gone. Absent where none can go.
     */
    send?: SendToClient | undefined;
    /** What its upstream call carries of it: its request id, and the headers passed on. */
    forwarded?: CallControl['forwarded'];
    /** Where it came from, for its span. */
    origin?: RequestOrigin | undefined;
}

/** Where a request came from: its transport (`tcp` for HTTP, `pipe` for stdio), the caller's address, a 2025 HTTP session's id. */
export interface RequestOrigin {
    readonly transport: 'tcp' | 'pipe';
    /** The caller's address as the gateway knows it (`listen.trustProxy` applied): asked only when a span is made. */
    readonly address?: (() => string | undefined) | undefined;
    readonly session?: string | undefined;
}

/** Who a SERVER span says asked, in which revision (unknown before a 2025 session settled one). */
export interface SpanSubject {
    clientId: string;
    protocolVersion?: string | undefined;
}

export interface DispatcherOptions {
    service: PromptService;
    logger: Logger;
    /**
     * ttlMs of list pages (caching.listTtlMs, or less while the gateway cannot vouch for its lists that long) and of
     * server/discover (caching.discoverTtlMs), read per request (a reload applies them at once).
     */
    ttlMs: () => { list: number; discover: number };
    /** Spans of the requests served (NO_TRACER: none). */
    tracer?: Tracer | undefined;
}

export interface Initialized {
    /** What the client sent, checked. */
    params: InitializeParams;
    /** The revision settled on. */
    protocolVersion: string;
    /** What the client can be asked (elicitation, sampling, roots) in that revision: capabilityBits, for its session. */
    input: number;
    result: InitializeResult;
}

/** A second `initialize` in a session (2025 lifecycle: one per session), on either transport. */
export const ALREADY_INITIALIZED = REFUSALS.already_initialized;

/** What an `initialize` settles (the transport opens or renegotiates its session with it), or the -32602 answering it. */
export function initialize(request: JSONRPCRequest, completions: boolean): Initialized | JSONRPCErrorResponse {
    const valid = initializeParams(request.params);
    if (valid === undefined) {
        const { code, message } = invalidParams(request.method);
        return errorResponse(request, { code, message });
    }
    const revision = negotiateHandshake(valid.protocolVersion);
    const { version: protocolVersion } = revision;
    const capabilities = { prompts: { listChanged: true }, ...(completions ? { completions: {} } : {}) };
    const input = capabilityBits(inputCapabilities(valid.capabilities, revision));
    return { params: valid, protocolVersion, input, result: { protocolVersion, capabilities, serverInfo: GATEWAY_INFO } };
}

function invalidParams(method: string): ProtocolError {
    return new ProtocolError(CODE.invalidParams, `Invalid params for ${method}`);
}

/** Lists the gateway answers empty (see above), with the key of each one's items. */
const EMPTY_LISTS: Readonly<Record<string, string>> = { 'tools/list': 'tools', 'resources/list': 'resources', 'resources/templates/list': 'resourceTemplates' };

function methodNotFound(): ProtocolError {
    return new ProtocolError(REFUSALS.unknown_method.code, REFUSALS.unknown_method.message);
}

export class Dispatcher {
    constructor(private readonly options: DispatcherOptions) {}

    /**
     * The response to `request`; undefined when it was cancelled (no answer is due). Never throws. Not async itself:
     * with tracing off it is #respond's promise, no second one wrapped around it.
     */
    answer(request: JSONRPCRequest, given: Exchange): Promise<JSONRPCResponse | undefined> {
        const exchange = withTrace(given, requestTraceContext(request.params));
        const { tracer } = this.options;
        if (tracer?.enabled !== true) return this.#respond(request, exchange, exchange.forwarded?.trace);
        return this.#traced(request, exchange, tracer);
    }

    async #traced(request: JSONRPCRequest, exchange: Exchange, tracer: Tracer): Promise<JSONRPCResponse | undefined> {
        const span = tracer.start(spanMethod(request.method), {
            kind: 'server',
            parent: exchange.forwarded?.trace,
            attributes: serverSpanAttributes(request, exchange.context, exchange.origin)
        });
        if (span === undefined) return this.#respond(request, exchange, exchange.forwarded?.trace);
        const response = await this.#respond(request, withTrace(exchange, span.context), span);
        endServerSpan(span, response);
        return response;
    }

    /**
     * The SERVER span of a request answered without `answer` (an initialize, the opening of a subscriptions/listen, a
     * request refused before it was served), as `answer` would start it; undefined with tracing off (nothing is built).
     * Its owner ends it with endServerSpan.
     */
    serverSpan(request: JSONRPCRequest, subject: SpanSubject | RequestContext, from: Pick<Exchange, 'forwarded' | 'origin'>): TraceSpan | undefined {
        const { tracer } = this.options;
        if (tracer?.enabled !== true) return undefined;
        const parent = requestTraceContext(request.params) ?? from.forwarded?.trace;
        return tracer.start(spanMethod(request.method), { kind: 'server', parent, attributes: serverSpanAttributes(request, subject, from.origin) });
    }

    /** `trace`: what the usage event names (the request's span, or the client's trace with tracing off). */
    async #respond(request: JSONRPCRequest, exchange: Exchange, trace: TraceSpan | TraceContext | undefined): Promise<JSONRPCResponse | undefined> {
        const { context } = exchange;
        const signal = exchange.ticket;
        try {
            const result = await this.#run(request, exchange, trace);
            if (signal.aborted) return aborted(request, signal);
            return { jsonrpc: '2.0', id: request.id, result: this.#forRevision(request.method, result, context) };
        } catch (error) {
            return signal.aborted
                ? aborted(request, signal)
                : errorResponse(request, errorForClient(this.#errorOf(error, request.method, exchange.forwarded?.requestId), context.revision.era === 'stateless'));
        }
    }

    /** Whether a request of the context's revision can be served here (else -32601; over HTTP, 404 for 2026-07-28). */
    serves(method: string, context: RequestContext): boolean {
        switch (method) {
            case 'prompts/list':
            case 'prompts/get':
                return true;
            case 'completion/complete':
                return context.completions;
            case 'server/discover':
                return context.revision.discover;
            case 'ping':
                return context.revision.handshake;
            default:
                return Object.hasOwn(EMPTY_LISTS, method);
        }
    }

    /**
     * What the revision adds to every result (2026-07-28): `resultType`, the gateway naming itself in `_meta` (an
     * upstream's own serverInfo is replaced), and on list pages how long they stay fresh and for whom (the same scope
     * on every page of a walk: it follows from how callers authenticate, and a cursor is bound to its caller). A
     * revision with none of it gets the result as it is.
     */
    #forRevision(method: string, result: Record<string, unknown>, context: RequestContext): Record<string, unknown> {
        const { revision } = context;
        if (!revision.resultType && !revision.serverInfoMeta && !revision.cachingHints) return result;
        const shaped: Record<string, unknown> = { ...result };
        if (revision.resultType) shaped.resultType = result.resultType === 'input_required' ? 'input_required' : 'complete';
        if (revision.serverInfoMeta) shaped._meta = { ...(result._meta as Record<string, unknown> | undefined), [META.serverInfo]: GATEWAY_INFO };
        if (!revision.cachingHints) return shaped;
        if (method === 'prompts/list') return Object.assign(shaped, { ttlMs: this.options.ttlMs().list, cacheScope: context.cacheScope });
        // The same empty list for every caller.
        if (Object.hasOwn(EMPTY_LISTS, method)) return Object.assign(shaped, { ttlMs: this.options.ttlMs().list, cacheScope: 'public' });
        return shaped;
    }

    async #run(request: JSONRPCRequest, exchange: Exchange, traced: TraceSpan | TraceContext | undefined): Promise<Record<string, unknown>> {
        const trace = usageTrace(traced);
        const { method } = request;
        const params: Params = request.params;
        const { service } = this.options;
        const { context, ticket } = exchange;
        if (method === 'initialize' && context.revision.handshake) {
            throw new ProtocolError(ALREADY_INITIALIZED.code, ALREADY_INITIALIZED.message);
        }
        if (!this.serves(method, context)) throw methodNotFound();
        switch (method) {
            case 'ping':
                if (metaOf(params) === undefined) throw invalidParams(method);
                return {};
            case 'server/discover':
                return this.#discover(context);
            case 'prompts/list': {
                const valid = listParams(params) ?? throwError(invalidParams(method));
                return adaptPromptList(
                    await ticket.until(
                        service.list(valid.cursor, context.caller, trace, traced !== undefined && 'spanId' in traced ? traced : undefined, exchange.forwarded?.requestId)
                    ),
                    context.revision
                );
            }
            case 'prompts/get': {
                const valid = getParams(params) ?? throwError(invalidParams(method));
                const input = clientInput(exchange, params);
                const control = this.#control(exchange, params, valid.progressToken, input);
                const onResolved = promptNamer(traced, method, valid.name);
                const request = { name: valid.name, args: valid.arguments, caller: context.caller, control, continuation: valid.continuation, input, trace, onResolved };
                const result = await ticket.until(service.get(request));
                if (!isInputRequired(result)) return adaptGetPrompt(result, context.revision);
                // Passed on as it came (its state sealed); a handshake-era client has no way to answer it.
                if (context.revision.inputRequired) return { ...result };
                throw new ProtocolError(CODE.internalError, `The upstream asked for more input first (input_required), which MCP ${context.revision.version} cannot carry`);
            }
            case 'completion/complete': {
                const valid = completeParams(params) ?? throwError(invalidParams(method));
                const control = this.#control(exchange, params, valid.progressToken);
                const onResolved = valid.request.ref.type === 'ref/prompt' ? promptNamer(traced, method, valid.request.ref.name) : undefined;
                return ticket.until(service.complete(valid.request, context.caller, control, trace, onResolved));
            }
            default:
                return emptyList(method, params);
        }
    }

    /** The same for every caller (what it may see is its lists' business): "public". */
    #discover(context: RequestContext): Record<string, unknown> {
        return {
            supportedVersions: [...SUPPORTED_VERSIONS],
            capabilities: { prompts: { listChanged: true }, ...(context.completions ? { completions: {} } : {}) },
            ttlMs: this.options.ttlMs().discover,
            cacheScope: 'public'
        };
    }

    /**
     * Cancellation, and progress when the client asked for it: the upstream gets a token of the gateway's own, and
     * each of its progress notifications reaches the client under the client's token, where the answer goes; and what
     * the request carries on: its id and headers, and the capabilities of its client a stateless upstream is told
     * (../protocol/capabilities.ts).
     */
    #control(exchange: Exchange, params: Params, progressToken: ProgressToken | undefined, input?: ClientInput): CallControl {
        const { ticket: signal, send, context, forwarded } = exchange;
        const client = relayedOf(context, params, input);
        if (progressToken === undefined || send === undefined) return { signal, forwarded, client };
        return {
            signal,
            forwarded,
            client,
            onProgress: progress => {
                if (signal.aborted) return;
                send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, ...adaptProgress(progress, context.revision) } });
            }
        };
    }

    /** `data` passes only on -32021 (an upstream's required capabilities, checked where the error was taken in). */
    #errorOf(error: unknown, method: string, requestId: string | undefined): RpcError {
        if (error instanceof ProtocolError && Number.isSafeInteger(error.code)) {
            const { code, message, data } = error;
            return code === CODE.missingClientCapability && data !== undefined ? { code, message, data } : { code, message };
        }
        this.options.logger.error({ requestId, err: describeError(error), method }, 'request failed; answered "Internal error"');
        return { code: CODE.internalError, message: 'Internal error' };
    }
}

/**
 * What a stateless upstream is told its client can answer: a 2026-07-28 client what it declared in `_meta` (as it
 * declared it); a 2025 session what it declared at initialize, when a prompts/get can ask it (it has a stream);
 * nothing otherwise (its completions, which ask nothing).
 */
function relayedOf(context: RequestContext, params: Params, input: ClientInput | undefined): RelayedClient {
    if (context.revision.inputRequired) return relayedClient(declaredCapabilities(params));
    return input?.ask === undefined ? NO_RELAYED_CAPABILITIES : relayedSession(capabilityBits(input.capabilities));
}

/**
 * How the request's client answers what an upstream asks: a 2025 session on the request's stream; a 2026-07-28 client
 * by retrying, within what its `_meta` declares. Undefined where neither applies (a context of the handshake era that
 * is no session).
 */
function clientInput({ context, send }: Exchange, params: Params): ClientInput | undefined {
    if (context.clientInput !== undefined) return context.clientInput(send);
    if (!context.revision.inputRequired) return undefined;
    return { capabilities: inputCapabilities(declaredCapabilities(params), context.revision), revision: context.revision, holder: context.holder ?? '' };
}

/** What a 2026-07-28 request's client declares in `_meta` (unchecked). */
function declaredCapabilities(params: Params): unknown {
    return (params?._meta as Params)?.[META.clientCapabilities];
}

/** An empty list of what the gateway does not serve; a cursor cannot be one it gave, so it is invalid. */
function emptyList(method: string, params: Params): Record<string, unknown> {
    const valid = listParams(params);
    if (valid === undefined || valid.cursor !== undefined) throw invalidParams(method);
    return { [EMPTY_LISTS[method]!]: [] };
}

/** The exchange whose upstream calls carry on the request's own trace context (its `_meta`), over its HTTP request's. */
function withTrace(exchange: Exchange, trace: TraceContext | undefined): Exchange {
    return trace === undefined ? exchange : { ...exchange, forwarded: { ...exchange.forwarded, trace } };
}

/** Longer prompt names (or methods) are left out of span names: a span name is for grouping, never a client's payload. */
const MAX_SPAN_NAME_PART = 128;

function spanMethod(method: string): string {
    return method.length > MAX_SPAN_NAME_PART ? 'other' : method;
}

/**
 * Names the request's SERVER span `{mcp.method.name} {target}` once its prompt resolved to one the caller sees (the
 * exposed name it asked for); until then, and for good when it does not, the span is named for the method alone: a
 * client can send any number of names, and a hidden prompt's span must look like a missing one's.
 */
function promptNamer(traced: TraceSpan | TraceContext | undefined, method: string, prompt: string): (() => void) | undefined {
    if (traced === undefined || !('spanId' in traced)) return undefined;
    return () => traced.rename(`${method} ${prompt}`);
}

function requestedPrompt({ method, params }: JSONRPCRequest): string | undefined {
    const named = requestedPromptName(method, params);
    return named !== undefined && named.length <= MAX_SPAN_NAME_PART ? named : undefined;
}

/**
 * The SERVER span's attributes (OTel MCP conventions; the client id under mcp.gateway., never a credential). A
 * request's context names its subject: read only here, when a span is made.
 */
function serverSpanAttributes(request: JSONRPCRequest, of: SpanSubject | RequestContext, origin: RequestOrigin | undefined): SpanAttributes {
    const subject = 'caller' in of ? { clientId: of.caller.scope, protocolVersion: of.revision.version } : of;
    return {
        [ATTR.method]: spanMethod(request.method),
        [ATTR.protocolVersion]: subject.protocolVersion,
        [ATTR.sessionId]: origin?.session,
        [ATTR.requestId]: String(request.id),
        [ATTR.prompt]: requestedPrompt(request),
        [ATTR.transport]: origin?.transport,
        [ATTR.clientAddress]: origin?.address?.(),
        [ATTR.clientId]: subject.clientId
    };
}

/**
 * Ends a SERVER span as its answer went (no span: tracing off): an error answer (or refusal, `{ error }`) is status
 * ERROR with its code; a cancelled request (undefined) an event; anything else a success.
 */
export function endServerSpan(span: TraceSpan | undefined, response: object | undefined): void {
    if (span === undefined) return;
    if (response === undefined) span.event('cancelled');
    else if ('error' in response) {
        const code = String((response as Pick<JSONRPCErrorResponse, 'error'>).error.code);
        span.fail(code, { [ATTR.statusCode]: code });
    }
    span.end();
}

/**
 * What a usage event names of the trace: the request's span (its id only when recorded: an unsampled span's names
 * nothing); with tracing off, the client's trace id alone, sampled as the client's flag says.
 */
function usageTrace(trace: TraceSpan | TraceContext | undefined): UsageEvent['trace'] {
    if (trace === undefined) return undefined;
    if ('spanId' in trace) return trace.sampled ? { traceId: trace.traceId, spanId: trace.spanId, sampled: true } : { traceId: trace.traceId, sampled: false };
    return { traceId: trace.traceId, sampled: trace.sampled };
}

/** A request its client cancelled gets no answer; one cut short by a shutdown an error, not a stream that just ends. */
function aborted(request: JSONRPCRequest, signal: CancelSignal): JSONRPCErrorResponse | undefined {
    return abortedByShutdown(signal) ? errorResponse(request, { code: CODE.internalError, message: (signal.reason as Error).message }) : undefined;
}

export function errorResponse(request: Pick<JSONRPCRequest, 'id'>, error: JSONRPCErrorResponse['error']): JSONRPCErrorResponse {
    return { jsonrpc: '2.0', id: request.id, error };
}

function throwError(error: Error): never {
    throw error;
}
