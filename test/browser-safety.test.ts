/**
 * Browser-facing safety over real HTTP: Origin and Host checks (DNS rebinding),
 * no CORS unless configured and exactly the configured CORS when it is, the
 * loopback default bind, unauthenticated health endpoints, 401s without
 * secrets, and log hygiene (no keys, secrets, environment values or stack
 * traces in any log line, even at debug level).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { parseConfig } from '../src/config/load.js';
import type { RunningGateway } from '../src/gateway.js';
import { createLogger } from '../src/diagnostics/logger.js';
import { capturingLogger, connectHttp, fixtureStats, freePort, getJson, rpcError, startHttpFixture, startTestGateway, stdioFixture, type HttpFixture } from './helpers.js';
import { deleteSession, getStream, initializeBody, openRawSession, post, sessionHeaders } from './raw-http.js';

const KEY = 'browser-key-0123456789abcdef';
const OTHER_KEY = 'other-client-key-0123456789abcdef';
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const APP_ORIGIN = 'https://app.example.com';

/** A prompts/get the upstream counts (its `stats` prompt is not counted). */
const GET_PROMPT = { jsonrpc: '2.0', id: 2, method: 'prompts/get', params: { name: 'up__prompt-000' } };

/** Every Access-Control-* header of a response. */
function corsHeaders(response: Response): Record<string, string> {
    return Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));
}

function headerList(value: string | null): string[] {
    return (value ?? '').split(',').map(part => part.trim().toLowerCase());
}

/** A request with a chosen Host header (fetch does not let a caller set Host), over HTTP/1.1 by hand. */
async function withHost(url: string, host: string | undefined, extra: Record<string, string> = {}): Promise<{ status: number; text: string }> {
    const { port, pathname } = new URL(url);
    const body = JSON.stringify(initializeBody());
    const headers = {
        ...(host === undefined ? {} : { Host: host }),
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Content-Length': String(Buffer.byteLength(body)),
        Connection: 'close',
        ...extra
    };
    // Without a Host header HTTP/1.1 is invalid (Node answers 400 itself), so that case is HTTP/1.0.
    const version = host === undefined ? 'HTTP/1.0' : 'HTTP/1.1';
    return new Promise((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
            socket.write(
                `POST ${pathname} ${version}\r\n${Object.entries(headers)
                    .map(([name, value]) => `${name}: ${value}\r\n`)
                    .join('')}\r\n${body}`
            );
        });
        let text = '';
        const done = () => resolve({ status: Number(/^HTTP\/1\.[01] (\d+)/.exec(text)?.[1]), text });
        socket.on('data', chunk => {
            text += chunk.toString();
            // The SDK answers "connection: keep-alive" even to "Connection: close": stop at the end of the body.
            const split = text.indexOf('\r\n\r\n');
            const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, split))?.[1];
            if (split >= 0 && length !== undefined && Buffer.byteLength(text.slice(split + 4)) >= Number(length)) {
                socket.destroy();
                done();
            }
        });
        socket.on('end', done);
        socket.on('error', reject);
    });
}

describe('browser safety, defaults (loopback bind, no CORS configured)', () => {
    let gateway: RunningGateway;
    let client: Client;

    before(async () => {
        gateway = await startTestGateway({
            auth: { mode: 'apiKey' },
            clients: [
                { id: 'browser', apiKey: KEY },
                { id: 'other', apiKey: OTHER_KEY }
            ],
            upstreams: [stdioFixture('up', { prompts: 1 })]
        });
        client = await connectHttp(gateway.url!, { headers: bearer(KEY) });
    });

    after(async () => {
        await client?.close();
        await gateway?.close();
    });

    const gets = async () => (await fixtureStats(client, 'up__stats')).requests.get;

    test('the gateway binds 127.0.0.1 unless told otherwise', async () => {
        const parsed = parseConfig(JSON.stringify({ upstreams: [stdioFixture('up')] }), 'test', {});
        assert.equal(parsed.listen.host, '127.0.0.1');
        assert.equal(parsed.listen.cors, undefined, 'no CORS by default');
        assert.equal(parsed.listen.allowedOrigins, undefined, 'the localhost default applies');
        assert.match(gateway.url!, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
        // Not reachable on another interface of this machine (when it has one).
        const external = Object.values(networkInterfaces())
            .flat()
            .find(address => address !== undefined && !address.internal && address.family === 'IPv4');
        if (external !== undefined) {
            const port = new URL(gateway.url!).port;
            await assert.rejects(fetch(`http://${external.address}:${port}/healthz`, { signal: AbortSignal.timeout(5000) }));
        }
    });

    test('Origin http://evil.example is 403 before anything is processed', async () => {
        const evil = { origin: 'http://evil.example' };
        // No session is created...
        const init = await post(gateway.url!, initializeBody(), { ...bearer(KEY), ...evil });
        assert.equal(init.status, 403);
        assert.equal(init.headers.get('mcp-session-id'), null);
        const body = (await init.json()) as { jsonrpc: string; error: { code: number; message: string } };
        assert.equal(body.jsonrpc, '2.0');
        assert.equal(body.error.code, -32000);
        assert.deepEqual(corsHeaders(init), {});

        // ...and in an existing session nothing reaches the upstream, nor is the session ended or streamed.
        const { headers: session } = await openRawSession(gateway.url!, '2025-06-18', bearer(KEY));
        const before = await gets();
        for (const origin of ['http://evil.example', 'https://evil.example:443', 'http://localhost.evil.example', 'http://127.0.0.1.nip.io', 'null', 'not a url']) {
            const refused = await post(gateway.url!, GET_PROMPT, { ...session, origin });
            assert.equal(refused.status, 403, origin);
            await refused.body?.cancel();
        }
        const stream = await getStream(gateway.url!, { ...session, ...evil });
        assert.equal(stream.status, 403);
        await stream.body?.cancel();
        const deleted = await deleteSession(gateway.url!, { ...session, ...evil });
        assert.equal(deleted.status, 403);
        await deleted.body?.cancel();
        assert.equal(await gets(), before, 'nothing reached the upstream');
        // Without credentials too: the Origin check comes first, so a page cannot even probe keys.
        const probe = await post(gateway.url!, initializeBody(), evil);
        assert.equal(probe.status, 403);
        await probe.body?.cancel();

        // The session survived the foreign DELETE.
        const ok = await post(gateway.url!, GET_PROMPT, session);
        assert.equal(ok.status, 200);
        assert.match(await ok.text(), /This is prompt-000/);
        assert.equal(await gets(), before + 1);
    });

    test('localhost origins are accepted, and requests without Origin (MCP clients) pass', async () => {
        for (const origin of ['http://localhost:3000', 'http://127.0.0.1:5173', 'https://localhost', 'http://[::1]:8080']) {
            const response = await post(gateway.url!, initializeBody(), { ...bearer(KEY), origin });
            assert.equal(response.status, 200, origin);
            assert.deepEqual(corsHeaders(response), {}, 'allowed, but still no CORS headers');
            const id = response.headers.get('mcp-session-id');
            await response.body?.cancel();
            const deleted = await deleteSession(gateway.url!, { ...bearer(KEY), origin, ...sessionHeaders(id!, '2025-06-18') });
            assert.equal(deleted.status, 200);
        }
        const result = await client.getPrompt({ name: 'up__prompt-000' });
        assert.equal(result.messages.length, 1);
    });

    test('a Host header that is not a loopback name is 403 (DNS rebinding); loopback names pass, any port', async () => {
        for (const host of ['evil.example', 'evil.example:80', '127.0.0.1.evil.example', '10.0.0.1', 'localhost.', '[::2]']) {
            const { status, text } = await withHost(gateway.url!, host, bearer(KEY));
            assert.equal(status, 403, `${host}: ${text}`);
            assert.match(text, /"jsonrpc":"2.0"/);
        }
        assert.equal((await withHost(gateway.url!, undefined, bearer(KEY))).status, 403, 'no Host header at all');
        for (const host of ['localhost', 'localhost:1234', '127.0.0.1', '[::1]:9']) {
            const { status } = await withHost(gateway.url!, host, bearer(KEY));
            assert.equal(status, 200, host);
        }
        // /healthz is behind the same check.
        const { port } = new URL(gateway.url!);
        const health = await new Promise<string>((resolve, reject) => {
            const socket = connect(Number(port), '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n'));
            let text = '';
            socket.on('data', chunk => (text += chunk.toString()));
            socket.on('end', () => resolve(text));
            socket.on('error', reject);
        });
        assert.match(health, /^HTTP\/1\.1 403/);
    });

    test('no Access-Control-* headers by default, on preflights and on answers', async () => {
        for (const origin of ['http://localhost:3000', 'http://evil.example', APP_ORIGIN]) {
            const preflight = await fetch(gateway.url!, {
                method: 'OPTIONS',
                headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-session-id' }
            });
            await preflight.body?.cancel();
            assert.deepEqual(corsHeaders(preflight), {}, `preflight from ${origin}`);
            assert.notEqual(preflight.status, 500);
        }
        const answer = await post(gateway.url!, initializeBody(), { ...bearer(KEY), origin: 'http://localhost:3000' });
        assert.deepEqual(corsHeaders(answer), {});
        await answer.body?.cancel();
        const unauthorized = await post(gateway.url!, initializeBody(), { origin: 'http://localhost:3000' });
        assert.equal(unauthorized.status, 401);
        assert.deepEqual(corsHeaders(unauthorized), {});
        await unauthorized.body?.cancel();
    });

    test('/healthz and /readyz answer without credentials (by design: for load balancers) and hold no secrets', async () => {
        for (const path of ['/healthz', '/readyz']) {
            const { status, body } = await getJson(new URL(path, gateway.url).href);
            assert.equal(status, 200, path);
            const text = JSON.stringify(body);
            assert.ok(!text.includes(KEY) && !text.includes(OTHER_KEY), path);
            assert.doesNotMatch(text, /apiKey|sha256|authorization/i, path);
        }
    });

    test('401 answers carry a Bearer challenge and nothing secret; nothing reaches the upstream', async () => {
        const before = await gets();
        const attempts: Record<string, string>[] = [
            {},
            { authorization: `Basic ${Buffer.from(`user:${KEY}`).toString('base64')}` },
            { authorization: `Bearer ${KEY}x` },
            { authorization: `Bearer ${KEY.slice(0, -1)}` },
            { authorization: 'Bearer ' },
            { authorization: `bearer  ${'A'.repeat(5000)}` },
            { 'x-api-key': 'wrong-key-0123456789abcdef' }
        ];
        for (const headers of attempts) {
            const response = await post(gateway.url!, GET_PROMPT, headers);
            const text = await response.text();
            assert.equal(response.status, 401, JSON.stringify(headers).slice(0, 80));
            assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="mcp-prompt-gateway"/);
            const body = JSON.parse(text) as { jsonrpc: string; id: null; error: { code: number; message: string } };
            assert.equal(body.jsonrpc, '2.0');
            assert.equal(body.id, null);
            assert.match(body.error.message, /^Unauthorized: (credentials required|invalid credentials)$/);
            const everything = text + JSON.stringify([...response.headers]);
            for (const secret of [KEY, OTHER_KEY, 'wrong-key', 'AAAAAAAAAA', 'sha256']) assert.ok(!everything.includes(secret), secret);
        }
        assert.equal(await gets(), before);
    });
});

describe('browser safety with listen.cors and listen.allowedOrigins', () => {
    let gateway: RunningGateway;

    before(async () => {
        gateway = await startTestGateway({
            listen: { port: 0, allowedOrigins: ['tool.internal'], cors: { origins: [APP_ORIGIN], maxAgeSec: 120 } },
            auth: { mode: 'apiKey' },
            clients: [{ id: 'browser', apiKey: KEY }],
            upstreams: [stdioFixture('up', { prompts: 1 })]
        });
    });

    after(async () => {
        await gateway?.close();
    });

    test('a preflight from the configured origin gets the allow headers', async () => {
        const preflight = await fetch(gateway.url!, {
            method: 'OPTIONS',
            headers: {
                origin: APP_ORIGIN,
                'access-control-request-method': 'POST',
                'access-control-request-headers':
                    'authorization, content-type, mcp-session-id, mcp-protocol-version, mcp-method, mcp-name, Mcp-Param-Region, mcp-param-' + 'x'.repeat(65)
            }
        });
        await preflight.body?.cancel();
        assert.ok(preflight.status === 204 || preflight.status === 200, String(preflight.status));
        assert.equal(preflight.headers.get('access-control-allow-origin'), APP_ORIGIN);
        assert.equal(preflight.headers.get('access-control-allow-credentials'), null, 'no cookies: credentials are headers');
        const allowed = headerList(preflight.headers.get('access-control-allow-headers'));
        // The 2026-07-28 mirrored headers too: Mcp-Param-* by the names asked for, as no prefix can be listed.
        for (const header of ['authorization', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'mcp-param-region']) {
            assert.ok(allowed.includes(header), header);
        }
        assert.ok(!allowed.includes('mcp-param-' + 'x'.repeat(65)), 'names are bounded');
        assert.match(preflight.headers.get('vary') ?? '', /access-control-request-headers/i);
        const methods = headerList(preflight.headers.get('access-control-allow-methods'));
        for (const method of ['get', 'post', 'delete']) assert.ok(methods.includes(method), method);
        assert.equal(preflight.headers.get('access-control-max-age'), '120');
        assert.match(preflight.headers.get('vary') ?? '', /origin/i);
    });

    test('a POST from the configured origin works and carries Access-Control-Allow-Origin and the exposed headers', async () => {
        const response = await post(gateway.url!, initializeBody(), { ...bearer(KEY), origin: APP_ORIGIN });
        assert.equal(response.status, 200);
        await response.body?.cancel();
        assert.equal(response.headers.get('access-control-allow-origin'), APP_ORIGIN);
        const exposed = headerList(response.headers.get('access-control-expose-headers'));
        assert.ok(exposed.includes('mcp-session-id'), String(exposed));
        assert.ok(exposed.includes('x-request-id'), String(exposed));
        const session = { ...bearer(KEY), origin: APP_ORIGIN, ...sessionHeaders(response.headers.get('mcp-session-id')!, '2025-06-18') };
        assert.equal((await post(gateway.url!, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status, 202);
        const got = await post(gateway.url!, GET_PROMPT, session);
        assert.equal(got.status, 200);
        assert.equal(got.headers.get('access-control-allow-origin'), APP_ORIGIN);
        assert.match(await got.text(), /This is prompt-000/);
        // A 401 is readable by the page too (the CORS headers come before authentication), with its challenge exposed.
        const unauthorized = await post(gateway.url!, initializeBody(), { origin: APP_ORIGIN });
        await unauthorized.body?.cancel();
        assert.equal(unauthorized.status, 401);
        assert.equal(unauthorized.headers.get('access-control-allow-origin'), APP_ORIGIN);
        assert.ok(headerList(unauthorized.headers.get('access-control-expose-headers')).includes('www-authenticate'));
        const deleted = await deleteSession(gateway.url!, session);
        assert.equal(deleted.status, 200);
        await deleted.body?.cancel();
    });

    const OTHER_ORIGINS = ['https://evil.example', 'http://app.example.com', 'https://app.example.com:8443', 'https://app.example.com.evil.example', 'null'];

    async function fromOrigin(origin: string): Promise<{ preflight: Response; response: Response }> {
        const preflight = await fetch(gateway.url!, {
            method: 'OPTIONS',
            headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' }
        });
        await preflight.body?.cancel();
        const response = await post(gateway.url!, initializeBody(), { ...bearer(KEY), origin });
        await response.body?.cancel();
        return { preflight, response };
    }

    test('another origin (also the same host over http or on another port) gets 403 and no Access-Control-Allow-Origin', async () => {
        for (const origin of OTHER_ORIGINS) {
            const { preflight, response } = await fromOrigin(origin);
            assert.equal(preflight.headers.get('access-control-allow-origin'), null, `preflight from ${origin}`);
            assert.equal(preflight.headers.get('access-control-allow-credentials'), null, `preflight from ${origin}`);
            assert.equal(response.status, 403, origin);
            assert.equal(response.headers.get('access-control-allow-origin'), null, origin);
            assert.equal(response.headers.get('mcp-session-id'), null, origin);
        }
    });

    test('another origin gets no CORS headers at all, and its preflight is refused (403) like its requests', async () => {
        for (const origin of OTHER_ORIGINS) {
            const { preflight, response } = await fromOrigin(origin);
            assert.deepEqual(corsHeaders(preflight), {}, `preflight from ${origin}`);
            assert.equal(preflight.status, 403, `preflight from ${origin}`);
            assert.deepEqual(corsHeaders(response), {}, `POST from ${origin}`);
        }
    });

    test('listen.allowedOrigins replaces the localhost default: listed hostnames pass (without CORS headers), localhost no longer does', async () => {
        const listed = await post(gateway.url!, initializeBody(), { ...bearer(KEY), origin: 'http://tool.internal:9000' });
        assert.equal(listed.status, 200);
        assert.equal(listed.headers.get('access-control-allow-origin'), null);
        const id = listed.headers.get('mcp-session-id')!;
        await listed.body?.cancel();
        const localhost = await post(gateway.url!, initializeBody(), { ...bearer(KEY), origin: 'http://localhost:3000' });
        assert.equal(localhost.status, 403);
        await localhost.body?.cancel();
        const deleted = await deleteSession(gateway.url!, { ...bearer(KEY), 'mcp-session-id': id });
        assert.equal(deleted.status, 200);
        await deleted.body?.cancel();
    });
});

describe('log hygiene', () => {
    const ENV_SECRET = 'env-secret-value-7f3a9c';
    const UPSTREAM_SECRET = 'upstream-token-51b0e2d4';
    const DOWN_SECRET = 'down-upstream-token-9c1d';
    const WRONG_KEY = 'wrong-key-deadbeef0123456789';
    let gateway: RunningGateway;
    let http: HttpFixture;
    const { logger, lines } = capturingLogger();

    before(async () => {
        http = await startHttpFixture('streamable-http', { name: 'remote', prompts: 1 });
        const closedPort = await freePort();
        gateway = await startTestGateway(
            {
                auth: { mode: 'apiKey' },
                clients: [
                    { id: 'browser', apiKey: KEY },
                    { id: 'other', apiKey: OTHER_KEY }
                ],
                limits: { maxBodyBytes: 4096 },
                reconnect: { initialMs: 100, maxMs: 200 },
                upstreams: [
                    stdioFixture('up', { prompts: 1 }, { env: { FIXTURE_TOKEN: ENV_SECRET } }),
                    { id: 'remote', transport: 'streamable-http', url: http.url, headers: { Authorization: `Bearer ${UPSTREAM_SECRET}` } },
                    {
                        id: 'down',
                        transport: 'streamable-http',
                        url: `http://127.0.0.1:${closedPort}/mcp`,
                        headers: { Authorization: `Bearer ${DOWN_SECRET}`, 'X-Token': DOWN_SECRET }
                    }
                ]
            },
            logger
        );
    });

    after(async () => {
        await gateway?.close();
        await http?.close();
    });

    test('no log line holds API keys, upstream header or env values, the upstream error text, or a stack trace', async () => {
        const client = await connectHttp(gateway.url!, { headers: bearer(KEY) });
        try {
            await client.getPrompt({ name: 'remote__prompt-000' });
            const failed = await rpcError(client.getPrompt({ name: 'up__fail-internal' }));
            assert.equal(failed.code, -32603);
            assert.doesNotMatch(failed.message, /s3cr3t|\/srv\/secret|boom/);
        } finally {
            await client.close();
        }
        const sends: [Record<string, string>, unknown][] = [
            [{ authorization: `Bearer ${WRONG_KEY}` }, initializeBody()],
            [{ 'x-api-key': WRONG_KEY }, initializeBody()],
            [{ authorization: `Basic ${Buffer.from(`u:${WRONG_KEY}`).toString('base64')}` }, initializeBody()],
            [{ authorization: `Bearer ${OTHER_KEY}`, cookie: `session=${WRONG_KEY}` }, initializeBody()],
            [{ authorization: `Bearer ${KEY}` }, '{"jsonrpc": "2.0", "broken'],
            [{ authorization: `Bearer ${KEY}` }, { ...initializeBody(), pad: `${WRONG_KEY}${'x'.repeat(5000)}` }],
            [
                { authorization: `Bearer ${KEY}`, 'mcp-session-id': WRONG_KEY },
                { jsonrpc: '2.0', id: 1, method: 'prompts/list' }
            ],
            [{ authorization: `Bearer ${KEY}`, origin: `http://${WRONG_KEY}.example` }, initializeBody()]
        ];
        for (const [headers, body] of sends) {
            const response = await post(gateway.url!, body, headers);
            const text = await response.text();
            assert.ok(!text.includes(KEY) && !text.includes(OTHER_KEY), text);
        }
        // The down upstream has tried to connect (and failed) at least once, so its errors are in the log.
        const health = await getJson(new URL('/healthz', gateway.url).href);
        const healthText = JSON.stringify(health.body);
        for (const secret of [DOWN_SECRET, UPSTREAM_SECRET, ENV_SECRET, 's3cr3t', '/srv/secret']) assert.ok(!healthText.includes(secret), `healthz: ${secret}`);

        const all = lines();
        // The test is not vacuous: the failures above were logged, at debug level.
        assert.ok(
            all.some(line => line.msg === 'authentication failed'),
            'authentication failures are logged'
        );
        assert.ok(
            all.some(line => line.upstream === 'down' && /^upstream down/.test(String(line.msg))),
            'the unreachable upstream is logged'
        );
        assert.ok(
            all.some(line => line.upstream === 'up' && line.fault === 'request_failed'),
            'the failing prompt is logged'
        );
        for (const line of all) {
            const text = JSON.stringify(line);
            for (const secret of [KEY, OTHER_KEY, WRONG_KEY, Buffer.from(`u:${WRONG_KEY}`).toString('base64'), ENV_SECRET, UPSTREAM_SECRET, DOWN_SECRET, 's3cr3t', '/srv/secret']) {
                assert.ok(!text.includes(secret), `log line holds ${secret}: ${text}`);
            }
            assert.equal(line.stack, undefined, text);
            assert.doesNotMatch(text, /\\n\s*at |\bat \S+ \([^)]*:\d+:\d+\)/, `stack trace in: ${text}`);
        }
    });

    test('the production logger redacts authorization, x-api-key, cookie headers and env wherever they are logged whole', () => {
        const chunks: string[] = [];
        const sink = new Writable({
            write(chunk: Buffer, _encoding, callback) {
                chunks.push(chunk.toString());
                callback();
            }
        });
        const previous = process.env.LOG_LEVEL;
        delete process.env.LOG_LEVEL;
        try {
            const log = createLogger({ level: 'debug', destination: sink });
            const headers = { authorization: `Bearer ${KEY}`, 'x-api-key': OTHER_KEY, cookie: `c=${WRONG_KEY}`, accept: 'text/plain' };
            log.info({ headers }, 'a');
            log.info({ req: { headers } }, 'b');
            log.info({ upstream: { headers, env: { FIXTURE_TOKEN: ENV_SECRET } } }, 'c');
            log.info({ env: { FIXTURE_TOKEN: ENV_SECRET } }, 'd');
            log.flush();
        } finally {
            if (previous !== undefined) process.env.LOG_LEVEL = previous;
        }
        const text = chunks.join('');
        assert.equal(text.split('\n').filter(line => line !== '').length, 4);
        for (const secret of [KEY, OTHER_KEY, WRONG_KEY, ENV_SECRET]) assert.ok(!text.includes(secret), secret);
        assert.match(text, /text\/plain/, 'other headers stay');
    });
});
