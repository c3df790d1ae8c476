/**
 * The gateway's Prometheus metrics, in a registry of their own (an embedding
 * application's default registry is left alone). Events are recorded as they
 * happen, on the request's path (BENCHMARKS.md measures what that costs).
 * Gauges that describe state
 * (upstreams, sessions, requests in flight, fault counts) are read from their owners at scrape time
 * instead of being kept in step.
 *
 * This module knows no other layer: callers pass plain strings, and label
 * values they pass must already be bounded (catalog names, configured ids,
 * closed lists).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric, type OpenMetricsContentType } from 'prom-client';

/** The label value for a prompt or upstream that is not in the catalog. */
export const UNKNOWN_LABEL = '_unknown';

/**
 * The MCP operation histograms (OpenTelemetry's `mcp.server.operation.duration`, `mcp.client.operation.duration`):
 * from a millisecond to a minute, the range of a prompt get through slow upstreams. Nothing finer: the server's carries
 * a series per prompt.
 */
const OPERATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** MCP's names for the operations, the `method` label of the operation histograms. */
const MCP_METHODS = { list: 'prompts/list', get: 'prompts/get', complete: 'completion/complete' } as const;

/** Read at scrape time. */
export interface MetricSources {
    upstreams(): readonly { id: string; up: boolean; prompts: number }[];
    sessions(): Record<string, number>;
    /** Client requests in flight by kind: `call` (answered once), `listen` (a 2026-07-28 subscriptions/listen, open). */
    requestsInFlight(): Record<'call' | 'listen', number>;
    /** With cluster.redis only: whether that Redis does the shared state's work, and how many writes wait for it. */
    sharedState?: { up(): boolean; pendingWrites(): number } | undefined;
    faults(): Iterable<{ upstream: string; kind: string; count: number }>;
    /** Input requests waiting for a client's answer: `asked` out to 2025 clients, `held` 2025 upstreams' calls kept for 2026-07-28 clients. */
    inputWaiting?: (() => Record<'asked' | 'held', number>) | undefined;
    /** With tracing on: the spans that never reached the collector, by reason (observability/tracing.ts SpanDropReason). */
    spansDropped?: (() => Record<string, number>) | undefined;
}

export interface PromptRequest {
    operation: 'list' | 'get' | 'complete';
    client: string;
    /** undefined for lists, unknown names and resource completions. */
    upstream: string | undefined;
    prompt: string | undefined;
    outcome: string;
    seconds: number;
    /** A get whose upstream asked its client for input: the rounds it put to the client, and the path they took. */
    rounds?: number | undefined;
    path?: string | undefined;
    /** The request's trace: an exemplar of the server operation histogram (OpenMetrics scrapes show it) when sampled. */
    trace?: { traceId: string; spanId?: string | undefined; sampled: boolean } | undefined;
}

/** One input request's end: names only, never what was asked or answered. */
export interface InputRequestEnd {
    upstream: string;
    path: string;
    method: string;
    outcome: string;
}

export interface MetricsOptions {
    version: string;
    /** Process metrics (CPU, memory, event loop, GC) as prom-client names them. */
    processMetrics?: boolean;
}

/** One metric: its name and help (both part of the interface dashboards and alerts are built on), and its labels. */
interface MetricSpec {
    name: string;
    help: string;
    labels?: string[];
}

/** Recorded as events happen. */
const RECORDED = {
    promptGets: {
        name: 'mcp_gateway_prompt_gets_total',
        help: 'prompts/get requests by owning upstream, prompt, client and outcome.',
        labels: ['upstream', 'prompt', 'client', 'outcome']
    },
    serverOperationDuration: {
        name: 'mcp_server_operation_duration_seconds',
        help: "Time to answer a client's MCP request (OpenTelemetry mcp.server.operation.duration), by method, owning upstream (gets and completions) and outcome; prompt: the exposed name, on successful prompts/get only.",
        labels: ['method', 'upstream', 'outcome', 'prompt']
    },
    clientOperationDuration: {
        name: 'mcp_client_operation_duration_seconds',
        help: "Time of the gateway's MCP requests to upstreams (OpenTelemetry mcp.client.operation.duration), a wait for a free slot included, by method, upstream and outcome.",
        labels: ['method', 'upstream', 'outcome']
    },
    promptLists: { name: 'mcp_gateway_prompt_lists_total', help: 'prompts/list requests (pages) by client.', labels: ['client'] },
    completions: { name: 'mcp_gateway_completions_total', help: 'completion/complete requests by owning upstream, prompt and outcome.', labels: ['upstream', 'prompt', 'outcome'] },
    reconnects: { name: 'mcp_gateway_upstream_reconnects_total', help: 'Reconnect attempts, after a lost connection or a failed attempt.', labels: ['upstream'] },
    listChangedSent: { name: 'mcp_gateway_list_changed_sent_total', help: 'notifications/prompts/list_changed sent to client sessions.' },
    rejected: { name: 'mcp_gateway_requests_rejected_total', help: 'HTTP requests turned away before MCP handled them, by reason.', labels: ['reason'] },
    streamsClosed: {
        name: 'mcp_gateway_streams_closed_total',
        help: 'Client streams (GET, subscriptions/listen, streamed answers) the gateway ended: slow_consumer (the client stopped reading), client_revoked (a reload removed its client or changed its credentials).',
        labels: ['reason']
    },
    inputRounds: {
        name: 'mcp_gateway_input_rounds_total',
        help: 'Rounds of input (elicitation, sampling, roots) prompt gets put to their clients, by owning upstream and path: mrtr (2026-07-28 upstream and client), mrtr_to_request (2026-07-28 upstream, 2025 client), request (2025 upstream and client), request_to_mrtr (2025 upstream, 2026-07-28 client).',
        labels: ['upstream', 'path']
    },
    inputRequests: {
        name: 'mcp_gateway_input_requests_total',
        help: 'Input requests upstreams put to clients through the gateway, by owning upstream, path, method and how each ended: answered, passed (handed to a 2026-07-28 client in input_required), refused (the client did not declare it), timeout, cancelled, failed.',
        labels: ['upstream', 'path', 'method', 'outcome']
    },
    cacheHits: { name: 'mcp_gateway_catalog_cache_hits_total', help: "Reads of an upstream's prompt list served from the catalog cache.", labels: ['upstream'] },
    cacheMisses: {
        name: 'mcp_gateway_catalog_cache_misses_total',
        help: "Reads of an upstream's prompt list that had to wait for the upstream (or got its last good list).",
        labels: ['upstream']
    }
} satisfies Record<string, MetricSpec>;

/** A sample's labels and value. */
type Sample = [Record<string, string>, number];

/** Read from their owners at scrape time: each sample's labels and value. */
interface ScrapedSpec extends MetricSpec {
    type: 'gauge' | 'counter';
    read: () => Iterable<Sample>;
}

/** Every metric read from its owner at scrape time; the optional parts' only when their owner exists. */
function scraped(sources: MetricSources, listChangedReceived: ReadonlyMap<string, number>): ScrapedSpec[] {
    const { sharedState, inputWaiting, spansDropped } = sources;
    return [
        ...upstreamMetrics(sources, listChangedReceived),
        ...clientMetrics(sources),
        ...(inputWaiting === undefined ? [] : [inputWaitingMetric(inputWaiting)]),
        ...(spansDropped === undefined ? [] : [spansDroppedMetric(spansDropped)]),
        ...(sharedState === undefined ? [] : sharedStateMetrics(sharedState))
    ];
}

/** One sample per key of `counts`, the key as the `label` label. */
function samplesBy(label: string, counts: Readonly<Record<string, number>>): Sample[] {
    return Object.entries(counts).map(([value, count]): Sample => [{ [label]: value }, count]);
}

function upstreamMetrics(sources: MetricSources, listChangedReceived: ReadonlyMap<string, number>): ScrapedSpec[] {
    const perUpstream = (value: (upstream: ReturnType<MetricSources['upstreams']>[number]) => number) => () =>
        sources.upstreams().map((upstream): Sample => [{ upstream: upstream.id }, value(upstream)]);
    return [
        {
            type: 'gauge',
            name: 'mcp_gateway_upstream_up',
            help: '1 while the upstream is connected, else 0.',
            labels: ['upstream'],
            read: perUpstream(upstream => (upstream.up ? 1 : 0))
        },
        {
            type: 'gauge',
            name: 'mcp_gateway_upstream_prompts',
            help: 'Prompts of the upstream in the catalog clients were last told about.',
            labels: ['upstream'],
            read: perUpstream(upstream => upstream.prompts)
        },
        {
            type: 'counter',
            name: 'mcp_gateway_upstream_faults_total',
            help: 'Upstream misbehaviour by kind (timeouts, lost connections, invalid results, ...).',
            labels: ['upstream', 'kind'],
            read: () => Array.from(sources.faults(), ({ upstream, kind, count }): Sample => [{ upstream, kind }, count])
        },
        {
            type: 'counter',
            name: 'mcp_gateway_list_changed_received_total',
            help: 'notifications/prompts/list_changed from upstreams.',
            labels: ['upstream'],
            read: () => Array.from(listChangedReceived, ([upstream, count]): Sample => [{ upstream }, count])
        }
    ];
}

function clientMetrics(sources: MetricSources): ScrapedSpec[] {
    return [
        {
            type: 'gauge',
            name: 'mcp_gateway_sessions',
            help: 'Open client sessions by transport.',
            labels: ['transport'],
            read: () => samplesBy('transport', sources.sessions())
        },
        {
            type: 'gauge',
            name: 'mcp_gateway_requests_in_flight',
            help: 'Client requests taken and not yet answered, over both transports: call (answered once), listen (a 2026-07-28 subscriptions/listen, open until either side ends it).',
            labels: ['kind'],
            read: () => samplesBy('kind', sources.requestsInFlight())
        }
    ];
}

function inputWaitingMetric(inputWaiting: NonNullable<MetricSources['inputWaiting']>): ScrapedSpec {
    return {
        type: 'gauge',
        name: 'mcp_gateway_input_waiting',
        help: "Input requests waiting for a client's answer now: asked (the gateway's requests out to 2025 clients), held (2025 upstreams' prompt calls kept open while their 2026-07-28 clients answer in input_required rounds; at most inputRequests.maxHeld).",
        labels: ['kind'],
        read: () => samplesBy('kind', inputWaiting())
    };
}

function spansDroppedMetric(spansDropped: NonNullable<MetricSources['spansDropped']>): ScrapedSpec {
    return {
        type: 'counter',
        name: 'mcp_gateway_spans_dropped_total',
        help: 'With tracing on: spans that never reached the collector, by reason: queue_full (ended while the export queue, tracing.maxQueueSize, was full), export_failed (in an export the collector did not take).',
        labels: ['reason'],
        read: () => samplesBy('reason', spansDropped())
    };
}

function sharedStateMetrics(sharedState: NonNullable<MetricSources['sharedState']>): ScrapedSpec[] {
    return [
        {
            type: 'gauge',
            name: 'mcp_gateway_shared_state_up',
            help: 'With cluster.redis: 1 while the Redis the replicas share does their work, 0 while each replica limits on its own (Redis unreachable, refusing writes or not answering).',
            read: (): Sample[] => [[{}, sharedState.up() ? 1 : 0]]
        },
        {
            type: 'gauge',
            name: 'mcp_gateway_shared_writes_pending',
            help: 'With cluster.redis: writes the other replicas must see (ended sessions, quota releases, last uses) kept until Redis takes them.',
            read: (): Sample[] => [[{}, sharedState.pendingWrites()]]
        }
    ];
}

/** A scraped metric: emptied, then filled from its owner, at each scrape. */
function register({ type, name, help, labels = [], read }: ScrapedSpec, registers: Registry[]): void {
    if (type === 'gauge') {
        new Gauge({
            name,
            help,
            labelNames: labels,
            registers,
            collect() {
                this.reset();
                for (const [sample, value] of read()) this.set(sample, value);
            }
        });
        return;
    }
    new Counter({
        name,
        help,
        labelNames: labels,
        registers,
        collect() {
            this.reset();
            for (const [sample, value] of read()) this.inc(sample, value);
        }
    });
}

export class GatewayMetrics {
    readonly registry = new Registry();

    readonly #promptGets: Counter;
    readonly #serverOperations: Histogram;
    readonly #clientOperations: Histogram;
    readonly #promptLists: Counter;
    readonly #completions: Counter;
    readonly #reconnects: Counter;
    /** Counted in a plain map and read at scrape time: an upstream may send tens of thousands a second. */
    readonly #listChangedReceived = new Map<string, number>();
    readonly #listChangedSent: Counter;
    readonly #rejected: Counter;
    readonly #streamsClosed: Counter;
    readonly #cacheHits: Counter;
    readonly #cacheMisses: Counter;
    readonly #inputRounds: Counter;
    readonly #inputRequests: Counter;

    constructor(sources: MetricSources, options: MetricsOptions) {
        const registers = [this.registry];
        const counter = ({ name, help, labels = [] }: MetricSpec) => new Counter({ name, help, labelNames: labels, registers });

        new Gauge({ name: 'mcp_gateway_info', help: 'Always 1; the gateway version as a label.', labelNames: ['version'], registers }).set({ version: options.version }, 1);
        this.#promptGets = counter(RECORDED.promptGets);
        const operations = ({ name, help, labels = [] }: MetricSpec, enableExemplars: boolean) => {
            // prom-client refuses a metric with exemplars at construction on a Prometheus-format registry, although
            // that format merely leaves them out: registered afterwards, exposition() shows them in OpenMetrics.
            const made = new Histogram({ name, help, labelNames: labels, buckets: OPERATION_BUCKETS, enableExemplars, registers: [] });
            this.registry.registerMetric(made);
            return made;
        };
        this.#serverOperations = operations(RECORDED.serverOperationDuration, true);
        this.#clientOperations = operations(RECORDED.clientOperationDuration, false);
        this.#promptLists = counter(RECORDED.promptLists);
        this.#completions = counter(RECORDED.completions);
        this.#reconnects = counter(RECORDED.reconnects);
        this.#listChangedSent = counter(RECORDED.listChangedSent);
        this.#rejected = counter(RECORDED.rejected);
        this.#streamsClosed = counter(RECORDED.streamsClosed);
        this.#cacheHits = counter(RECORDED.cacheHits);
        this.#cacheMisses = counter(RECORDED.cacheMisses);
        this.#inputRounds = counter(RECORDED.inputRounds);
        this.#inputRequests = counter(RECORDED.inputRequests);
        for (const spec of scraped(sources, this.#listChangedReceived)) register(spec, registers);
        if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
    }

    promptRequest({ operation, client, upstream = UNKNOWN_LABEL, prompt = UNKNOWN_LABEL, outcome, seconds, rounds, path, trace }: PromptRequest): void {
        const method = MCP_METHODS[operation];
        // Per prompt for successful gets only, as far as the catalog's names bound it: failures of made-up names stay one series.
        const labels = operation === 'list' ? { method, outcome } : operation === 'get' && outcome === 'ok' ? { method, upstream, outcome, prompt } : { method, upstream, outcome };
        this.#serverOperations.observe({ labels, value: seconds, exemplarLabels: exemplarOf(trace) });
        switch (operation) {
            case 'get':
                this.#promptGets.inc({ upstream, prompt, client, outcome });
                if (rounds !== undefined && path !== undefined) this.#inputRounds.inc({ upstream, path }, rounds);
                return;
            case 'list':
                this.#promptLists.inc({ client });
                return;
            case 'complete':
                this.#completions.inc({ upstream, prompt, outcome });
                return;
        }
    }

    /** `outcome`: as a client request's (catalog/usage.ts Outcome). */
    upstreamRequest(upstream: string, method: string, seconds: number, outcome: string): void {
        this.#clientOperations.observe({ method, upstream, outcome }, seconds);
    }

    reconnecting(upstream: string): void {
        this.#reconnects.inc({ upstream });
    }

    listChanged(upstream: string): void {
        this.#listChangedReceived.set(upstream, (this.#listChangedReceived.get(upstream) ?? 0) + 1);
    }

    listChangedSent(): void {
        this.#listChangedSent.inc();
    }

    rejected(reason: string): void {
        this.#rejected.inc({ reason });
    }

    streamsClosed(reason: string, count = 1): void {
        this.#streamsClosed.inc({ reason }, count);
    }

    inputRequestEnded({ upstream, path, method, outcome }: InputRequestEnd): void {
        this.#inputRequests.inc({ upstream, path, method, outcome });
    }

    cacheRead(upstream: string, hit: boolean): void {
        (hit ? this.#cacheHits : this.#cacheMisses).inc({ upstream });
    }

    /** All prompt gets so far, whatever their labels. */
    async promptGetsTotal(): Promise<number> {
        const { values } = await this.#promptGets.get();
        return values.reduce((sum, value) => sum + value.value, 0);
    }

    /**
     * The text exposition, and its content type: OpenMetrics (with the operation histograms' trace exemplars) when
     * the scrape asks for it (see wantsOpenMetrics), else Prometheus' text format.
     */
    async exposition(openMetrics = false): Promise<{ contentType: string; body: string }> {
        if (!openMetrics) return { contentType: this.registry.contentType, body: await this.registry.metrics() };
        const registry = new Registry<OpenMetricsContentType>();
        registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
        // prom-client renames a counter it renders as OpenMetrics (it strips `_total`, and keeps it stripped: the
        // Prometheus format and the dashboard would lose the suffix): each metric is rendered through a view of its
        // own whose name it may change.
        for (const metric of this.registry.getMetricsAsArray()) registry.registerMetric(renamable(metric));
        return { contentType: registry.contentType, body: await registry.metrics() };
    }
}

/** A scrape's Accept header asks for OpenMetrics (Prometheus sends it first, with a q-value, when exemplars are stored). */
export function wantsOpenMetrics(accept: string | undefined): boolean {
    if (accept === undefined) return false;
    return accept.split(',').some(range => {
        const [type = '', ...parameters] = range.split(';').map(part => part.trim().toLowerCase());
        return type === 'application/openmetrics-text' && !parameters.some(parameter => /^q=0(\.0*)?$/.test(parameter));
    });
}

const NO_EXEMPLAR = Object.freeze({});

/** OpenMetrics bounds an exemplar's labels to 128 characters (prom-client throws beyond): W3C ids take 63. */
const MAX_TRACE_CHARACTERS = 48;

/** Only a sampled trace is an exemplar: one a tracing backend holds, that a click through from a bucket finds. */
function exemplarOf(trace: PromptRequest['trace']): Record<string, string> {
    if (trace?.sampled !== true || trace.traceId.length + (trace.spanId?.length ?? 0) > MAX_TRACE_CHARACTERS) return NO_EXEMPLAR;
    return trace.spanId === undefined ? { trace_id: trace.traceId } : { trace_id: trace.traceId, span_id: trace.spanId };
}

/** `metric` (a registry's: prom-client types them as plain objects) with a name of its own; the rest, values included, is the metric's. */
function renamable(metric: { name: string }): Metric {
    return Object.create(metric, { name: { value: metric.name, writable: true, enumerable: true } }) as Metric;
}
