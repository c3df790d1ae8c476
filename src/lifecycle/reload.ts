/**
 * A new config applied to a running gateway without dropping sessions: the
 * settings every part reads per request (LiveSettings), the upstreams that
 * changed, the policy, and the clients the new policy no longer admits, whose
 * sessions and streams end. What only a restart applies is named, not applied.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Catalog } from '../catalog/catalog.js';
import { CursorCodec } from '../catalog/cursor.js';
import { compileOverrides, type UpstreamOverrides } from '../catalog/overrides.js';
import { RequestStates } from '../catalog/request-state.js';
import type { PromptService, PromptServiceOptions } from '../catalog/service.js';
import { configSecrets } from '../config/secrets.js';
import { resolveReconnect, type GatewayConfig } from '../config/schema.js';
import { setLogSecrets, type Logger } from '../diagnostics/logger.js';
import type { SessionTable } from '../downstream/sessions.js';
import type { Subscriptions } from '../downstream/subscriptions.js';
import type { Telemetry } from '../observability/telemetry.js';
import { compilePolicy, revokedClients, type GatewayPolicy } from '../policy/policy.js';
import { UpstreamConnection } from '../upstream/connection.js';
import type { PoolChange, UpstreamPool } from '../upstream/pool.js';

export interface ReloadResult extends PoolChange {
    /** Changed settings that only a restart applies. */
    needRestart: string[];
}

/** What a reload replaces. The parts read it per request (`live.config.limits`, `live.policy`), so a reload applies at once. */
export interface LiveSettings {
    config: GatewayConfig;
    policy: GatewayPolicy;
    cursors: CursorCodec;
    requestStates: RequestStates;
}

export function liveSettings(config: GatewayConfig): LiveSettings {
    return { config, policy: compilePolicy(config), cursors: new CursorCodec(config.cursorSecret), requestStates: new RequestStates(config.cursorSecret) };
}

export function serviceOptions(config: GatewayConfig, policy: GatewayPolicy): PromptServiceOptions {
    return {
        pageSize: config.pagination.pageSize,
        ...policy.arguments,
        maxResultBytes: policy.maxResultBytes,
        maxJsonDepth: config.limits.maxJsonDepth,
        passUnknownArguments: upstreamId => policy.access.passesUnknownArguments(upstreamId),
        // An answer is one client message: the transports already bound it by limits.maxBodyBytes.
        input: { ...config.inputRequests, maxAnswerBytes: config.limits.maxBodyBytes }
    };
}

/** Applied by the catalog, from the config given: a kept connection still holds the config it was started with. */
export function overridesOf(config: GatewayConfig): ReadonlyMap<string, UpstreamOverrides> {
    return new Map(config.upstreams.map(upstream => [upstream.id, compileOverrides(upstream.overrides)]));
}

/** Settings read once at start; a reload that changes them says a restart is needed. */
const RESTART_ONLY: Record<string, (config: GatewayConfig) => unknown> = {
    listen: config => config.listen,
    metrics: config => config.metrics,
    dashboard: config => config.dashboard,
    catalog: config => config.catalog,
    tracing: config => config.tracing,
    'log.format': config => config.log.format,
    sessions: config => config.sessions,
    cluster: config => config.cluster,
    'limits.maxBodyBytes': config => config.limits.maxBodyBytes
};

export interface ReloadParts {
    live: LiveSettings;
    logger: Logger;
    pool: UpstreamPool;
    catalog: Catalog;
    service: PromptService;
    sessions: SessionTable;
    subscriptions: Subscriptions;
    telemetry: Telemetry;
}

/** Applies a new config without dropping sessions; reloads run one at a time. */
export function reloader(parts: ReloadParts): (next: GatewayConfig) => Promise<ReloadResult> {
    let reloading: Promise<unknown> = Promise.resolve();
    return next => {
        const run = reloading.then(() => applyReload(parts, next));
        reloading = run.catch(() => {});
        return run;
    };
}

async function applyReload(parts: ReloadParts, next: GatewayConfig): Promise<ReloadResult> {
    const { live, pool, catalog } = parts;
    const previous = live.config;
    const needRestart = Object.entries(RESTART_ONLY)
        .filter(([, read]) => !isDeepStrictEqual(read(previous), read(next)))
        .map(([key]) => key);
    applySettings(live, next, parts.logger);
    const nextPolicy = compilePolicy(next);
    if (!isDeepStrictEqual(next.notifications, previous.notifications)) catalog.setNotificationTiming(next.notifications);
    // Names, upstreams and policy change together, so a reload is one change, announced once.
    const revoked = revokedClients(live.policy, nextPolicy);
    let ending: Promise<void> | undefined;
    const change = await pool.apply(next.upstreams, next.upstreamConnectConcurrency, upstreams => {
        live.policy = nextPolicy;
        // With the policy that refuses their credentials: nothing they hold outlives it.
        if (revoked.size > 0) ending = endRevoked(parts, revoked);
        parts.service.reconfigure(live.cursors, serviceOptions(next, live.policy), live.requestStates);
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

/** The config itself, the log's secrets and level, and the codecs of cursors and request states. */
function applySettings(live: LiveSettings, next: GatewayConfig, logger: Logger): void {
    const previous = live.config;
    live.config = next;
    // The previous values too: what was started with them (a child still stopping) may still write.
    setLogSecrets(logger, [...configSecrets(next), ...configSecrets(previous)]);
    if (process.env.LOG_LEVEL === undefined) logger.level = next.log.level;
    // Same secret, same codec: an empty secret must not draw a new random key and void every cursor out there.
    if (next.cursorSecret !== previous.cursorSecret) {
        live.cursors = new CursorCodec(next.cursorSecret);
        live.requestStates = new RequestStates(next.cursorSecret);
    }
}

/**
 * Clients a reload removed, or whose credentials it changed: what they hold open was admitted with credentials that
 * no longer hold, so it ends (sessions, their GET streams, subscriptions; see docs/security.md).
 */
async function endRevoked({ subscriptions, sessions, telemetry, logger }: ReloadParts, clientIds: ReadonlySet<string>): Promise<void> {
    const subscriptionsEnded = subscriptions.closeClients(clientIds);
    const { sessions: sessionsEnded, streams } = await sessions.endClients(clientIds, Date.now());
    if (subscriptionsEnded + streams > 0) telemetry.streamsClosed('client_revoked', subscriptionsEnded + streams);
    logger.info(
        { clients: [...clientIds], sessions: sessionsEnded, subscriptions: subscriptionsEnded },
        'clients removed or given new credentials by the reload: their sessions and streams ended'
    );
}
