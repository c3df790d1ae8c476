/**
 * The client credentials token source against a real HTTP token endpoint on 127.0.0.1 whose answers each test
 * writes: what is taken from an answer and what is refused (and said how, without the body), one token request
 * for many waiters, backoff after a failure, renewal after a 401 and its brake, renewal ahead of expiry.
 */
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { ClientCredentialsSource, refreshLead } from '../../src/upstream/auth/client-credentials.js';
import { upstreamCredentials } from '../../src/upstream/auth/credentials.js';
import { TokenRequestError, type TokenRequest } from '../../src/upstream/auth/token-request.js';

type Answer = (request: { headers: IncomingMessage['headers']; form: URLSearchParams }, res: ServerResponse) => void;

interface Endpoint {
    url: URL;
    requests: number;
    answer: Answer;
    /** `request` as each one arrives, before it is answered. */
    events: EventEmitter;
}

const json =
    (status: number, body: unknown): Answer =>
    (_request, res) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };

let issued = 0;
const grant =
    (extra: Record<string, unknown> = {}): Answer =>
    (request, res) =>
        json(200, { access_token: `token-${++issued}`, token_type: 'Bearer', ...extra })(request, res);

async function tokenEndpoint(t: TestContext, answer: Answer): Promise<Endpoint> {
    const endpoint: Endpoint = { url: new URL('http://127.0.0.1/'), requests: 0, answer, events: new EventEmitter() };
    const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
            endpoint.requests++;
            endpoint.events.emit('request');
            endpoint.answer({ headers: req.headers, form: new URLSearchParams(Buffer.concat(chunks).toString('utf8')) }, res);
        });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => {
        server.closeAllConnections();
        server.close();
    });
    endpoint.url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/token`);
    return endpoint;
}

const BACKOFF = { initialMs: 60_000, maxMs: 60_000 };

function source(t: TestContext, endpoint: Endpoint, request: Partial<TokenRequest> = {}, backoff = BACKOFF): ClientCredentialsSource {
    const credentials = new ClientCredentialsSource(
        {
            tokenUrl: endpoint.url,
            clientId: 'gateway',
            clientSecret: 's3cret value&more',
            clientAuth: 'basic',
            scope: 'a b',
            resource: 'https://mcp.example/mcp',
            timeoutMs: 2000,
            ...request
        },
        () => backoff
    );
    t.after(() => credentials.close());
    return credentials;
}

/** Resolves once `predicate` holds (checked every 20 ms), failing the test after 10 s. */
async function until(predicate: () => boolean | Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!(await predicate())) {
        assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
        await new Promise(resolve => setTimeout(resolve, 20));
    }
}

async function failure(promise: Promise<unknown>): Promise<string> {
    const error = await promise.then(
        () => assert.fail('expected the token request to fail'),
        (caught: unknown) => caught
    );
    assert.ok(error instanceof TokenRequestError, String(error));
    return error.message;
}

describe('the token request', () => {
    test('client_secret_basic: form-encoded id and secret in Basic, grant, scope and resource in the form', async t => {
        let seen: { headers: IncomingMessage['headers']; form: URLSearchParams } | undefined;
        const endpoint = await tokenEndpoint(t, (request, res) => {
            seen = request;
            grant()(request, res);
        });
        assert.match(await source(t, endpoint).authorization(), /^Bearer token-\d+$/);
        const basic = Buffer.from(String(seen!.headers.authorization).slice('Basic '.length), 'base64').toString('utf8');
        assert.equal(basic, 'gateway:s3cret+value%26more');
        assert.deepEqual(Object.fromEntries(seen!.form), { grant_type: 'client_credentials', scope: 'a b', resource: 'https://mcp.example/mcp' });
        assert.equal(seen!.headers['content-type'], 'application/x-www-form-urlencoded');
    });

    test('client_secret_post: id and secret in the form, no Authorization; no resource when none is set', async t => {
        let seen: { headers: IncomingMessage['headers']; form: URLSearchParams } | undefined;
        const endpoint = await tokenEndpoint(t, (request, res) => {
            seen = request;
            grant()(request, res);
        });
        await source(t, endpoint, { clientAuth: 'post', resource: undefined, scope: undefined }).authorization();
        assert.equal(seen!.headers.authorization, undefined);
        assert.deepEqual(Object.fromEntries(seen!.form), { grant_type: 'client_credentials', client_id: 'gateway', client_secret: 's3cret value&more' });
    });

    const refused: [string, Answer, string][] = [
        [
            'an error status, with its RFC 6749 code',
            json(401, { error: 'invalid_client', error_description: 'secret s3cret' }),
            'token endpoint answered HTTP 401 (invalid_client)'
        ],
        ['an error code that is no RFC 6749 word is not repeated', json(400, { error: 'bad <secret> here' }), 'token endpoint answered HTTP 400'],
        ['a redirect is not followed', (_r, res) => void res.writeHead(302, { location: 'http://127.0.0.1:1/' }).end(), 'token endpoint answered HTTP 302'],
        ['not JSON', (_r, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('access_token=x'), 'token response invalid (not JSON)'],
        ['another media type', (_r, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('{}'), 'token response invalid (not application/json)'],
        ['an array', json(200, []), 'token response invalid (not a JSON object)'],
        ['no access_token', json(200, { token_type: 'Bearer' }), 'token response invalid (no usable access_token)'],
        ['an access_token with a space', json(200, { access_token: 'a b', token_type: 'Bearer' }), 'token response invalid (no usable access_token)'],
        ['another token type', json(200, { access_token: 'abc', token_type: 'DPoP' }), 'token response invalid (token_type is not Bearer)'],
        ['no token type', json(200, { access_token: 'abc' }), 'token response invalid (token_type is not Bearer)'],
        [
            'a negative expires_in',
            json(200, { access_token: 'abc', token_type: 'bearer', expires_in: -5 }),
            'token response invalid (expires_in is not a positive number of seconds)'
        ],
        ['a body over 64 KiB', json(200, { access_token: 'abc', token_type: 'Bearer', pad: 'x'.repeat(70_000) }), 'token response invalid (larger than 65536 bytes)']
    ];
    for (const [what, answer, reason] of refused) {
        test(`refused: ${what}`, async t => {
            const endpoint = await tokenEndpoint(t, answer);
            assert.equal(await failure(source(t, endpoint).authorization()), reason);
        });
    }

    test('an endpoint that does not answer in time, and one that is not there', async t => {
        const endpoint = await tokenEndpoint(t, () => {});
        assert.equal(await failure(source(t, endpoint, { timeoutMs: 300 }).authorization()), 'token endpoint timed out after 300 ms');
        const gone = { ...endpoint, url: new URL('http://127.0.0.1:1/token') };
        assert.equal(await failure(source(t, gone).authorization()), 'token endpoint unreachable (ECONNREFUSED)');
    });

    test('expires_in as a string of digits is taken', async t => {
        const endpoint = await tokenEndpoint(t, grant({ expires_in: '3600' }));
        assert.match(await source(t, endpoint).authorization(), /^Bearer token-/);
    });
});

describe('the token source', () => {
    test('one token request for many waiters, and the token is reused', async t => {
        const endpoint = await tokenEndpoint(t, grant({ expires_in: 3600 }));
        const credentials = source(t, endpoint);
        const values = await Promise.all(Array.from({ length: 20 }, () => credentials.authorization()));
        assert.equal(new Set(values).size, 1);
        assert.equal(await credentials.authorization(), values[0]);
        assert.equal(endpoint.requests, 1);
    });

    test('after a failure, requests fail at once with the same reason until the backoff ends', async t => {
        const endpoint = await tokenEndpoint(t, json(503, {}));
        const credentials = source(t, endpoint, {}, { initialMs: 200, maxMs: 200 });
        assert.equal(await failure(credentials.authorization()), 'token endpoint answered HTTP 503');
        assert.equal(await failure(credentials.authorization()), 'token endpoint answered HTTP 503');
        assert.equal(endpoint.requests, 1, 'no second request during the backoff');
        endpoint.answer = grant();
        // Past the longest backoff (200 ms), the next request asks again.
        await new Promise(resolve => setTimeout(resolve, 250));
        assert.match(await credentials.authorization(), /^Bearer token-/);
        assert.equal(endpoint.requests, 2);
    });

    test('a 401: renewed once, shared by every request refused with the same token; a new token refused at once is not renewed before a backoff', async t => {
        const endpoint = await tokenEndpoint(t, grant());
        const credentials = source(t, endpoint);
        const first = await credentials.authorization();
        assert.ok(credentials.mayRenew(first));
        const renewed = await Promise.all([credentials.renew(first), credentials.renew(first), credentials.renew(first)]);
        assert.equal(new Set(renewed).size, 1);
        assert.notEqual(renewed[0], first);
        assert.equal(endpoint.requests, 2);
        // The renewed token refused too, before the upstream took any: the brake holds (60 s backoff here).
        assert.equal(credentials.mayRenew(renewed[0]), false);
        // A request refused with the old token still goes again, with the new one.
        assert.ok(credentials.mayRenew(first));
        // Once the upstream takes the new token, a later 401 is renewed again.
        credentials.accepted(renewed[0]);
        assert.ok(credentials.mayRenew(renewed[0]));
    });

    test('renewed ahead of expiry in the background; the held token is served meanwhile', async t => {
        const endpoint = await tokenEndpoint(t, grant({ expires_in: 2 }));
        const credentials = source(t, endpoint);
        const first = await credentials.authorization();
        // The renewal (at 1 s of 2) is held back until the test has asked for a token meanwhile.
        let release: (() => void) | undefined;
        endpoint.answer = (request, res) => (release = () => grant({ expires_in: 2 })(request, res));
        await once(endpoint.events, 'request');
        assert.equal(await credentials.authorization(), first, 'the held token while its renewal runs');
        release!();
        await until(async () => (await credentials.authorization()) !== first, 'the renewed token');
        assert.equal(endpoint.requests, 2);
    });

    test('a token of 90 days is not renewed over and over: its renewal waits beyond what one timer can hold', async t => {
        // setTimeout fires a delay over 2^31-1 ms (24.8 days) after 1 ms, with a TimeoutOverflowWarning.
        const overflows: Error[] = [];
        const onWarning = (warning: Error) => void (warning.name === 'TimeoutOverflowWarning' && overflows.push(warning));
        process.on('warning', onWarning);
        t.after(() => process.off('warning', onWarning));
        const longLived = await tokenEndpoint(t, grant({ expires_in: 90 * 86_400 }));
        await source(t, longLived).authorization();
        // The window: until a 1 s token held by another source has been renewed (at 0.5 s), an event rather than a sleep.
        const shortLived = await tokenEndpoint(t, grant({ expires_in: 1 }));
        await source(t, shortLived).authorization();
        await once(shortLived.events, 'request');
        assert.equal(longLived.requests, 1, 'one token request for a token that lives 90 days');
        assert.deepEqual(
            overflows.map(warning => warning.message),
            []
        );
    });

    test('a token of 90 days is still renewed, at 72 days: the capped waits add up (mock clock)', async t => {
        const endpoint = await tokenEndpoint(t, grant({ expires_in: 90 * 86_400 }));
        // The mock clock cannot show the overflow (its setTimeout takes any delay), only that the renewal comes.
        t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.now() });
        await source(t, endpoint).authorization();
        const lifetimeMs = 90 * 86_400_000;
        const maxTimerMs = 2 ** 31 - 1;
        t.mock.timers.tick(maxTimerMs);
        t.mock.timers.tick(maxTimerMs);
        t.mock.timers.tick(lifetimeMs - refreshLead(lifetimeMs) - 2 * maxTimerMs);
        await once(endpoint.events, 'request');
        assert.equal(endpoint.requests, 2);
    });

    test('closing aborts a token request under way', async t => {
        const endpoint = await tokenEndpoint(t, () => {});
        const credentials = source(t, endpoint);
        const arrived = once(endpoint.events, 'request');
        const waiting = credentials.authorization();
        await arrived;
        credentials.close();
        await assert.rejects(waiting, (error: Error) => error.name === 'AbortError');
    });

    test('a waiter whose signal aborts stops waiting; the request goes on for the others', async t => {
        let answer: (() => void) | undefined;
        const endpoint = await tokenEndpoint(t, (request, res) => {
            answer = () => grant()(request, res);
        });
        const credentials = source(t, endpoint);
        const arrived = once(endpoint.events, 'request');
        const patient = credentials.authorization();
        const impatient = new AbortController();
        const leaving = credentials.authorization(impatient.signal);
        impatient.abort();
        await assert.rejects(leaving, (error: Error) => error.name === 'AbortError');
        await arrived;
        answer!();
        assert.match(await patient, /^Bearer token-/);
        assert.equal(endpoint.requests, 1);
    });
});

test('the default resource is the upstream\'s URL in canonical form: no lone "/", fragment, query or credentials', async t => {
    const sent: (string | null)[] = [];
    const endpoint = await tokenEndpoint(t, (request, res) => {
        sent.push(request.form.get('resource'));
        grant()(request, res);
    });
    const cases: [url: string, resource: string][] = [
        ['https://mcp.example.com', 'https://mcp.example.com'],
        ['https://MCP.example.com:443/', 'https://mcp.example.com'],
        ['https://mcp.example.com/mcp?api_key=${API_KEY}#part', 'https://mcp.example.com/mcp'],
        ['https://mcp.example.com/?api_key=${API_KEY}', 'https://mcp.example.com'],
        ['https://mcp.example.com/mcp/', 'https://mcp.example.com/mcp/'],
        ['http://127.0.0.1:8123/sse', 'http://127.0.0.1:8123/sse']
    ];
    for (const [url, resource] of cases) {
        const auth = { type: 'clientCredentials', tokenUrl: endpoint.url.href, clientId: 'gateway', clientSecret: 'secret' };
        const config = parseConfig(JSON.stringify({ upstreams: [{ id: 'web', transport: 'streamable-http', url, auth }] }), 'test', { API_KEY: 'key-0123456789' });
        const upstream = config.upstreams[0]!;
        assert.ok(upstream.transport !== 'stdio' && upstream.transport !== 'files');
        const credentials = upstreamCredentials(upstream, () => BACKOFF)!;
        t.after(() => credentials.close());
        await credentials.authorization();
        assert.equal(sent.at(-1), resource, url);
    }
});

test('refreshLead: 80% of the life or 60 s before the end, whichever first, never before half of it', () => {
    assert.equal(refreshLead(3_600_000), 720_000);
    assert.equal(refreshLead(120_000), 60_000);
    assert.equal(refreshLead(60_000), 30_000);
    assert.equal(refreshLead(4000), 2000);
});
