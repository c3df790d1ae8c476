/**
 * The gateway as an OAuth 2.1 resource server (MCP authorization, auth.mode
 * jwt): the canonical URL tokens must be minted for (RFC 8707), the scopes
 * they must carry, the Bearer challenges of 401 and 403 answers (RFC 6750,
 * RFC 9728 section 5.1) and the Protected Resource Metadata document
 * (RFC 9728) that tells MCP clients where to log in. Everything here follows
 * from the config and the address the listener is bound at. The one thing a
 * request's Host header chooses is which loopback name a loopback listener's
 * default resource is spelled with (localhost, 127.0.0.1, [::1]: a client on
 * this machine may use any, and its SDK compares origins); the port and path
 * stay the listener's, a configured resource never moves, and no other name
 * is taken from Host, so a spoofed Host cannot send clients off the machine.
 */
import { createHash } from 'node:crypto';
import { getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/server';
import { unknownOwnUrl } from '../config/oauth-schema.js';
import type { AuthConfig } from '../config/schema.js';
import { secureUrl } from '../config/url-schema.js';
import { isLoopback } from '../lib/loopback.js';
import type { TokenGrant } from './authenticator.js';
import type { ClientProfile } from './clients.js';

const REALM = 'mcp-prompt-gateway';

/** Where Protected Resource Metadata lives, before any path suffix (RFC 9728, 3). */
export const METADATA_PATH = '/.well-known/oauth-protected-resource';

/** What the config says about the resource server; the listener supplies the default URL. */
export interface ResourceServerSettings {
    readonly resource: string | undefined;
    /** Named in the metadata: authorizationServers, else the issuer (see authorizationServersOf); none: no document. */
    readonly authorizationServers: readonly string[];
    /** Whether "aud" must name a resource defaulted to the listener's URL: with authorizationServers configured. */
    readonly bindsAudience: boolean;
    /** Why the issuer's document cannot be served (no URL to name as the resource); undefined otherwise. */
    readonly metadataWithheld: string | undefined;
    readonly scopesSupported: readonly string[] | undefined;
    readonly requiredScopes: readonly string[];
    readonly resourceName: string | undefined;
    readonly resourceDocumentation: string | undefined;
}

type JwtAuth = Extract<AuthConfig, { mode: 'jwt' }>;

/** The resource-server part of `auth`; undefined outside jwt mode (API keys are not OAuth tokens). */
export function resourceServerSettings(auth: AuthConfig, listen: { host: string; trustProxy?: string[] | undefined }): ResourceServerSettings | undefined {
    if (auth.mode !== 'jwt') return undefined;
    const servers = authorizationServersOf(auth);
    // Configured authorization servers need a resource URL (a config check); the issuer alone goes without a document.
    const unknownUrl = auth.authorizationServers === undefined && auth.resource === undefined && servers.length > 0 ? unknownOwnUrl(listen) : undefined;
    return {
        resource: auth.resource,
        authorizationServers: unknownUrl === undefined ? servers : [],
        bindsAudience: auth.authorizationServers !== undefined,
        metadataWithheld: unknownUrl === undefined ? undefined : `the issuer's Protected Resource Metadata is not served: ${unknownUrl} as auth.resource`,
        scopesSupported: auth.scopesSupported,
        requiredScopes: auth.requiredScopes,
        resourceName: auth.resourceName,
        resourceDocumentation: auth.resourceDocumentation
    };
}

/**
 * The authorization servers clients are sent to: those configured, else the issuer whose tokens the gateway takes,
 * when it is a URL an authorization server's issuer can be (RFC 8414: https, no query or fragment).
 */
function authorizationServersOf(auth: JwtAuth): readonly string[] {
    if (auth.authorizationServers !== undefined) return auth.authorizationServers;
    return auth.issuer !== undefined && ISSUER_URL.safeParse(auth.issuer).success ? [auth.issuer] : [];
}

const ISSUER_URL = secureUrl('the issuer URL');

/** The default resource of a loopback listener: the URL a client on this machine uses (port as bound). */
export function listenerResource(host: string, port: number, path: string): string {
    const name = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    return `http://${name}:${port}${path === '/' ? '' : path}`;
}

/** Loopback names seen in Host headers are few (the Host check admits only listed names); this bounds the memo anyway. */
const MAX_REMEMBERED_NAMES = 16;

/** Why a verified token is not enough here; undefined when it is. */
export type GrantRefusal = { failure: 'wrong_audience' } | { failure: 'insufficient_scope'; required: readonly string[]; missing: readonly string[] };

export interface MetadataDocument {
    readonly body: string;
    /** A strong validator of the body, quoted as the ETag header wants it. */
    readonly etag: string;
}

/** The resource as one request reaches it: its URL, where its metadata is, and the document itself. */
export interface ResourceView {
    readonly resource: string;
    readonly metadataUrl: string | undefined;
    readonly metadata: MetadataDocument | undefined;
}

export class ResourceServer {
    /** The canonical URL: named in the metadata and, when configured or implied by authorizationServers, in "aud". */
    readonly resource: string | undefined;
    /** Where the metadata document is (its RFC 9728 path-suffixed URL); undefined when no document is served. */
    readonly metadataUrl: string | undefined;
    readonly metadata: MetadataDocument | undefined;
    readonly #settings: ResourceServerSettings;
    readonly #audience: string | undefined;
    readonly #required: readonly string[];
    /** The host of the defaulted resource of a loopback listener, which any loopback name may stand for. */
    readonly #loopbackHost: string | undefined;
    readonly #views = new Map<string, ResourceView>();

    constructor(settings: ResourceServerSettings, defaultResource: string) {
        const oauth = settings.authorizationServers.length > 0;
        this.#settings = settings;
        this.resource = settings.resource ?? (oauth ? defaultResource : undefined);
        const audience = settings.resource ?? (settings.bindsAudience ? this.resource : undefined);
        this.#audience = audience === undefined ? undefined : comparable(audience);
        this.#required = settings.requiredScopes;
        const defaulted = settings.resource === undefined && this.resource !== undefined ? new URL(this.resource).hostname : undefined;
        this.#loopbackHost = defaulted !== undefined && isLoopback(defaulted) ? defaulted : undefined;
        const view = this.resource === undefined ? undefined : this.#viewOf(this.resource);
        this.metadataUrl = view?.metadataUrl;
        this.metadata = view?.metadata;
    }

    /**
     * The resource as a request with this Host header reaches it: a loopback listener's default resource spelled with
     * the loopback name in Host (port and path kept); else the canonical one.
     */
    at(host: string | undefined): ResourceView | undefined {
        if (this.resource === undefined) return undefined;
        const name = this.#loopbackHost === undefined ? undefined : loopbackName(host);
        if (name === undefined || name === this.#loopbackHost) return this.#viewOf(this.resource);
        let view = this.#views.get(name);
        if (view === undefined) {
            view = this.#viewOf(withHostname(this.resource, name));
            if (this.#views.size < MAX_REMEMBERED_NAMES) this.#views.set(name, view);
        }
        return view;
    }

    /** The challenge of a 401: no credentials ('missing'), or credentials refused ('invalid_token'). */
    challenge(failure: 'missing' | 'invalid_token', host?: string): string {
        return bearerChallenge({
            ...(failure === 'invalid_token' ? { error: 'invalid_token' } : {}),
            ...(this.#required.length > 0 ? { scope: this.#required.join(' ') } : {}),
            resourceMetadata: this.at(host)?.metadataUrl
        });
    }

    /** The challenge of a 403: the token lacks scopes; `required` is every scope this caller needs, not only the missing. */
    insufficientScope(required: readonly string[], host?: string): string {
        return bearerChallenge({ error: 'insufficient_scope', scope: required.join(' '), resourceMetadata: this.at(host)?.metadataUrl });
    }

    /** Whether a verified token was minted for this gateway: "aud" names the resource (any loopback name of a defaulted one). */
    forThisResource(grant: TokenGrant): boolean {
        const audience = this.#audience;
        return audience === undefined || grant.audiences.some(value => comparable(this.#onCanonicalHost(value)) === audience);
    }

    /** Whether a verified token was minted for this gateway and carries every scope its client needs. */
    refusal(grant: TokenGrant, client: ClientProfile): GrantRefusal | undefined {
        if (!this.forThisResource(grant)) return { failure: 'wrong_audience' };
        const required = client.requiredScopes.length === 0 ? this.#required : [...new Set([...this.#required, ...client.requiredScopes])];
        const missing = required.filter(scope => !grant.scopes.has(scope));
        return missing.length === 0 ? undefined : { failure: 'insufficient_scope', required, missing };
    }

    #viewOf(resource: string): ResourceView {
        if (this.#settings.authorizationServers.length === 0) return { resource, metadataUrl: undefined, metadata: undefined };
        return { resource, metadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(resource)), metadata: metadataDocument(this.#settings, resource) };
    }

    /** An "aud" naming the defaulted loopback resource by another loopback name, spelled with the canonical one. */
    #onCanonicalHost(audience: string): string {
        if (this.#loopbackHost === undefined || !URL.canParse(audience)) return audience;
        const url = new URL(audience);
        return url.protocol === 'http:' && isLoopback(url.hostname) ? withHostname(audience, this.#loopbackHost) : audience;
    }
}

/** The host name of a Host header (lower case, IPv6 in brackets) when it is a loopback name; undefined otherwise. */
function loopbackName(host: string | undefined): string | undefined {
    if (host === undefined || !URL.canParse(`http://${host}`)) return undefined;
    const { hostname } = new URL(`http://${host}`);
    return isLoopback(hostname) ? hostname : undefined;
}

/** The URL with another host name, spelled as listenerResource spells it (no slash added to a bare origin). */
function withHostname(value: string, hostname: string): string {
    const url = new URL(value);
    url.hostname = hostname;
    return url.pathname === '/' && !value.endsWith('/') ? `${url.origin}${url.search}${url.hash}` : url.href;
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
