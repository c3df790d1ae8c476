/**
 * What a request to the MCP endpoint must pass before any MCP processing, after
 * the browser-safety checks (see http/browser-safety.ts), in order:
 * authentication (401; in jwt mode the token's audience too, and its scopes:
 * 403), the client's rate limit (429) and the
 * MCP-Protocol-Version header. Only then is the body read, so unauthenticated
 * callers cannot make the gateway read megabytes of JSON.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ANONYMOUS_CLIENT_ID } from '../../config/policy-schema.js';
import type { Reject } from '../../http/rejections.js';
import { clientAddress, compileProxyTrust, type ProxyTrust } from '../../lib/client-address.js';
import type { Logger } from '../../observability/logger.js';
import type { ClientProfile } from '../../policy/clients.js';
import type { GatewayPolicy } from '../../policy/policy.js';
import { quotaKey } from '../../policy/quota.js';
import { bearerChallenge, type ResourceServer } from '../../policy/resource-server.js';
import type { RateLimiter } from '../../policy/rate-limiter.js';
import { isModernVersion, unsupportedVersionError } from '../era.js';
import { isSupportedVersion } from '../versions.js';

/** An identity-provider outage is an operator's business, but one line per failed request would flood the log. */
const OUTAGE_LOG_INTERVAL_MS = 10_000;

/**
 * The calling client, or undefined once a 401 with a Bearer challenge (or a 403 insufficient_scope, or a 503) is
 * answered. In jwt mode the policy's resource server checks the token's audience and scopes, and its challenges name
 * the metadata document. Logs say why a request was refused, never what its token held.
 */
function authenticator(
    policy: () => GatewayPolicy,
    resourceServer: (policy: GatewayPolicy) => ResourceServer | undefined,
    logger: Logger,
    reject: Reject
): (req: IncomingMessage, res: ServerResponse) => Promise<ClientProfile | undefined> {
    let outageLoggedAt = -Infinity;
    return async (req, res) => {
        // headersDistinct keeps every copy of a repeated header, where `headers` silently keeps the first Authorization.
        const { authorization, 'x-api-key': apiKey } = req.headersDistinct;
        const current = policy();
        const outcome = await current.authenticator.authenticate({ authorization, 'x-api-key': apiKey });
        const resource = resourceServer(current);
        if (outcome.ok) {
            const refusal = outcome.grant === undefined ? undefined : resource?.refusal(outcome.grant, outcome.client);
            if (refusal === undefined) return outcome.client;
            logger.debug({ failure: refusal.failure, client: outcome.client.id, method: req.method, remote: req.socket.remoteAddress }, 'token refused');
            if (refusal.failure === 'wrong_audience') {
                res.setHeader('www-authenticate', resource!.challenge('invalid_token'));
                reject(res, 'unauthorized', { message: 'Unauthorized: the token was not issued for this resource' });
            } else {
                res.setHeader('www-authenticate', resource!.insufficientScope(refusal.required));
                reject(res, 'insufficient_scope', { message: `Forbidden: the token lacks scope ${refusal.missing.join(' ')}` });
            }
            return undefined;
        }
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
        const failure = missing ? 'missing' : 'invalid_token';
        res.setHeader('www-authenticate', resource?.challenge(failure) ?? bearerChallenge(missing ? {} : { error: failure }));
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
export async function takeTokens(limiter: RateLimiter, client: ClientProfile, key: string, res: ServerResponse, reject: Reject, count = 1): Promise<boolean> {
    const decision = await limiter.take(client, key, count);
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
    /** The policy's OAuth resource server bound to this listener (jwt mode). */
    resourceServer: (policy: GatewayPolicy) => ResourceServer | undefined;
    /** listen.trustProxy: proxies whose X-Forwarded-For names the caller. */
    trustProxy?: string[] | undefined;
    limiter: RateLimiter;
    reject: Reject;
    logger: Logger;
}

/**
 * The MCP endpoint's checks, in order: authentication, one rate-limit token, the MCP-Protocol-Version header of a GET
 * or DELETE.
 */
export function admission({ policy, resourceServer, trustProxy, limiter, reject, logger }: AdmissionOptions): (req: IncomingMessage, res: ServerResponse) => Promise<Admitted | undefined> {
    const authenticate = authenticator(policy, resourceServer, logger, reject);
    const trust = compileProxyTrust(trustProxy);
    return async (req, res) => {
        const client = await authenticate(req, res);
        if (client === undefined) return undefined;
        const quotaKey = quotaKeyOf(client, req, trust);
        if (!(await takeTokens(limiter, client, quotaKey, res, reject))) return undefined;
        // A POST's version is judged with its body (which era it is, and the id to answer), see mcp.ts.
        if (req.method === 'POST' || protocolVersionAccepted(req)) return { client, quotaKey };
        reject(res, 'unsupported_protocol_version', { data: unsupportedVersionError(String(req.headers['mcp-protocol-version']), 'header').data });
        return undefined;
    };
}

/** Absent is fine: the session's negotiated version applies. */
export function protocolVersionAccepted(req: IncomingMessage): boolean {
    const version = req.headers['mcp-protocol-version'];
    return version === undefined || (typeof version === 'string' && (isSupportedVersion(version) || isModernVersion(version)));
}
