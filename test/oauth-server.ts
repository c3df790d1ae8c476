/**
 * A real OAuth 2.1 authorization server in-process for the OAuth tests:
 * oauth2-mock-server (authorization code with PKCE, client credentials, OIDC
 * discovery, a JWKS), taught through its hooks what it lacks and the MCP
 * authorization flow needs: the access token's "aud" is the RFC 8707
 * `resource` the client asked for (none asked, none given), and its "scope"
 * is what the client asked for narrowed to what that client may have, as a
 * real server's consent and policy would. It records every authorization and
 * token request, so a test can check what the client sent.
 */
import type { IncomingMessage } from 'node:http';
import { OAuth2Server, type MutableRedirectUri, type MutableResponse, type MutableToken, type TokenRequestIncomingMessage } from 'oauth2-mock-server';

/** What one token request asked for and got. */
export interface TokenRequestRecord {
    grantType: string;
    clientId: string | undefined;
    resource: string | undefined;
    /** Whether a PKCE code_verifier came with it. */
    codeVerifier: boolean;
    requestedScope: string | undefined;
    grantedScope: string;
}

export interface TestAuthorizationServer {
    /** The issuer URL, exactly as its metadata spells it (no trailing slash). */
    issuer: string;
    jwksUrl: string;
    /** The query of every authorization request (GET /authorize). */
    authorizeRequests: URLSearchParams[];
    tokenRequests: TokenRequestRecord[];
    /** Which scopes a client may be granted (default: none). */
    allow(clientId: string, scopes: string[]): void;
    /** A client-credentials token fetched the way any client would, for tests that send it by hand. */
    clientCredentialsToken(clientId: string, options?: { scope?: string; resource?: string }): Promise<string>;
    close(): Promise<void>;
}

interface Grant {
    clientId: string | undefined;
    resource: string | undefined;
    requestedScope: string | undefined;
    scope: string;
}

export async function startAuthorizationServer(): Promise<TestAuthorizationServer> {
    const server = new OAuth2Server();
    await server.issuer.keys.generate('RS256');
    await server.start(0, '127.0.0.1');
    const issuer = server.issuer.url!;
    const allowed = new Map<string, Set<string>>();
    const codes = new Map<string, { scope: string | undefined }>();
    const authorizeRequests: URLSearchParams[] = [];
    const tokenRequests: TokenRequestRecord[] = [];
    // One grant per token request: the access token, the ID token and the response all read it.
    const grants = new WeakMap<IncomingMessage, Grant>();

    const grantFor = (req: TokenRequestIncomingMessage): Grant => {
        let grant = grants.get(req);
        if (grant !== undefined) return grant;
        const body = req.body as unknown as Record<string, unknown>;
        const clientId = basicAuthUser(req.headers.authorization) ?? stringOrUndefined(body['client_id']);
        const requestedScope = body['grant_type'] === 'authorization_code' ? codes.get(String(body['code']))?.scope : stringOrUndefined(body['scope']);
        const may = allowed.get(clientId ?? '') ?? new Set<string>();
        const scope = (requestedScope ?? '')
            .split(' ')
            .filter(value => may.has(value))
            .join(' ');
        grant = { clientId, resource: stringOrUndefined(body['resource']), requestedScope, scope };
        grants.set(req, grant);
        return grant;
    };

    server.service.on('beforeAuthorizeRedirect', (redirect: MutableRedirectUri, req: IncomingMessage) => {
        const query = new URL(req.url ?? '/', issuer).searchParams;
        authorizeRequests.push(query);
        const code = redirect.url.searchParams.get('code');
        if (code !== null) codes.set(code, { scope: query.get('scope') ?? undefined });
    });
    server.service.on('beforeTokenSigning', (token: MutableToken, req: TokenRequestIncomingMessage) => {
        const grant = grantFor(req);
        if (grant.resource === undefined) delete token.payload['aud'];
        else token.payload['aud'] = grant.resource;
        token.payload['scope'] = grant.scope;
        token.payload['client_id'] = grant.clientId;
    });
    server.service.on('beforeResponse', (response: MutableResponse, req: TokenRequestIncomingMessage) => {
        const grant = grantFor(req);
        const body = req.body as unknown as Record<string, unknown>;
        tokenRequests.push({
            grantType: String(body['grant_type']),
            clientId: grant.clientId,
            resource: grant.resource,
            codeVerifier: typeof body['code_verifier'] === 'string',
            requestedScope: grant.requestedScope,
            grantedScope: grant.scope
        });
        if (response.body !== '') response.body['scope'] = grant.scope;
    });

    return {
        issuer,
        jwksUrl: `${issuer}/jwks`,
        authorizeRequests,
        tokenRequests,
        allow: (clientId, scopes) => void allowed.set(clientId, new Set(scopes)),
        async clientCredentialsToken(clientId, { scope, resource } = {}) {
            const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId });
            if (scope !== undefined) form.set('scope', scope);
            if (resource !== undefined) form.set('resource', resource);
            const response = await fetch(`${issuer}/token`, { method: 'POST', body: form });
            if (!response.ok) throw new Error(`token request failed: HTTP ${response.status}`);
            return ((await response.json()) as { access_token: string }).access_token;
        },
        close: () => server.stop()
    };
}

function basicAuthUser(header: string | undefined): string | undefined {
    const match = /^Basic (.+)$/i.exec(header ?? '');
    if (match === null) return undefined;
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    return decodeURIComponent(decoded.slice(0, decoded.indexOf(':')));
}

function stringOrUndefined(value: unknown): string | undefined {
    return typeof value === 'string' ? value : undefined;
}
