/**
 * What an HTTP request must pass before any MCP processing, in order: CORS
 * (a preflight is answered here, only when configured), the Host and Origin
 * checks against DNS rebinding, then for the MCP endpoint authentication
 * (401), the client's rate limit (429) and the MCP-Protocol-Version header.
 * Only then is the body read, so unauthenticated callers cannot make the
 * gateway read megabytes of JSON.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';
import { ANONYMOUS_CLIENT_ID } from '../../config/policy-schema.js';
import { clientAddress, compileProxyTrust, type ProxyTrust } from '../../lib/client-address.js';
import type { Logger } from '../../observability/logger.js';
import type { ClientProfile } from '../../policy/clients.js';
import type { GatewayPolicy } from '../../policy/policy.js';
import { quotaKey } from '../../policy/quota.js';
import type { ClientRateLimiter } from '../../policy/rate-limiter.js';
import { isSupportedVersion } from '../versions.js';
import type { Reject, RejectionReason } from './rejections.js';
import { sendEmpty } from './respond.js';

const REALM = 'mcp-prompt-gateway';

const CORS_METHODS = 'GET,POST,DELETE';
const CORS_ALLOWED_HEADERS = 'content-type,accept,authorization,x-api-key,mcp-session-id,mcp-protocol-version,last-event-id,x-request-id';
const CORS_EXPOSED_HEADERS = 'mcp-session-id,mcp-protocol-version,www-authenticate,retry-after,x-request-id';

export interface BrowserSafety {
    allowedHosts: string[] | undefined;
    allowedOrigins: string[] | undefined;
    cors: { origins: string[]; maxAgeSec: number } | undefined;
}

/** Decisions on header values, kept for the values seen (clients send the same few); emptied when it grows large. */
function remembered(decide: (value: string | undefined) => boolean): (value: string | undefined) => boolean {
    const decisions = new Map<string | undefined, boolean>();
    return value => {
        let decision = decisions.get(value);
        if (decision === undefined) {
            if (decisions.size >= 256) decisions.clear();
            decisions.set(value, (decision = decide(value)));
        }
        return decision;
    };
}

/**
 * CORS first (a preflight carries no credentials), then Host, then Origin; a configured CORS origin passes the
 * Origin check. Returns the refusal, 'answered' for a preflight it answered, or undefined to go on. The SDK's checks
 * are used, not its answers: those repeat the header's value, and errors never echo headers.
 */
export function browserGuards({ allowedHosts, allowedOrigins, cors }: BrowserSafety): (req: IncomingMessage, res: ServerResponse) => RejectionReason | 'answered' | undefined {
    const corsOrigins = new Set(cors?.origins ?? []);
    const origins = allowedOrigins ?? (corsOrigins.size > 0 ? [] : undefined);
    const hostAllowed = allowedHosts === undefined ? undefined : remembered(host => validateHostHeader(host, allowedHosts).ok);
    const originAllowed = origins === undefined ? undefined : remembered(origin => corsOrigins.has(origin ?? '') || validateOriginHeader(origin, origins).ok);
    return (req, res) => {
        const origin = req.headers.origin;
        // Other origins get no CORS header at all and fall through to the Origin check (403), preflights included.
        if (cors !== undefined && origin !== undefined && corsOrigins.has(origin)) {
            res.setHeader('access-control-allow-origin', origin);
            res.setHeader('vary', 'Origin');
            if (req.method === 'OPTIONS') {
                sendEmpty(res, 204, {
                    'access-control-allow-methods': CORS_METHODS,
                    'access-control-allow-headers': CORS_ALLOWED_HEADERS,
                    'access-control-max-age': String(cors.maxAgeSec)
                });
                return 'answered';
            }
            res.setHeader('access-control-expose-headers', CORS_EXPOSED_HEADERS);
        }
        if (hostAllowed !== undefined && !hostAllowed(req.headers.host)) return 'forbidden_host';
        if (originAllowed !== undefined && !originAllowed(origin)) return 'forbidden_origin';
        return undefined;
    };
}

/** An identity-provider outage is an operator's business, but one line per failed request would flood the log. */
const OUTAGE_LOG_INTERVAL_MS = 10_000;

/** The calling client, or undefined once a 401 with a Bearer challenge (or a 503) is answered. */
function authenticator(policy: () => GatewayPolicy, logger: Logger, reject: Reject): (req: IncomingMessage, res: ServerResponse) => Promise<ClientProfile | undefined> {
    let outageLoggedAt = -Infinity;
    return async (req, res) => {
        // headersDistinct keeps every copy of a repeated header, where `headers` silently keeps the first Authorization.
        const { authorization, 'x-api-key': apiKey } = req.headersDistinct;
        const outcome = await policy().authenticator.authenticate({ authorization, 'x-api-key': apiKey });
        if (outcome.ok) return outcome.client;
        logger.debug({ failure: outcome.failure, method: req.method, remote: req.socket.remoteAddress }, 'authentication failed');
        if (outcome.failure === 'unavailable') {
            if (Date.now() - outageLoggedAt >= OUTAGE_LOG_INTERVAL_MS) {
                outageLoggedAt = Date.now();
                logger.warn('JWT signing keys could not be fetched from auth.jwksUrl; answering 503');
            }
            res.setHeader('retry-after', '5');
            reject(res, 'auth_unavailable');
            return undefined;
        }
        const missing = outcome.failure === 'missing';
        res.setHeader('www-authenticate', missing ? `Bearer realm="${REALM}"` : `Bearer realm="${REALM}", error="invalid_token"`);
        reject(res, 'unauthorized', missing ? { message: 'Unauthorized: credentials required' } : {});
        return undefined;
    };
}

/**
 * The key of the request's sessions-per-client and rate-limit quotas: the client's id, or an anonymous caller's
 * address (only then is the address worked out: behind proxies that means parsing X-Forwarded-For).
 */
function quotaKeyOf(client: ClientProfile, req: IncomingMessage, trust: ProxyTrust): string {
    return quotaKey(client, client.id === ANONYMOUS_CLIENT_ID ? clientAddress(req, trust) : undefined);
}

/**
 * `count` tokens (one per request to the MCP endpoint, taken before the body is read; the other messages of a batch
 * once it is parsed, see batches.ts), or a 429 with Retry-After in whole seconds. True when taken.
 */
export function takeTokens(limiter: ClientRateLimiter, client: ClientProfile, key: string, res: ServerResponse, reject: Reject, count = 1): boolean {
    const decision = limiter.take(client, key, count);
    if (decision.allowed) return true;
    const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    res.setHeader('retry-after', String(seconds));
    reject(res, 'rate_limited', { message: `Too many requests; retry after ${seconds} s` });
    return false;
}

/** Who is asking, as admission established it. */
export interface Admitted {
    client: ClientProfile;
    /** Whose session and rate quotas the request counts against (see policy/quota.ts). */
    quotaKey: string;
}

export interface AdmissionOptions {
    policy: () => GatewayPolicy;
    /** listen.trustProxy: proxies whose X-Forwarded-For names the caller. */
    trustProxy?: string[] | undefined;
    limiter: ClientRateLimiter;
    reject: Reject;
    logger: Logger;
}

/** The MCP endpoint's checks, in order: authentication, one rate-limit token, the MCP-Protocol-Version header. */
export function admission({ policy, trustProxy, limiter, reject, logger }: AdmissionOptions): (req: IncomingMessage, res: ServerResponse) => Promise<Admitted | undefined> {
    const authenticate = authenticator(policy, logger, reject);
    const trust = compileProxyTrust(trustProxy);
    return async (req, res) => {
        const client = await authenticate(req, res);
        if (client === undefined) return undefined;
        const quotaKey = quotaKeyOf(client, req, trust);
        if (!takeTokens(limiter, client, quotaKey, res, reject)) return undefined;
        if (protocolVersionAccepted(req)) return { client, quotaKey };
        reject(res, 'unsupported_protocol_version');
        return undefined;
    };
}

/** Absent is fine: the session's negotiated version applies. Checked before anything, and never repeated in the answer. */
function protocolVersionAccepted(req: IncomingMessage): boolean {
    const version = req.headers['mcp-protocol-version'];
    return version === undefined || (typeof version === 'string' && isSupportedVersion(version));
}
