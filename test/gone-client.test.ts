/**
 * A client that sends its whole body and goes away before the gateway has read it to the end (a gzip body is
 * inflated off the socket's thread, so the socket can close first): its requests must still leave the registry,
 * or their ids stay "in use" in the session for good and every shutdown waits its whole timeout.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { test } from 'node:test';
import { closeAfter, ROOT, startTestGateway } from './helpers.js';
import { messagesOf, openRawSession, post } from './raw-http.js';

/** Sends `body` gzipped on a socket of its own and half-closes at once; resolves once the gateway closed it. */
function sendAndLeave(url: URL, body: unknown, headers: Record<string, string>): Promise<void> {
    const zipped = gzipSync(JSON.stringify(body));
    const head = [
        `POST ${url.pathname} HTTP/1.1`,
        `host: ${url.host}`,
        'accept: application/json, text/event-stream',
        'content-type: application/json',
        'content-encoding: gzip',
        `content-length: ${zipped.length}`,
        ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
        '',
        ''
    ].join('\r\n');
    return new Promise(resolve => {
        const socket = net.connect(Number(url.port), url.hostname, () => socket.end(Buffer.concat([Buffer.from(head), zipped])));
        socket.resume();
        socket.once('close', () => resolve());
    });
}

test('a request whose client left before its gzip body was inflated frees its id', async t => {
    const gateway = await startTestGateway({ upstreams: [{ id: 'team', transport: 'files', path: path.join(ROOT, 'examples/prompts') }] });
    closeAfter(t, () => gateway.close());
    const url = gateway.url!;
    const session = await openRawSession(url, '2025-11-25');
    const ids = Array.from({ length: 10 }, (_, i) => 100 + i);
    for (const id of ids) await sendAndLeave(new URL(url), { jsonrpc: '2.0', id, method: 'ping' }, session.headers);
    for (const id of ids) {
        const [answer] = await messagesOf(await post(url, { jsonrpc: '2.0', id, method: 'ping' }, session.headers));
        assert.deepEqual(answer, { jsonrpc: '2.0', id, result: {} }, `id ${id} is free again`);
    }
});
