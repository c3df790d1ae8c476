/**
 * Everything the policy layer decides, built from one config: who a request's
 * credentials prove (authenticator), what each client may see (access), and the
 * limits requests are held to. Rebuilt whole on reload and swapped in at once.
 */
import { ANONYMOUS_CLIENT_ID, sha256 } from '../config/policy-schema.js';
import type { GatewayConfig } from '../config/schema.js';
import { PromptAccess } from './access.js';
import { createAuthenticator, type Authenticator } from './authenticator.js';
import { ClientDirectory } from './clients.js';
import { resourceServerSettings, type ResourceServerSettings } from './resource-server.js';

export interface ArgumentLimits {
    maxArguments: number;
    maxArgumentBytes: number;
}

export interface GatewayPolicy {
    readonly authenticator: Authenticator;
    /** jwt mode: the OAuth resource-server settings (audience, scopes, metadata); the HTTP endpoint binds them. */
    readonly resourceServer: ResourceServerSettings | undefined;
    readonly clients: ClientDirectory;
    /**
     * How each client that can be admitted over HTTP proves it is itself, as a digest: its API key's, or in jwt mode
     * what decides whether its tokens are taken. A reload that removes a client or changes this ends what it holds open.
     */
    readonly credentials: ReadonlyMap<string, string>;
    /**
     * jwt mode with inline keys (`jwks`, or a `jwksFile` read into it): the digest of each key's canonical form. A
     * reload that drops or changes one of them ends what every client holds open; one that only adds keys (a
     * rotation that begins) ends nothing.
     */
    readonly inlineKeys: ReadonlySet<string>;
    readonly access: PromptAccess;
    readonly arguments: ArgumentLimits;
    readonly maxResultBytes: number;
}

export function compilePolicy(config: GatewayConfig): GatewayPolicy {
    const clients = new ClientDirectory(config);
    return {
        authenticator: createAuthenticator(config.auth, clients),
        resourceServer: resourceServerSettings(config.auth, config.listen),
        clients,
        credentials: credentialsOf(config),
        inlineKeys: inlineKeysOf(config.auth),
        access: new PromptAccess(config, clients),
        arguments: { maxArguments: config.limits.maxArguments, maxArgumentBytes: config.limits.maxArgumentBytes },
        maxResultBytes: config.limits.maxResultBytes
    };
}

type JwtAuth = Extract<GatewayConfig['auth'], { mode: 'jwt' }>;

/**
 * The settings a token must satisfy (resource-server.ts and the authenticator): another value refuses other tokens.
 * Inline keys count only as a source here; which keys they are is compared key by key (`inlineKeys`).
 */
function tokenRules(auth: JwtAuth): unknown {
    const { secret, jwks, jwksUrl, issuer, audience, clientIdClaim, algorithms, authorizationServers, resource, requiredScopes } = auth;
    return { secret, jwks: jwks !== undefined, jwksUrl, issuer, audience, clientIdClaim, algorithms, authorizationServers, resource, requiredScopes };
}

/**
 * Each inline key as its members in sorted order: the same key written another way is the same key, while a change
 * to any member (its material, or its kid, alg, use or key_ops, which decide what tokens it verifies) is another key.
 */
function inlineKeysOf(auth: GatewayConfig['auth']): Set<string> {
    if (auth.mode !== 'jwt' || auth.jwks === undefined) return new Set();
    // As digests, as `credentials` are: a jwks may hold symmetric ("oct") keys, which are secrets.
    return new Set(auth.jwks.keys.map(key => sha256(JSON.stringify(Object.entries(key).sort(([a], [b]) => (a < b ? -1 : 1))))));
}

function credentialsOf(config: GatewayConfig): Map<string, string> {
    const { auth } = config;
    switch (auth.mode) {
        case 'none':
            return new Map([[ANONYMOUS_CLIENT_ID, 'none']]);
        case 'apiKey':
            return new Map(config.clients.flatMap(client => (client.apiKeySha256 === undefined ? [] : [[client.id, `apiKey:${client.apiKeySha256}`] as const])));
        case 'jwt': {
            const rules = JSON.stringify(tokenRules(auth));
            return new Map(config.clients.map(client => [client.id, `jwt:${sha256(JSON.stringify([rules, client.requiredScopes ?? []]))}`]));
        }
    }
}

/** The clients admitted under `previous` that `next` no longer admits the same way: removed, or their credentials changed. */
export function revokedClients(previous: GatewayPolicy, next: GatewayPolicy): Set<string> {
    const keyDropped = [...previous.inlineKeys].some(key => !next.inlineKeys.has(key));
    const revoked = new Set<string>();
    for (const [id, credential] of previous.credentials) if (keyDropped || next.credentials.get(id) !== credential) revoked.add(id);
    return revoked;
}
