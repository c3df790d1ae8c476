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
        access: new PromptAccess(config, clients),
        arguments: { maxArguments: config.limits.maxArguments, maxArgumentBytes: config.limits.maxArgumentBytes },
        maxResultBytes: config.limits.maxResultBytes
    };
}

/** The settings a token must satisfy (resource-server.ts and the authenticator): another value refuses other tokens. */
function tokenRules(auth: Extract<GatewayConfig['auth'], { mode: 'jwt' }>): unknown {
    const { secret, jwks, jwksUrl, issuer, audience, clientIdClaim, algorithms, authorizationServers, resource, requiredScopes } = auth;
    return { secret, jwks, jwksUrl, issuer, audience, clientIdClaim, algorithms, authorizationServers, resource, requiredScopes };
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
    const revoked = new Set<string>();
    for (const [id, credential] of previous.credentials) if (next.credentials.get(id) !== credential) revoked.add(id);
    return revoked;
}
