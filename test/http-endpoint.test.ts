/** The downstream Streamable HTTP endpoint: protocol revisions, sessions, limits and browser safety. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, startHttpFixture, startTestGateway, stdioFixture, waitFor, type HttpFixture } from './helpers.js';
import { deleteSession, initializeBody, openRawSession, post } from './raw-http.js';
import { scrape, value } from './prometheus.js';

const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];

/** POSTs an initialize with a chosen Host header (fetch does not let a caller set Host, so HTTP/1.1 by hand). */
async function statusWithHost(url: string, host: string): Promise<number> {
    const { port, pathname } = new URL(url);
    const { connect } = await import('node:net');
    return new Promise<number>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
            const body = JSON.stringify(initializeBody());
            socket.write(
                `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
            );
        });
        let head = '';
        socket.on('data', chunk => (head += chunk.toString()));
        socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1])));
        socket.on('error', reject);
    });
}

describe('downstream Streamable HTTP endpoint', () => {
    let gateway: RunningGateway;
    let auto: HttpFixture;
    let legacy: HttpFixture;

    before(async () => {
        [auto, legacy] = await Promise.all([startHttpFixture('streamable-http', { name: 'auto' }), startHttpFixture('sse', { name: 'old' })]);
        gateway = await startTestGateway({
            limits: { maxBodyBytes: 4096 },
            upstreams: [stdioFixture('local'), { id: 'auto', transport: 'http', url: auto.url }, { id: 'old', transport: 'http', url: legacy.url }]
        });
    });

    after(async () => {
        await gateway?.close();
        await Promise.all([auto?.close(), legacy?.close()]);
    });

    test('"http" upstreams use Streamable HTTP when offered and fall back to legacy SSE on 4xx', () => {
        assert.deepEqual(
            gateway.upstreams.map(upstream => [upstream.id, 'wire' in upstream ? upstream.wire : undefined]),
            [
                ['local', 'stdio'],
                ['auto', 'streamable-http'],
                ['old', 'sse']
            ]
        );
    });

    for (const revision of REVISIONS) {
        test(`a ${revision} client negotiates ${revision}, lists and gets`, async () => {
            const client = await connectHttp(gateway.url!, { protocolVersion: revision });
            try {
                assert.equal(client.getNegotiatedProtocolVersion(), revision);
                assert.deepEqual(client.getServerCapabilities()?.prompts, { listChanged: true });
                const { prompts } = await client.request({ method: 'prompts/list', params: {} });
                assert.ok(prompts.some(prompt => prompt.name === 'old__with-required'));
                const result = await client.getPrompt({ name: 'old__with-required', arguments: { topic: revision } });
                assert.match(JSON.stringify(result.messages), new RegExp(revision));
            } finally {
                await client.close();
            }
        });
    }

    test('GET /healthz is 200 with each upstream state', async () => {
        const response = await fetch(new URL('/healthz', gateway.url));
        assert.equal(response.status, 200);
        const body = (await response.json()) as { status: string; upstreams: { id: string; state: string }[] };
        assert.equal(body.status, 'ok');
        assert.deepEqual(
            body.upstreams.map(upstream => `${upstream.id}:${upstream.state}`),
            ['local:ready', 'auto:ready', 'old:ready']
        );
    });

    test('paths match with a trailing slash and in any case, as they always have: /mcp/, /MCP, /healthz/, /HEALTHZ', async () => {
        const { origin, pathname } = new URL(gateway.url!);
        for (const path of [`${pathname}/`, pathname.toUpperCase()]) {
            const session = await openRawSession(`${origin}${path}`);
            assert.equal((await deleteSession(`${origin}${path}`, session.headers)).status, 200, path);
        }
        for (const path of ['/healthz/', '/HEALTHZ']) assert.equal((await fetch(`${origin}${path}`)).status, 200, path);
        assert.equal((await fetch(`${origin}${pathname}//`, { method: 'POST' })).status, 404, 'only one trailing slash');
    });

    test('an unknown session id is 404; a request without one (not initialize) is 400', async () => {
        const unknown = await post(gateway.url!, { jsonrpc: '2.0', id: 2, method: 'prompts/list', params: {} }, { 'mcp-session-id': 'no-such-session' });
        assert.equal(unknown.status, 404);
        const missing = await post(gateway.url!, { jsonrpc: '2.0', id: 2, method: 'prompts/list', params: {} });
        assert.equal(missing.status, 400);
    });

    test('DELETE ends a session; the id is then unknown (404)', async () => {
        const { headers } = await openRawSession(gateway.url!);
        const deleted = await deleteSession(gateway.url!, headers);
        assert.equal(deleted.status, 200);
        const after = await post(gateway.url!, { jsonrpc: '2.0', id: 3, method: 'prompts/list', params: {} }, headers);
        assert.equal(after.status, 404);
    });

    test('a POST whose body was still arriving when its session ended is refused like an unknown session', { timeout: 30_000 }, async t => {
        const { headers } = await openRawSession(gateway.url!);
        const body = JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'prompts/get', params: { name: 'local__slow', arguments: { ms: '1' } } });
        const half = Math.floor(body.length / 2);
        const { request } = await import('node:http');
        const pending = request(gateway.url!, {
            method: 'POST',
            // 100-continue: the gateway answers it as the request arrives, so once it is seen the session was looked up and the body is awaited.
            headers: {
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
                'content-length': Buffer.byteLength(body),
                expect: '100-continue',
                ...headers
            }
        });
        const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
            pending.once('response', response => {
                let text = '';
                response.setEncoding('utf8');
                response.on('data', (chunk: string) => (text += chunk));
                response.once('end', () => resolve({ status: response.statusCode ?? 0, text }));
            });
            pending.once('error', reject);
        });
        t.after(() => pending.destroy());
        await new Promise<void>(resolve => pending.once('continue', () => resolve()));
        pending.write(body.slice(0, half));
        assert.equal((await deleteSession(gateway.url!, headers)).status, 200);
        pending.end(body.slice(half));
        const { status, text } = await answered;
        assert.equal(status, 404, text);
        assert.deepEqual((JSON.parse(text) as { error: unknown }).error, { code: -32001, message: 'Session not found' });
    });

    test('a body over limits.maxBodyBytes is 413 with a JSON-RPC error, no stack trace', async () => {
        const response = await post(gateway.url!, { ...initializeBody(), padding: 'x'.repeat(10_000) });
        assert.equal(response.status, 413);
        const body = await response.text();
        assert.match(body, /"code":-32600/);
        assert.doesNotMatch(body, /at \w+ \(|node_modules|<html/i);
    });

    test('a gzip or deflate body is decompressed, an unknown Content-Encoding is 415', { timeout: 30_000 }, async () => {
        const json = JSON.stringify(initializeBody());
        for (const [encoding, body] of [
            ['gzip', gzipSync(json)],
            ['deflate', deflateSync(json)],
            ['identity', Buffer.from(json)]
        ] as const) {
            const response = await post(gateway.url!, body, { 'content-encoding': encoding });
            assert.equal(response.status, 200, encoding);
            assert.match(await response.text(), /"protocolVersion"/);
        }
        const unknown = await post(gateway.url!, brotliCompressSync(json), { 'content-encoding': 'br' });
        assert.equal(unknown.status, 415);
        assert.match(await unknown.text(), /"code":-32000.*Content-Encoding/);
    });

    test('a gzip bomb (small compressed, over limits.maxBodyBytes decompressed) is 413', { timeout: 30_000 }, async () => {
        const bomb = gzipSync(JSON.stringify({ ...initializeBody(), padding: 'x'.repeat(1024 * 1024) }));
        assert.ok(bomb.length < 4096, 'small enough compressed to pass the limit on the wire');
        const response = await post(gateway.url!, bomb, { 'content-encoding': 'gzip' });
        assert.equal(response.status, 413);
        assert.match(await response.text(), /"code":-32600/);
    });

    test('malformed JSON is 400 with a parse error', async () => {
        const response = await post(gateway.url!, '{"jsonrpc":');
        assert.equal(response.status, 400);
        assert.match(await response.text(), /"code":-32700/);
    });

    test('a foreign Origin or Host is refused (DNS rebinding protection)', async () => {
        const origin = await post(gateway.url!, initializeBody(), { origin: 'http://evil.example' });
        assert.equal(origin.status, 403);
        const localOrigin = await post(gateway.url!, initializeBody(), { origin: 'http://localhost:3000' });
        assert.equal(localOrigin.status, 200);
        await localOrigin.body?.cancel();
        const host = await statusWithHost(gateway.url!, 'evil.example');
        assert.equal(host, 403);
    });
});

describe('idle sessions', () => {
    test('a session with no request and no stream for sessions.idleTimeoutMs is closed (then 404)', async () => {
        // Long enough that a loaded machine opens the session and lists within it (CI once took over 1 s to send initialized).
        const gateway = await startTestGateway({ sessions: { idleTimeoutMs: 4000 }, upstreams: [stdioFixture('local')] });
        try {
            const { headers } = await openRawSession(gateway.url!);
            const listed = await post(gateway.url!, { jsonrpc: '2.0', id: 2, method: 'prompts/list', params: {} }, headers);
            assert.equal(listed.status, 200, 'the session works while in use');
            await listed.body?.cancel();
            await waitFor(
                // Read from the metrics: any request of the session's (a DELETE would end it; a ping keeps it in use) would
                // decide the outcome itself.
                async () => value(await scrape(gateway.operatorUrls.metrics!), 'mcp_gateway_sessions', { transport: 'http' }) === 0,
                30_000,
                'the idle session to be closed'
            );
            const after = await post(gateway.url!, { jsonrpc: '2.0', id: 3, method: 'ping' }, headers);
            await after.body?.cancel();
            assert.equal(after.status, 404);
        } finally {
            await gateway.close();
        }
    });
});

describe('listen.allowedHosts', () => {
    test('replaces the loopback defaults: listed names pass, others get 403', async () => {
        const gateway = await startTestGateway({ listen: { port: 0, allowedHosts: ['gateway.internal'] }, upstreams: [stdioFixture('local')] });
        try {
            assert.equal(await statusWithHost(gateway.url!, 'gateway.internal'), 200);
            assert.equal(await statusWithHost(gateway.url!, 'gateway.internal:8080'), 200, 'the port is not part of the check');
            assert.equal(await statusWithHost(gateway.url!, 'localhost'), 403);
        } finally {
            await gateway.close();
        }
    });
});
