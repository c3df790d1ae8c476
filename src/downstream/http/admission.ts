/**
 * What a request to the MCP endpoint must pass before any MCP processing, after
 * the browser-safety checks (see http/browser-safety.ts), in order:
 * authentication (401; in jwt mode the token's audience too, and its client
 * and scopes: 403), the client's rate limit (429) and the
 * MCP-Protocol-Version header. Only then is the body read, so unauthenticated
 * callers cannot make the gateway read megabytes of JSON.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ANONYMOUS_CLIENT_ID } from '../../config/policy-schema.js';
import type { Reject } from '../../http-server/rejections.js';
import { clientAddress, compileProxyTrust, type ProxyTrust } from '../../lib/client-address.js';
import type { Logger } from '../../diagnostics/logger.js';
import { requestIdOf } from '../../diagnostics/log-context.js';
import type { ClientProfile } from '../../policy/clients.js';
import type { GatewayPolicy } from '../../policy/policy.js';
import { quotaKey } from '../../policy/quota.js';
import { FAILURE_CACHE_MS } from '../../policy/remote-keys.js';
import type { AuthOutcome } from '../../policy/authenticator.js';
import { bearerChallenge, type GrantRefusal, type ResourceServer } from '../../policy/resource-server.js';
import type { RateLimiter } from '../../policy/rate-limiter.js';
import type { RateDecision } from '../../policy/token-bucket.js';
import { unsupportedVersion } from '../../protocol/errors.js';
import { revisionOf } from '../../protocol/revisions.js';

/**
 * An identity-provider outage, tokens minted for another resource, tokens naming no configured client: the
 * operator's business (a misconfiguration, usually), but one line per refused request would flood the log.
 */
const WARNING_INTERVAL_MS = 10_000;

/** `res`: the refused request's answer, whose id the line names. */
type Warn = (res: ServerResponse, kind: string, fields: object, message: string) => void;

/** A warning of each kind at most once per interval; every refusal is still logged at debug. */
function throttledWarnings(logger: Logger): Warn {
    const loggedAt = new Map<string, number>();
    return (res, kind, fields, message) => {
        const now = Date.now();
        if (now - (loggedAt.get(kind) ?? -Infinity) < WARNING_INTERVAL_MS) return;
        loggedAt.set(kind, now);
        logger.warn({ requestId: requestIdOf(res), ...fields }, message);
    };
}

/** What answering a refused request needs; `host` is the request's Host (a loopback listener's default resource follows it). */
interface Refusing {
    res: ServerResponse;
    host: string | undefined;
    resource: ResourceServer | undefined;
    reject: Reject;
    warn: Warn;
}

/** 401 invalid_token: the token is sound but minted for another resource (or none), so another token is the fix. */
function refuseAudience({ res, host, resource, reject, warn }: Refusing): void {
    warn(
        res,
        'wrong_audience',
        { failure: 'wrong_audience', resource: resource!.resource },
        'tokens refused: their "aud" does not name auth.resource; the authorization server must mint them for it (RFC 8707)'
    );
    res.setHeader('www-authenticate', resource!.challenge('invalid_token', host));
    reject(res, 'unauthorized', { message: 'Unauthorized: the token was not issued for this resource' });
}

/**
 * 403: a sound token for this resource whose client the config does not know. Not 401 invalid_token, which sends OAuth
 * clients to log in again for a token that would be refused the same way, nor insufficient_scope (no scope helps). The
 * challenge names no error (none of RFC 6750's fits) but is there because RFC 6750 section 3 wants one whenever a token
 * does not open the resource. The message names the claim, never its value.
 */
function refuseUnknownClient({ res, reject, warn }: Refusing, claim: string): void {
    const hint = `the "${claim}" claim (auth.clientIdClaim) of verified tokens names no configured client`;
    warn(
        res,
        'unknown_client',
        { failure: 'unknown_client', claim },
        `tokens refused: ${hint}; add the client to "clients", or point auth.clientIdClaim at the claim that names it`
    );
    res.setHeader('www-authenticate', bearerChallenge());
    reject(res, 'unknown_client', { message: `Forbidden: the token's client (its "${claim}" claim) is not configured on this gateway` });
}

/** A verified token of a known client that the resource server refuses: another audience, or scopes lacking. */
function refuseGrant(refusing: Refusing, refusal: GrantRefusal): void {
    if (refusal.failure === 'wrong_audience') return refuseAudience(refusing);
    refusing.res.setHeader('www-authenticate', refusing.resource!.insufficientScope(refusal.required, refusing.host));
    refusing.reject(refusing.res, 'insufficient_scope', { message: `Forbidden: the token lacks scope ${refusal.missing.join(' ')}` });
}

/** Credentials that did not authenticate: none, unusable, keys unreachable (503), or a token of no configured client. */
function refuseOutcome(refusing: Refusing, outcome: Exclude<AuthOutcome, { ok: true }>): void {
    const { res, host, resource, reject, warn } = refusing;
    if (outcome.failure === 'unknown_client') {
        return resource?.forThisResource(outcome.grant) === false ? refuseAudience(refusing) : refuseUnknownClient(refusing, outcome.claim);
    }
    if (outcome.failure === 'unavailable') {
        warn(res, 'unavailable', { reason: outcome.reason }, 'JWT signing keys could not be fetched from auth.jwksUrl; answering 503');
        // No new fetch is tried before then (see policy/remote-keys.ts).
        res.setHeader('retry-after', String(Math.ceil(FAILURE_CACHE_MS / 1000)));
        return reject(res, 'auth_unavailable');
    }
    const missing = outcome.failure === 'missing';
    const failure = missing ? 'missing' : 'invalid_token';
    res.setHeader('www-authenticate', resource?.challenge(failure, host) ?? bearerChallenge(missing ? {} : { error: failure }));
    reject(res, 'unauthorized', missing ? { message: 'Unauthorized: credentials required' } : {});
}

/**
 * The calling client of an authentication's outcome, or undefined once a refusal is answered: 401 with a Bearer
 * challenge, 403 (insufficient_scope, or a client not configured), or 503. In jwt mode the policy's resource server
 * checks the token's audience and scopes, and its challenges name the metadata document. Logs say why a request was
 * refused, never what its token held. Synchronous: admission awaits the outcome, in one async frame for all its checks.
 */
function authenticator(
    logger: Logger,
    reject: Reject
): (req: IncomingMessage, res: ServerResponse, outcome: AuthOutcome, resource: ResourceServer | undefined) => ClientProfile | undefined {
    const warn = throttledWarnings(logger);
    return (req, res, outcome, resource) => {
        if (!outcome.ok) {
            logger.debug({ failure: outcome.failure, ...refusedRequest(req, res) }, 'authentication failed');
            refuseOutcome({ res, host: req.headers.host, resource, reject, warn }, outcome);
            return undefined;
        }
        const refusal = outcome.grant === undefined ? undefined : resource?.refusal(outcome.grant, outcome.client);
        if (refusal === undefined) return outcome.client;
        logger.debug({ failure: refusal.failure, client: outcome.client.id, ...refusedRequest(req, res) }, 'token refused');
        refuseGrant({ res, host: req.headers.host, resource, reject, warn }, refusal);
        return undefined;
    };
}

/** What the line about a refused request names of it. */
function refusedRequest(req: IncomingMessage, res: ServerResponse): object {
    return { requestId: requestIdOf(res), method: req.method, remote: req.socket.remoteAddress };
}

type HeaderValue = string | string[] | undefined;

/**
 * Every copy of the credential headers, as `headersDistinct` has them (`headers` silently keeps the first
 * Authorization), read off the raw list: `headersDistinct` copies every header of every request (2 KB each).
 */
function credentialHeaders(raw: readonly string[]): { authorization: HeaderValue; 'x-api-key': HeaderValue } {
    let authorization: HeaderValue;
    let apiKey: HeaderValue;
    for (let at = 0; at < raw.length; at += 2) {
        const name = raw[at]!;
        // Lengths first: most names are neither, and are not lower-cased.
        if (name.length === 13 && name.toLowerCase() === 'authorization') authorization = withCopy(authorization, raw[at + 1]!);
        else if (name.length === 9 && name.toLowerCase() === 'x-api-key') apiKey = withCopy(apiKey, raw[at + 1]!);
    }
    return { authorization, 'x-api-key': apiKey };
}

function withCopy(values: HeaderValue, value: string): string | string[] {
    if (values === undefined) return value;
    return typeof values === 'string' ? [values, value] : [...values, value];
}

/**
 * The caller's address as `listen.trustProxy` makes it out, worked out on first use only (behind proxies that means
 * parsing X-Forwarded-For), then kept: an anonymous caller's quota key and a request's span read the same one.
 */
function callerAddress(req: IncomingMessage, trust: ProxyTrust): () => string | undefined {
    let address: { value: string | undefined } | undefined;
    return () => (address ??= { value: clientAddress(req, trust) }).value;
}

/** The key of the request's sessions-per-client and rate-limit quotas: the client's id, or an anonymous caller's address. */
function quotaKeyOf(client: ClientProfile, address: () => string | undefined): string {
    return quotaKey(client, client.id === ANONYMOUS_CLIENT_ID ? address() : undefined);
}

/**
 * `count` tokens (one per request to the MCP endpoint, taken before the body is read; the other messages of a batch
 * once it is parsed, see batches.ts), or a 429 with Retry-After in whole seconds. True when taken.
 */
export function takeTokens(limiter: RateLimiter, client: ClientProfile, key: string, res: ServerResponse, reject: Reject, count = 1): boolean | Promise<boolean> {
    const decision = limiter.take(client, key, count);
    // This process's own limiter decides at once: nothing to wait for.
    return decision instanceof Promise ? decision.then(shared => allowed(shared, res, reject)) : allowed(decision, res, reject);
}

function allowed(decision: RateDecision, res: ServerResponse, reject: Reject): boolean {
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
    /** The caller's address (`listen.trustProxy` applied), worked out when first asked; undefined once its socket is gone. */
    address: () => string | undefined;
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
export function admission({
    policy,
    resourceServer,
    trustProxy,
    limiter,
    reject,
    logger
}: AdmissionOptions): (req: IncomingMessage, res: ServerResponse) => Promise<Admitted | undefined> {
    const authenticated = authenticator(logger, reject);
    const trust = compileProxyTrust(trustProxy);
    return async (req, res) => {
        const current = policy();
        const outcome = await current.authenticator.authenticate(credentialHeaders(req.rawHeaders));
        const client = authenticated(req, res, outcome, resourceServer(current));
        if (client === undefined) return undefined;
        const address = callerAddress(req, trust);
        const quotaKey = quotaKeyOf(client, address);
        const taken = takeTokens(limiter, client, quotaKey, res, reject);
        if (!(typeof taken === 'boolean' ? taken : await taken)) return undefined;
        // A POST's version is judged with its body (which era it is, and the id to answer), see mcp.ts.
        if (req.method === 'POST' || protocolVersionAccepted(req)) return { client, quotaKey, address };
        reject(res, 'unsupported_protocol_version', { data: unsupportedVersion(String(req.headers['mcp-protocol-version']), 'header').data });
        return undefined;
    };
}

/** Absent is fine: the session's negotiated version applies. */
function protocolVersionAccepted(req: IncomingMessage): boolean {
    const version = req.headers['mcp-protocol-version'];
    return version === undefined || (typeof version === 'string' && revisionOf(version) !== undefined);
}
