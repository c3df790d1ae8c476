/**
 * HTTP routes for operators: Prometheus metrics, the dashboard page and its
 * data, and the health checks. Served on the MCP listener, or on a listener of
 * their own (`metrics.listen`, see admin-server.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Reject } from '../http-server/rejections.js';
import { sendJson, sendText } from '../http-server/respond.js';
import { Routes, type RouteHandler } from '../http-server/routes.js';
import { assetRoutes, readAsset, readAssets } from '../http-server/static-assets.js';
import type { DashboardData } from './dashboard-data.js';
import { wantsOpenMetrics } from './metrics.js';

export interface Readiness {
    ready: boolean;
    details: Record<string, unknown>;
}

export interface HealthRoutesOptions {
    /** Extra JSON for GET /healthz. */
    health: () => Record<string, unknown>;
    /** GET /readyz: 200 when ready, else 503; `details` is added to the JSON either way. */
    readiness: () => Readiness;
    /** While the gateway stops: /healthz says so, /readyz turns 503. */
    draining: () => boolean;
    /** Whether this request may see the details (upstream ids, states, errors); else the status alone. Default: yes. */
    detailed?: (req: IncomingMessage) => boolean;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function healthRoutes({ health, readiness, draining, detailed = () => true }: HealthRoutesOptions): Routes {
    return (
        new Routes()
            .get('/healthz', (req, res) => {
                const status = draining() ? 'stopping' : 'ok';
                sendJson(res, 200, detailed(req) ? { status, ...health() } : { status });
            })
            // Readiness is for load balancers: not ready while a required upstream is down, and not while stopping.
            .get('/readyz', (req, res) => {
                const { ready, details } = readiness();
                const status = draining() ? 'stopping' : ready ? 'ready' : 'not ready';
                sendJson(res, status === 'ready' ? 200 : 503, detailed(req) ? { status, ...details } : { status });
            })
    );
}

export interface ObservabilityRoutesOptions {
    /** `openMetrics`: the scrape asked for OpenMetrics (its Accept header). */
    metrics?: { path: string; exposition: (openMetrics: boolean) => Promise<{ contentType: string; body: string }> } | undefined;
    dashboard?: { path: string; data: () => Promise<DashboardData> } | undefined;
    /** When set, metrics and dashboard data need `Authorization: Bearer <token>`; the page itself holds no data. */
    bearerToken?: string | undefined;
    reject: Reject;
}

/** The page's folder: it ships beside the compiled code (the build copies it). */
const DASHBOARD_FOLDER = new URL('./dashboard/', import.meta.url);
const DASHBOARD_FILES = ['dashboard.js', 'dashboard.css'];

/** The page may load its own script, style and data, and nothing else: no inline code, no other origin, no framing. */
const DASHBOARD_CSP =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function observabilityRoutes({ metrics, dashboard, bearerToken, reject }: ObservabilityRoutesOptions): Routes {
    const routes = new Routes();
    const authorized = bearerToken === undefined ? (handler: RouteHandler) => handler : requireBearer(bearerToken, reject);
    if (metrics !== undefined) {
        routes.get(
            metrics.path,
            authorized(async (req, res) => {
                const { contentType, body } = await metrics.exposition(wantsOpenMetrics(req.headers.accept));
                sendText(res, 200, body, contentType, { 'cache-control': 'no-store' });
            })
        );
    }
    if (dashboard !== undefined) {
        const base = dashboard.path.replace(/\/$/, '');
        const page = readAsset(DASHBOARD_FOLDER, 'index.html').replaceAll('{{base}}', base);
        routes.get([base, `${base}/`], (_req, res) =>
            sendText(res, 200, page, 'text/html; charset=utf-8', {
                'content-security-policy': DASHBOARD_CSP,
                'x-content-type-options': 'nosniff',
                'referrer-policy': 'no-referrer'
            })
        );
        assetRoutes(routes, base, readAssets(DASHBOARD_FOLDER, DASHBOARD_FILES));
        routes.get(
            `${base}/data`,
            authorized(async (_req, res) => sendText(res, 200, JSON.stringify(await dashboard.data()), JSON_TYPE, { 'cache-control': 'no-store' }))
        );
    }
    return routes;
}

export type BearerCheck = (authorization: string | undefined) => 'ok' | 'missing' | 'invalid';

/** Compares digests, so neither the comparison's time nor its length check tells anything about the token. */
export function bearerCheck(token: string): BearerCheck {
    const expected = digest(token);
    return authorization => {
        const match = /^Bearer ([\x21-\x7e]+)$/.exec(authorization ?? '');
        if (match === null) return 'missing';
        return timingSafeEqual(digest(match[1]!), expected) ? 'ok' : 'invalid';
    };
}

function requireBearer(token: string, reject: Reject): (handler: RouteHandler) => RouteHandler {
    const check = bearerCheck(token);
    return handler => (req: IncomingMessage, res: ServerResponse) => {
        const outcome = check(req.headers.authorization);
        if (outcome === 'ok') return handler(req, res);
        const missing = outcome === 'missing';
        res.setHeader('www-authenticate', missing ? 'Bearer realm="metrics"' : 'Bearer realm="metrics", error="invalid_token"');
        return reject(res, 'unauthorized', missing ? { message: 'Unauthorized: credentials required' } : {});
    };
}

function digest(value: string): Buffer {
    return createHash('sha256').update(value).digest();
}
