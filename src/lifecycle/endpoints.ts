/**
 * Where the gateway is served: the MCP endpoint on stdin/stdout (one client)
 * or on HTTP, with the health checks, the prompt catalog page and (unless
 * metrics.listen gives them an address of their own) the operator routes beside
 * it; and the operator's own listener when configured.
 */
import { ANONYMOUS_CLIENT_ID } from '../config/policy-schema.js';
import type { SharedState } from '../cluster/shared-state.js';
import type { Logger } from '../diagnostics/logger.js';
import type { Dispatcher } from '../downstream/dispatcher.js';
import type { Endpoint } from '../downstream/endpoint.js';
import { catalogPageRoutes, catalogResponseBytes } from '../downstream/http/catalog-page.js';
import { startHttpEndpoint, type ListenerRoutes } from '../downstream/http/endpoint.js';
import type { RequestRegistry } from '../downstream/requests.js';
import type { SessionTable } from '../downstream/sessions.js';
import { startStdioEndpoint } from '../downstream/stdio.js';
import type { Subscriptions } from '../downstream/subscriptions.js';
import { startAdminServer, type AdminServer } from '../observability/admin-server.js';
import { mcpListenerRoutes } from '../observability/operator-access.js';
import { healthRoutes } from '../observability/routes.js';
import type { Telemetry } from '../observability/telemetry.js';
import type { HealthChecks } from './health.js';
import type { LiveSettings } from './reload.js';

export interface EndpointParts {
    live: LiveSettings;
    dispatcher: Dispatcher;
    sessions: SessionTable;
    subscriptions: Subscriptions;
    requests: RequestRegistry;
    shared: SharedState;
    telemetry: Telemetry;
    checks: HealthChecks;
    /** Whether a session opened now is offered `completions`. */
    completions: () => boolean;
    logger: Logger;
}

export interface StartedEndpoint {
    endpoint: Endpoint;
    /** The HTTP endpoint's URL; undefined in stdio mode. */
    url: string | undefined;
    /** Resolves when a stdio client closes the connection; never in HTTP mode. */
    done: Promise<void>;
}

/** `client`: with stdio, the configured client the stdio caller is (default: anonymous). */
export async function startEndpoint(parts: EndpointParts, mode: { stdio: boolean; client?: string | undefined }): Promise<StartedEndpoint> {
    if (mode.stdio) return startStdio(parts, mode.client);
    const http = await startHttp(parts);
    return { endpoint: http, url: http.url, done: new Promise<void>(() => {}) };
}

function startStdio(parts: EndpointParts, clientId: string | undefined): StartedEndpoint {
    const { live } = parts;
    const client = live.policy.clients.get(clientId ?? ANONYMOUS_CLIENT_ID);
    if (client === undefined) throw new Error(`--client "${clientId ?? ''}" is not a configured client`);
    const stdio = startStdioEndpoint({
        client,
        dispatcher: parts.dispatcher,
        sessions: parts.sessions,
        subscriptions: parts.subscriptions,
        requests: parts.requests,
        completions: parts.completions,
        maxLineBytes: live.config.limits.maxBodyBytes,
        maxJsonDepth: () => live.config.limits.maxJsonDepth,
        logger: parts.logger
    });
    return { endpoint: stdio, url: undefined, done: stdio.closed };
}

function startHttp(parts: EndpointParts) {
    const { live, telemetry, checks } = parts;
    const { config } = live;
    const operatorHere = config.metrics.listen === undefined && telemetry.serving;
    // Read once: catalog.* is restart-only. The auth mode is read per page load, from the current policy.
    const catalog = config.catalog.enabled
        ? catalogPageRoutes({
              path: config.catalog.path,
              endpointPath: config.listen.path,
              authMode: () => live.policy.authenticator.mode,
              separator: config.namespace.separator,
              serverName: config.catalog.serverName,
              maxResponseBytes: () => catalogResponseBytes(live.config.limits, live.config.pagination.pageSize)
          })
        : undefined;
    const listenerRoutes = mcpListenerRoutes({
        ...checks,
        operatorRoutes: operatorHere ? telemetry.routes : undefined,
        operatorToken: config.metrics.bearerToken,
        // Decided per request, from the current auth mode: a reload that turns auth on closes them at once.
        authMode: () => live.policy.authenticator.mode
    });
    return startHttpEndpoint({
        ...config.listen,
        maxBodyBytes: config.limits.maxBodyBytes,
        maxJsonDepth: () => live.config.limits.maxJsonDepth,
        policy: () => live.policy,
        idleTimeoutMs: config.sessions.idleTimeoutMs,
        sessionLifetimeMs: config.sessions.maxLifetimeMs,
        idleEndsSession: config.cluster === undefined || config.cluster.redis !== undefined,
        limiter: parts.shared.rateLimiter,
        dispatcher: parts.dispatcher,
        sessions: parts.sessions,
        subscriptions: parts.subscriptions,
        requests: parts.requests,
        completions: parts.completions,
        // The catalog is for clients, not operators: served beside the operator routes, never withheld with them.
        routes: context => firstOf(catalog, listenerRoutes(context)),
        onRejected: telemetry.rejected,
        onStreamClosed: telemetry.streamsClosed,
        logger: parts.logger
    });
}

/** The first of the route sets that has the path. */
function firstOf(...sets: (ListenerRoutes | undefined)[]): ListenerRoutes {
    return (req, path) => {
        for (const routes of sets) {
            const handler = routes?.(req, path);
            if (handler !== undefined) return handler;
        }
        return undefined;
    };
}

/** metrics.listen: metrics, dashboard and health checks on an address of their own; undefined when not configured. */
export async function startOperatorListener(parts: Pick<EndpointParts, 'live' | 'telemetry' | 'checks' | 'logger'>, draining: () => boolean): Promise<AdminServer | undefined> {
    const { telemetry, checks } = parts;
    const separate = parts.live.config.metrics.listen;
    if (separate === undefined || !telemetry.serving) return undefined;
    return startAdminServer({
        ...separate,
        routes: reject => [healthRoutes({ ...checks, draining }), telemetry.routes(reject)],
        onRejected: telemetry.rejected,
        logger: parts.logger
    });
}

/** Lines for the operator at start: what is not served on the MCP listener, and why (also logged). */
export function startupNotices({ live, telemetry, logger }: Pick<EndpointParts, 'live' | 'telemetry' | 'logger'>, url: string | undefined): string[] {
    if (url === undefined) return [];
    const notices: string[] = [];
    const withheld = telemetry.withheld;
    if (withheld !== undefined) {
        logger.warn(`${withheld.what} not served on the MCP listener: ${withheld.reason}`);
        notices.push(`${withheld.what} not served on ${new URL(url).origin}: ${withheld.reason}`);
    }
    const metadataWithheld = live.policy.resourceServer?.metadataWithheld;
    if (metadataWithheld !== undefined) {
        logger.warn(metadataWithheld);
        notices.push(metadataWithheld);
    }
    return notices;
}
