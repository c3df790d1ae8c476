/**
 * Who is calling: the client an HTTP request's credentials prove, decided from
 * the request alone (no session state), so any replica can decide it.
 */
import { createLocalJWKSet, jwtVerify, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import type { AuthConfig } from '../config/schema.js';
import type { ClientDirectory, ClientProfile } from './clients.js';
import { readCredentials } from './credentials.js';
import { fetchFailureReason, isFetchFailure, remoteKeys } from './remote-keys.js';

/** What a verified token grants, as the resource-server checks need it: no other claim leaves the authenticator. */
export interface TokenGrant {
    /** The "aud" claim's values. */
    readonly audiences: readonly string[];
    /** The "scope" (space separated) and "scp" (an array, or space separated) claims' values together. */
    readonly scopes: ReadonlySet<string>;
}

export type AuthOutcome =
    /** `grant` is there for a JWT, whose audience and scopes the resource server checks (resource-server.ts). */
    | { ok: true; client: ClientProfile; grant?: TokenGrant }
    /** missing: no credentials; invalid: credentials that prove nothing. */
    | { ok: false; failure: 'missing' | 'invalid' }
    /** The keys could not be fetched, for `reason` (the gateway's own words: a status, a size, an error code). */
    | { ok: false; failure: 'unavailable'; reason: string }
    /**
     * A verified JWT whose `claim` (auth.clientIdClaim) names no configured client: not a bad token (getting a new one
     * would not help), so the resource server checks its audience and the caller is forbidden, not challenged.
     */
    | { ok: false; failure: 'unknown_client'; claim: string; grant: TokenGrant };

export interface Authenticator {
    readonly mode: AuthConfig['mode'];
    authenticate(headers: Parameters<typeof readCredentials>[0]): Promise<AuthOutcome>;
}

type JwtConfig = Extract<AuthConfig, { mode: 'jwt' }>;

const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

export function createAuthenticator(auth: AuthConfig, clients: ClientDirectory): Authenticator {
    switch (auth.mode) {
        case 'none':
            return { mode: 'none', authenticate: () => Promise.resolve({ ok: true, client: clients.anonymous }) };
        case 'apiKey':
            return {
                mode: 'apiKey',
                authenticate: headers => Promise.resolve(apiKeyOutcome(headers, clients))
            };
        case 'jwt':
            return jwtAuthenticator(auth, clients, jwtKeys(auth));
    }
}

function apiKeyOutcome(headers: Parameters<typeof readCredentials>[0], clients: ClientDirectory): AuthOutcome {
    const credentials = readCredentials(headers);
    if (credentials.kind === 'none') return { ok: false, failure: 'missing' };
    if (credentials.kind === 'malformed') return { ok: false, failure: 'invalid' };
    const client = clients.byApiKey(credentials.token);
    return client === undefined ? { ok: false, failure: 'invalid' } : { ok: true, client };
}

function jwtAuthenticator(auth: JwtConfig, clients: ClientDirectory, keys: JWTVerifyGetKey): Authenticator {
    const options: JWTVerifyOptions = {
        algorithms: auth.algorithms ?? (auth.secret !== undefined ? ['HS256'] : ASYMMETRIC),
        clockTolerance: auth.clockToleranceSec,
        requiredClaims: ['exp'],
        ...issuerOption(auth),
        ...(auth.audience === undefined ? {} : { audience: auth.audience })
    };
    return {
        mode: 'jwt',
        async authenticate(headers) {
            const credentials = readCredentials(headers);
            if (credentials.kind === 'none') return { ok: false, failure: 'missing' };
            if (credentials.kind === 'malformed' || credentials.via !== 'bearer') return { ok: false, failure: 'invalid' };
            let claims: Record<string, unknown>;
            try {
                claims = (await jwtVerify(credentials.token, keys, options)).payload;
            } catch (error) {
                return isFetchFailure(error) ? { ok: false, failure: 'unavailable', reason: fetchFailureReason(error) } : { ok: false, failure: 'invalid' };
            }
            const id = Object.hasOwn(claims, auth.clientIdClaim) ? claims[auth.clientIdClaim] : undefined;
            // The anonymous profile is not a client a token can name.
            const client = typeof id === 'string' && id !== clients.anonymous.id ? clients.get(id) : undefined;
            const grant = grantOf(claims);
            return client === undefined ? { ok: false, failure: 'unknown_client', claim: auth.clientIdClaim, grant } : { ok: true, client, grant };
        }
    };
}

/** "iss" must be `issuer`, or else one of the authorization servers the gateway names in its metadata. */
function issuerOption(auth: JwtConfig): Pick<JWTVerifyOptions, 'issuer'> {
    if (auth.issuer !== undefined) return { issuer: auth.issuer };
    return auth.authorizationServers === undefined ? {} : { issuer: auth.authorizationServers };
}

function grantOf(claims: Record<string, unknown>): TokenGrant {
    const aud = claims['aud'];
    const audiences = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter(value => typeof value === 'string') : [];
    return { audiences, scopes: new Set([...scopeValues(claims['scope']), ...scopeValues(claims['scp'])]) };
}

/** Authorization servers disagree on the shape: "scope" is a string (RFC 9068), "scp" an array (Okta) or a string (Entra). */
function scopeValues(claim: unknown): string[] {
    const values = typeof claim === 'string' ? [claim] : Array.isArray(claim) ? claim.filter(value => typeof value === 'string') : [];
    return values.flatMap(value => value.split(' ')).filter(scope => scope !== '');
}

function jwtKeys(auth: JwtConfig): JWTVerifyGetKey {
    if (auth.secret !== undefined) {
        const secret = new TextEncoder().encode(auth.secret);
        return () => Promise.resolve(secret);
    }
    if (auth.jwksUrl !== undefined) {
        return remoteKeys(new URL(auth.jwksUrl));
    }
    // The config loader has read a jwksFile into `jwks`; the schema guarantees one of the sources.
    return createLocalJWKSet(auth.jwks as Parameters<typeof createLocalJWKSet>[0]);
}
