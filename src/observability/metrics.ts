/**
 * The gateway's Prometheus metrics, in a registry of their own (an embedding
 * application's default registry is left alone). Events are recorded as they
 * happen, on the request's path (BENCHMARKS.md measures what that costs).
 * Gauges that describe state
 * (upstreams, sessions, fault counts) are read from their owners at scrape time
 * instead of being kept in step.
 *
 * This module knows no other layer: callers pass plain strings, and label
 * values they pass must already be bounded (catalog names, configured ids,
 * closed lists).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';

/** Sub-millisecond buckets resolve the gateway's own overhead; the upper ones, slow upstreams. */
const DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The label value for a prompt or upstream that is not in the catalog. */
export const UNKNOWN_LABEL = '_unknown';

/** Quantiles of the per-prompt latency summary, over a sliding window. */
const LATENCY_QUANTILES = [0.5, 0.95, 0.99];
const LATENCY_WINDOW_SECONDS = 600;

/** Read at scrape time. */
export interface MetricSources {
    upstreams(): readonly { id: string; up: boolean; prompts: number }[];
    sessions(): Record<string, number>;
    /** With cluster.redis only: whether that Redis does the shared state's work, and how many writes wait for it. */
    sharedState?: { up(): boolean; pendingWrites(): number } | undefined;
    faults(): Iterable<{ upstream: string; kind: string; count: number }>;
}

export interface PromptRequest {
    operation: 'list' | 'get' | 'complete';
    client: string;
    /** undefined for lists, unknown names and resource completions. */
    upstream: string | undefined;
    prompt: string | undefined;
    outcome: string;
    seconds: number;
}

export interface MetricsOptions {
    version: string;
    /** Process metrics (CPU, memory, event loop, GC) as prom-client names them. */
    processMetrics?: boolean;
}

export class GatewayMetrics {
    readonly registry = new Registry();

    readonly #promptGets: Counter;
    readonly #promptGetDuration: Histogram;
    readonly #promptLatency: Summary;
    readonly #promptLists: Counter;
    readonly #promptListDuration: Histogram;
    readonly #completions: Counter;
    readonly #upstreamRequestDuration: Histogram;
    readonly #reconnects: Counter;
    /** Counted in a plain map and read at scrape time: an upstream may send tens of thousands a second. */
    readonly #listChangedReceived = new Map<string, number>();
    readonly #listChangedSent: Counter;
    readonly #rejected: Counter;
    readonly #streamsClosed: Counter;
    readonly #cacheHits: Counter;
    readonly #cacheMisses: Counter;

    constructor(sources: MetricSources, options: MetricsOptions) {
        const registers = [this.registry];
        const counter = (name: string, help: string, labelNames: string[] = []) => new Counter({ name, help, labelNames, registers });
        const histogram = (name: string, help: string, labelNames: string[] = []) => new Histogram({ name, help, labelNames, buckets: DURATION_BUCKETS, registers });

        new Gauge({ name: 'mcp_gateway_info', help: 'Always 1; the gateway version as a label.', labelNames: ['version'], registers }).set({ version: options.version }, 1);
        this.#promptGets = counter('mcp_gateway_prompt_gets_total', 'prompts/get requests by owning upstream, prompt, client and outcome.', [
            'upstream',
            'prompt',
            'client',
            'outcome'
        ]);
        this.#promptGetDuration = histogram('mcp_gateway_prompt_get_duration_seconds', 'Time to answer prompts/get, upstream call included.', ['upstream', 'outcome']);
        this.#promptLatency = new Summary({
            name: 'mcp_gateway_prompt_get_latency_seconds',
            help: `Latency of successful prompts/get per prompt, over the last ${LATENCY_WINDOW_SECONDS / 60} minutes.`,
            labelNames: ['upstream', 'prompt'],
            percentiles: LATENCY_QUANTILES,
            maxAgeSeconds: LATENCY_WINDOW_SECONDS,
            ageBuckets: 5,
            registers
        });
        this.#promptLists = counter('mcp_gateway_prompt_lists_total', 'prompts/list requests (pages) by client.', ['client']);
        this.#promptListDuration = histogram('mcp_gateway_prompt_list_duration_seconds', 'Time to answer one prompts/list page.');
        this.#completions = counter('mcp_gateway_completions_total', 'completion/complete requests by owning upstream, prompt and outcome.', ['upstream', 'prompt', 'outcome']);
        new Gauge({
            name: 'mcp_gateway_upstream_up',
            help: '1 while the upstream is connected, else 0.',
            labelNames: ['upstream'],
            registers,
            collect() {
                this.reset();
                for (const upstream of sources.upstreams()) this.set({ upstream: upstream.id }, upstream.up ? 1 : 0);
            }
        });
        new Gauge({
            name: 'mcp_gateway_upstream_prompts',
            help: 'Prompts of the upstream in the catalog clients were last told about.',
            labelNames: ['upstream'],
            registers,
            collect() {
                this.reset();
                for (const upstream of sources.upstreams()) this.set({ upstream: upstream.id }, upstream.prompts);
            }
        });
        this.#reconnects = counter('mcp_gateway_upstream_reconnects_total', 'Reconnect attempts, after a lost connection or a failed attempt.', ['upstream']);
        this.#upstreamRequestDuration = histogram('mcp_gateway_upstream_request_duration_seconds', 'Time of requests to upstreams, a wait for a free slot included.', [
            'upstream',
            'method'
        ]);
        new Counter({
            name: 'mcp_gateway_upstream_faults_total',
            help: 'Upstream misbehaviour by kind (timeouts, lost connections, invalid results, ...).',
            labelNames: ['upstream', 'kind'],
            registers,
            collect() {
                this.reset();
                for (const { upstream, kind, count } of sources.faults()) this.inc({ upstream, kind }, count);
            }
        });
        const received = this.#listChangedReceived;
        new Counter({
            name: 'mcp_gateway_list_changed_received_total',
            help: 'notifications/prompts/list_changed from upstreams.',
            labelNames: ['upstream'],
            registers,
            collect() {
                this.reset();
                for (const [upstream, count] of received) this.inc({ upstream }, count);
            }
        });
        this.#listChangedSent = counter('mcp_gateway_list_changed_sent_total', 'notifications/prompts/list_changed sent to client sessions.');
        new Gauge({
            name: 'mcp_gateway_sessions',
            help: 'Open client sessions by transport.',
            labelNames: ['transport'],
            registers,
            collect() {
                for (const [transport, count] of Object.entries(sources.sessions())) this.set({ transport }, count);
            }
        });
        const sharedState = sources.sharedState;
        if (sharedState !== undefined) {
            new Gauge({
                name: 'mcp_gateway_shared_state_up',
                help: 'With cluster.redis: 1 while the Redis the replicas share does their work, 0 while each replica limits on its own (Redis unreachable, refusing writes or not answering).',
                registers,
                collect() {
                    this.set(sharedState.up() ? 1 : 0);
                }
            });
            new Gauge({
                name: 'mcp_gateway_shared_writes_pending',
                help: 'With cluster.redis: writes the other replicas must see (ended sessions, quota releases, last uses) kept until Redis takes them.',
                registers,
                collect() {
                    this.set(sharedState.pendingWrites());
                }
            });
        }
        this.#rejected = counter('mcp_gateway_requests_rejected_total', 'HTTP requests turned away before MCP handled them, by reason.', ['reason']);
        this.#streamsClosed = counter(
            'mcp_gateway_streams_closed_total',
            'Client streams (GET, subscriptions/listen, streamed answers) the gateway ended: slow_consumer (the client stopped reading), client_revoked (a reload removed its client or changed its credentials).',
            ['reason']
        );
        this.#cacheHits = counter('mcp_gateway_catalog_cache_hits_total', "Reads of an upstream's prompt list served from the catalog cache.", ['upstream']);
        this.#cacheMisses = counter('mcp_gateway_catalog_cache_misses_total', "Reads of an upstream's prompt list that had to wait for the upstream (or got its last good list).", [
            'upstream'
        ]);
        if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
    }

    promptRequest({ operation, client, upstream = UNKNOWN_LABEL, prompt = UNKNOWN_LABEL, outcome, seconds }: PromptRequest): void {
        switch (operation) {
            case 'get':
                this.#promptGets.inc({ upstream, prompt, client, outcome });
                this.#promptGetDuration.observe({ upstream, outcome }, seconds);
                if (outcome === 'ok') this.#promptLatency.observe({ upstream, prompt }, seconds);
                return;
            case 'list':
                this.#promptLists.inc({ client });
                this.#promptListDuration.observe(seconds);
                return;
            case 'complete':
                this.#completions.inc({ upstream, prompt, outcome });
                return;
        }
    }

    upstreamRequest(upstream: string, method: string, seconds: number): void {
        this.#upstreamRequestDuration.observe({ upstream, method }, seconds);
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

    cacheRead(upstream: string, hit: boolean): void {
        (hit ? this.#cacheHits : this.#cacheMisses).inc({ upstream });
    }

    /** All prompt gets so far, whatever their labels. */
    async promptGetsTotal(): Promise<number> {
        const { values } = await this.#promptGets.get();
        return values.reduce((sum, value) => sum + value.value, 0);
    }

    /** The text exposition, and its content type. */
    async exposition(): Promise<{ contentType: string; body: string }> {
        return { contentType: this.registry.contentType, body: await this.registry.metrics() };
    }
}
