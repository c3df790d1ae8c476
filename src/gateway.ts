/**
 * Wires the layers together: config -> upstreams -> catalog -> downstream
 * endpoint, and owns the gateway's lifecycle: start, reload, graceful stop.
 */
import { isDeepStrictEqual } from 'node:util';
import { ANONYMOUS_CLIENT_ID } from './config/policy-schema.js';
import { configSecrets } from './config/secrets.js';
import { resolveReconnect, type GatewayConfig } from './config/schema.js';
import { Catalog } from './catalog/catalog.js';
import { CursorCodec } from './catalog/cursor.js';
import { compileOverrides, type UpstreamOverrides } from './catalog/overrides.js';
import { RequestStates } from './catalog/request-state.js';
import { PromptService, type Caller, type PromptServiceOptions } from './catalog/service.js';
import { VisibleSlices } from './catalog/visible-slices.js';
import { ChangeDelivery } from './downstream/delivery.js';
import { Dispatcher } from './downstream/dispatcher.js';
import type { Endpoint } from './downstream/endpoint.js';
import { startHttpEndpoint } from './downstream/http/endpoint.js';
import { RequestRegistry } from './downstream/requests.js';
import { startSharedState } from './cluster/shared-state.js';
import { SessionSeal } from './downstream/session-seal.js';
import { SessionTable } from './downstream/sessions.js';
import { Subscriptions } from './downstream/subscriptions.js';
import { startStdioEndpoint } from './downstream/stdio.js';
import { startAdminServer, type AdminServer } from './observability/admin-server.js';
import { FaultCounters } from './diagnostics/faults.js';
import { describeError, logRedactor, setLogSecrets, type Logger } from './diagnostics/logger.js';
import type { GatewayMetrics } from './observability/metrics.js';
import { compilePolicy, revokedClients, type GatewayPolicy } from './policy/policy.js';
import { UpstreamConnection } from './upstream/connection.js';
import { FilesUpstream } from './upstream/files/files-upstream.js';
import { UpstreamPool, type PoolChange } from './upstream/pool.js';
import type { GatewayUpstream } from './upstream/upstream.js';
import { healthRoutes, type Readiness } from './observability/routes.js';
import { Telemetry } from './observability/telemetry.js';
import { GATEWAY_INFO } from './version.js';

export interface GatewayOptions {
    logger: Logger;
    /** Serve the downstream side on stdin/stdout instead of HTTP. */
    stdio?: boolean;
    /** With `stdio`: the configured client the stdio caller is (default: anonymous). */
    client?: string;
}

export interface ReloadResult extends PoolChange {
    /** Changed settings that only a restart applies. */
    needRestart: string[];
}

export interface RunningGateway {
    /** The HTTP endpoint's URL; undefined in stdio mode. */
    url: string | undefined;
    /** Where metrics and the dashboard are served, if they are. */
    operatorUrls: { metrics?: string; dashboard?: string };
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

/** At shutdown, how long the cancelled requests' error answers get to be written. */
const ANSWER_GRACE_MS = 1000;

/** Settings read once at start; a reload that changes them says a restart is needed. */
const RESTART_ONLY: Record<string, (config: GatewayConfig) => unknown> = {
    listen: config => config.listen,
    metrics: config => config.metrics,
    dashboard: config => config.dashboard,
    'log.format': config => config.log.format,
    sessions: config => config.sessions,
    cluster: config => config.cluster,
    'limits.maxBodyBytes': config => config.limits.maxBodyBytes
};

function serviceOptions(config: GatewayConfig, policy: GatewayPolicy): PromptServiceOptions {
    return {
        pageSize: config.pagination.pageSize,
        ...policy.arguments,
        maxResultBytes: policy.maxResultBytes,
        maxJsonDepth: config.limits.maxJsonDepth,
        passUnknownArguments: upstreamId => policy.access.passesUnknownArguments(upstreamId)
    };
}

/** Applied by the catalog, from the config given: a kept connection still holds the config it was started with. */
function overridesOf(config: GatewayConfig): ReadonlyMap<string, UpstreamOverrides> {
    return new Map(config.upstreams.map(upstream => [upstream.id, compileOverrides(upstream.overrides)]));
}

export async function startGateway(initial: GatewayConfig, options: GatewayOptions): Promise<RunningGateway> {
    const { logger } = options;
    let config = initial;
    setLogSecrets(logger, configSecrets(config));
    const faults = new FaultCounters();
    const telemetry: Telemetry = new Telemetry(config, options.stdio === true, logger, {
        upstreams: () => pool.connections,
        publishedView: () => catalog.publishedView,
        sessions: () => sessions.counts(),
        sharedState: () => shared.status(),
        sharedWritesPending: () => shared.pendingWrites(),
        faults,
        overridesNotApplied: upstreamId => catalog.overrideReport(upstreamId)
    });
    const pool: UpstreamPool = new UpstreamPool(upstream =>
        upstream.transport === 'files'
            ? new FilesUpstream(upstream, { logger, limits: () => config.limits, observer: telemetry.upstreamObserver })
            : new UpstreamConnection(upstream, {
                  logger,
                  clientInfo: GATEWAY_INFO,
                  reconnect: resolveReconnect(config.reconnect, upstream),
                  limits: () => config.limits,
                  observer: telemetry.upstreamObserver
              })
    );
    const catalog: Catalog = new Catalog({
        naming: { separator: config.namespace.separator },
        logger,
        notifications: config.notifications,
        onCacheRead: telemetry.cacheRead,
        relist: () => config.caching
    });
    let cursors = new CursorCodec(config.cursorSecret);
    let requestStates = new RequestStates(config.cursorSecret);
    let policy = compilePolicy(config);
    // One cache of what each client sees per view, for its pages and its list_changed decisions alike.
    const slices = new VisibleSlices();
    const service = new PromptService(catalog, cursors, serviceOptions(config, policy), slices, requestStates);
    telemetry.watch(service);
    const delivery = new ChangeDelivery({
        changes: catalog.changes,
        currentView: () => catalog.publishedView,
        fingerprint: (view, scope) => slices.fingerprint(view, scope, policy.access.visibility(scope)),
        onNotified: telemetry.notified,
        logger
    });
    // Before anything else that could fail: started, it must be closed (its timers and connections).
    const shared = await startSharedState(config, logger);
    const requests = new RequestRegistry();
    const sessions = new SessionTable({
        delivery,
        requests,
        callerFor,
        // Without cluster, ids are sealed for this process alone: its ended sessions are remembered by it alone, so a
        // session outliving a restart could come back after a DELETE. With cluster, the ring is shared (and so, with
        // Redis, are the ends).
        seal: config.cluster === undefined ? new SessionSeal([], '') : new SessionSeal(config.sessions.secrets, config.cursorSecret),
        revocations: shared.revocations,
        max: config.sessions.max,
        maxLifetimeMs: config.sessions.maxLifetimeMs,
        shared: shared.sessions
    });
    const subscriptions = new Subscriptions(delivery, () => config.subscriptions);
    // A list is not worth keeping longer than the gateway can vouch for it.
    const listTtlMs = () => Math.min(config.caching.listTtlMs, catalog.freshForMs() ?? Infinity);
    const dispatcher = new Dispatcher({ service, logger, ttlMs: () => ({ list: listTtlMs(), discover: config.caching.discoverTtlMs }) });
    let endpoint: Endpoint | undefined;
    let admin: AdminServer | undefined;
    let closing: Promise<void> | undefined;
    let reloading: Promise<unknown> = Promise.resolve();

    const stopAll = async () => {
        telemetry.close();
        await admin?.close();
        delivery.close();
        catalog.close();
        await pool.close();
        await shared.close();
    };

    // An upstream not connected yet may offer completions later; the answer for it is empty meanwhile.
    const completions = () => pool.connections.some(upstream => upstream.state !== 'ready' || upstream.offersCompletions);

    const overrideHealth = (upstreamId: string) => {
        const report = catalog.overrideReport(upstreamId);
        return report === undefined ? {} : { overrides: report };
    };

    const upstreamHealth = () =>
        pool.connections.map(upstream => ({
            id: upstream.id,
            state: upstream.state,
            required: upstream.config.required,
            ...(upstream.lastError === undefined ? {} : { error: upstream.lastError }),
            ...(upstream.problems.length === 0 ? {} : { problems: upstream.problems }),
            ...upstream.load,
            faults: faults.of(upstream.id),
            ...overrideHealth(upstream.id)
        }));

    const readiness = (): Readiness => {
        const upstreams = pool.connections;
        const waiting = upstreams.filter(upstream => !upstream.attempted).map(upstream => upstream.id);
        const requiredDown = upstreams.filter(upstream => upstream.config.required && upstream.state !== 'ready').map(upstream => upstream.id);
        // Redis away (or refusing writes) does not make a replica unready: it serves on with local limits, and says so here.
        const sharedState = shared.status();
        return {
            ready: waiting.length === 0 && requiredDown.length === 0,
            details: { waiting, requiredDown, ...(sharedState === 'local' ? {} : { sharedState: sharedState === 'up' ? 'redis' : `local (${shared.downReason()})` }) }
        };
    };

    // Read per request, so a reload's policy applies to sessions already open.
    function callerFor(clientId: string): Caller {
        return {
            scope: clientId,
            get visible() {
                return policy.access.visibility(clientId);
            }
        };
    }

    /**
     * Clients a reload removed, or whose credentials it changed: what they hold open was admitted with credentials that
     * no longer hold, so it ends (sessions, their GET streams, subscriptions; see docs/security.md).
     */
    async function endRevoked(clientIds: ReadonlySet<string>): Promise<void> {
        const subscriptionsEnded = subscriptions.closeClients(clientIds);
        const { sessions: sessionsEnded, streams } = await sessions.endClients(clientIds, Date.now());
        if (subscriptionsEnded + streams > 0) telemetry.streamsClosed('client_revoked', subscriptionsEnded + streams);
        logger.info(
            { clients: [...clientIds], sessions: sessionsEnded, subscriptions: subscriptionsEnded },
            'clients removed or given new credentials by the reload: their sessions and streams ended'
        );
    }

    async function applyReload(next: GatewayConfig): Promise<ReloadResult> {
        const needRestart = Object.entries(RESTART_ONLY)
            .filter(([, read]) => !isDeepStrictEqual(read(config), read(next)))
            .map(([key]) => key);
        const previous = config;
        config = next;
        // The previous values too: what was started with them (a child still stopping) may still write.
        setLogSecrets(logger, [...configSecrets(next), ...configSecrets(previous)]);
        if (process.env.LOG_LEVEL === undefined) logger.level = next.log.level;
        // Same secret, same codec: an empty secret must not draw a new random key and void every cursor out there.
        if (next.cursorSecret !== previous.cursorSecret) {
            cursors = new CursorCodec(next.cursorSecret);
            requestStates = new RequestStates(next.cursorSecret);
        }
        const nextPolicy = compilePolicy(next);
        if (!isDeepStrictEqual(next.notifications, previous.notifications)) catalog.setNotificationTiming(next.notifications);
        // Names, upstreams and policy change together, so a reload is one change, announced once.
        const revoked = revokedClients(policy, nextPolicy);
        let ending: Promise<void> | undefined;
        const change = await pool.apply(next.upstreams, next.upstreamConnectConcurrency, upstreams => {
            policy = nextPolicy;
            // With the policy that refuses their credentials: nothing they hold outlives it.
            if (revoked.size > 0) ending = endRevoked(revoked);
            service.reconfigure(cursors, serviceOptions(next, policy), requestStates);
            catalog.setUpstreams(upstreams, { separator: next.namespace.separator }, overridesOf(next));
            // Also when no upstream changed: a client whose view only the policy changed must hear of it.
            catalog.announce();
        });
        for (const upstream of pool.connections) {
            if (upstream instanceof UpstreamConnection) upstream.reconnect = resolveReconnect(next.reconnect, upstream.config);
        }
        await ending;
        return { ...change, needRestart };
    }

    // Errors name commands, paths and URLs, which may hold secrets: the log's redaction applies here too.
    const redactor = logRedactor(logger);
    try {
        const health = () => redactor.redactValues({ upstreams: upstreamHealth() });
        const readyDetails = () => {
            const state = readiness();
            return { ...state, details: redactor.redactValues({ ...state.details, upstreams: upstreamHealth() }) };
        };
        const separate = config.metrics.listen;
        if (separate !== undefined && telemetry.serving) {
            admin = await startAdminServer({
                ...separate,
                routes: reject => [healthRoutes({ health, readiness: readyDetails, draining: () => closing !== undefined }), telemetry.routes(reject)],
                onRejected: telemetry.rejected,
                logger
            });
        }
        // Every upstream gets its first attempt before clients are served, so the first list is complete.
        await pool.apply(config.upstreams, config.upstreamConnectConcurrency, upstreams => catalog.setUpstreams(upstreams, undefined, overridesOf(config)));
        await catalog.warm();

        let url: string | undefined;
        let done: Promise<void> = new Promise<void>(() => {});
        if (options.stdio === true) {
            const client = policy.clients.get(options.client ?? ANONYMOUS_CLIENT_ID);
            if (client === undefined) throw new Error(`--client "${options.client ?? ''}" is not a configured client`);
            const stdio = startStdioEndpoint({
                client,
                dispatcher,
                sessions,
                subscriptions,
                requests,
                completions,
                maxLineBytes: config.limits.maxBodyBytes,
                maxJsonDepth: () => config.limits.maxJsonDepth,
                logger
            });
            done = stdio.closed;
            endpoint = stdio;
        } else {
            const http = await startHttpEndpoint({
                ...config.listen,
                maxBodyBytes: config.limits.maxBodyBytes,
                maxJsonDepth: () => config.limits.maxJsonDepth,
                policy: () => policy,
                idleTimeoutMs: config.sessions.idleTimeoutMs,
                sessionLifetimeMs: config.sessions.maxLifetimeMs,
                idleEndsSession: config.cluster === undefined || config.cluster.redis !== undefined,
                limiter: shared.rateLimiter,
                dispatcher,
                sessions,
                subscriptions,
                requests,
                completions,
                health,
                readiness: readyDetails,
                ...(separate === undefined && telemetry.serving ? { routes: telemetry.routes } : {}),
                operatorToken: config.metrics.bearerToken,
                onRejected: telemetry.rejected,
                onStreamClosed: telemetry.streamsClosed,
                logger
            });
            url = http.url;
            endpoint = http;
        }

        const notices: string[] = [];
        const withheld = telemetry.withheld;
        if (withheld !== undefined && url !== undefined) {
            logger.warn(`${withheld.what} not served on the MCP listener: ${withheld.reason}`);
            notices.push(`${withheld.what} not served on ${new URL(url).origin}: ${withheld.reason}`);
        }
        const metadataWithheld = policy.resourceServer?.metadataWithheld;
        if (metadataWithheld !== undefined && url !== undefined) {
            logger.warn(metadataWithheld);
            notices.push(metadataWithheld);
        }

        return {
            url,
            operatorUrls: telemetry.urls(admin?.origin ?? (url === undefined ? undefined : new URL(url).origin)),
            notices,
            metrics: telemetry.metrics,
            get upstreams() {
                return pool.connections;
            },
            catalog,
            faults,
            done,
            reload(next) {
                if (closing !== undefined) return Promise.reject(new Error('the gateway is stopping; reload ignored'));
                const run = reloading.then(() => applyReload(next));
                reloading = run.catch(() => {});
                return run;
            },
            close() {
                closing ??= (async () => {
                    endpoint?.drain();
                    // Answered (the revision's graceful end) and closed: a listen stream is a request that never ends.
                    subscriptions.closeAll();
                    if (!(await endpoint?.settled(config.shutdownTimeoutMs))) {
                        logger.warn({ inFlight: requests.countOf('call'), waitedMs: config.shutdownTimeoutMs }, 'requests still in flight at shutdown; cancelling them');
                        // An error answer: a client whose response stream just ends would wait for its own timeout.
                        requests.cancelAll();
                        await endpoint?.settled(ANSWER_GRACE_MS);
                    }
                    await endpoint?.close();
                    await stopAll();
                })();
                return closing;
            }
        };
    } catch (error) {
        logger.debug({ err: describeError(error) }, 'start-up failed; stopping what was started');
        await stopAll();
        throw error;
    }
}
