/**
 * The downstream Streamable HTTP endpoint: sessions keyed by `Mcp-Session-Id`,
 * one MCP Server per session, the standalone GET stream for notifications,
 * DELETE to end a session, and idle sessions swept.
 */
import { randomUUID } from 'node:crypto';
import { isInitializeRequest } from '@modelcontextprotocol/server';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response, type Router } from 'express';
import { compileProxyTrust } from '../lib/client-address.js';
import { whenIdle } from '../lib/when-idle.js';
import { describeError, type Logger } from '../observability/logger.js';
import { inRequest, REQUEST_ID_HEADER, requestIdFrom } from '../observability/request-context.js';
import type { ClientProfile } from '../policy/clients.js';
import type { GatewayPolicy } from '../policy/policy.js';
import { ClientRateLimiter } from '../policy/rate-limiter.js';
import type { Endpoint } from './endpoint.js';
import { batchLimit, judgeBatch } from './batches.js';
import {
    authenticate,
    browserGuards,
    callerOf,
    checkProtocolVersion,
    keyQuota,
    quotaKeyOf,
    rateLimit,
    refuseDeepMessages,
    tooManyRequests,
    type BrowserSafety
} from './http-guards.js';
import { hostChecks, listen } from './listener.js';
import { bearerCheck, healthRoutes, type HealthRoutesOptions } from './observability-routes.js';
import { healthDetailed, operatorRoutesOnMcpListener } from './operator-access.js';
import { rejecter, sendJsonRpcError, type Reject, type RejectionReason } from './rejections.js';
import { SessionTransport } from './session-transport.js';
import type { Session, SessionRegistry, SessionServer } from './sessions.js';

export interface HttpEndpointOptions {
    host: string;
    port: number;
    path: string;
    maxBodyBytes: number;
    /** limits.maxJsonDepth, read per request (a reload applies it at once). */
    maxJsonDepth: () => number;
    idleTimeoutMs: number;
    maxSessions: number;
    allowedHosts?: string[] | undefined;
    allowedOrigins?: string[] | undefined;
    cors?: BrowserSafety['cors'];
    /** listen.trustProxy: proxies whose X-Forwarded-For names the caller (anonymous quotas are kept per address). */
    trustProxy?: string[] | undefined;
    /** The current policy; read per request, so a reload applies at once. */
    policy: () => GatewayPolicy;
    sessions: SessionRegistry;
    createServer: (client: ClientProfile) => SessionServer;
    health: HealthRoutesOptions['health'];
    readiness: HealthRoutesOptions['readiness'];
    /** Operator routes (metrics, dashboard) served beside the MCP endpoint, behind the same Host and Origin checks. */
    routes?: (reject: Reject) => Router;
    /** metrics.bearerToken: with auth on, it alone opens the operator routes and the health checks' details here. */
    operatorToken?: string | undefined;
    /** Each request turned away before MCP handled it. */
    onRejected?: (reason: RejectionReason) => void;
    logger: Logger;
}

/** While draining, new requests get HTTP 503 and /readyz turns 503. GET streams do not count as requests in flight. */
export interface HttpEndpoint extends Endpoint {
    url: string;
}

interface HttpSession extends Session {
    readonly http: SessionTransport;
    /** Only requests proving this client may use the session. */
    readonly clientId: string;
    /** Whose maxSessions it counts against: the client, or for the anonymous client the address that opened it. */
    readonly quotaKey: string;
    lastSeen: number;
    /** Requests whose response is still open, GET streams included: a session with one is never idle. */
    inFlight: number;
    /** Open standalone GET streams, where notifications can be sent. */
    openStreams: number;
}

export async function startHttpEndpoint(options: HttpEndpointOptions): Promise<HttpEndpoint> {
    const { sessions, logger } = options;
    const httpSessions = new Map<string, HttpSession>();
    const { allowedHosts, allowedOrigins } = hostChecks(options.host, options, logger, 'listen.allowedHosts');
    const reject = rejecter(options.onRejected);
    const app = express();
    app.disable('x-powered-by');
    // First, so every answer (refusals included) names the request id the logs use.
    app.use((req, res, next) => {
        res.setHeader(REQUEST_ID_HEADER, requestIdFrom(req.headers[REQUEST_ID_HEADER]));
        next();
    });
    app.use(browserGuards({ allowedHosts, allowedOrigins, cors: options.cors, reject }));

    let draining = false;
    // Counted until the response is written, not until the handler returns: closing in between would lose the answer.
    let openPosts = 0;
    const postsDone: (() => void)[] = [];
    // Decided per request, from the current auth mode: a reload that turns auth on closes them at once.
    const authMode = () => options.policy().authenticator.mode;
    const operatorToken = options.operatorToken === undefined ? undefined : bearerCheck(options.operatorToken);
    const detailed = (req: Request) => healthDetailed(authMode(), operatorToken?.(req.headers.authorization) === 'ok');
    app.use(healthRoutes({ health: options.health, readiness: options.readiness, draining: () => draining, detailed }));
    if (options.routes !== undefined) {
        const routes = options.routes(reject);
        app.use((req, res, next) => (operatorRoutesOnMcpListener(authMode(), options.operatorToken) ? routes(req, res, next) : next()));
    }

    const handle: RequestHandler = (req, res) => {
        if (req.method === 'POST') {
            openPosts++;
            res.once('close', () => {
                if (--openPosts === 0) for (const resolve of postsDone.splice(0)) resolve();
            });
        }
        // Body parsing ran on the socket's callbacks, outside any request context: the id is set here, for MCP handling.
        const requestId = String(res.getHeader(REQUEST_ID_HEADER));
        void inRequest(requestId, () => route(req, res)).catch((error: unknown) => {
            logger.error({ err: describeError(error), method: req.method }, 'MCP request failed');
            if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'Internal error');
        });
    };
    const limiter = new ClientRateLimiter();
    const admit = [
        authenticate(options.policy, logger, reject),
        keyQuota(compileProxyTrust(options.trustProxy)),
        rateLimit(limiter, reject),
        checkProtocolVersion(reject)
    ];
    app.post(options.path, ...admit, express.json({ limit: options.maxBodyBytes }), refuseDeepMessages(options.maxJsonDepth, reject), handle);
    app.get(options.path, ...admit, handle);
    app.delete(options.path, ...admit, handle);
    // JSON, never express's HTML pages (which echo the path).
    app.all(options.path, (_req, res) => {
        res.setHeader('allow', 'GET, POST, DELETE');
        reject(res, 'method_not_allowed');
    });
    app.use((_req, res) => reject(res, 'not_found'));
    app.use(errorHandler(logger, reject));

    async function route(req: Request, res: Response): Promise<void> {
        if (draining) {
            res.setHeader('connection', 'close');
            return reject(res, 'shutting_down');
        }
        const client = callerOf(res);
        const sessionId = req.header('mcp-session-id');
        if (sessionId !== undefined) {
            const session = httpSessions.get(sessionId);
            // Another client's session is answered like one that does not exist: session ids are not confirmed to strangers.
            if (session === undefined || session.clientId !== client.id) return reject(res, 'session_not_found');
            session.lastSeen = Date.now();
            session.inFlight++;
            res.once('close', () => {
                session.inFlight--;
                session.lastSeen = Date.now();
            });
            if (req.method === 'GET') return openStream(session, req, res);
            if (req.method === 'POST' && !admitBatch(session, client, req, res)) return;
            return session.http.handleRequest(req, res, req.body);
        }
        if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
            return reject(res, 'session_required');
        }
        if (httpSessions.size >= options.maxSessions) {
            return reject(res, 'too_many_sessions');
        }
        if (sessionsOf(quotaKeyOf(res)) >= client.maxSessions) {
            return reject(res, 'client_session_limit', {
                message: `Too many sessions for this client (at most ${client.maxSessions}); end unused ones with DELETE`
            });
        }
        return startSession(client, quotaKeyOf(res), req, res);
    }

    /** A batch only where the session's revision has them; its other messages pay their tokens now, all or none. */
    function admitBatch(session: HttpSession, client: ClientProfile, req: Request, res: Response): boolean {
        const verdict = judgeBatch(req.body, session.server.getNegotiatedProtocolVersion(), batchLimit(client.rateLimit));
        if (!verdict.ok) {
            reject(res, 'batch_refused', { message: verdict.message });
            return false;
        }
        if (verdict.messages === 1) return true;
        const decision = limiter.take(client, quotaKeyOf(res), verdict.messages - 1);
        if (decision.allowed) return true;
        tooManyRequests(res, decision.retryAfterMs, reject);
        return false;
    }

    function sessionsOf(quotaKey: string): number {
        let count = 0;
        for (const session of httpSessions.values()) if (session.quotaKey === quotaKey) count++;
        return count;
    }

    /**
     * The transport registers the session (onsessioninitialized) before the initialize is answered. A session lives
     * on only if that answer was a result the client received: after anything else (an error, no answer at all as
     * for an initialize sent as a notification, a client gone) it is closed at once, so it never counts against
     * the client's maxSessions until the idle sweep.
     */
    async function startSession(client: ClientProfile, quotaKey: string, req: Request, res: Response): Promise<void> {
        const { server, scope } = options.createServer(client);
        let registered = false;
        const transport: SessionTransport = new SessionTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: id => {
                registered = register({ id, server, scope, clientId: client.id, quotaKey, http: transport });
            },
            onHidden: data => logger.error({ err: describeError(data) }, 'MCP transport failed; answered "Internal error"')
        });
        transport.sdk.onclose = () => {
            const id = transport.sessionId;
            if (id === undefined) return;
            httpSessions.delete(id);
            sessions.delete(id);
            logger.debug({ session: id }, 'session closed');
        };
        res.once('close', () => {
            const answered = registered && res.writableFinished && res.statusCode === 200 && server.getNegotiatedProtocolVersion() !== undefined;
            if (answered || transport.sessionId === undefined) return;
            logger.debug({ session: transport.sessionId, status: res.statusCode }, 'initialize did not succeed; session dropped');
            transport.close().catch((error: unknown) => logger.debug({ err: describeError(error) }, 'closing a failed session failed'));
        });
        await server.connect(transport.sdk);
        await transport.handleRequest(req, res, req.body);
    }

    /** Called back from inside the SDK transport, which answers any exception with its text: so it never throws. */
    function register(fields: Pick<HttpSession, 'id' | 'server' | 'scope' | 'clientId' | 'quotaKey' | 'http'>): boolean {
        try {
            const session: HttpSession = {
                ...fields,
                transport: 'http',
                lastSeen: Date.now(),
                inFlight: 0,
                openStreams: 0,
                notificationPending: false,
                canReceive: () => session.openStreams > 0
            };
            httpSessions.set(session.id, session);
            sessions.add(session);
            logger.debug({ session: session.id }, 'session opened');
            return true;
        } catch (error) {
            logger.error({ err: describeError(error), session: fields.id }, 'registering a session failed');
            return false;
        }
    }

    async function openStream(session: HttpSession, req: Request, res: Response): Promise<void> {
        session.openStreams++;
        res.once('close', () => session.openStreams--);
        const handled = session.http.handleRequest(req, res);
        // Observed at once: a rejection must not go unhandled while we wait below.
        handled.catch(() => {});
        // The transport registers the stream before it writes the response head.
        await whenHeadersSent(res);
        if (res.statusCode === 200) sessions.flushPending(session);
        await handled;
    }

    const sweeper = setInterval(() => {
        const idleSince = Date.now() - options.idleTimeoutMs;
        for (const session of httpSessions.values()) {
            if (session.inFlight === 0 && session.lastSeen < idleSince) {
                logger.info({ session: session.id }, 'closing idle session');
                session.http.close().catch((error: unknown) => logger.debug({ err: describeError(error) }, 'closing idle session failed'));
            }
        }
    }, Math.min(60_000, Math.max(250, options.idleTimeoutMs / 4)));
    sweeper.unref();

    const listening = await listen(app, options.host, options.port);
    return {
        url: `${listening.origin}${options.path}`,
        drain() {
            draining = true;
        },
        settled: timeoutMs => whenIdle(() => openPosts === 0, postsDone, timeoutMs),
        async close() {
            clearInterval(sweeper);
            await Promise.allSettled([...httpSessions.values()].map(session => session.http.close()));
            await listening.close();
        }
    };
}

async function whenHeadersSent(res: Response): Promise<void> {
    for (let tick = 0; tick < 100 && !res.headersSent && !res.writableEnded; tick++) {
        await new Promise(resolve => setImmediate(resolve));
    }
}

/** Body-parser and other middleware errors as JSON-RPC errors, never an HTML page with a stack trace. */
function errorHandler(logger: Logger, reject: Reject): ErrorRequestHandler {
    return (error: unknown, _req, res, next) => {
        if (res.headersSent) return next(error);
        const type = (error as { type?: string }).type;
        if (type === 'entity.too.large') return reject(res, 'body_too_large');
        if (type === 'entity.parse.failed') return reject(res, 'parse_error');
        const status = (error as { status?: number }).status;
        if (typeof status === 'number' && status >= 400 && status < 500) return reject(res, 'bad_request', { status });
        logger.error({ err: describeError(error) }, 'HTTP request failed');
        return sendJsonRpcError(res, 500, -32603, 'Internal error');
    };
}
