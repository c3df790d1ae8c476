/**
 * Upstreams that require OAuth, end to end: a real authorization server in-process (oauth2-mock-server, see
 * fixtures/authorization-server.ts), MCP upstreams that check every request's bearer JWT against its JWKS
 * (fixtures/protected-upstream.ts), the gateway between them and an SDK client in front. The gateway gets its own
 * tokens with the client credentials grant, over every HTTP transport, reuses them, renews them ahead of expiry,
 * renews once after an upstream's 401, reports a token endpoint that fails as that upstream's failure alone, and
 * never lets a token or the client secret reach its log, /healthz, /metrics or the dashboard.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import type { Logger } from '../src/diagnostics/logger.js';
import { AuthorizationServer, type ClientRegistration, type Issued } from './fixtures/authorization-server.js';
import { startProtectedUpstream, type ProtectedUpstream } from './fixtures/protected-upstream.js';
import { capturingLogger, closeAfter, connectHttp, freePort, getJson, rpcError, startTestGateway, upstreamsReady, waitFor } from './helpers.js';

const SCOPE = 'prompts:read';
const CLIENT_SECRET = 'gateway-client-secret-0123456789';
// As a deployment would: the secret comes from the environment, through the config's interpolation.
process.env.OAUTH_TEST_CLIENT_SECRET = CLIENT_SECRET;
const BASIC: ClientRegistration = { clientId: 'prompt-gateway', clientSecret: CLIENT_SECRET, clientAuth: 'basic' };

async function authorizationServer(t: TestContext, client: ClientRegistration = BASIC): Promise<AuthorizationServer> {
    const server = await AuthorizationServer.start(client);
    closeAfter(t, () => server.stop());
    return server;
}

async function protectedUpstream(t: TestContext, issuer: AuthorizationServer, echoToken = false): Promise<ProtectedUpstream> {
    const upstream = await startProtectedUpstream({ issuer: issuer.issuer, jwksUrl: issuer.jwksUrl, scope: SCOPE, echoToken });
    closeAfter(t, () => upstream.close());
    return upstream;
}

/** An upstream entry with client credentials for `tokenUrl`; `auth` overrides fields of its auth. */
function oauthUpstream(id: string, transport: string, url: string, tokenUrl: string, auth: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
    return {
        id,
        transport,
        url,
        pingIntervalMs: 0,
        timeoutMs: 10_000,
        auth: { type: 'clientCredentials', tokenUrl, clientId: BASIC.clientId, clientSecret: '${OAUTH_TEST_CLIENT_SECRET}', scope: SCOPE, ...auth },
        ...extra
    };
}

async function gatewayWith(t: TestContext, config: Record<string, unknown>, logger?: Logger): Promise<{ gateway: RunningGateway; client: Client }> {
    const gateway = await startTestGateway(config, logger);
    closeAfter(t, () => gateway.close());
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    return { gateway, client };
}

async function greet(client: Client, prompt: string): Promise<string> {
    const result = await client.getPrompt({ name: prompt, arguments: { name: 'Ada' } });
    const content = result.messages[0]?.content;
    return content?.type === 'text' ? content.text : '';
}

/** The tokens an upstream endpoint took, in order, without repeats. */
function tokensAt(upstream: ProtectedUpstream, path: string): string[] {
    return [...new Set(upstream.accepted.filter(access => access.path === path).map(access => access.token))];
}

test('every HTTP transport gets a token of its own and serves its prompts; one token request per upstream serves every request', { timeout: 60_000 }, async t => {
    const issuer = await authorizationServer(t);
    const upstream = await protectedUpstream(t, issuer);
    const { urls } = upstream;
    const { gateway, client } = await gatewayWith(t, {
        upstreams: [
            oauthUpstream('stream', 'streamable-http', urls.streamable, issuer.tokenUrl, {}, { protocol: '2025' }),
            oauthUpstream('modern', 'streamable-http', urls.stateless, issuer.tokenUrl, {}, { protocol: '2026-07-28' }),
            oauthUpstream('legacy', 'sse', urls.sse, issuer.tokenUrl),
            oauthUpstream('auto', 'http', urls.streamable, issuer.tokenUrl)
        ]
    });
    await upstreamsReady(gateway);
    assert.deepEqual(issuer.lastRequest.grant_type, 'client_credentials');
    assert.equal(issuer.lastRequest.scope, SCOPE);

    const names = (await client.listPrompts()).prompts.map(prompt => prompt.name).sort();
    assert.deepEqual(names, ['auto__greet', 'legacy__greet', 'modern__greet', 'stream__greet']);
    for (let round = 0; round < 3; round++) {
        for (const name of names) assert.equal(await greet(client, name), 'Hello, Ada', name);
    }
    assert.equal(issuer.requests, 4, 'one token request per upstream, reused for every request after it');
    // The standalone GET stream of the session (2025) and the legacy SSE stream carried the token too.
    await waitFor(() => upstream.accepted.some(access => access.path === '/mcp' && access.method === 'GET'), 20_000, 'the GET stream of /mcp');
    assert.ok(upstream.accepted.some(access => access.path === '/sse' && access.method === 'GET'));
    for (const path of ['/mcp', '/stateless', '/sse', '/messages']) assert.ok(tokensAt(upstream, path).length >= 1, path);
    assert.equal(tokensAt(upstream, '/stateless').length, 1);
    assert.equal(tokensAt(upstream, '/sse').length, 1);

    // Closing ends each session with a DELETE, which carries the token too.
    await gateway.close();
    assert.equal(upstream.accepted.filter(access => access.path === '/mcp' && access.method === 'DELETE').length, 2, 'stream and auto');
    assert.equal(upstream.refused(), 0);
});

test("the client's own credentials never reach an upstream: the gateway presents only the tokens it got itself", { timeout: 60_000 }, async t => {
    const issuer = await authorizationServer(t);
    const upstream = await protectedUpstream(t, issuer);
    const clientKey = 'client-api-key-0123456789abcdef';
    const gateway = await startTestGateway({
        auth: { mode: 'apiKey' },
        clients: [{ id: 'alice', apiKey: clientKey }],
        upstreams: [
            oauthUpstream('stream', 'streamable-http', upstream.urls.streamable, issuer.tokenUrl),
            oauthUpstream('modern', 'streamable-http', upstream.urls.stateless, issuer.tokenUrl, {}, { protocol: '2026-07-28' })
        ]
    });
    closeAfter(t, () => gateway.close());
    await upstreamsReady(gateway);
    const callers: Record<string, string>[] = [{ authorization: `Bearer ${clientKey}` }, { 'x-api-key': clientKey }];
    for (const headers of callers) {
        const client = await connectHttp(gateway.url!, { headers });
        closeAfter(t, () => client.close());
        for (const prompt of ['stream__greet', 'modern__greet']) assert.equal(await greet(client, prompt), 'Hello, Ada');
    }
    const gatewayTokens = new Set(issuer.issued.map(issued => `Bearer ${issued.token}`));
    assert.deepEqual(
        [...upstream.presented].filter(value => !gatewayTokens.has(value)),
        []
    );
});

test('client_secret_post: the secret goes in the form; a client sending Basic to that server gets a clear fault', { timeout: 60_000 }, async t => {
    const issuer = await authorizationServer(t, { ...BASIC, clientAuth: 'post' });
    const upstream = await protectedUpstream(t, issuer);
    const { gateway, client } = await gatewayWith(t, {
        reconnect: { initialMs: 60_000, maxMs: 60_000 },
        upstreams: [
            oauthUpstream('post', 'streamable-http', upstream.urls.streamable, issuer.tokenUrl, { clientAuth: 'post' }),
            oauthUpstream('basic', 'streamable-http', upstream.urls.streamable, issuer.tokenUrl)
        ]
    });
    await upstreamsReady(gateway, ['post']);
    assert.equal(await greet(client, 'post__greet'), 'Hello, Ada');
    const basic = gateway.upstreams.find(connection => connection.id === 'basic')!;
    assert.equal(basic.state, 'down');
    assert.equal(basic.lastError, 'Upstream basic failed: token endpoint answered HTTP 401 (invalid_client)');
});

test("the resource indicator is the upstream's URL unless set; false sends none", { timeout: 60_000 }, async t => {
    const issuer = await authorizationServer(t);
    const upstream = await protectedUpstream(t, issuer);
    const config = (auth: Record<string, unknown>) => ({
        reconnect: { initialMs: 60_000, maxMs: 60_000 },
        upstreams: [oauthUpstream('one', 'streamable-http', upstream.urls.streamable, issuer.tokenUrl, auth)]
    });
    const first = await startTestGateway(config({}));
    closeAfter(t, () => first.close());
    assert.equal(issuer.lastRequest.resource, upstream.urls.streamable);
    assert.equal(first.upstreams[0]!.state, 'ready');

    // A token for another resource is refused by the upstream (its audience is wrong), and then renewed once.
    const other = await startTestGateway(config({ resource: 'https://elsewhere.example/mcp' }));
    closeAfter(t, () => other.close());
    assert.equal(issuer.lastRequest.resource, 'https://elsewhere.example/mcp');
    assert.match(other.upstreams[0]!.lastError ?? '', /HTTP 401/);

    const none = await startTestGateway(config({ resource: false }));
    closeAfter(t, () => none.close());
    assert.equal(issuer.lastRequest.resource, undefined);
});

/** The `n`th token the server issued (1 is the first), once it is issued. */
async function nthToken(issuer: AuthorizationServer, n: number): Promise<Issued> {
    while (issuer.issued.length < n) await once(issuer, 'token');
    return issuer.issued[n - 1]!;
}

test('a token is renewed ahead of its expiry, in the background, and requests go on with the one held', { timeout: 60_000 }, async t => {
    const issuer = await authorizationServer(t);
    // Renewed at half of its 6 s (see refreshLead): 3 s of margin before it expires, on a busy machine too.
    issuer.lifetimeSec = 6;
    const upstream = await protectedUpstream(t, issuer);
    const { gateway, client } = await gatewayWith(t, { upstreams: [oauthUpstream('web', 'streamable-http', upstream.urls.streamable, issuer.tokenUrl)] });
    await upstreamsReady(gateway);
    assert.equal(await greet(client, 'web__greet'), 'Hello, Ada');

    const first = await nthToken(issuer, 1);
    const second = await nthToken(issuer, 2);
    const ahead = first.at + 6000 - second.at;
    t.diagnostic(`renewed ${ahead} ms before the first token expired`);
    assert.ok(ahead > 0 && ahead < 4000, 'renewed before the first token expired, not at once');
    assert.equal(issuer.requests, 2, 'no request waited for it, none asked for another');
    assert.equal(await greet(client, 'web__greet'), 'Hello, Ada');
    assert.equal(upstream.accepted.at(-1)!.token, second.token, 'the renewed token is used at once');

    // Past the first token's expiry: the next renewal came on its own, and the upstream never saw an expired token.
    const third = await nthToken(issuer, 3);
    assert.equal(await greet(client, 'web__greet'), 'Hello, Ada');
    assert.equal(upstream.accepted.at(-1)!.token, third.token);
    assert.equal(issuer.requests, 3);
    assert.equal(upstream.refused(), 0, 'no request carried an expired token');
});

test('an upstream answering 401 (its tokens revoked): the token is renewed once and the request sent again, once for many requests', { timeout: 60_000 }, async t => {
    const issuer = await authorizationServer(t);
    const upstream = await protectedUpstream(t, issuer);
    const { gateway, client } = await gatewayWith(t, {
        upstreams: [oauthUpstream('stream', 'streamable-http', upstream.urls.streamable, issuer.tokenUrl), oauthUpstream('legacy', 'sse', upstream.urls.sse, issuer.tokenUrl)]
    });
    await upstreamsReady(gateway);
    assert.equal(issuer.requests, 2);

    upstream.revokeAll();
    assert.equal(await greet(client, 'stream__greet'), 'Hello, Ada');
    assert.equal(await greet(client, 'legacy__greet'), 'Hello, Ada');
    assert.equal(issuer.requests, 4, 'one renewal per upstream');
    assert.equal(upstream.refused(), 2, 'one refused request per upstream, sent again with the new token');

    upstream.revokeAll();
    const answers = await Promise.all(Array.from({ length: 8 }, () => greet(client, 'stream__greet')));
    assert.deepEqual(new Set(answers), new Set(['Hello, Ada']));
    assert.equal(issuer.requests, 5, 'eight refused requests, one renewal');
    assert.equal(tokensAt(upstream, '/mcp').length, 3);
});

test('an upstream that refuses every token: connecting fails with HTTP 401 after one renewal, not a stream of token requests', { timeout: 60_000 }, async t => {
    const issuer = await authorizationServer(t);
    const upstream = await protectedUpstream(t, issuer);
    const gateway = await startTestGateway({
        reconnect: { initialMs: 60_000, maxMs: 60_000 },
        // Tokens without the scope the upstream needs.
        upstreams: [oauthUpstream('web', 'streamable-http', upstream.urls.streamable, issuer.tokenUrl, { scope: 'other:scope' })]
    });
    closeAfter(t, () => gateway.close());
    assert.equal(gateway.upstreams[0]!.state, 'down');
    assert.equal(gateway.upstreams[0]!.lastError, 'Upstream web failed: HTTP 401');
    assert.equal(issuer.requests, 2, 'the first token, and one renewal');
});

test('a static bearer token: sent as is, never renewed', { timeout: 60_000 }, async t => {
    const issuer = await authorizationServer(t);
    const upstream = await protectedUpstream(t, issuer);
    const token = await issuer.mint(upstream.urls.streamable, SCOPE);
    const { gateway, client } = await gatewayWith(t, {
        upstreams: [{ id: 'web', transport: 'streamable-http', url: upstream.urls.streamable, pingIntervalMs: 0, auth: { type: 'bearer', token } }]
    });
    await upstreamsReady(gateway);
    assert.equal(await greet(client, 'web__greet'), 'Hello, Ada');
    assert.deepEqual(tokensAt(upstream, '/mcp'), [token]);
    upstream.revokeAll();
    const error = await rpcError(greet(client, 'web__greet'));
    assert.equal(error.message, 'Upstream web failed: HTTP 401');
    assert.equal(issuer.requests, 0);
});

test('a token endpoint down or failing: a clear fault for that upstream alone, tried again with backoff', { timeout: 60_000 }, async t => {
    const issuer = await authorizationServer(t);
    const failing = await authorizationServer(t);
    failing.failWith = 503;
    const upstream = await protectedUpstream(t, issuer);
    const failingsUpstream = await protectedUpstream(t, failing);
    const closedPort = await freePort();
    const { gateway, client } = await gatewayWith(t, {
        reconnect: { initialMs: 200, maxMs: 400 },
        upstreams: [
            oauthUpstream('good', 'streamable-http', upstream.urls.streamable, issuer.tokenUrl),
            oauthUpstream('down', 'streamable-http', upstream.urls.streamable, `http://127.0.0.1:${closedPort}/token`),
            oauthUpstream('failing', 'sse', failingsUpstream.urls.sse, failing.tokenUrl)
        ]
    });
    const byId = (id: string) => gateway.upstreams.find(connection => connection.id === id)!;
    assert.equal(byId('good').state, 'ready');
    assert.equal(byId('down').lastError, 'Upstream down failed: token endpoint unreachable (ECONNREFUSED)');
    assert.equal(byId('failing').lastError, 'Upstream failing failed: token endpoint answered HTTP 503 (temporarily_unavailable)');
    assert.deepEqual(
        (await client.listPrompts()).prompts.map(prompt => prompt.name),
        ['good__greet']
    );
    assert.equal(await greet(client, 'good__greet'), 'Hello, Ada');

    // Tried again as the upstream reconnects, spaced by the backoff.
    await waitFor(() => failing.requests >= 3, 20_000, 'three token requests to the failing endpoint');
    const health = await getJson(new URL('/healthz', gateway.url).href);
    const upstreams = health.body.upstreams as { id: string; state: string; error?: string; faults: Record<string, number> }[];
    const down = upstreams.find(entry => entry.id === 'down')!;
    assert.equal(down.error, 'Upstream down failed: token endpoint unreachable (ECONNREFUSED)');
    assert.ok((down.faults.connect_failed ?? 0) >= 1);
    assert.equal(upstreams.find(entry => entry.id === 'good')!.state, 'ready');

    // Once the endpoint answers, the upstream connects on its own.
    failing.failWith = undefined;
    await upstreamsReady(gateway, ['failing']);
    assert.equal(await greet(client, 'failing__greet'), 'Hello, Ada');
});

test("a token expired while its endpoint fails: requests fail with the token endpoint's reason, and work again once it answers", { timeout: 60_000 }, async t => {
    const issuer = await authorizationServer(t);
    issuer.lifetimeSec = 2;
    const upstream = await protectedUpstream(t, issuer);
    const { gateway, client } = await gatewayWith(t, {
        reconnect: { initialMs: 200, maxMs: 400 },
        upstreams: [oauthUpstream('web', 'streamable-http', upstream.urls.streamable, issuer.tokenUrl)]
    });
    await upstreamsReady(gateway);
    issuer.failWith = 503;
    // The last token issued (a renewal may have come already), and what is waited for is its expiry: a time, so a timer.
    const last = issuer.issued.at(-1)!;
    await new Promise(resolve => setTimeout(resolve, last.at + 2000 - Date.now() + 100));
    const error = await rpcError(greet(client, 'web__greet'));
    assert.equal(error.message, 'Upstream web failed: token endpoint answered HTTP 503 (temporarily_unavailable)');
    assert.ok((gateway.faults.of('web').request_failed ?? 0) >= 1);

    issuer.failWith = undefined;
    // The next request after the backoff (at most reconnect.maxMs) gets a new token.
    await waitFor(
        () =>
            greet(client, 'web__greet').then(
                () => true,
                () => false
            ),
        20_000,
        'a request that works'
    );
    assert.equal(upstream.refused(), 0, 'no expired token was sent');
});

test('no token and no client secret in the log (an upstream echoing its token included), /healthz, /metrics or the dashboard', { timeout: 60_000 }, async t => {
    const issuer = await authorizationServer(t);
    const upstream = await protectedUpstream(t, issuer, true);
    const failing = await authorizationServer(t);
    failing.failWith = 400;
    const { logger, lines } = capturingLogger();
    const { gateway, client } = await gatewayWith(
        t,
        {
            reconnect: { initialMs: 60_000, maxMs: 60_000 },
            upstreams: [
                oauthUpstream('web', 'streamable-http', upstream.urls.streamable, issuer.tokenUrl),
                oauthUpstream('failing', 'streamable-http', upstream.urls.streamable, failing.tokenUrl)
            ]
        },
        logger
    );
    await upstreamsReady(gateway, ['web']);
    assert.equal(await greet(client, 'web__greet'), 'Hello, Ada');
    upstream.revokeAll();
    assert.equal(await greet(client, 'web__greet'), 'Hello, Ada');
    assert.equal(issuer.issued.length, 2);

    const base = gateway.url!;
    const exposed = [
        lines()
            .map(line => JSON.stringify(line))
            .join('\n'),
        JSON.stringify((await getJson(new URL('/healthz', base).href)).body),
        await (await fetch(new URL('/metrics', base))).text(),
        await (await fetch(new URL('/dashboard/data', base))).text()
    ];
    const connected = lines().find(line => line.msg === 'upstream connected' && line.upstream === 'web');
    assert.equal(connected?.server, 'protected (token [redacted])', 'the server name echoing the token was redacted');
    const basic = Buffer.from(`${BASIC.clientId}:${CLIENT_SECRET}`).toString('base64');
    for (const secret of [CLIENT_SECRET, basic, ...issuer.issued.map(issued => issued.token)]) {
        for (const text of exposed) assert.ok(!text.includes(secret), `a secret in:\n${text.slice(0, 2000)}`);
    }
});
