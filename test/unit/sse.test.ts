/** The SSE answer on a real node:http server: message events, keep-alive comments while it is quiet, and its end. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { SseStream } from '../../src/downstream/http/sse.js';

test('a quiet stream carries keep-alive comments; messages are events; close ends it', { timeout: 20_000 }, async t => {
    let stream: SseStream | undefined;
    const server = createServer((_req, res) => {
        stream = new SseStream(res, { 'mcp-session-id': 's' }, 20);
    });
    t.after(() => server.close());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const request = get({ host: '127.0.0.1', port, path: '/' });
    t.after(() => request.destroy());
    const [response] = (await once(request, 'response')) as [IncomingMessage];
    assert.equal(response.headers['content-type'], 'text/event-stream');
    assert.equal(response.headers['mcp-session-id'], 's');
    response.setEncoding('utf8');
    let text = '';
    const received = (wanted: string) =>
        new Promise<void>(resolve => {
            const check = () => {
                if (!text.includes(wanted)) return;
                response.off('data', read);
                resolve();
            };
            const read = (chunk: string) => {
                text += chunk;
                check();
            };
            response.on('data', read);
            check();
        });
    await received(': keepalive\n\n');
    stream!.send({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed' });
    await received('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}\n\n');
    const ended = once(response, 'end');
    stream!.close();
    await ended;
});
