/**
 * Who may read the operator endpoints. Metrics and the dashboard's data name
 * clients and prompts, hidden ones included, and /healthz and /readyz name
 * upstreams with their errors: fine on a gateway anyone may call anyway (auth
 * off), a leak of policy where callers must authenticate. There, on the MCP
 * listener, metrics and the dashboard are served only behind the operator
 * token (metrics.bearerToken), and the health checks answer their status (and
 * status code, for probes) to everyone but their details to that token only. A
 * listener of the operator's own (metrics.listen) is theirs to protect: nothing
 * changes there.
 */
import type { IncomingMessage } from 'node:http';
import type { Reject } from '../http-server/rejections.js';
import type { Routes } from '../http-server/routes.js';
import type { ListenerRoutes, ListenerRoutesContext } from '../downstream/http/endpoint.js';
import { bearerCheck, healthRoutes, type HealthRoutesOptions } from './routes.js';
export type AuthMode = 'none' | 'apiKey' | 'jwt';

/** Whether metrics and the dashboard may be served on the MCP listener. */
export function operatorRoutesOnMcpListener(authMode: AuthMode, bearerToken: string | undefined): boolean {
    return authMode === 'none' || bearerToken !== undefined;
}

/** Why metrics and the dashboard are not served on the MCP listener, and how to turn them on. */
export function withheldReason(authMode: AuthMode): string {
    return `auth.mode is ${authMode} and metrics.bearerToken is not set, so anyone who can reach the port could read them; set metrics.bearerToken, or serve them on an address of their own with metrics.listen`;
}

/** Whether /healthz and /readyz on the MCP listener show upstream details to this request. */
export function healthDetailed(authMode: AuthMode, operatorTokenPresented: boolean): boolean {
    return authMode === 'none' || operatorTokenPresented;
}

export interface McpListenerRoutesOptions {
    health: HealthRoutesOptions['health'];
    readiness: HealthRoutesOptions['readiness'];
    /** Operator routes (metrics, dashboard) to serve on the MCP listener, if any. */
    operatorRoutes?: ((reject: Reject) => Routes) | undefined;
    /** metrics.bearerToken: with auth on, it alone opens the operator routes and the health checks' details here. */
    operatorToken?: string | undefined;
    /** Read per request: a reload that turns auth on closes them at once. */
    authMode: () => AuthMode;
}

/** The routes beside the MCP endpoint on its listener: the health checks, and the operator routes to whom may read them. */
export function mcpListenerRoutes(options: McpListenerRoutesOptions): (context: ListenerRoutesContext) => ListenerRoutes {
    const operatorToken = options.operatorToken === undefined ? undefined : bearerCheck(options.operatorToken);
    const detailed = (req: IncomingMessage) => healthDetailed(options.authMode(), operatorToken?.(req.headers.authorization) === 'ok');
    return ({ reject, draining }) => {
        const health = healthRoutes({ health: options.health, readiness: options.readiness, draining, detailed });
        const operator = options.operatorRoutes?.(reject);
        return (req, path) =>
            health.match(req.method, path) ?? (operatorRoutesOnMcpListener(options.authMode(), options.operatorToken) ? operator?.match(req.method, path) : undefined);
    };
}
