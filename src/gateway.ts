/**
 * Composes the gateway: config -> upstreams -> catalog -> policy -> downstream
 * endpoint, with cluster state and telemetry beside them. The lifecycle's
 * steps live in src/lifecycle/: health checks, the endpoints, reload and the
 * graceful stop.
 */
import { configSecrets } from './config/secrets.js';
import { resolveReconnect, type GatewayConfig } from './config/schema.js';
import { Catalog } from './catalog/catalog.js';
import { PromptService, type Caller } from './catalog/service.js';
import { VisibleSlices } from './catalog/visible-slices.js';
import { startSharedState, type SharedState } from './cluster/shared-state.js';
import { FaultCounters } from './diagnostics/faults.js';
import { describeError, logRedactor, setLogSecrets, type Logger } from './diagnostics/logger.js';
import { ChangeDelivery } from './downstream/delivery.js';
import { Dispatcher } from './downstream/dispatcher.js';
import { RequestRegistry } from './downstream/requests.js';
import { SessionSeal } from './downstream/session-seal.js';
import { SessionTable } from './downstream/sessions.js';
import { Subscriptions } from './downstream/subscriptions.js';
import { startEndpoint, startOperatorListener, startupNotices } from './lifecycle/endpoints.js';
import { healthChecks } from './lifecycle/health.js';
import { liveSettings, overridesOf, reloader, serviceOptions, type LiveSettings, type ReloadResult } from './lifecycle/reload.js';
import { closeParts, shutdown } from './lifecycle/shutdown.js';
import type { AdminServer } from './observability/admin-server.js';
import type { GatewayMetrics } from './observability/metrics.js';
import { Telemetry } from './observability/telemetry.js';
import { startTracing, tracingSettings, type RunningTracing } from './observability/tracing.js';
import type { Tracer } from './diagnostics/tracer.js';
import { UpstreamConnection, type UpstreamObserver } from './upstream/connection.js';
import { FilesUpstream } from './upstream/files/files-upstream.js';
import { UpstreamPool } from './upstream/pool.js';
import type { GatewayUpstream } from './upstream/upstream.js';
import { GATEWAY_INFO } from './version.js';

export type { ReloadResult } from './lifecycle/reload.js';

export interface GatewayOptions {
    logger: Logger;
    /** Serve the downstream side on stdin/stdout instead of HTTP. */
    stdio?: boolean;
    /** With `stdio`: the configured client the stdio caller is (default: anonymous). */
    client?: string;
    /** Where the OTEL_* variables are read (default: process.env). */
    env?: Readonly<Record<string, string | undefined>>;
}

export interface RunningGateway {
    /** The HTTP endpoint's URL; undefined in stdio mode. */
    url: string | undefined;
    /** Where metrics and the dashboard are served, if they are. */
    operatorUrls: { metrics?: string; dashboard?: string };
    /** The prompt catalog page's URL (on the MCP listener); undefined in stdio mode or with catalog.enabled false. */
    catalogUrl: string | undefined;
    /** Lines for the operator at start (the CLI prints them beside "listening on"): what is not served, and why. */
    notices: string[];
    /** undefined when neither metrics nor the dashboard are on. */
    metrics: GatewayMetrics | undefined;
    /** The current upstreams, in config order. */
    readonly upstreams: readonly GatewayUpstream[];
    catalog: Catalog;
    faults: FaultCounters;
    /** Resolves when a stdio client closes the connection; never in HTTP mode. */
    done: Promise<void>;
    /** Applies a new config without dropping sessions; reloads run one at a time. */
    reload(config: GatewayConfig): Promise<ReloadResult>;
    /**
     * Stops gracefully: no new requests, requests in flight get up to `shutdownTimeoutMs` to finish, then sessions
     * close and upstreams stop (stdio children with SIGTERM, then SIGKILL).
     */
    close(): Promise<void>;
}

/** The gateway's parts, wired together: what the lifecycle starts, serves with, reloads and stops. */
interface Parts {
    live: LiveSettings;
    faults: FaultCounters;
    telemetry: Telemetry;
    pool: UpstreamPool;
    catalog: Catalog;
    service: PromptService;
    delivery: ChangeDelivery;
    shared: SharedState;
    sessions: SessionTable;
    subscriptions: Subscriptions;
    requests: RequestRegistry;
    dispatcher: Dispatcher;
    tracing: RunningTracing;
}

/** Builds the parts; only the shared state starts anything (its timers and connections), so it comes last but one. */
async function composeParts(live: LiveSettings, options: GatewayOptions, tracing: RunningTracing): Promise<Parts> {
    const { logger } = options;
    const { config } = live;
    const { tracer } = tracing;
    const faults = new FaultCounters();
    const telemetry: Telemetry = new Telemetry(config, options.stdio === true, logger, {
        upstreams: () => pool.connections,
        publishedView: () => catalog.publishedView,
        sessions: () => sessions.counts(),
        requestsInFlight: () => ({ call: requests.countOf('call'), listen: requests.countOf('listen') }),
        inputWaiting: () => ({ asked: sessions.asksOut(), held: service.held.size }),
        sharedState: () => shared.status(),
        sharedWritesPending: () => shared.pendingWrites(),
        faults,
        spansDropped: tracing.spansDropped,
        overridesNotApplied: upstreamId => catalog.overrideReport(upstreamId)
    });
    const { pool, catalog, slices, service } = promptParts(live, logger, { observer: telemetry.upstreamObserver, onCacheRead: telemetry.cacheRead, tracer });
    telemetry.watch(service);
    const delivery = new ChangeDelivery({
        changes: catalog.changes,
        currentView: () => catalog.publishedView,
        fingerprint: (view, scope) => slices.fingerprint(view, scope, live.policy.access.visibility(scope)),
        onNotified: telemetry.notified,
        logger,
        tracer
    });
    // Before anything else that could fail: started, it must be closed (its timers and connections).
    const shared = await startSharedState(config, logger);
    const requests = new RequestRegistry();
    // Names this gateway among replicas in what it asks clients, as in the states of what it holds for them.
    const { instance } = service.held;
    const sessions = sessionTable(live, { delivery, shared, requests, instance });
    const subscriptions = new Subscriptions(delivery, () => live.config.subscriptions);
    // A list is not worth keeping longer than the gateway can vouch for it.
    const listTtlMs = () => Math.min(live.config.caching.listTtlMs, catalog.freshForMs() ?? Infinity);
    const dispatcher = new Dispatcher({ service, logger, ttlMs: () => ({ list: listTtlMs(), discover: live.config.caching.discoverTtlMs }), tracer });
    return { live, faults, telemetry, pool, catalog, service, delivery, shared, sessions, subscriptions, requests, dispatcher, tracing };
}

/** The prompt side of the gateway: its upstreams, their merged catalog and the service that lists and gets over it. */
export interface PromptParts {
    pool: UpstreamPool;
    catalog: Catalog;
    /** One cache of what each client sees per view, for its pages and its list_changed decisions alike. */
    slices: VisibleSlices;
    service: PromptService;
}

/** What reports on the prompt parts (metrics, counters); nothing when the gateway is not serving (`prompts` on the command line). */
interface PromptObservers {
    observer?: UpstreamObserver;
    onCacheRead?: (upstreamId: string, hit: boolean) => void;
    tracer?: Tracer;
}

/** Builds the prompt parts; nothing starts until `connectUpstreams`. */
export function promptParts(live: LiveSettings, logger: Logger, observers: PromptObservers = {}): PromptParts {
    const { config } = live;
    const pool = upstreamPool(live, logger, observers);
    const catalog = new Catalog({
        naming: { separator: config.namespace.separator },
        logger,
        notifications: config.notifications,
        onCacheRead: observers.onCacheRead,
        relist: () => live.config.caching
    });
    const slices = new VisibleSlices();
    const service = new PromptService(catalog, live.cursors, serviceOptions(config, live.policy), slices, live.requestStates);
    return { pool, catalog, slices, service };
}

/** Gives every upstream its first attempt and builds the first view from what answered, so the first list is complete. */
export async function connectUpstreams(config: GatewayConfig, { pool, catalog }: Pick<PromptParts, 'pool' | 'catalog'>): Promise<void> {
    await pool.apply(config.upstreams, config.upstreamConnectConcurrency, upstreams => catalog.setUpstreams(upstreams, undefined, overridesOf(config)));
    await catalog.warm();
}

function upstreamPool(live: LiveSettings, logger: Logger, { observer, tracer }: PromptObservers): UpstreamPool {
    const limits = () => live.config.limits;
    // What an upstream may ask within one prompts/get (maxPerRound, maxTotalMs), read per use: a reload applies it.
    const inputBounds = () => live.config.inputRequests;
    return new UpstreamPool(upstream => {
        if (upstream.transport === 'files') return new FilesUpstream(upstream, { logger, limits, observer });
        const options = { logger, clientInfo: GATEWAY_INFO, reconnect: resolveReconnect(live.config.reconnect, upstream), limits, observer, inputBounds, tracer };
        return new UpstreamConnection(upstream, options);
    });
}

/** What the session table is built beside. */
interface SessionParts {
    delivery: ChangeDelivery;
    shared: SharedState;
    requests: RequestRegistry;
    /** This gateway's instance tag (the prompt service's: its held interactions name it too). */
    instance: string;
}

function sessionTable(live: LiveSettings, { delivery, shared, requests, instance }: SessionParts): SessionTable {
    const { config } = live;
    return new SessionTable({
        delivery,
        requests,
        // The gateway's requests to 2025 clients: ids naming this instance; how long an answer may take, read per request.
        asking: { instance, timeoutMs: () => live.config.inputRequests.answerTimeoutMs },
        // Read per request, so a reload's policy applies to sessions already open.
        callerFor: (clientId: string): Caller => ({
            scope: clientId,
            get visible() {
                return live.policy.access.visibility(clientId);
            }
        }),
        // Without cluster, ids are sealed for this process alone: its ended sessions are remembered by it alone, so a
        // session outliving a restart could come back after a DELETE. With cluster, the ring is shared (and so, with
        // Redis, are the ends).
        seal: config.cluster === undefined ? new SessionSeal([], '') : new SessionSeal(config.sessions.secrets, config.cursorSecret),
        revocations: shared.revocations,
        max: config.sessions.max,
        maxLifetimeMs: config.sessions.maxLifetimeMs,
        shared: shared.sessions
    });
}

export async function startGateway(initial: GatewayConfig, options: GatewayOptions): Promise<RunningGateway> {
    const { logger } = options;
    setLogSecrets(logger, configSecrets(initial));
    // Before anything starts: a tracing setting that cannot be used is a config error (exit 2).
    const settings = tracingSettings(initial.tracing, options.env ?? process.env);
    const live = liveSettings(initial);
    const tracing = await startTracing(settings, logger);
    const parts = await composeParts(live, options, tracing).catch(async (error: unknown) => {
        await tracing.shutdown(live.config.shutdownTimeoutMs);
        throw error;
    });
    const { pool, catalog } = parts;
    let admin: AdminServer | undefined;
    let closing: Promise<void> | undefined;
    try {
        // Errors name commands, paths and URLs, which may hold secrets: the log's redaction applies here too.
        const checks = healthChecks({ upstreams: () => pool.connections, ...parts, redactor: logRedactor(logger) });
        // An upstream not connected yet may offer completions later; the answer for it is empty meanwhile.
        const completions = () => pool.connections.some(upstream => upstream.state !== 'ready' || upstream.offersCompletions);
        const serving = { ...parts, checks, completions, logger };
        admin = await startOperatorListener(serving, () => closing !== undefined);
        // Every upstream gets its first attempt before clients are served.
        await connectUpstreams(initial, parts);
        const { endpoint, url, done } = await startEndpoint(serving, { stdio: options.stdio === true, client: options.client });
        const reload = reloader({ ...parts, logger });
        return {
            url,
            operatorUrls: parts.telemetry.urls(admin?.origin ?? (url === undefined ? undefined : new URL(url).origin)),
            catalogUrl: url === undefined || !initial.catalog.enabled ? undefined : `${new URL(url).origin}${initial.catalog.path}`,
            notices: startupNotices(serving, url),
            metrics: parts.telemetry.metrics,
            get upstreams() {
                return pool.connections;
            },
            catalog,
            faults: parts.faults,
            done,
            reload(next) {
                if (closing !== undefined) return Promise.reject(new Error('the gateway is stopping; reload ignored'));
                return reload(next);
            },
            close() {
                closing ??= shutdown({ ...parts, admin, endpoint, held: parts.service.held, shutdownTimeoutMs: live.config.shutdownTimeoutMs, logger });
                return closing;
            }
        };
    } catch (error) {
        logger.debug({ err: describeError(error) }, 'start-up failed; stopping what was started');
        await closeParts({ ...parts, admin });
        throw error;
    }
}
