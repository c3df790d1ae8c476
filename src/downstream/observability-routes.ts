/**
 * HTTP routes for operators: Prometheus metrics, the dashboard page and its
 * data, and the health checks. Mounted on the MCP listener, or on a listener of
 * their own (`metrics.listen`, see admin-server.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import express, { type Request, type RequestHandler, type Router } from 'express';
import type { DashboardData } from '../observability/dashboard-data.js';
import type { Reject } from './rejections.js';

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
    detailed?: (req: Request) => boolean;
}

export function healthRoutes({ health, readiness, draining, detailed = () => true }: HealthRoutesOptions): Router {
    const router = express.Router();
    router.get('/healthz', (req, res) => {
        const status = draining() ? 'stopping' : 'ok';
        res.json(detailed(req) ? { status, ...health() } : { status });
    });
    // Readiness is for load balancers: not ready while a required upstream is down, and not while stopping.
    router.get('/readyz', (req, res) => {
        const { ready, details } = readiness();
        const status = draining() ? 'stopping' : ready ? 'ready' : 'not ready';
        res.status(status === 'ready' ? 200 : 503).json(detailed(req) ? { status, ...details } : { status });
    });
    return router;
}

export interface ObservabilityRoutesOptions {
    metrics?: { path: string; exposition: () => Promise<{ contentType: string; body: string }> } | undefined;
    dashboard?: { path: string; data: () => Promise<DashboardData> } | undefined;
    /** When set, metrics and dashboard data need `Authorization: Bearer <token>`; the page itself holds no data. */
    bearerToken?: string | undefined;
    reject: Reject;
}

const DASHBOARD_FILES = {
    'dashboard.js': 'text/javascript; charset=utf-8',
    'dashboard.css': 'text/css; charset=utf-8'
} as const;

/** The page may load its own script, style and data, and nothing else: no inline code, no other origin, no framing. */
const DASHBOARD_CSP =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function observabilityRoutes({ metrics, dashboard, bearerToken, reject }: ObservabilityRoutesOptions): Router {
    const router = express.Router();
    const authorized = bearerToken === undefined ? [] : [requireBearer(bearerToken, reject)];
    if (metrics !== undefined) {
        router.get(metrics.path, ...authorized, (_req, res, next) => {
            metrics.exposition().then(({ contentType, body }) => {
                res.setHeader('cache-control', 'no-store');
                res.type(contentType).send(body);
            }, next);
        });
    }
    if (dashboard !== undefined) {
        const base = dashboard.path.replace(/\/$/, '');
        const page = readAsset('index.html').replaceAll('{{base}}', base);
        router.get([base, `${base}/`], (_req, res) => {
            res.setHeader('content-security-policy', DASHBOARD_CSP);
            res.setHeader('x-content-type-options', 'nosniff');
            res.setHeader('referrer-policy', 'no-referrer');
            res.type('text/html; charset=utf-8').send(page);
        });
        for (const [file, type] of Object.entries(DASHBOARD_FILES)) {
            const body = readAsset(file);
            router.get(`${base}/${file}`, (_req, res) => {
                res.setHeader('x-content-type-options', 'nosniff');
                res.type(type).send(body);
            });
        }
        router.get(`${base}/data`, ...authorized, (_req, res, next) => {
            dashboard.data().then(data => {
                res.setHeader('cache-control', 'no-store');
                res.json(data);
            }, next);
        });
    }
    return router;
}

/** Read once at start: the files ship beside the compiled code (the build copies them). */
function readAsset(file: string): string {
    return readFileSync(new URL(`../observability/dashboard/${file}`, import.meta.url), 'utf8');
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

function requireBearer(token: string, reject: Reject): RequestHandler {
    const check = bearerCheck(token);
    return (req, res, next) => {
        const outcome = check(req.headers.authorization);
        if (outcome === 'ok') return next();
        const missing = outcome === 'missing';
        res.setHeader('www-authenticate', missing ? 'Bearer realm="metrics"' : 'Bearer realm="metrics", error="invalid_token"');
        return reject(res, 'unauthorized', missing ? { message: 'Unauthorized: credentials required' } : {});
    };
}

function digest(value: string): Buffer {
    return createHash('sha256').update(value).digest();
}
