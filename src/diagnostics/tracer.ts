/**
 * The tracing port: what the layers need of spans, declared at the ground so
 * that every layer may take one (as a constructor option, as its observers),
 * none imports OpenTelemetry, and observability/tracing.ts is the one module
 * that builds a real one. Context is a parameter: a span starts from the trace
 * context its request carries (protocol/meta.ts TraceContext), never from an
 * ambient one, and its owner ends it.
 *
 * Off, the tracer is NO_TRACER: `enabled` is false and callers build no names,
 * attributes or spans at all (check `enabled` first).
 */
import type { TraceContext } from '../protocol/meta.js';

/**
 * Span attribute names, the one table every layer takes them from: the OTel semantic conventions for MCP
 * (docs/observability.md#traces), and the gateway's own under `mcp.gateway.` and `mcp.input.`.
 */
export const ATTR = {
    method: 'mcp.method.name',
    protocolVersion: 'mcp.protocol.version',
    sessionId: 'mcp.session.id',
    requestId: 'jsonrpc.request.id',
    prompt: 'gen_ai.prompt.name',
    transport: 'network.transport',
    clientAddress: 'client.address',
    serverAddress: 'server.address',
    serverPort: 'server.port',
    statusCode: 'rpc.response.status_code',
    clientId: 'mcp.gateway.client.id',
    upstream: 'mcp.gateway.upstream.id',
    upstreams: 'mcp.gateway.upstream.ids',
    inputOutcome: 'mcp.input.outcome',
    inputResponses: 'mcp.input.responses',
    streamAttempt: 'mcp.stream.attempt'
} as const;

export type SpanAttributes = Record<string, string | number | boolean | readonly string[] | undefined>;

/**
 * CLIENT: a call the gateway makes; SERVER: a request it serves; CONSUMER: a notification it receives (an upstream's
 * list_changed); PRODUCER: one it sends (to a client); INTERNAL: its own work.
 */
export type SpanKind = 'server' | 'client' | 'internal' | 'producer' | 'consumer';

export interface SpanStart {
    kind: SpanKind;
    /** The context it continues (its parent); none: a root span. */
    parent?: TraceContext | undefined;
    attributes?: SpanAttributes | undefined;
    /** Spans it follows from without being their child (list_changed delivery). */
    links?: readonly TraceContext[] | undefined;
}

export interface TraceSpan {
    /** The trace context to carry on for work under this span: its own traceparent, the parent's tracestate and baggage. */
    readonly context: TraceContext;
    readonly traceId: string;
    readonly spanId: string;
    /** Whether it is recorded (and exported): false, it is the sampler's "no" and its id names nothing a backend holds. */
    readonly sampled: boolean;
    set(attributes: SpanAttributes): void;
    /** Its name once what it is about is known (a request's prompt, once it resolved to one the caller sees). */
    rename(name: string): void;
    event(name: string, attributes?: SpanAttributes): void;
    /** A span it follows from without being its child, known only once started (a shared read it waited for). */
    link(context: TraceContext, attributes?: SpanAttributes): void;
    /** Status ERROR with `error.type` (and the attributes given, e.g. `rpc.response.status_code`). */
    fail(errorType: string, attributes?: SpanAttributes): void;
    end(): void;
}

export interface Tracer {
    readonly enabled: boolean;
    /** undefined when the tracer is off. */
    start(name: string, options: SpanStart): TraceSpan | undefined;
}

/**
 * Links one span keeps to the spans it follows from (list_changed delivery): OTel's default span limit is 128, and a
 * flooding upstream's notifications are not all remembered.
 */
export const MAX_SPAN_LINKS = 32;

export const NO_TRACER: Tracer = Object.freeze({ enabled: false, start: () => undefined });
