/**
 * MCP authorization end to end (issue 17, point 3): the gateway in auth.mode jwt
 * as an OAuth 2.1 resource server, a real authorization server in-process
 * (oauth2-mock-server, see oauth-server.ts) and the SDK client's own OAuth
 * machinery. The client meets the 401, reads resource_metadata, discovers the
 * authorization server, logs in (authorization code with PKCE, its redirect
 * followed by the test as a browser would; client credentials for machines),
 * retries and lists prompts, in both protocol eras, and by any loopback name
 * of a loopback listener. Then what must be refused is: tokens for another
 * resource, tokens short of a scope, tokens of a client the config does not
 * know (403, so clients stop logging in again), and a Host header that would
 * move the metadata URL; operators are warned; and no token reaches the log.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test, type TestContext } from 'node:test';
import {
    Client,
    ClientCredentialsProvider,
    InsufficientScopeError,
    StreamableHTTPClientTransport,
    UnauthorizedError,
    type FetchLike,
    type OAuthClientMetadata,
    type OAuthClientProvider,
    type OAuthDiscoveryState,
    type StoredOAuthTokens
} from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { capturingLogger, closeAfter, freePort, startTestGateway, stdioFixture, upstreamsReady } from './helpers.js';
import { startAuthorizationServer, type TestAuthorizationServer } from './oauth-server.js';
import { initializeBody, modernHeaders, modernRequest, openRawSession, post } from './raw-http.js';

const TIMEOUT = { timeout: 120_000 };
const CLIENT_INFO = { name: 'oauth-test', version: '1.0.0' };
/** Never fetched: the test reads the authorization server's redirect to it, as the client's loopback listener would. */
const REDIRECT_URL = 'http://127.0.0.1:9/callback';
const DOCS_URL = 'https://docs.example.com/prompt-gateway';
const OTHER_RESOURCE = 'https://other.example.com/mcp';

let as: TestAuthorizationServer;

before(async () => {
    as = await startAuthorizationServer();
    as.allow('desk', ['prompts:read']);
    as.allow('robot', ['prompts:read']);
    as.allow('admin-bot', ['prompts:read', 'prompts:admin']);
    as.allow('intern', ['prompts:read']);
    // Known to the authorization server, not to the gateway's config.
    as.allow('stranger', ['prompts:read']);
});
after(() => as.close());

/** The gateway's auth section: jwt mode trusting the test authorization server. */
function oauthAuth(extra: Record<string, unknown> = {}) {
    return {
        mode: 'jwt',
        jwksUrl: as.jwksUrl,
        clientIdClaim: 'client_id',
        authorizationServers: [as.issuer],
        requiredScopes: ['prompts:read'],
        resourceName: 'Prompt gateway under test',
        resourceDocumentation: DOCS_URL,
        ...extra
    };
}

const CLIENTS = [{ id: 'desk' }, { id: 'robot' }, { id: 'admin-bot', requiredScopes: ['prompts:admin'] }, { id: 'intern', requiredScopes: ['prompts:admin'] }];

async function startGateway(t: TestContext, config: Record<string, unknown> = {}, logger?: Parameters<typeof startTestGateway>[1]): Promise<RunningGateway> {
    const gateway = await startTestGateway(
        { auth: oauthAuth(), clients: CLIENTS, limits: { rateLimit: { requestsPerSecond: 0, burst: 1 } }, upstreams: [stdioFixture('up', { prompts: 3 })], ...config },
        logger
    );
    closeAfter(t, () => gateway.close());
    await upstreamsReady(gateway);
    return gateway;
}

/** The RFC 9728 path-suffixed metadata URL of a resource URL. */
function metadataUrlOf(resource: string): string {
    const url = new URL(resource);
    return `${url.origin}/.well-known/oauth-protected-resource${url.pathname === '/' ? '' : url.pathname}`;
}

// ---------------------------------------------------------------- what the client saw

interface Exchange {
    method: string;
    url: string;
    status: number;
    challenge: string | null;
}

/** A fetch for the SDK's transport that records every exchange (MCP endpoint, metadata, authorization server). */
function recordingFetch(): { fetch: FetchLike; exchanges: Exchange[] } {
    const exchanges: Exchange[] = [];
    const recording: FetchLike = async (input, init) => {
        const response = await fetch(input, init);
        exchanges.push({ method: init?.method ?? 'GET', url: String(input), status: response.status, challenge: response.headers.get('www-authenticate') });
        return response;
    };
    return { fetch: recording, exchanges };
}

/**
 * An MCP client's OAuth state for one user, as a desktop client keeps it: a client registered in advance as a public
 * client (no secret; PKCE protects the code), with a loopback redirect URI.
 */
class PublicClient implements OAuthClientProvider {
    authorizationUrl: URL | undefined;
    #tokens: StoredOAuthTokens | undefined;
    #verifier: string | undefined;
    #discovery: OAuthDiscoveryState | undefined;

    constructor(private readonly clientId: string) {}

    get redirectUrl(): string {
        return REDIRECT_URL;
    }

    get clientMetadata(): OAuthClientMetadata {
        return { client_name: 'oauth test desk', redirect_uris: [REDIRECT_URL], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
    }

    clientInformation() {
        return { client_id: this.clientId };
    }

    tokens(): StoredOAuthTokens | undefined {
        return this.#tokens;
    }

    saveTokens(tokens: StoredOAuthTokens): void {
        this.#tokens = tokens;
    }

    redirectToAuthorization(url: URL): void {
        this.authorizationUrl = url;
    }

    saveCodeVerifier(verifier: string): void {
        this.#verifier = verifier;
    }

    codeVerifier(): string {
        if (this.#verifier === undefined) throw new Error('no code verifier saved');
        return this.#verifier;
    }

    saveDiscoveryState(state: OAuthDiscoveryState): void {
        this.#discovery = state;
    }

    discoveryState(): OAuthDiscoveryState | undefined {
        return this.#discovery;
    }
}

/** The user's browser: opens the authorization URL and hands back the query of the redirect to the client. */
async function followAuthorization(url: URL): Promise<URLSearchParams> {
    const response = await fetch(url, { redirect: 'manual' });
    await response.body?.cancel();
    assert.equal(response.status, 302, 'the authorization server redirects back to the client');
    const location = new URL(response.headers.get('location')!);
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URL);
    return location.searchParams;
}

/** The fixture upstream's prompts, namespaced: the listing went through to it. */
function assertFixturePrompts(result: { prompts: { name: string }[] }): void {
    const names = result.prompts.map(prompt => prompt.name);
    for (const name of ['up__prompt-000', 'up__prompt-001', 'up__prompt-002']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
}

// ---------------------------------------------------------------- raw HTTP with any Host

interface RawReply {
    status: number;
    headers: Record<string, string | string[] | undefined>;
    text: string;
}

/** One request with exactly these headers, Host included (fetch would not send a Host of the caller's choosing). */
function rawRequest(url: string, method: string, headers: Record<string, string>, body?: string): Promise<RawReply> {
    const target = new URL(url);
    return new Promise((resolve, reject) => {
        const req = request({ host: target.hostname, port: target.port, path: target.pathname, method, headers, agent: false }, res => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
            res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
    });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

// ---------------------------------------------------------------- the SDK client's own flow

describe("an SDK client logs in through the gateway's metadata", () => {
    test('authorization code with PKCE: 401, resource_metadata, discovery, login, retry, prompts (2025-era session)', TIMEOUT, async t => {
        const port = await freePort();
        const resource = `http://127.0.0.1:${port}/mcp`;
        const gateway = await startGateway(t, { listen: { port }, auth: oauthAuth({ resource }) });
        assert.equal(gateway.url, resource);
        const { fetch: recorded, exchanges } = recordingFetch();
        const provider = new PublicClient('desk');
        const authorizeFrom = as.authorizeRequests.length;
        const tokensFrom = as.tokenRequests.length;

        const first = new Client(CLIENT_INFO);
        closeAfter(t, () => first.close());
        const firstTransport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider, fetch: recorded });
        // The client stops where a person must log in: at the redirect to the authorization server.
        await assert.rejects(first.connect(firstTransport), (error: unknown) => error instanceof UnauthorizedError);

        const metadataUrl = metadataUrlOf(resource);
        assert.deepEqual(exchanges[0], {
            method: 'POST',
            url: resource,
            status: 401,
            challenge: `Bearer realm="mcp-prompt-gateway", scope="prompts:read", resource_metadata="${metadataUrl}"`
        });
        assert.ok(
            exchanges.some(exchange => exchange.url === metadataUrl && exchange.status === 200),
            `the client read the metadata at ${metadataUrl}: ${JSON.stringify(exchanges)}`
        );
        assert.ok(
            exchanges.some(exchange => exchange.url.startsWith(as.issuer) && exchange.status === 200),
            "and then the authorization server's metadata"
        );

        const authorization = as.authorizeRequests.slice(authorizeFrom);
        assert.equal(authorization.length, 0, 'the test, not the client, opens the authorization URL');
        const callback = await followAuthorization(provider.authorizationUrl!);
        const [asked] = as.authorizeRequests.slice(authorizeFrom);
        assert.equal(asked?.get('resource'), resource, 'RFC 8707 resource in the authorization request');
        assert.equal(asked?.get('code_challenge_method'), 'S256');
        assert.equal(asked?.get('scope'), 'prompts:read', 'the scope the challenge named');
        assert.equal(asked?.get('client_id'), 'desk');

        await firstTransport.finishAuth(callback);
        assert.deepEqual(
            as.tokenRequests.slice(tokensFrom).map(({ grantType, resource: forResource, codeVerifier, grantedScope }) => ({ grantType, forResource, codeVerifier, grantedScope })),
            [{ grantType: 'authorization_code', forResource: resource, codeVerifier: true, grantedScope: 'prompts:read' }]
        );

        const seen = exchanges.length;
        const client = new Client(CLIENT_INFO);
        closeAfter(t, () => client.close());
        await client.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider, fetch: recorded }));
        assertFixturePrompts(await client.listPrompts());
        const refused = exchanges.slice(seen).filter(exchange => exchange.status === 401 || exchange.status === 403);
        assert.deepEqual(refused, [], 'with its token, nothing of the session is refused');
    });

    test('client credentials, 2026-07-28 stateless requests and subscriptions/listen, resource by default from the loopback listener', TIMEOUT, async t => {
        const gateway = await startGateway(t);
        const resource = gateway.url!;
        const metadata = (await (await fetch(metadataUrlOf(resource))).json()) as { resource: string };
        assert.equal(metadata.resource, resource, "without auth.resource, the listener's own URL (port as bound)");
        const { fetch: recorded, exchanges } = recordingFetch();
        const tokensFrom = as.tokenRequests.length;

        const provider = new ClientCredentialsProvider({ clientId: 'robot', clientSecret: 'robot-secret-0123456789', expectedIssuer: as.issuer });
        const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
        closeAfter(t, () => client.close());
        await client.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider, fetch: recorded }));
        assert.equal(client.getProtocolEra(), 'modern');
        assertFixturePrompts(await client.listPrompts());
        const subscription = await client.listen({ promptsListChanged: true });
        closeAfter(t, () => subscription.close());

        assert.equal(exchanges[0]?.status, 401, 'the first request (server/discover) met the challenge');
        assert.match(exchanges[0]?.challenge ?? '', new RegExp(`resource_metadata="${metadataUrlOf(resource)}"`));
        assert.deepEqual(
            as.tokenRequests.slice(tokensFrom).map(({ grantType, clientId, resource: forResource }) => ({ grantType, clientId, forResource })),
            [{ grantType: 'client_credentials', clientId: 'robot', forResource: resource }]
        );
    });

    test('with issuer alone (no authorizationServers) the issuer is the authorization server: 401 names a document that exists, the client logs in', TIMEOUT, async t => {
        const { authorizationServers: _servers, ...withoutServers } = oauthAuth();
        const gateway = await startGateway(t, { auth: { ...withoutServers, issuer: as.issuer } });
        const resource = gateway.url!;
        const refused = await post(resource, initializeBody());
        const challenge = refused.headers.get('www-authenticate') ?? '';
        await refused.body?.cancel();
        const named = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
        assert.equal(named, metadataUrlOf(resource), `the challenge names the document: ${challenge}`);
        const document = await fetch(named);
        assert.equal(document.status, 200, 'the document the challenge names exists');
        assert.deepEqual(((await document.json()) as { authorization_servers: string[] }).authorization_servers, [as.issuer]);
        const root = await fetch(`${new URL(resource).origin}/.well-known/oauth-protected-resource`);
        assert.equal(root.status, 200, 'the root form too');
        await root.body?.cancel();

        const provider = new ClientCredentialsProvider({ clientId: 'robot', clientSecret: 'robot-secret-0123456789', expectedIssuer: as.issuer });
        const client = new Client(CLIENT_INFO);
        closeAfter(t, () => client.close());
        await client.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider }));
        assertFixturePrompts(await client.listPrompts());
        // Tokens were never audience-bound with issuer alone; serving the document does not start refusing them.
        const token = await as.clientCredentialsToken('robot', { scope: 'prompts:read', resource: OTHER_RESOURCE });
        const accepted = await post(resource, initializeBody(), bearer(token));
        assert.equal(accepted.status, 200);
        await accepted.body?.cancel();
    });

    test('a client whose policy needs one more scope is challenged 403 insufficient_scope and steps up', TIMEOUT, async t => {
        const gateway = await startGateway(t);
        const { fetch: recorded, exchanges } = recordingFetch();
        const tokensFrom = as.tokenRequests.length;
        const provider = new ClientCredentialsProvider({ clientId: 'admin-bot', clientSecret: 'admin-secret-0123456789', expectedIssuer: as.issuer });
        const client = new Client(CLIENT_INFO);
        closeAfter(t, () => client.close());
        await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!), { authProvider: provider, fetch: recorded }));
        assertFixturePrompts(await client.listPrompts());

        const forbidden = exchanges.find(exchange => exchange.status === 403);
        assert.equal(
            forbidden?.challenge,
            `Bearer realm="mcp-prompt-gateway", error="insufficient_scope", scope="prompts:read prompts:admin", resource_metadata="${metadataUrlOf(gateway.url!)}"`
        );
        assert.deepEqual(
            as.tokenRequests.slice(tokensFrom).map(({ requestedScope, grantedScope }) => ({ requestedScope, grantedScope })),
            [
                { requestedScope: 'prompts:read', grantedScope: 'prompts:read' },
                { requestedScope: 'prompts:read prompts:admin', grantedScope: 'prompts:read prompts:admin' }
            ]
        );
    });

    test('a client the authorization server will not grant the scope gets insufficient_scope with what it lacks', TIMEOUT, async t => {
        const gateway = await startGateway(t);
        const provider = new ClientCredentialsProvider({ clientId: 'intern', clientSecret: 'intern-secret-0123456789', expectedIssuer: as.issuer });
        const client = new Client(CLIENT_INFO);
        closeAfter(t, () => client.close());
        const transport = new StreamableHTTPClientTransport(new URL(gateway.url!), { authProvider: provider, onInsufficientScope: 'throw' });
        await assert.rejects(client.connect(transport), (error: unknown) => {
            assert.ok(error instanceof InsufficientScopeError, String(error));
            assert.equal(error.requiredScope, 'prompts:read prompts:admin');
            assert.equal(error.resourceMetadataUrl?.href, metadataUrlOf(gateway.url!));
            return true;
        });
    });
    test('by another loopback name: a client of http://localhost:<port>/mcp is told that URL and its token is accepted', TIMEOUT, async t => {
        const gateway = await startGateway(t);
        const port = new URL(gateway.url!).port;
        const resource = `http://localhost:${port}/mcp`;
        const { fetch: recorded, exchanges } = recordingFetch();
        const provider = new PublicClient('desk');
        const authorizeFrom = as.authorizeRequests.length;
        const tokensFrom = as.tokenRequests.length;

        const first = new Client(CLIENT_INFO);
        closeAfter(t, () => first.close());
        const firstTransport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider, fetch: recorded });
        // Before the gateway spelled its default resource as reached, the SDK stopped here: "does not match expected".
        await assert.rejects(first.connect(firstTransport), (error: unknown) => error instanceof UnauthorizedError);
        assert.match(exchanges[0]?.challenge ?? '', new RegExp(`resource_metadata="${metadataUrlOf(resource)}"`));
        assert.ok(
            exchanges.some(exchange => exchange.url === metadataUrlOf(resource) && exchange.status === 200),
            JSON.stringify(exchanges)
        );

        await firstTransport.finishAuth(await followAuthorization(provider.authorizationUrl!));
        assert.equal(as.authorizeRequests.slice(authorizeFrom)[0]?.get('resource'), resource, 'the client asked for a token for the URL it uses');
        assert.deepEqual(
            as.tokenRequests.slice(tokensFrom).map(({ grantType, resource: forResource }) => ({ grantType, forResource })),
            [{ grantType: 'authorization_code', forResource: resource }]
        );
        const client = new Client(CLIENT_INFO);
        closeAfter(t, () => client.close());
        await client.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider, fetch: recorded }));
        assertFixturePrompts(await client.listPrompts());
    });
});

// ---------------------------------------------------------------- refusals, by hand

describe('tokens the gateway refuses', () => {
    test('a token minted for another resource, or for none, is 401 invalid_token, in both eras and on an open session', TIMEOUT, async t => {
        const gateway = await startGateway(t);
        const url = gateway.url!;
        const invalid = `Bearer realm="mcp-prompt-gateway", error="invalid_token", scope="prompts:read", resource_metadata="${metadataUrlOf(url)}"`;
        const good = await as.clientCredentialsToken('robot', { scope: 'prompts:read', resource: url });
        const elsewhere = await as.clientCredentialsToken('robot', { scope: 'prompts:read', resource: OTHER_RESOURCE });
        const nowhere = await as.clientCredentialsToken('robot', { scope: 'prompts:read' });
        const session = await openRawSession(url, '2025-06-18', bearer(good));

        for (const token of [elsewhere, nowhere]) {
            const refusals = [
                await post(url, initializeBody(), bearer(token)),
                await post(url, { jsonrpc: '2.0', id: 2, method: 'prompts/list', params: {} }, { ...session.headers, ...bearer(token) }),
                await post(url, modernRequest('prompts/list'), { ...modernHeaders(modernRequest('prompts/list')), ...bearer(token) })
            ];
            for (const response of refusals) {
                await response.body?.cancel();
                assert.equal(response.status, 401);
                assert.equal(response.headers.get('www-authenticate'), invalid);
            }
        }
        const listed = await post(url, { jsonrpc: '2.0', id: 3, method: 'prompts/list', params: {} }, session.headers);
        assert.equal(listed.status, 200, 'the session itself is untouched');
        await listed.body?.cancel();
    });

    test('a request without a token gets the challenge; one without the required scope gets 403 insufficient_scope', TIMEOUT, async t => {
        const gateway = await startGateway(t);
        const url = gateway.url!;
        const metadataUrl = metadataUrlOf(url);
        const missing = await post(url, initializeBody());
        assert.equal(missing.status, 401);
        assert.equal(missing.headers.get('www-authenticate'), `Bearer realm="mcp-prompt-gateway", scope="prompts:read", resource_metadata="${metadataUrl}"`);
        await missing.body?.cancel();

        const unscoped = await as.clientCredentialsToken('robot', { resource: url });
        const forbidden = await post(url, initializeBody(), bearer(unscoped));
        assert.equal(forbidden.status, 403);
        assert.equal(
            forbidden.headers.get('www-authenticate'),
            `Bearer realm="mcp-prompt-gateway", error="insufficient_scope", scope="prompts:read", resource_metadata="${metadataUrl}"`
        );
        const body = (await forbidden.json()) as { error: { message: string } };
        assert.match(body.error.message, /lacks scope prompts:read/);
    });

    test('on a loopback listener without auth.resource, "aud" may name any loopback name of the same port and path', TIMEOUT, async t => {
        const gateway = await startGateway(t);
        const { port } = new URL(gateway.url!);
        const sound = [`http://127.0.0.1:${port}/mcp`, `http://localhost:${port}/mcp`, `http://[::1]:${port}/mcp/`];
        const unsound = [`http://localhost:${Number(port) + 1}/mcp`, `http://localhost:${port}/other`, `https://localhost:${port}/mcp`, `http://gw.example.com:${port}/mcp`];
        for (const url of [gateway.url!, `http://localhost:${port}/mcp`]) {
            for (const audience of sound) {
                const accepted = await post(url, initializeBody(), bearer(await as.clientCredentialsToken('robot', { scope: 'prompts:read', resource: audience })));
                assert.equal(accepted.status, 200, `${audience} at ${url}`);
                await accepted.body?.cancel();
            }
            for (const audience of unsound) {
                const refused = await post(url, initializeBody(), bearer(await as.clientCredentialsToken('robot', { scope: 'prompts:read', resource: audience })));
                assert.equal(refused.status, 401, `${audience} at ${url}`);
                await refused.body?.cancel();
            }
        }
    });

    test('a configured loopback resource is exact: tokens for another loopback name are refused', TIMEOUT, async t => {
        const port = await freePort();
        const resource = `http://127.0.0.1:${port}/mcp`;
        await startGateway(t, { listen: { port }, auth: oauthAuth({ resource }) });
        const token = await as.clientCredentialsToken('robot', { scope: 'prompts:read', resource: `http://localhost:${port}/mcp` });
        const refused = await post(resource, initializeBody(), bearer(token));
        assert.equal(refused.status, 401);
        await refused.body?.cancel();
        const document = await rawRequest(metadataUrlOf(resource), 'GET', { host: `localhost:${port}` });
        assert.equal((JSON.parse(document.text) as { resource: string }).resource, resource, 'nor does Host move it');
    });

    test('a sound token for this resource whose client is not configured: 403 naming the claim, so the SDK client stops instead of logging in again', TIMEOUT, async t => {
        const gateway = await startGateway(t);
        const url = gateway.url!;
        const stranger = await as.clientCredentialsToken('stranger', { scope: 'prompts:read', resource: url });
        const forbidden = await post(url, initializeBody(), bearer(stranger));
        assert.equal(forbidden.status, 403);
        // RFC 6750 section 3 wants a challenge; none of its error codes fits, and invalid_token would send clients to log in again.
        assert.equal(forbidden.headers.get('www-authenticate'), 'Bearer realm="mcp-prompt-gateway"');
        const text = await forbidden.text();
        assert.deepEqual(JSON.parse(text), {
            jsonrpc: '2.0',
            error: { code: -32000, message: 'Forbidden: the token\'s client (its "client_id" claim) is not configured on this gateway' },
            id: null
        });
        assert.ok(!text.includes('stranger'), "the claim's value is not echoed");

        const elsewhere = await post(url, initializeBody(), bearer(await as.clientCredentialsToken('stranger', { scope: 'prompts:read', resource: OTHER_RESOURCE })));
        assert.equal(elsewhere.status, 401, 'minted for another resource: the audience is refused first');
        assert.match(elsewhere.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
        await elsewhere.body?.cancel();

        const tokensFrom = as.tokenRequests.length;
        const provider = new ClientCredentialsProvider({ clientId: 'stranger', clientSecret: 'stranger-secret-0123456789', expectedIssuer: as.issuer });
        const client = new Client(CLIENT_INFO);
        closeAfter(t, () => client.close());
        await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider })), (error: unknown) => {
            assert.equal((error as { status?: unknown }).status, 403, String(error));
            return true;
        });
        assert.equal(as.tokenRequests.slice(tokensFrom).length, 1, 'one token, no second login for a token that would be refused the same way');
    });

    test('tokens of an unconfigured client or for another resource are warned about, once per kind per 10 s', TIMEOUT, async t => {
        const { logger, lines } = capturingLogger();
        const gateway = await startGateway(t, {}, logger);
        const url = gateway.url!;
        const stranger = await as.clientCredentialsToken('stranger', { scope: 'prompts:read', resource: url });
        const elsewhere = await as.clientCredentialsToken('robot', { scope: 'prompts:read', resource: OTHER_RESOURCE });
        const started = Date.now();
        for (let round = 0; round < 3; round++) {
            for (const token of [stranger, elsewhere]) await (await post(url, initializeBody(), bearer(token))).body?.cancel();
        }
        const rounds = 1 + Math.floor((Date.now() - started) / 10_000);
        const warnings = lines().filter(line => line['level'] === 'warn');
        const unknown = warnings.filter(line => line['failure'] === 'unknown_client');
        const audience = warnings.filter(line => line['failure'] === 'wrong_audience');
        assert.ok(unknown.length >= 1 && unknown.length <= rounds, JSON.stringify(warnings));
        assert.ok(audience.length >= 1 && audience.length <= rounds, JSON.stringify(warnings));
        assert.equal(unknown[0]?.['claim'], 'client_id');
        assert.match(String(unknown[0]?.['msg']), /"client_id" claim \(auth\.clientIdClaim\).*names no configured client/);
        assert.match(String(audience[0]?.['msg']), /"aud" does not name auth\.resource/);
        const log = JSON.stringify(lines());
        assert.ok(!log.includes('stranger') && !log.includes(OTHER_RESOURCE), 'what the tokens claim stays out of the log');
    });

    test('refused and accepted tokens alike stay out of the log', TIMEOUT, async t => {
        const { logger, lines } = capturingLogger();
        const gateway = await startGateway(t, {}, logger);
        const url = gateway.url!;
        const tokens = [
            await as.clientCredentialsToken('robot', { scope: 'prompts:read', resource: url }),
            await as.clientCredentialsToken('robot', { scope: 'prompts:read', resource: OTHER_RESOURCE }),
            await as.clientCredentialsToken('intern', { scope: 'prompts:read', resource: url }),
            await as.clientCredentialsToken('nobody', { scope: 'prompts:read', resource: url })
        ];
        for (const token of tokens) await (await post(url, initializeBody(), bearer(token))).body?.cancel();
        const log = JSON.stringify(lines());
        assert.ok(
            lines().some(line => line['msg'] === 'token refused' && line['failure'] === 'wrong_audience'),
            'the refusals were logged, by kind'
        );
        for (const token of tokens) {
            const [, payload, signature] = token.split('.');
            assert.ok(!log.includes(payload!) && !log.includes(signature!), 'no part of a token is logged');
        }
        assert.ok(!log.includes(OTHER_RESOURCE), 'nor what a token claims');
    });
});

// ---------------------------------------------------------------- the metadata document

describe('Protected Resource Metadata (RFC 9728)', () => {
    test('the document, at the root and path-suffixed URLs: fields, caching, CORS for any origin', TIMEOUT, async t => {
        const gateway = await startGateway(t, { auth: oauthAuth({ scopesSupported: ['prompts:read', 'prompts:admin'] }) });
        const url = gateway.url!;
        const origin = new URL(url).origin;
        const expected = {
            resource: url,
            authorization_servers: [as.issuer],
            scopes_supported: ['prompts:read', 'prompts:admin'],
            bearer_methods_supported: ['header'],
            resource_name: 'Prompt gateway under test',
            resource_documentation: DOCS_URL
        };
        const etags = new Set<string>();
        for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp/']) {
            const response = await fetch(`${origin}${path}`, { headers: { origin: 'https://app.example.com', 'mcp-protocol-version': '2025-11-25' } });
            assert.equal(response.status, 200, path);
            assert.deepEqual(await response.json(), expected, path);
            assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
            assert.equal(response.headers.get('access-control-allow-origin'), '*', 'readable by browser clients of any origin');
            assert.match(response.headers.get('cache-control') ?? '', /^public, max-age=\d+$/);
            etags.add(response.headers.get('etag') ?? '');
        }
        assert.equal(etags.size, 1, 'one document');
        const [etag] = etags;
        const revalidated = await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`, { headers: { 'if-none-match': etag! } });
        assert.equal(revalidated.status, 304);
        assert.equal(await revalidated.text(), '');

        const preflight = await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`, {
            method: 'OPTIONS',
            headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'mcp-protocol-version' }
        });
        assert.equal(preflight.status, 204);
        assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
        assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /mcp-protocol-version/);
        const head = await fetch(`${origin}/.well-known/oauth-protected-resource`, { method: 'HEAD' });
        assert.equal(head.status, 200);
        const posted = await fetch(`${origin}/.well-known/oauth-protected-resource`, { method: 'POST' });
        assert.equal(posted.status, 405);
        await posted.body?.cancel();
        const elsewhere = await fetch(`${origin}/.well-known/oauth-protected-resource/other`);
        assert.equal(elsewhere.status, 404, "only the root and the endpoint's own path");
        await elsewhere.body?.cancel();
        // The document is public; the MCP endpoint still checks Origin.
        const endpoint = await post(url, initializeBody(), { origin: 'https://app.example.com' });
        assert.equal(endpoint.status, 403);
        await endpoint.body?.cancel();
    });

    test("the metadata URL follows auth.resource (a proxy's path), whatever Host or X-Forwarded-* say", TIMEOUT, async t => {
        const resource = 'https://gw.example.com/prompts/mcp';
        const gateway = await startGateway(t, { listen: { port: 0, allowedHosts: ['127.0.0.1', 'gw.example.com', 'localhost'] }, auth: oauthAuth({ resource }) });
        const { origin } = new URL(gateway.url!);
        const challenge = `Bearer realm="mcp-prompt-gateway", scope="prompts:read", resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/prompts/mcp"`;
        const spoofs: Record<string, string>[] = [
            {},
            { host: 'localhost' },
            { host: 'gw.example.com', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http', forwarded: 'host=evil.example' }
        ];
        for (const headers of spoofs) {
            const refused = await rawRequest(
                gateway.url!,
                'POST',
                { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
                JSON.stringify(initializeBody())
            );
            assert.equal(refused.status, 401);
            assert.equal(refused.headers['www-authenticate'], challenge, JSON.stringify(headers));
            // Served at the listener's own path and at the one the resource URL implies (where the proxy sends it).
            for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource/prompts/mcp']) {
                const document = await rawRequest(`${origin}${path}`, 'GET', headers);
                assert.equal(document.status, 200, path);
                assert.equal((JSON.parse(document.text) as { resource: string }).resource, resource);
            }
        }
        const forged = await rawRequest(`${origin}/.well-known/oauth-protected-resource`, 'GET', { host: 'evil.example' });
        assert.equal(forged.status, 403, 'the Host check applies to the document too');
    });

    test('without auth.resource on loopback, the document and challenges spell the resource with the loopback name in Host', TIMEOUT, async t => {
        const gateway = await startGateway(t, { listen: { port: 0, allowedHosts: ['127.0.0.1', 'localhost', '[::1]', 'gw.example.com'] } });
        const { origin, port } = new URL(gateway.url!);
        const cases: [string | undefined, string][] = [
            [`localhost:${port}`, `http://localhost:${port}/mcp`],
            [`LOCALHOST:${port}`, `http://localhost:${port}/mcp`],
            [`[::1]:${port}`, `http://[::1]:${port}/mcp`],
            // The port and path are the listener's, whatever Host says; a name off the machine is never taken.
            ['localhost:1', `http://localhost:${port}/mcp`],
            [`gw.example.com:${port}`, gateway.url!],
            [undefined, gateway.url!]
        ];
        for (const [host, resource] of cases) {
            const headers: Record<string, string> = host === undefined ? {} : { host };
            const document = await rawRequest(`${origin}/.well-known/oauth-protected-resource/mcp`, 'GET', headers);
            assert.equal(document.status, 200, host);
            assert.equal((JSON.parse(document.text) as { resource: string }).resource, resource, host);
            const refused = await rawRequest(
                gateway.url!,
                'POST',
                { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
                JSON.stringify(initializeBody())
            );
            assert.equal(refused.status, 401, host);
            assert.match(String(refused.headers['www-authenticate']), new RegExp(`resource_metadata="${metadataUrlOf(resource).replace(/[[\]]/g, '\\$&')}"`), host);
        }
    });

    test('issuer alone behind a proxy without auth.resource: no URL to name, so no document, and the gateway says so at start', TIMEOUT, async t => {
        const { authorizationServers: _servers, ...withoutServers } = oauthAuth();
        const { logger, lines } = capturingLogger();
        const gateway = await startGateway(t, { listen: { port: 0, trustProxy: ['127.0.0.1'] }, auth: { ...withoutServers, issuer: as.issuer } }, logger);
        const notice = gateway.notices.find(line => line.includes('Protected Resource Metadata'));
        assert.match(notice ?? '', /not served: listen\.trustProxy is set: .* as auth\.resource$/, gateway.notices.join('\n'));
        assert.ok(
            lines().some(line => line.level === 'warn' && line.msg === notice),
            'warned in the log too'
        );
        const response = await fetch(`${new URL(gateway.url!).origin}/.well-known/oauth-protected-resource/mcp`);
        assert.equal(response.status, 404);
        await response.body?.cancel();
        const refused = await post(gateway.url!, initializeBody());
        assert.doesNotMatch(refused.headers.get('www-authenticate') ?? '', /resource_metadata/, 'no challenge names a document that is not there');
        await refused.body?.cancel();
    });

    test('no document outside jwt mode or without authorizationServers and issuer, and the plain challenge', TIMEOUT, async t => {
        const bare = await startGateway(t, { auth: { mode: 'jwt', jwksUrl: as.jwksUrl, clientIdClaim: 'client_id' } });
        const keyed = await startGateway(t, { auth: { mode: 'apiKey' }, clients: [{ id: 'k', apiKey: 'a-key-of-sixteen-characters-or-more' }] });
        for (const gateway of [bare, keyed]) {
            const { origin } = new URL(gateway.url!);
            for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
                const response = await fetch(`${origin}${path}`);
                assert.equal(response.status, 404, path);
                await response.body?.cancel();
            }
            const refused = await post(gateway.url!, initializeBody());
            assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="mcp-prompt-gateway"');
            await refused.body?.cancel();
        }
        // Without a resource, tokens are not audience-bound: the jwt mode of before is unchanged.
        const token = await as.clientCredentialsToken('robot', { resource: OTHER_RESOURCE });
        const accepted = await post(bare.url!, initializeBody(), bearer(token));
        assert.equal(accepted.status, 200);
        await accepted.body?.cancel();
    });
});
