/**
 * The gateway's observability wiring: what the layers report (upstream events,
 * catalog cache reads, prompt usage, notifications sent, requests turned away)
 * goes to the metrics, the dashboard's feed and the access log; and the
 * operator routes that serve them. The layers only know their own observer
 * interfaces; this is the one place that knows them all.
 */
import type { CatalogView } from '../catalog/catalog.js';
import type { PromptService } from '../catalog/service.js';
import { outcomeOf, type UsageEvent } from '../catalog/usage.js';
import type { GatewayConfig } from '../config/schema.js';
import { isLoopback } from '../lib/loopback.js';
import type { Reject, RejectionReason } from '../http-server/rejections.js';
import type { Routes } from '../http-server/routes.js';
import type { UpstreamObserver } from '../upstream/connection.js';
import type { GatewayUpstream } from '../upstream/upstream.js';
import { VERSION } from '../version.js';
import type { OverridesNotApplied, UpstreamStatus } from './dashboard-data.js';
import { DashboardFeed } from './dashboard-feed.js';
import type { FaultCounters } from '../diagnostics/faults.js';
import { logRedactor, withoutPathRedaction, type Logger } from '../diagnostics/logger.js';
import { GatewayMetrics } from './metrics.js';
import { operatorRoutesOnMcpListener, withheldReason } from './operator-access.js';
import { observabilityRoutes } from './routes.js';

export interface TelemetrySources {
    upstreams: () => readonly GatewayUpstream[];
    /** The catalog clients were last told about: its prompts per upstream. */
    publishedView: () => CatalogView | undefined;
    sessions: () => Record<string, number>;
    /** Client requests in flight by kind (the registry of requests in flight). */
    requestsInFlight: () => Record<'call' | 'listen', number>;
    /** Input requests waiting for a client: out to 2025 clients (the sessions' asks), held for 2026-07-28 clients (the service's). */
    inputWaiting: () => Record<'asked' | 'held', number>;
    /** Whether the Redis the replicas share is there ('local': none configured). */
    sharedState: () => 'local' | 'up' | 'down';
    /** Writes waiting for that Redis to take them. */
    sharedWritesPending: () => number;
    faults: FaultCounters;
    /** With tracing on: spans lost so far, by reason (RunningTracing.spansDropped). */
    spansDropped?: (() => Record<string, number>) | undefined;
    /** What of an upstream's overrides did not apply to its last list; undefined when everything did. */
    overridesNotApplied?: (upstreamId: string) => OverridesNotApplied | undefined;
}

type TelemetryConfig = Pick<GatewayConfig, 'listen' | 'metrics' | 'dashboard' | 'auth' | 'cluster'>;

/** Operator routes that would be served but are not, and why (see operator-access.ts). */
export interface Withheld {
    /** "metrics", "dashboard" or "metrics and dashboard". */
    what: string;
    reason: string;
}

export class Telemetry {
    /** undefined when neither metrics nor the dashboard are served: then nothing is recorded at all. */
    readonly metrics: GatewayMetrics | undefined;
    readonly withheld: Withheld | undefined;
    readonly #feed: DashboardFeed | undefined;
    readonly #served: { metrics: boolean; dashboard: boolean };

    constructor(
        private readonly config: TelemetryConfig,
        stdio: boolean,
        private readonly logger: Logger,
        private readonly sources: TelemetrySources
    ) {
        const wanted = served(config, stdio);
        const withheld = config.metrics.listen === undefined && !operatorRoutesOnMcpListener(config.auth.mode, config.metrics.bearerToken);
        const what = [...(wanted.metrics ? ['metrics'] : []), ...(wanted.dashboard ? ['dashboard'] : [])].join(' and ');
        if (withheld && what !== '') this.withheld = { what, reason: withheldReason(config.auth.mode) };
        this.#served = withheld ? { metrics: false, dashboard: false } : wanted;
        if (!this.#served.metrics && !this.#served.dashboard) return;
        const metrics = (this.metrics = new GatewayMetrics(
            {
                upstreams: () => {
                    const counts = promptCounts(sources.publishedView());
                    return sources.upstreams().map(upstream => ({ id: upstream.id, up: upstream.state === 'ready', prompts: counts.get(upstream.id) ?? 0 }));
                },
                sessions: sources.sessions,
                requestsInFlight: sources.requestsInFlight,
                inputWaiting: sources.inputWaiting,
                spansDropped: sources.spansDropped,
                ...(config.cluster?.redis === undefined ? {} : { sharedState: { up: () => sources.sharedState() === 'up', pendingWrites: sources.sharedWritesPending } }),
                faults: () =>
                    sources.upstreams().flatMap(upstream => Object.entries(sources.faults.of(upstream.id)).map(([kind, count]) => ({ upstream: upstream.id, kind, count })))
            },
            { version: VERSION }
        ));
        if (this.#served.dashboard) {
            const upstreams = (): UpstreamStatus[] =>
                sources.upstreams().map(({ id, state, lastError }) => ({ id, state, lastError, overrides: sources.overridesNotApplied?.(id) }));
            this.#feed = new DashboardFeed(metrics, { version: VERSION, upstreams });
        }
    }

    /** Whether operator routes are served at all (on the MCP listener, or on `metrics.listen`). */
    get serving(): boolean {
        return this.metrics !== undefined;
    }

    readonly upstreamObserver: UpstreamObserver = {
        fault: (id, kind) => this.sources.faults.record(id, kind),
        request: (id, method, seconds, error) => this.metrics?.upstreamRequest(id, method, seconds, error === undefined ? 'ok' : outcomeOf(error)),
        reconnecting: id => this.metrics?.reconnecting(id),
        listChanged: id => {
            this.metrics?.listChanged(id);
            this.#feed?.listChangedReceived(id);
        }
    };

    readonly cacheRead = (upstreamId: string, hit: boolean): void => this.metrics?.cacheRead(upstreamId, hit);

    readonly notified = (): void => {
        this.metrics?.listChangedSent();
        this.#feed?.listChangedSent();
    };

    readonly rejected = (reason: RejectionReason): void => this.metrics?.rejected(reason);

    /** `reason`: a StreamCloseReason (downstream/endpoint.ts). */
    readonly streamsClosed = (reason: string, count = 1): void => this.metrics?.streamsClosed(reason, count);

    /** Every prompt request ends up in the access log, and in the metrics when they are on. */
    watch(service: PromptService): void {
        service.usage.subscribe(accessLog(this.logger));
        const metrics = this.metrics;
        if (metrics === undefined) return;
        service.usage.subscribe(({ operation, client, entry, outcome, seconds, rounds, path, trace }) =>
            metrics.promptRequest({ operation, client, upstream: entry?.upstream.id, prompt: entry?.exposedName, outcome, seconds, rounds, path, trace })
        );
        service.inputs.subscribe(({ upstream, path, method, outcome }) => metrics.inputRequestEnded({ upstream, path, method, outcome }));
    }

    readonly routes = (reject: Reject): Routes => {
        const { metrics, dashboard } = this.config;
        const recorded = this.metrics;
        const feed = this.#feed;
        // Upstream errors and what upstreams name (prompts) may hold secrets: the log's redaction applies here too.
        const redactor = logRedactor(this.logger);
        const redacted = ({ contentType, body }: { contentType: string; body: string }) => ({ contentType, body: redactor.redact(body) });
        return observabilityRoutes({
            metrics:
                this.#served.metrics && recorded !== undefined
                    ? { path: metrics.path, exposition: async openMetrics => redacted(await recorded.exposition(openMetrics)) }
                    : undefined,
            dashboard: feed === undefined ? undefined : { path: dashboard.path, data: async () => redactor.redactValues(await feed.data()) },
            bearerToken: metrics.bearerToken,
            reject
        });
    };

    /** Where the routes ended up, given the origin of the listener serving them. */
    urls(origin: string | undefined): { metrics?: string; dashboard?: string } {
        if (origin === undefined) return {};
        return {
            ...(this.#served.metrics ? { metrics: `${origin}${this.config.metrics.path}` } : {}),
            ...(this.#served.dashboard ? { dashboard: `${origin}${this.config.dashboard.path}` } : {})
        };
    }

    close(): void {
        this.#feed?.close();
    }
}

/** Served over HTTP; in stdio mode only on a listener of their own. The dashboard defaults to on for loopback binds only. */
function served(config: TelemetryConfig, stdio: boolean): { metrics: boolean; dashboard: boolean } {
    const listener = config.metrics.listen ?? (stdio ? undefined : config.listen);
    if (listener === undefined) return { metrics: false, dashboard: false };
    return { metrics: config.metrics.enabled, dashboard: config.dashboard.enabled ?? isLoopback(listener.host) };
}

function promptCounts(view: CatalogView | undefined): Map<string, number> {
    const counts = new Map<string, number>();
    for (const segment of view?.segments ?? []) {
        counts.set(
            segment.upstreamId,
            segment.entries.reduce((count, entry) => (entry === undefined ? count : count + 1), 0)
        );
    }
    return counts;
}

/** The access log: a line per get and completion (lists at debug), on `logger`'s lines, each naming its request. */
export function accessLog(logger: Logger): (event: UsageEvent) => void {
    const lines = withoutPathRedaction(logger);
    return event => {
        const level = accessLevel(event);
        if (lines.isLevelEnabled(level)) lines[level](accessFields(event), `prompt ${event.operation}`);
    };
}

function accessLevel({ operation, outcome }: UsageEvent): 'debug' | 'info' | 'warn' {
    return operation === 'list' ? 'debug' : outcome === 'upstream_error' || outcome === 'timeout' ? 'warn' : 'info';
}

/**
 * An access-log line's fields. `trace_id` and `span_id` (OpenTelemetry's names for them in logs) join it to the
 * request's trace; absent when it has none.
 * @internal exported for its tests
 */
export function accessFields({ operation, requestId, client, entry, outcome, seconds, trace }: UsageEvent): Record<string, unknown> {
    return {
        requestId,
        operation,
        client,
        upstream: entry?.upstream.id,
        prompt: entry?.exposedName,
        outcome,
        ms: Math.round(seconds * 1e4) / 10,
        trace_id: trace?.traceId,
        span_id: trace?.spanId
    };
}
