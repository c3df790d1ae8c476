/**
 * What an HTTP request must pass before any MCP processing, in order: CORS
 * preflight (only when configured), the Host and Origin checks against DNS
 * rebinding, authentication (401), and the client's rate limit (429). Only then
 * is the body parsed, so unauthenticated callers cannot make the gateway parse
 * megabytes of JSON.
 */
import { SUPPORTED_PROTOCOL_VERSIONS, validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';
import cors from 'cors';
import type { RequestHandler, Response } from 'express';
import { clientAddress, type ProxyTrust } from '../lib/client-address.js';
import { exceedsDepth } from '../lib/json-bounds.js';
import type { Logger } from '../observability/logger.js';
import type { ClientProfile } from '../policy/clients.js';
import type { GatewayPolicy } from '../policy/policy.js';
import { quotaKey } from '../policy/quota.js';
import type { ClientRateLimiter } from '../policy/rate-limiter.js';
import type { Reject } from './rejections.js';

const REALM = 'mcp-prompt-gateway';

export interface BrowserSafety {
    allowedHosts: string[] | undefined;
    allowedOrigins: string[] | undefined;
    cors: { origins: string[]; maxAgeSec: number } | undefined;
    reject: Reject;
}

/** CORS first (a preflight carries no credentials), then Host, then Origin; a configured CORS origin passes the Origin check. */
export function browserGuards({ allowedHosts, allowedOrigins, cors: corsConfig, reject }: BrowserSafety): RequestHandler[] {
    const guards: RequestHandler[] = [];
    const corsOrigins = new Set(corsConfig?.origins ?? []);
    if (corsConfig !== undefined) {
        guards.push(
            cors({
                // Other origins get no CORS header at all and fall through to the Origin check (403), preflights included.
                origin: (origin, done) => done(null, origin !== undefined && corsOrigins.has(origin) ? origin : false),
                methods: ['GET', 'POST', 'DELETE'],
                allowedHeaders: ['content-type', 'accept', 'authorization', 'x-api-key', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id', 'x-request-id'],
                exposedHeaders: ['mcp-session-id', 'mcp-protocol-version', 'www-authenticate', 'retry-after', 'x-request-id'],
                maxAge: corsConfig.maxAgeSec
            })
        );
    }
    // The SDK's checks are used, not its answers: those repeat the header's value, and errors never echo headers.
    if (allowedHosts !== undefined) {
        guards.push((req, res, next) =>
            validateHostHeader(req.headers.host, allowedHosts).ok ? next() : reject(res, 'forbidden_host')
        );
    }
    const origins = allowedOrigins ?? (corsOrigins.size > 0 ? [] : undefined);
    if (origins !== undefined) {
        guards.push((req, res, next) => {
            const origin = req.headers.origin;
            if (corsOrigins.has(origin ?? '') || validateOriginHeader(origin, origins).ok) return next();
            return reject(res, 'forbidden_origin');
        });
    }
    return guards;
}

/** An identity-provider outage is an operator's business, but one line per failed request would flood the log. */
const OUTAGE_LOG_INTERVAL_MS = 10_000;

/** Sets the calling client (see `callerOf`) or answers 401 with a Bearer challenge. */
export function authenticate(policy: () => GatewayPolicy, logger: Logger, reject: Reject): RequestHandler {
    let outageLoggedAt = -Infinity;
    return (req, res, next) => {
        // headersDistinct keeps every copy of a repeated header, where `headers` silently keeps the first Authorization.
        const { authorization, 'x-api-key': apiKey } = req.headersDistinct;
        policy()
            .authenticator.authenticate({ authorization, 'x-api-key': apiKey })
            .then(outcome => {
                if (outcome.ok) {
                    res.locals.client = outcome.client;
                    return next();
                }
                logger.debug({ failure: outcome.failure, method: req.method, remote: req.socket.remoteAddress }, 'authentication failed');
                if (outcome.failure === 'unavailable') {
                    if (Date.now() - outageLoggedAt >= OUTAGE_LOG_INTERVAL_MS) {
                        outageLoggedAt = Date.now();
                        logger.warn('JWT signing keys could not be fetched from auth.jwksUrl; answering 503');
                    }
                    res.setHeader('retry-after', '5');
                    return reject(res, 'auth_unavailable');
                }
                const missing = outcome.failure === 'missing';
                res.setHeader('www-authenticate', missing ? `Bearer realm="${REALM}"` : `Bearer realm="${REALM}", error="invalid_token"`);
                return reject(res, 'unauthorized', missing ? { message: 'Unauthorized: credentials required' } : {});
            }, next);
    };
}

/**
 * One token per request to the MCP endpoint, per client, before the body is read; the other messages of a batch
 * are paid for once it is parsed (see batches.ts). An empty bucket is 429 with Retry-After in whole seconds.
 */
export function rateLimit(limiter: ClientRateLimiter, reject: Reject): RequestHandler {
    return (_req, res, next) => {
        const decision = limiter.take(callerOf(res), quotaKeyOf(res));
        if (decision.allowed) return next();
        return tooManyRequests(res, decision.retryAfterMs, reject);
    };
}

export function tooManyRequests(res: Response, retryAfterMs: number, reject: Reject): void {
    const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
    res.setHeader('retry-after', String(seconds));
    reject(res, 'rate_limited', { message: `Too many requests; retry after ${seconds} s` });
}

/**
 * Checked here because the SDK transport's own answer repeats the header's value. Absent is fine: the transport
 * then assumes the version negotiated at initialize.
 */
export function checkProtocolVersion(reject: Reject): RequestHandler {
    return (req, res, next) => {
        const version = req.headers['mcp-protocol-version'];
        if (version === undefined || (typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return next();
        return reject(res, 'unsupported_protocol_version');
    };
}

/**
 * Right after parsing: a message nested deeper than the limit is refused before the SDK (or anything else) walks
 * it. Neither the message nor its id is echoed.
 */
export function refuseDeepMessages(maxDepth: () => number, reject: Reject): RequestHandler {
    return (req, res, next) => {
        const limit = maxDepth();
        const body: unknown = req.body;
        const messages: unknown[] = Array.isArray(body) ? body : [body];
        if (!messages.some(message => exceedsDepth(message, limit))) return next();
        return reject(res, 'too_deep', { message: `Invalid Request: nested deeper than ${limit} levels` });
    };
}

/** After `authenticate`: whose quotas the request counts against (see `quotaKeyOf`). */
export function keyQuota(trust: ProxyTrust): RequestHandler {
    return (req, res, next) => {
        res.locals.quotaKey = quotaKey(callerOf(res), clientAddress(req, trust));
        next();
    };
}

/** The client `authenticate` proved for this request. */
export function callerOf(res: Response): ClientProfile {
    return res.locals.client as ClientProfile;
}

/** The key of the request's sessions-per-client and rate-limit quotas: the client's id, or an anonymous caller's address. */
export function quotaKeyOf(res: Response): string {
    return res.locals.quotaKey as string;
}
