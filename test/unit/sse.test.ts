/** The SSE answer on a real node:http server: message events, keep-alive comments while it is quiet, and its end. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, get, type ClientRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { SseStream } from '../../src/downstream/http/sse.js';

/** Listens on 127.0.0.1 (closed after the test) and returns a GET that opens a stream there (destroyed after the test). */
async function serve(t: TestContext, server: Server): Promise<(path?: string) => Promise<{ request: ClientRequest; response: IncomingMessage }>> {
    t.after(() => server.close());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    return async (path = '/') => {
        const request = get({ host: '127.0.0.1', port, path });
        t.after(() => request.destroy());
        const [response] = (await once(request, 'response')) as [IncomingMessage];
        return { request, response };
    };
}

test('a quiet stream carries keep-alive comments; messages are events; close ends it', { timeout: 20_000 }, async t => {
    let stream: SseStream | undefined;
    const server = createServer((_req, res) => {
        stream = new SseStream(res, { 'mcp-session-id': 's' }, { keepAliveMs: 20 });
    });
    const { response } = await (await serve(t, server))();
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

test('a client that stops reading is cut off once its backlog passes the bound; a reading client on the same server is not', { timeout: 60_000 }, async t => {
    const MAX_BACKLOG = 256 * 1024;
    const message = { jsonrpc: '2.0' as const, method: 'notifications/message', params: { data: 'x'.repeat(64 * 1024) } };
    const streams = new Map<string, { stream: SseStream; res: ServerResponse }>();
    let stalled = 0;
    let cutOff: () => void = () => {};
    const cut = new Promise<void>(resolve => (cutOff = resolve));
    const server = createServer((req, res) => {
        const stream = new SseStream(
            res,
            {},
            {
                maxBacklogBytes: MAX_BACKLOG,
                onStalled: backlog => {
                    stalled++;
                    assert.ok(backlog > MAX_BACKLOG, 'reports the backlog that passed the bound');
                    cutOff();
                }
            }
        );
        streams.set(req.url!, { stream, res });
    });
    const open = await serve(t, server);
    const stuck = await open('/stuck');
    // Stops reading: the kernel buffers fill, then the server's.
    stuck.response.pause();
    const stuckClosed = once(stuck.request.socket!, 'close');
    const stuckServerSide = once(streams.get('/stuck')!.res, 'close');
    const reading = await open('/reading');
    let received = 0;
    let waiting: (() => void) | undefined;
    reading.response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        waiting?.();
    });
    let sent = 0;
    let largestBacklog = 0;
    let done = false;
    void cut.then(() => (done = true));
    const eventBytes = Buffer.byteLength(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    // One event to each, the next once the reading client has taken it: only the stuck client falls behind.
    for (let round = 0; !done && round < 1000; round++) {
        streams.get('/stuck')!.stream.send(message);
        streams.get('/reading')!.stream.send(message);
        sent += eventBytes;
        largestBacklog = Math.max(largestBacklog, streams.get('/stuck')!.res.writableLength);
        while (received < sent) await new Promise<void>(resolve => (waiting = resolve));
    }
    assert.ok(done, `the stuck stream was not cut off after ${sent} bytes`);
    await stuckServerSide;
    // The client sees the end once it reads what the kernel still holds for it.
    stuck.response.resume();
    await stuckClosed;
    assert.equal(stalled, 1, 'reported once');
    assert.ok(largestBacklog <= MAX_BACKLOG + eventBytes, `the backlog stays bounded (largest ${largestBacklog} bytes)`);
    // Nothing more goes to the stream that was cut, and the reading client is served on.
    streams.get('/stuck')!.stream.send(message);
    streams.get('/reading')!.stream.send(message);
    sent += eventBytes;
    while (received < sent) await new Promise<void>(resolve => (waiting = resolve));
    assert.equal(streams.get('/reading')!.res.destroyed, false);
});

test('a burst written at once (a batch of large answers) is not a stalled client: it goes out whole', { timeout: 60_000 }, async t => {
    const MAX_BACKLOG = 256 * 1024;
    const message = { jsonrpc: '2.0' as const, method: 'notifications/message', params: { data: 'x'.repeat(64 * 1024) } };
    const COUNT = 100;
    let stalled = 0;
    const server = createServer((_req, res) => {
        const stream = new SseStream(res, {}, { maxBacklogBytes: MAX_BACKLOG, onStalled: () => void stalled++ });
        // 6.5 MB in one go, far over the bound: none of it waited for the client in an earlier turn.
        for (let index = 0; index < COUNT; index++) stream.send(message);
        stream.close();
    });
    const { response } = await (await serve(t, server))();
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (text += chunk));
    await once(response, 'end');
    assert.equal(text.split('event: message').length - 1, COUNT);
    assert.equal(stalled, 0);
});
