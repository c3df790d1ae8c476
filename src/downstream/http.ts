/**
 * The downstream Streamable HTTP endpoint: sessions keyed by `Mcp-Session-Id`,
 * one MCP Server per session, the standalone GET stream for notifications,
 * DELETE to end a session, and idle sessions swept.
 */
import { randomUUID } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { isInitializeRequest } from '@modelcontextprotocol/server';
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response } from 'express';
import { whenIdle } from '../lib/when-idle.js';
import { describeError, type Logger } from '../observability/logger.js';
import type { ClientProfile } from '../policy/clients.js';
import type { GatewayPolicy } from '../policy/policy.js';
import { ClientRateLimiter } from '../policy/rate-limiter.js';
import type { Endpoint } from './endpoint.js';
import { authenticate, browserGuards, callerOf, checkProtocolVersion, rateLimit, sendJsonRpcError, type BrowserSafety } from './http-guards.js';
import type { Session, SessionRegistry, SessionServer } from './sessions.js';

export interface HttpEndpointOptions {
    host: string;
    port: number;
    path: string;
    maxBodyBytes: number;
    idleTimeoutMs: number;
    maxSessions: number;
    allowedHosts?: string[] | undefined;
    allowedOrigins?: string[] | undefined;
    cors?: BrowserSafety['cors'];
    /** The current policy; read per request, so a reload applies at once. */
    policy: () => GatewayPolicy;
    sessions: SessionRegistry;
    createServer: (client: ClientProfile) => SessionServer;
    /** Extra JSON for GET /healthz. */
    health: () => Record<string, unknown>;
    /** GET /readyz: 200 when ready, else 503; `details` is added to the JSON either way. */
    readiness: () => Readiness;
    logger: Logger;
}

export interface Readiness {
    ready: boolean;
    details: Record<string, unknown>;
}

/** While draining, new requests get HTTP 503 and /readyz turns 503. GET streams do not count as requests in flight. */
export interface HttpEndpoint extends Endpoint {
    url: string;
}

interface HttpSession extends Session {
    readonly http: NodeStreamableHTTPServerTransport;
    /** Only requests proving this client may use the session. */
    readonly clientId: string;
    lastSeen: number;
    /** Requests whose response is still open, GET streams included: a session with one is never idle. */
    inFlight: number;
    /** Open standalone GET streams, where notifications can be sent. */
    openStreams: number;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

function isLoopback(host: string): boolean {
    return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

export async function startHttpEndpoint(options: HttpEndpointOptions): Promise<HttpEndpoint> {
    const { sessions, logger } = options;
    const httpSessions = new Map<string, HttpSession>();
    const loopback = isLoopback(options.host);
    const allowedHosts = options.allowedHosts ?? (loopback ? [...new Set([...LOOPBACK_NAMES, options.host])] : undefined);
    const allowedOrigins = options.allowedOrigins ?? (loopback ? LOOPBACK_NAMES : undefined);
    if (allowedHosts === undefined) {
        logger.warn({ host: options.host }, 'not bound to loopback and listen.allowedHosts is not set: Host header checks (DNS-rebinding protection) are off');
    }
    const app = express();
    app.disable('x-powered-by');
    app.use(browserGuards({ allowedHosts, allowedOrigins, cors: options.cors }));

    let draining = false;
    // Counted until the response is written, not until the handler returns: closing in between would lose the answer.
    let openPosts = 0;
    const postsDone: (() => void)[] = [];
    app.get('/healthz', (_req, res) => {
        res.json({ status: draining ? 'stopping' : 'ok', ...options.health() });
    });
    // Readiness is for load balancers: not ready while a required upstream is down, and not while stopping.
    app.get('/readyz', (_req, res) => {
        const { ready, details } = options.readiness();
        const status = draining ? 'stopping' : ready ? 'ready' : 'not ready';
        res.status(status === 'ready' ? 200 : 503).json({ status, ...details });
    });

    const handle: RequestHandler = (req, res) => {
        if (req.method === 'POST') {
            openPosts++;
            res.once('close', () => {
                if (--openPosts === 0) for (const resolve of postsDone.splice(0)) resolve();
            });
        }
        void route(req, res).catch((error: unknown) => {
            logger.error({ err: describeError(error), method: req.method }, 'MCP request failed');
            if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'Internal error');
        });
    };
    const admit = [authenticate(options.policy, logger), rateLimit(new ClientRateLimiter()), checkProtocolVersion()];
    app.post(options.path, ...admit, express.json({ limit: options.maxBodyBytes }), handle);
    app.get(options.path, ...admit, handle);
    app.delete(options.path, ...admit, handle);
    // JSON, never express's HTML pages (which echo the path).
    app.all(options.path, (_req, res) => {
        res.setHeader('allow', 'GET, POST, DELETE');
        sendJsonRpcError(res, 405, -32000, 'Method not allowed');
    });
    app.use((_req, res) => sendJsonRpcError(res, 404, -32000, 'Not found'));
    app.use(errorHandler(logger));

    async function route(req: Request, res: Response): Promise<void> {
        if (draining) {
            res.setHeader('connection', 'close');
            return sendJsonRpcError(res, 503, -32000, 'Gateway is shutting down; try again later');
        }
        const client = callerOf(res);
        const sessionId = req.header('mcp-session-id');
        if (sessionId !== undefined) {
            const session = httpSessions.get(sessionId);
            // Another client's session is answered like one that does not exist: session ids are not confirmed to strangers.
            if (session === undefined || session.clientId !== client.id) return sendJsonRpcError(res, 404, -32001, 'Session not found');
            session.lastSeen = Date.now();
            session.inFlight++;
            res.once('close', () => {
                session.inFlight--;
                session.lastSeen = Date.now();
            });
            if (req.method === 'GET') return openStream(session, req, res);
            return session.http.handleRequest(req, res, req.body);
        }
        if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
            return sendJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
        }
        if (httpSessions.size >= options.maxSessions) {
            return sendJsonRpcError(res, 503, -32000, 'Too many sessions; try again later');
        }
        if (sessionsOf(client.id) >= client.maxSessions) {
            return sendJsonRpcError(res, 429, -32000, `Too many sessions for this client (at most ${client.maxSessions}); end unused ones with DELETE`);
        }
        return startSession(client, req, res);
    }

    function sessionsOf(clientId: string): number {
        let count = 0;
        for (const session of httpSessions.values()) if (session.clientId === clientId) count++;
        return count;
    }

    async function startSession(client: ClientProfile, req: Request, res: Response): Promise<void> {
        const { server, scope } = options.createServer(client);
        const transport = new NodeStreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: id => {
                const session: HttpSession = {
                    id,
                    server,
                    scope,
                    clientId: client.id,
                    http: transport,
                    lastSeen: Date.now(),
                    inFlight: 0,
                    openStreams: 0,
                    notificationPending: false,
                    canReceive: () => session.openStreams > 0
                };
                httpSessions.set(id, session);
                sessions.add(session);
                logger.debug({ session: id }, 'session opened');
            }
        });
        transport.onclose = () => {
            const id = transport.sessionId;
            if (id === undefined) return;
            httpSessions.delete(id);
            sessions.delete(id);
            logger.debug({ session: id }, 'session closed');
        };
        await server.connect(transport);
        await transport.handleRequest(req, res, req.body);
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

    const server = await listen(app, options.host, options.port);
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return {
        url: `http://${host}:${address.port}${options.path}`,
        drain() {
            draining = true;
        },
        settled: timeoutMs => whenIdle(() => openPosts === 0, postsDone, timeoutMs),
        async close() {
            clearInterval(sweeper);
            await Promise.allSettled([...httpSessions.values()].map(session => session.http.close()));
            server.closeAllConnections();
            await new Promise<void>(resolve => server.close(() => resolve()));
        }
    };
}

function listen(app: Express, host: string, port: number): Promise<HttpServer> {
    return new Promise((resolve, reject) => {
        const server = app.listen(port, host, error => (error ? reject(error) : resolve(server)));
    });
}

async function whenHeadersSent(res: Response): Promise<void> {
    for (let tick = 0; tick < 100 && !res.headersSent && !res.writableEnded; tick++) {
        await new Promise(resolve => setImmediate(resolve));
    }
}

/** Body-parser and other middleware errors as JSON-RPC errors, never an HTML page with a stack trace. */
function errorHandler(logger: Logger): ErrorRequestHandler {
    return (error: unknown, _req, res, next) => {
        if (res.headersSent) return next(error);
        const type = (error as { type?: string }).type;
        if (type === 'entity.too.large') return sendJsonRpcError(res, 413, -32600, 'Request body too large');
        if (type === 'entity.parse.failed') return sendJsonRpcError(res, 400, -32700, 'Parse error: invalid JSON');
        const status = (error as { status?: number }).status;
        if (typeof status === 'number' && status >= 400 && status < 500) return sendJsonRpcError(res, status, -32600, 'Bad request');
        logger.error({ err: describeError(error) }, 'HTTP request failed');
        return sendJsonRpcError(res, 500, -32603, 'Internal error');
    };
}
