/**
 * The optional listener of `metrics.listen`: metrics, dashboard and health
 * checks on an address of their own, so a Prometheus or a load balancer can
 * reach them where MCP clients cannot (and in --stdio mode, where there is no
 * MCP listener at all).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { browserGuards } from '../http-server/browser-safety.js';
import { hostChecks, listen } from '../http-server/listener.js';
import { rejecter, sendJsonRpcError, type Reject, type RejectionReason } from '../http-server/rejections.js';
import { routeKeyOf, Routes } from '../http-server/routes.js';
import { describeError, type Logger } from '../diagnostics/logger.js';
import { CODE } from '../protocol/errors.js';

export interface AdminServerOptions {
    host: string;
    port: number;
    allowedHosts?: string[] | undefined;
    routes: (reject: Reject) => Routes[];
    onRejected?: (reason: RejectionReason) => void;
    logger: Logger;
}

export interface AdminServer {
    origin: string;
    close(): Promise<void>;
}

export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
    const reject = rejecter(options.onRejected);
    const guard = browserGuards({ ...hostChecks(options.host, options, options.logger, 'metrics.listen.allowedHosts'), cors: undefined });
    const routes = options.routes(reject).reduce((all, more) => all.merge(more), new Routes());
    const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
        const refusal = guard(req, res);
        if (refusal === 'answered') return;
        if (refusal !== undefined) return reject(res, refusal);
        const handler = routes.match(req.method, routeKeyOf(req.url));
        if (handler === undefined) return reject(res, 'not_found');
        return handler(req, res);
    };
    const listening = await listen(
        (req, res) =>
            void route(req, res).catch((error: unknown) => {
                // JSON, never a page with a stack trace.
                options.logger.error({ err: describeError(error) }, 'metrics or dashboard request failed');
                sendJsonRpcError(res, 500, CODE.internalError, 'Internal error');
            }),
        options.host,
        options.port
    );
    return { origin: listening.origin, close: () => listening.close() };
}
