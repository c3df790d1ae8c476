/**
 * The prompt catalog page over real HTTP, no browser (test/catalog.test.ts drives the page itself): its headers, the
 * values it is given, its files, how its paths route, the Host and Origin checks it shares with /mcp, the same-origin
 * rule that lets it call /mcp where listen.allowedOrigins does not list the gateway, and where it is (not) served.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { parseConfig } from '../src/config/load.js';
import type { RunningGateway } from '../src/gateway.js';
import { closeAfter, startTestGateway } from './helpers.js';
import { initializeBody, post } from './raw-http.js';

const CURSOR_SECRET = 'catalog-cursor-secret-0f3a9c2e7b';
const API_KEY = 'catalog-api-key-5d1e8b4a90c7f';
const METRICS_TOKEN = 'catalog-metrics-token-71c0a9e4';
/** Every character an HTML attribute needs escaped: the only config value given to the page that may hold them. */
const SEPARATOR = `"<&>'`;
/** Every script and style sheet of the page's folder, which the gateway serves without a list of them. */
const ASSETS: [string, string][] = readdirSync(new URL('../src/downstream/http/catalog-page/', import.meta.url))
    .filter(file => /\.(?:js|css)$/.test(file))
    .map(file => [file, file.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8']);
const PAGE_HEADERS = {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy':
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; media-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'",
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
    'cross-origin-opener-policy': 'same-origin'
};

let folder: string;

/** A prompt folder for the gateways of this file (a files upstream: no child process). */
before(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'catalog-http-'));
    await writeFile(path.join(folder, 'hello.md'), '---\ndescription: Says hello\n---\nHello');
});

after(async () => {
    await rm(folder, { recursive: true, force: true });
});

const team = () => ({ id: 'team', transport: 'files', path: folder });

async function startGateway(t: TestContext, config: Record<string, unknown> = {}): Promise<RunningGateway> {
    const gateway = await startTestGateway({ upstreams: [team()], ...config });
    closeAfter(t, () => gateway.close());
    return gateway;
}

/** The content of `<meta name="…">`, as written in the page (still escaped). */
function meta(html: string, name: string): string | undefined {
    return new RegExp(`<meta name="${name}" content="([^"]*)">`).exec(html)?.[1];
}

interface RawAnswer {
    status: number;
    body: string;
}

/** A request with a chosen Host header (fetch does not let a caller set Host), over HTTP/1.1 by hand. */
function withHost(url: string, host: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawAnswer> {
    const { port, pathname } = new URL(url);
    const lines = [`${method} ${pathname} HTTP/1.1`, `Host: ${host}`, 'Connection: close', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
    return new Promise((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
        // A gateway that never closes the connection fails the test instead of hanging it.
        socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${method} ${pathname} in 10 s`)));
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (text += chunk));
        socket.on('end', () => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) }));
        socket.on('error', reject);
    });
}

async function answer(url: string | URL, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: string }> {
    const response = await fetch(url, init);
    return { status: response.status, headers: response.headers, body: await response.text() };
}

/** Headers without those every answer carries (date, connection, request id). */
function pageHeaders(headers: Headers): Record<string, string> {
    const common = new Set(['date', 'connection', 'keep-alive', 'x-request-id', 'content-length']);
    return Object.fromEntries([...headers].filter(([name]) => !common.has(name)));
}

describe('the catalog page, served with defaults (auth off, loopback)', () => {
    let gateway: RunningGateway;
    let origin: string;

    before(async () => {
        gateway = await startTestGateway({ cursorSecret: CURSOR_SECRET, namespace: { separator: SEPARATOR }, upstreams: [team()] });
        origin = new URL(gateway.url!).origin;
    });

    after(async () => {
        await gateway?.close();
    });

    test('the page is told the most the gateway may send in one answer: a list page or a result, whichever is larger', async t => {
        const large = await startGateway(t, { limits: { maxResultBytes: 1_073_741_824 } });
        assert.equal(meta((await answer(large.catalogUrl!)).body, 'catalog-max-response-bytes'), String(1_073_741_824 + 1_048_576));
        const pages = await startGateway(t, { pagination: { pageSize: 1000 }, limits: { maxPromptBytes: 1_048_576 } });
        assert.equal(meta((await answer(pages.catalogUrl!)).body, 'catalog-max-response-bytes'), String(1000 * 1_048_576 + 1_048_576));
    });

    test('no password field for a password manager to offer to save: the credential is a text field masked by the style sheet', async () => {
        const { body } = await answer(gateway.catalogUrl!);
        assert.doesNotMatch(body, /type="password"/i);
        const field = /<input id="catalog-credential"[^>]*>/.exec(body)?.[0] ?? '';
        assert.match(field, /type="text"/);
        assert.match(field, /class="masked"/);
        assert.match(field, /autocomplete="off"/);
        const css = (await answer(`${gateway.catalogUrl}/catalog.css`)).body;
        assert.match(css, /\.masked \{ -webkit-text-security: disc; \}/);
    });

    test('RunningGateway.catalogUrl is the page on the MCP listener', () => {
        assert.equal(gateway.catalogUrl, `${origin}/catalog`);
    });

    test('the page has exactly its headers: a strict CSP with media-src data:, nosniff, no referrer, no caching, its own browsing context', async () => {
        const page = await answer(gateway.catalogUrl!);
        assert.equal(page.status, 200);
        assert.deepEqual(pageHeaders(page.headers), PAGE_HEADERS);
        assert.equal(page.headers.get('content-length'), String(Buffer.byteLength(page.body)));
    });

    test('its values are filled in, each escaped for an HTML attribute, and nothing else is left to fill', async () => {
        const { body } = await answer(gateway.catalogUrl!);
        assert.equal(meta(body, 'catalog-endpoint'), '/mcp');
        assert.equal(meta(body, 'catalog-auth'), 'none');
        assert.equal(meta(body, 'catalog-separator'), '&quot;&lt;&amp;&gt;&#39;');
        assert.equal(meta(body, 'catalog-server-name'), 'prompts');
        assert.match(meta(body, 'gateway-version') ?? '', /^\d+\.\d+\.\d+/);
        // The defaults: a result of up to 4 MiB (limits.maxResultBytes) beats a page of 50 prompts of up to 64 KiB; + 1 MiB.
        assert.equal(meta(body, 'catalog-max-response-bytes'), String(5 * 1_048_576));
        assert.ok(body.includes('src="/catalog/catalog.js"'), 'the script is loaded from below the page');
        assert.ok(body.includes('href="/catalog/catalog.css"'), 'the style sheet is loaded from below the page');
        assert.doesNotMatch(body, /\{\{\w+\}\}/, 'no placeholder left');
        assert.ok(!body.includes(SEPARATOR), 'the raw value never appears');
    });

    test('no secret of the config is in the page', async () => {
        const { body } = await answer(gateway.catalogUrl!);
        assert.ok(!body.includes(CURSOR_SECRET));
    });

    test('each file of the page with its content type, nosniff and revalidation; HEAD as GET without a body', async () => {
        for (const [file, type] of ASSETS) {
            const asset = await answer(`${gateway.catalogUrl}/${file}`);
            assert.equal(asset.status, 200, file);
            assert.equal(asset.headers.get('content-type'), type, file);
            assert.equal(asset.headers.get('x-content-type-options'), 'nosniff', file);
            assert.equal(asset.headers.get('cache-control'), 'no-cache', file);
            const head = await answer(`${gateway.catalogUrl}/${file}`, { method: 'HEAD' });
            assert.equal(head.status, 200, file);
            assert.equal(head.body, '', file);
            assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(asset.body)), file);
        }
        const head = await answer(gateway.catalogUrl!, { method: 'HEAD' });
        assert.equal(head.status, 200);
        assert.equal(head.body, '');
        assert.deepEqual(pageHeaders(head.headers), PAGE_HEADERS);
    });

    test('paths match as every other route does: in any case, with one trailing slash, not two', async () => {
        for (const pathname of ['/catalog/', '/CATALOG', '/Catalog/', '/catalog/CATALOG.JS', '/catalog/render.js/', '/catalog?x=1']) {
            assert.equal((await answer(new URL(pathname, origin))).status, 200, pathname);
        }
        const twoSlashes = await answer(new URL('/catalog//', origin));
        const healthTwoSlashes = await answer(new URL('/healthz//', origin));
        assert.equal(twoSlashes.status, 404);
        assert.equal(healthTwoSlashes.status, 404);
    });

    test('an unknown file below the page, and a POST to the page, are answered as for any other path', async () => {
        const unknownRoute = await answer(new URL('/no-such-route', origin));
        assert.equal(unknownRoute.status, 404);
        for (const pathname of ['/catalog/x.js', '/catalog/index.html', '/catalog/dashboard.js', '/catalog/../package.json']) {
            const unknown = await answer(new URL(pathname, origin));
            assert.deepEqual([unknown.status, unknown.body], [unknownRoute.status, unknownRoute.body], pathname);
        }
        const postToHealth = await answer(new URL('/healthz', origin), { method: 'POST' });
        const postToPage = await answer(gateway.catalogUrl!, { method: 'POST' });
        assert.deepEqual([postToPage.status, postToPage.body], [postToHealth.status, postToHealth.body]);
        assert.equal(postToPage.headers.get('content-security-policy'), null, 'not the page');
    });

    test('a foreign Host is refused on the page and on its files, as on /mcp (DNS rebinding)', async () => {
        const mcp = await withHost(gateway.url!, 'evil.example', { 'Content-Length': '0' }, 'POST');
        assert.equal(mcp.status, 403);
        for (const url of [gateway.catalogUrl!, `${gateway.catalogUrl}/catalog.js`, `${gateway.catalogUrl}/catalog.css`]) {
            const refused = await withHost(url, 'evil.example');
            assert.equal(refused.status, 403, url);
            assert.ok(!refused.body.includes('catalog-endpoint'), url);
        }
        assert.equal((await withHost(gateway.catalogUrl!, new URL(origin).host)).status, 200, 'the gateway’s own Host passes');
    });

    test('a foreign Origin is refused on the page; the page’s own origin passes', async () => {
        const foreign = await answer(gateway.catalogUrl!, { headers: { origin: 'http://evil.example' } });
        assert.equal(foreign.status, 403);
        assert.match(foreign.body, /Origin not allowed/);
        assert.equal((await answer(`${gateway.catalogUrl}/catalog.js`, { headers: { origin: 'http://evil.example' } })).status, 403);
        assert.equal((await answer(gateway.catalogUrl!, { headers: { origin } })).status, 200);
    });

    test('a reload that changes auth.mode shows on the next page load; one that changes catalog.* asks for a restart', async () => {
        // A reload sets the log level from the config: the test's stays.
        const config = { cursorSecret: CURSOR_SECRET, namespace: { separator: SEPARATOR }, log: { level: process.env.TEST_LOG_LEVEL ?? 'silent' }, upstreams: [team()] };
        const withAuth = { ...config, auth: { mode: 'apiKey' }, clients: [{ id: 'alice', apiKey: API_KEY }] };
        try {
            const result = await gateway.reload(parseConfig(JSON.stringify({ listen: { port: 0 }, ...withAuth }), 'test config', {}));
            assert.deepEqual(result.needRestart, []);
            const { body } = await answer(gateway.catalogUrl!);
            assert.equal(meta(body, 'catalog-auth'), 'apiKey');
            assert.ok(!body.includes(API_KEY), 'no key in the page');
            const moved = await gateway.reload(parseConfig(JSON.stringify({ listen: { port: 0 }, ...withAuth, catalog: { path: '/elsewhere' } }), 'test config', {}));
            assert.deepEqual(moved.needRestart, ['catalog']);
            assert.equal((await answer(gateway.catalogUrl!)).status, 200, 'still served where it was until a restart');
        } finally {
            await gateway.reload(parseConfig(JSON.stringify({ listen: { port: 0 }, ...config }), 'test config', {}));
        }
        assert.equal(meta((await answer(gateway.catalogUrl!)).body, 'catalog-auth'), 'none');
    });
});

describe('the catalog page, configured', () => {
    test('catalog.enabled false: the page and its files are 404, /mcp works, no catalogUrl', async t => {
        const gateway = await startGateway(t, { catalog: { enabled: false } });
        assert.equal(gateway.catalogUrl, undefined);
        const origin = new URL(gateway.url!).origin;
        for (const pathname of ['/catalog', '/catalog/catalog.js']) assert.equal((await answer(new URL(pathname, origin))).status, 404, pathname);
        const initialized = await post(gateway.url!, initializeBody());
        assert.equal(initialized.status, 200);
        await initialized.body?.cancel();
    });

    test('catalog.path elsewhere: served there (its files below it, the endpoint named in it), not at /catalog', async t => {
        const gateway = await startGateway(t, { listen: { port: 0, path: '/gateway/mcp' }, catalog: { path: '/prompts-ui/', serverName: 'team-prompts' } });
        const origin = new URL(gateway.url!).origin;
        assert.equal(gateway.catalogUrl, `${origin}/prompts-ui/`);
        const page = await answer(gateway.catalogUrl);
        assert.equal(page.status, 200);
        assert.equal(meta(page.body, 'catalog-endpoint'), '/gateway/mcp');
        assert.equal(meta(page.body, 'catalog-server-name'), 'team-prompts');
        assert.ok(page.body.includes('src="/prompts-ui/catalog.js"'));
        assert.equal((await answer(new URL('/prompts-ui', origin))).status, 200);
        assert.equal((await answer(new URL('/prompts-ui/catalog.js', origin))).status, 200);
        assert.equal((await answer(new URL('/catalog', origin))).status, 404);
        assert.equal((await answer(new URL('/catalog/catalog.js', origin))).status, 404);
    });

    test('auth on without metrics.bearerToken: the catalog is served (it holds no data), the dashboard is not', async t => {
        const gateway = await startGateway(t, { cursorSecret: CURSOR_SECRET, auth: { mode: 'apiKey' }, clients: [{ id: 'alice', apiKey: API_KEY }] });
        assert.equal(gateway.operatorUrls.dashboard, undefined);
        const origin = new URL(gateway.url!).origin;
        assert.equal((await answer(new URL('/dashboard', origin))).status, 404);
        const page = await answer(gateway.catalogUrl!);
        assert.equal(page.status, 200);
        assert.equal(meta(page.body, 'catalog-auth'), 'apiKey');
        assert.equal((await answer(`${gateway.catalogUrl}/catalog.js`)).status, 200);
        for (const secret of [API_KEY, CURSOR_SECRET]) assert.ok(!page.body.includes(secret));
        // The endpoint itself still asks for the key.
        const unauthorized = await post(gateway.url!, initializeBody());
        assert.equal(unauthorized.status, 401);
        await unauthorized.body?.cancel();
    });

    test('with a metrics token and jwt auth, nothing of either is in the page', async t => {
        const jwtSecret = 'catalog-jwt-secret-0123456789abcdef0123';
        const gateway = await startGateway(t, {
            cursorSecret: CURSOR_SECRET,
            metrics: { bearerToken: METRICS_TOKEN },
            auth: { mode: 'jwt', secret: jwtSecret },
            clients: [{ id: 'dana' }]
        });
        const page = await answer(gateway.catalogUrl!);
        assert.equal(meta(page.body, 'catalog-auth'), 'jwt');
        for (const secret of [METRICS_TOKEN, jwtSecret, CURSOR_SECRET]) assert.ok(!page.body.includes(secret));
    });

    test('same-origin requests from the page pass where listen.allowedOrigins does not list the gateway (Q2); other origins do not', async t => {
        const gateway = await startGateway(t, { listen: { port: 0, allowedOrigins: ['tool.internal'] } });
        const origin = new URL(gateway.url!).origin;
        const own = await post(gateway.url!, initializeBody(), { origin });
        assert.equal(own.status, 200, 'the page’s own origin');
        await own.body?.cancel();
        for (const other of [`http://localhost:${new URL(origin).port}`, 'http://127.0.0.1:1', 'http://evil.example']) {
            const refused = await post(gateway.url!, initializeBody(), { origin: other });
            assert.equal(refused.status, 403, other);
            await refused.body?.cancel();
        }
        assert.equal((await answer(gateway.catalogUrl!, { headers: { origin } })).status, 200);
    });
});
