/**
 * The optional listener of `metrics.listen`: metrics, dashboard and health
 * checks on an address of their own, so a Prometheus or a load balancer can
 * reach them where MCP clients cannot (and in --stdio mode, where there is no
 * MCP listener at all).
 */
import express, { type ErrorRequestHandler, type Router } from 'express';
import { describeError, type Logger } from '../observability/logger.js';
import { browserGuards } from './http-guards.js';
import { hostChecks, listen } from './listener.js';
import { rejecter, sendJsonRpcError, type Reject, type RejectionReason } from './rejections.js';

export interface AdminServerOptions {
    host: string;
    port: number;
    allowedHosts?: string[] | undefined;
    routes: (reject: Reject) => Router[];
    onRejected?: (reason: RejectionReason) => void;
    logger: Logger;
}

export interface AdminServer {
    origin: string;
    close(): Promise<void>;
}

export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
    const reject = rejecter(options.onRejected);
    const app = express();
    app.disable('x-powered-by');
    app.use(browserGuards({ ...hostChecks(options.host, options, options.logger, 'metrics.listen.allowedHosts'), cors: undefined, reject }));
    for (const router of options.routes(reject)) app.use(router);
    app.use((_req, res) => reject(res, 'not_found'));
    // JSON, never express's HTML page with a stack trace.
    app.use(((error, _req, res, _next) => {
        options.logger.error({ err: describeError(error) }, 'metrics or dashboard request failed');
        sendJsonRpcError(res, 500, -32603, 'Internal error');
    }) satisfies ErrorRequestHandler);
    const listening = await listen(app, options.host, options.port);
    return { origin: listening.origin, close: () => listening.close() };
}
