/**
 * The gateway as an OAuth 2.1 resource server (MCP authorization, auth.mode
 * jwt): the canonical URL tokens must be minted for (RFC 8707), the scopes
 * they must carry, the Bearer challenges of 401 and 403 answers (RFC 6750,
 * RFC 9728 section 5.1) and the Protected Resource Metadata document
 * (RFC 9728) that tells MCP clients where to log in. Everything here follows
 * from the config and the address the listener is bound at, never from a
 * request's headers: a spoofed Host cannot move the metadata URL.
 */
import { createHash } from 'node:crypto';
import { getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/server';
import type { AuthConfig } from '../config/schema.js';
import type { TokenGrant } from './authenticator.js';
import type { ClientProfile } from './clients.js';

const REALM = 'mcp-prompt-gateway';

/** Where Protected Resource Metadata lives, before any path suffix (RFC 9728, 3). */
export const METADATA_PATH = '/.well-known/oauth-protected-resource';

/** What the config says about the resource server; the listener supplies the default URL. */
export interface ResourceServerSettings {
    readonly resource: string | undefined;
    readonly authorizationServers: readonly string[];
    readonly scopesSupported: readonly string[] | undefined;
    readonly requiredScopes: readonly string[];
    readonly resourceName: string | undefined;
    readonly resourceDocumentation: string | undefined;
}

/** The resource-server part of `auth`; undefined outside jwt mode (API keys are not OAuth tokens). */
export function resourceServerSettings(auth: AuthConfig): ResourceServerSettings | undefined {
    if (auth.mode !== 'jwt') return undefined;
    return {
        resource: auth.resource,
        authorizationServers: auth.authorizationServers ?? [],
        scopesSupported: auth.scopesSupported,
        requiredScopes: auth.requiredScopes,
        resourceName: auth.resourceName,
        resourceDocumentation: auth.resourceDocumentation
    };
}

/** The default resource of a loopback listener: the URL a client on this machine uses (port as bound). */
export function listenerResource(host: string, port: number, path: string): string {
    const name = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    return `http://${name}:${port}${path === '/' ? '' : path}`;
}

/** Why a verified token is not enough here; undefined when it is. */
export type GrantRefusal = { failure: 'wrong_audience' } | { failure: 'insufficient_scope'; required: readonly string[]; missing: readonly string[] };

export interface MetadataDocument {
    readonly body: string;
    /** A strong validator of the body, quoted as the ETag header wants it. */
    readonly etag: string;
}

export class ResourceServer {
    /** The canonical URL tokens must name in "aud"; undefined when neither configured nor implied by authorizationServers. */
    readonly resource: string | undefined;
    /** Where the metadata document is (its RFC 9728 path-suffixed URL); undefined when no document is served. */
    readonly metadataUrl: string | undefined;
    readonly metadata: MetadataDocument | undefined;
    readonly #audience: string | undefined;
    readonly #required: readonly string[];

    constructor(settings: ResourceServerSettings, defaultResource: string) {
        const oauth = settings.authorizationServers.length > 0;
        this.resource = settings.resource ?? (oauth ? defaultResource : undefined);
        this.#audience = this.resource === undefined ? undefined : comparable(this.resource);
        this.#required = settings.requiredScopes;
        if (oauth && this.resource !== undefined) {
            this.metadataUrl = getOAuthProtectedResourceMetadataUrl(new URL(this.resource));
            this.metadata = metadataDocument(settings, this.resource);
        } else {
            this.metadataUrl = undefined;
            this.metadata = undefined;
        }
    }

    /** The challenge of a 401: no credentials ('missing'), or credentials refused ('invalid_token'). */
    challenge(failure: 'missing' | 'invalid_token'): string {
        return bearerChallenge({
            ...(failure === 'invalid_token' ? { error: 'invalid_token' } : {}),
            ...(this.#required.length > 0 ? { scope: this.#required.join(' ') } : {}),
            resourceMetadata: this.metadataUrl
        });
    }

    /** The challenge of a 403: the token lacks scopes; `required` is every scope this caller needs, not only the missing. */
    insufficientScope(required: readonly string[]): string {
        return bearerChallenge({ error: 'insufficient_scope', scope: required.join(' '), resourceMetadata: this.metadataUrl });
    }

    /** Whether a verified token was minted for this gateway and carries every scope its client needs. */
    refusal(grant: TokenGrant, client: ClientProfile): GrantRefusal | undefined {
        const audience = this.#audience;
        if (audience !== undefined && !grant.audiences.some(value => comparable(value) === audience)) return { failure: 'wrong_audience' };
        const required = client.requiredScopes.length === 0 ? this.#required : [...new Set([...this.#required, ...client.requiredScopes])];
        const missing = required.filter(scope => !grant.scopes.has(scope));
        return missing.length === 0 ? undefined : { failure: 'insufficient_scope', required, missing };
    }
}

/** `Bearer realm=...` with the parameters given; values are scope tokens and URLs, which need no escaping. */
export function bearerChallenge(params: { error?: string; scope?: string; resourceMetadata?: string | undefined } = {}): string {
    const parts = [`realm="${REALM}"`];
    if (params.error !== undefined) parts.push(`error="${params.error}"`);
    if (params.scope !== undefined) parts.push(`scope="${params.scope}"`);
    if (params.resourceMetadata !== undefined) parts.push(`resource_metadata="${params.resourceMetadata}"`);
    return `Bearer ${parts.join(', ')}`;
}

/**
 * A resource identifier as compared: scheme and host in lower case (URL parsing does that), no fragment, no one
 * trailing slash. An "aud" value that is not a URL compares as itself and so matches no resource.
 */
function comparable(value: string): string {
    let href: string;
    try {
        const url = new URL(value);
        url.hash = '';
        href = url.href;
    } catch {
        return value;
    }
    return href.endsWith('/') ? href.slice(0, -1) : href;
}

function metadataDocument(settings: ResourceServerSettings, resource: string): MetadataDocument {
    const scopes = settings.scopesSupported ?? (settings.requiredScopes.length > 0 ? settings.requiredScopes : undefined);
    const document = {
        resource,
        authorization_servers: settings.authorizationServers,
        ...(scopes === undefined ? {} : { scopes_supported: scopes }),
        // RFC 6750: the token goes in the Authorization header only (the MCP specification forbids the query string).
        bearer_methods_supported: ['header'],
        ...(settings.resourceName === undefined ? {} : { resource_name: settings.resourceName }),
        ...(settings.resourceDocumentation === undefined ? {} : { resource_documentation: settings.resourceDocumentation })
    };
    const body = JSON.stringify(document);
    return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}
