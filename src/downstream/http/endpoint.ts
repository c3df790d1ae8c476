/**
 * The downstream Streamable HTTP listener on node:http: browser guards for
 * every path, OAuth Protected Resource Metadata (jwt mode), the routes the
 * caller serves beside it (health checks, operator routes), and the MCP endpoint behind
 * authentication, rate limit and protocol version
 * checks (mcp.ts serves it). Idle sessions are swept; a drain turns new
 * requests away with 503 while those taken finish.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { browserGuards, type BrowserSafety } from '../../http-server/browser-safety.js';
import { hostChecks, listen } from '../../http-server/listener.js';
import { rejecter, sendJsonRpcError, type Reject, type RejectionReason } from '../../http-server/rejections.js';
import { routeKey, routeKeyOf, type RouteHandler } from '../../http-server/routes.js';
import { describeError, type Logger } from '../../diagnostics/logger.js';
import { REQUEST_ID_HEADER, requestIdFrom } from '../../diagnostics/log-context.js';
import type { GatewayPolicy } from '../../policy/policy.js';
import { CODE } from '../../protocol/errors.js';
import type { RateLimiter } from '../../policy/rate-limiter.js';
import type { CacheScope, Dispatcher } from '../dispatcher.js';
import type { RequestRegistry } from '../requests.js';
import type { Subscriptions } from '../subscriptions.js';
import type { Endpoint } from '../endpoint.js';
import type { SessionTable } from '../sessions.js';
import { admission } from './admission.js';
import type { StreamCloseReason } from '../endpoint.js';
import { McpEndpoint } from './mcp.js';
import { metadataRoute, resourceServers } from './resource-metadata.js';
import { sweepIdleSessions } from './sweeper.js';

export interface HttpEndpointOptions {
    host: string;
    port: number;
    path: string;
    maxBodyBytes: number;
    /** limits.maxJsonDepth, read per request (a reload applies it at once). */
    maxJsonDepth: () => number;
    idleTimeoutMs: number;
    /** sessions.maxLifetimeMs: sealed into each new session id. */
    sessionLifetimeMs: number;
    /**
     * Whether idleness ends a session: one process serves the endpoint, or replicas share when sessions were last
     * used (cluster.redis). Else (cluster without Redis) an idle session is only let go here, its id good elsewhere.
     */
    idleEndsSession: boolean;
    /** Rate limits: this process's own, or shared by the replicas (cluster/). */
    limiter: RateLimiter;
    allowedHosts?: string[] | undefined;
    allowedOrigins?: string[] | undefined;
    cors?: BrowserSafety['cors'];
    /** listen.trustProxy: proxies whose X-Forwarded-For names the caller (anonymous quotas are kept per address). */
    trustProxy?: string[] | undefined;
    /** The current policy; read per request, so a reload applies at once. */
    policy: () => GatewayPolicy;
    dispatcher: Dispatcher;
    sessions: SessionTable;
    /** 2026-07-28 clients' subscriptions/listen streams. */
    subscriptions: Subscriptions;
    /** Requests in flight: what a shutdown waits for, and cancels. */
    requests: RequestRegistry;
    /** Whether a session opened now is offered `completions`. */
    completions: () => boolean;
    /**
     * The routes served beside the MCP endpoint, behind the same Host and Origin checks: the health checks, and the
     * operator routes (metrics, dashboard) when served here. Built by the code that composes the gateway, whose
     * observability layer sits above this one.
     */
    routes: (context: ListenerRoutesContext) => ListenerRoutes;
    /** Each request turned away before MCP handled it. */
    onRejected?: (reason: RejectionReason) => void;
    /** Each stream the endpoint cut (a client that stopped reading). */
    onStreamClosed?: ((reason: StreamCloseReason) => void) | undefined;
    logger: Logger;
}

/** What the routes beside the MCP endpoint are given: how to refuse, and whether the endpoint drains (/readyz turns 503). */
export interface ListenerRoutesContext {
    reject: Reject;
    draining: () => boolean;
}

/** The handler of a request beside the MCP endpoint (`path` as routeKeyOf gives it), or undefined: 404. */
export type ListenerRoutes = (req: IncomingMessage, path: string) => RouteHandler | undefined;

/** While draining, new requests get HTTP 503 and /readyz turns 503. GET streams do not count as requests in flight. */
export interface HttpEndpoint extends Endpoint {
    url: string;
}

export async function startHttpEndpoint(options: HttpEndpointOptions): Promise<HttpEndpoint> {
    const { sessions, logger } = options;
    const reject = rejecter(options.onRejected);
    const guard = browserGuards({ ...hostChecks(options.host, options, logger, 'listen.allowedHosts'), cors: options.cors });
    const { limiter } = options;
    // Until the listener is bound (requests cannot come before), the configured port stands in for the bound one.
    let boundPort = options.port;
    const resourceServer = resourceServers({ host: options.host, port: () => boundPort, path: options.path });
    const admit = admission({ ...options, resourceServer, limiter, reject });
    // With authentication off every caller is the anonymous client, served one view: a shared cache may keep it.
    const cacheScope = (): CacheScope => (options.policy().authenticator.mode === 'none' ? 'public' : 'private');
    const mcp = new McpEndpoint({ ...options, limiter, reject, cacheScope });

    let draining = false;
    const listenerRoutes = options.routes({ reject, draining: () => draining });
    const mcpPath = routeKey(options.path);
    const mcpRoute: McpRoute = { reject, requests: options.requests, draining: () => draining, admit, mcp };

    async function route(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
        const path = routeKeyOf(req.url);
        const metadata = metadataRoute(resourceServer(options.policy()), options.path, path, reject);
        const refusal = guard(req, res, metadata !== undefined);
        if (refusal === 'answered') return;
        if (refusal !== undefined) return reject(res, refusal);
        if (metadata !== undefined) return metadata(req, res);
        if (path === mcpPath) return mcpRequest(mcpRoute, req, res, requestId);
        const handler = listenerRoutes(req, path);
        if (handler !== undefined) return handler(req, res);
        return reject(res, 'not_found');
    }

    const stopSweeping = sweepSessions(options, mcp);
    const listening = await listen(withRequestId(route, logger), options.host, options.port);
    boundPort = Number(new URL(listening.origin).port);
    return {
        url: `${listening.origin}${options.path}`,
        drain() {
            draining = true;
            options.requests.refuseNew();
        },
        settled: timeoutMs => options.requests.settled(timeoutMs),
        async close() {
            stopSweeping();
            for (const session of [...sessions.values()]) if (session.transport === 'http') mcp.close(session);
            await listening.close();
        }
    };
}

interface McpRoute {
    reject: Reject;
    requests: RequestRegistry;
    draining: () => boolean;
    admit: ReturnType<typeof admission>;
    mcp: McpEndpoint;
}

/** The MCP path: POST, GET (the session's stream) or DELETE, each admitted first; while draining, 503. */
async function mcpRequest({ reject, requests, draining, admit, mcp }: McpRoute, req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const method = req.method;
    if (method !== 'POST' && method !== 'GET' && method !== 'DELETE') {
        res.setHeader('allow', 'GET, POST, DELETE');
        return reject(res, 'method_not_allowed');
    }
    // Held until the response is written, not until the handler returns: closing in between would lose the answer.
    if (method === 'POST') res.once('close', requests.hold());
    if (draining()) {
        res.setHeader('connection', 'close');
        return reject(res, 'shutting_down');
    }
    const admitted = await admit(req, res);
    if (admitted === undefined) return;
    if (method === 'POST') return mcp.post(req, res, admitted, requestId);
    if (method === 'GET') return mcp.stream(req, res, admitted);
    return mcp.end(req, res, admitted);
}

/** Each request's id first, so every answer (refusals included) names the id the logs use; a failure answers 500. */
function withRequestId(route: (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void>, logger: Logger) {
    return (req: IncomingMessage, res: ServerResponse): void => {
        const requestId = requestIdFrom(req.headers[REQUEST_ID_HEADER]);
        res.setHeader(REQUEST_ID_HEADER, requestId);
        route(req, res, requestId).catch((error: unknown) => {
            logger.error({ requestId, err: describeError(error), method: req.method }, 'HTTP request failed');
            if (!res.headersSent) sendJsonRpcError(res, 500, CODE.internalError, 'Internal error');
            else res.end();
        });
    };
}

function sweepSessions({ sessions, logger, idleTimeoutMs, idleEndsSession }: HttpEndpointOptions, mcp: McpEndpoint): () => void {
    return sweepIdleSessions(sessions, {
        idleTimeoutMs,
        idleEnds: idleEndsSession,
        letGo: session => mcp.close(session),
        end: session => {
            logger.info({ session: session.record.nonce }, 'ending idle session');
            sessions.end(session).catch((error: unknown) => logger.warn({ err: describeError(error) }, 'recording the end of an idle session failed'));
        }
    });
}
