/**
 * The gateway's HTTP client side, watched from the upstream: an answer over the limits is not read to its end
 * (the upstream sees the connection closed early), and a request that times out or that its client cancels has
 * its HTTP exchange aborted at once, so sockets do not pile up. Each case over a JSON answer and an SSE one.
 * Also: legacy HTTP+SSE events over the limit, an endpoint on another origin, and many requests at once.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, rpcError, startHttpFixture, startRawHttp, startTestGateway, upstreamsReady, waitFor, type HttpFixture } from './helpers.js';

/** GET /stats of the raw fixture (see test/fixtures/raw-server.ts). */
interface UpstreamStats {
    connections: number;
    peakConnections: number;
    answers: { started: number; finished: number; closedEarly: number };
    hugeWritten: number[];
}

async function statsOf(fixture: HttpFixture): Promise<UpstreamStats> {
    const response = await fetch(new URL('/stats', fixture.url));
    return (await response.json()) as UpstreamStats;
}

const FRAMINGS = [
    { label: 'JSON answers', flags: [] },
    { label: 'SSE answers', flags: ['--sse-answers'] }
];

/** A raw fixture with `flags` behind a gateway, with a client; all closed when the test ends. */
async function setUp(t: TestContext, flags: string[], upstream: Record<string, unknown>, config: Record<string, unknown> = {}) {
    const fixture = await startRawHttp(flags);
    t.after(() => fixture.close());
    const web = { id: 'web', transport: 'streamable-http', url: fixture.url, pingIntervalMs: 0, ...upstream };
    const gateway: RunningGateway = await startTestGateway({ ...config, upstreams: [web] });
    t.after(() => gateway.close());
    await upstreamsReady(gateway);
    const client: Client = await connectHttp(gateway.url!);
    t.after(() => client.close());
    return { fixture, gateway, client };
}

const MIB = 1024 * 1024;
const HUGE = 64 * MIB;

for (const { label, flags } of FRAMINGS) {
    test(`a prompts/get answer over the limits is not read to its end; the connection goes on (${label})`, { timeout: 60_000 }, async t => {
        const limits = { maxResultBytes: MIB, maxUpstreamMessageBytes: 4 * MIB };
        const { fixture, gateway, client } = await setUp(t, ['--huge-result', String(HUGE), ...flags], {}, { limits });
        const error = await rpcError(client.getPrompt({ name: 'web__ok-0' }));
        assert.equal(error.code, -32603);
        assert.match(error.message, /^Upstream web failed: (response|result) larger than \d+ bytes/);
        await waitFor(async () => (await statsOf(fixture)).hugeWritten.length === 1, 20_000, 'the upstream to see its answer closed');
        const stats = await statsOf(fixture);
        assert.equal(stats.answers.closedEarly, 1, 'the gateway closed the answer before its end');
        const written = stats.hugeWritten[0]!;
        t.diagnostic(`the upstream wrote ${(written / MIB).toFixed(1)} MiB of ${HUGE / MIB} MiB before the gateway closed the exchange`);
        assert.ok(written < HUGE / 4, `the upstream wrote ${written} bytes`);
        assert.equal(gateway.faults.of('web').oversized_result, 1);
        // The connection is still good for everything else.
        const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'web__ok-0' }, argument: { name: 'topic', value: 'a' } });
        assert.deepEqual(completion.completion.values, ['alpha']);
        assert.equal(gateway.upstreams[0]!.state, 'ready');
    });

    test(`requests that time out have their HTTP exchange closed at once; sockets do not pile up (${label})`, { timeout: 60_000 }, async t => {
        const { fixture, gateway, client } = await setUp(t, ['--hang', 'get', ...flags], { timeoutMs: 500 });
        const upstream = gateway.upstreams[0]!;
        const rounds = 5;
        for (let round = 1; round <= rounds; round++) {
            const error = await rpcError(client.getPrompt({ name: 'web__ok-0' }));
            assert.match(error.message, /^Upstream web failed: timed out after 500 ms/);
            await waitFor(async () => (await statsOf(fixture)).answers.closedEarly === round, 5000, `the upstream to see timed-out request ${round} closed`);
            // An answer between timeouts, so that the liveness watch does not take the upstream for hung and reconnect.
            await upstream.listPrompts();
        }
        assert.equal(upstream.state, 'ready');
        assert.equal(gateway.faults.of('web').disconnected, undefined, 'the connection was never dropped');
        // Keep-alive sockets of the answered requests may stay; none of the timed-out ones.
        await waitFor(async () => (await statsOf(fixture)).connections <= 2, 5000, 'at most 2 sockets open');
    });

    test(`a request its client cancels has its HTTP exchange closed at once (${label})`, { timeout: 60_000 }, async t => {
        const { fixture, gateway, client } = await setUp(t, ['--hang', 'get', ...flags], { timeoutMs: 30_000 });
        const started = (await statsOf(fixture)).answers.started;
        const controller = new AbortController();
        const request = client.getPrompt({ name: 'web__ok-0' }, { signal: controller.signal });
        request.catch(() => {});
        await waitFor(async () => (await statsOf(fixture)).answers.started === started + 1, 5000, 'the request to reach the upstream');
        controller.abort('user gave up');
        await assert.rejects(request);
        await waitFor(async () => (await statsOf(fixture)).answers.closedEarly === 1, 5000, 'the upstream to see the request closed');
        await waitFor(() => gateway.upstreams[0]!.load.active === 0, 5000, 'the upstream slot to be freed');
        assert.equal(gateway.upstreams[0]!.state, 'ready');
    });
}

test("an SDK server's SSE answer over the limit (its id written last) fails its request; the connection goes on", { timeout: 60_000 }, async t => {
    const fixture = await startHttpFixture('streamable-http');
    t.after(() => fixture.close());
    const gateway = await startTestGateway({
        limits: { maxResultBytes: MIB, maxUpstreamMessageBytes: MIB },
        upstreams: [{ id: 'sdk', transport: 'streamable-http', url: fixture.url, pingIntervalMs: 0 }]
    });
    t.after(() => gateway.close());
    await upstreamsReady(gateway);
    const client = await connectHttp(gateway.url!);
    t.after(() => client.close());
    const error = await rpcError(client.getPrompt({ name: 'sdk__big', arguments: { bytes: String(16 * MIB) } }));
    assert.match(error.message, /^Upstream sdk failed: response larger than \d+ bytes/);
    assert.equal((await client.getPrompt({ name: 'sdk__big', arguments: { bytes: '10' } })).messages.length, 1);
    assert.equal(gateway.upstreams[0]!.state, 'ready');
});

test('legacy HTTP+SSE: an event over the limit fails only its own request; the stream goes on', { timeout: 60_000 }, async t => {
    const fixture = await startHttpFixture('sse');
    t.after(() => fixture.close());
    const gateway = await startTestGateway({
        limits: { maxResultBytes: MIB, maxUpstreamMessageBytes: MIB },
        upstreams: [{ id: 'legacy', transport: 'sse', url: fixture.url, pingIntervalMs: 0 }]
    });
    t.after(() => gateway.close());
    await upstreamsReady(gateway);
    const client = await connectHttp(gateway.url!);
    t.after(() => client.close());
    const error = await rpcError(client.getPrompt({ name: 'legacy__big', arguments: { bytes: String(3 * MIB) } }));
    assert.equal(error.code, -32603);
    assert.match(error.message, /^Upstream legacy failed: response larger than \d+ bytes/);
    const small = await client.getPrompt({ name: 'legacy__big', arguments: { bytes: '10' } });
    assert.equal(small.messages.length, 1);
    assert.equal(gateway.upstreams[0]!.state, 'ready');
    assert.equal(gateway.faults.of('legacy').disconnected, undefined);
});

test('legacy HTTP+SSE: an endpoint event naming another origin is refused, and nothing is posted there', { timeout: 30_000 }, async t => {
    const posts: string[] = [];
    const elsewhere = createServer((req, res) => {
        posts.push(req.url ?? '');
        res.writeHead(202).end();
    });
    await new Promise<void>(resolve => elsewhere.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise(resolve => elsewhere.close(resolve)));
    const foreign = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/messages`;
    const sse = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).write(`event: endpoint\ndata: ${foreign}\n\n`));
    await new Promise<void>(resolve => sse.listen(0, '127.0.0.1', resolve));
    t.after(() => {
        sse.closeAllConnections();
        return new Promise(resolve => sse.close(resolve));
    });
    const url = `http://127.0.0.1:${(sse.address() as AddressInfo).port}/sse`;
    const gateway = await startTestGateway({ reconnect: { initialMs: 60_000, maxMs: 60_000 }, upstreams: [{ id: 'shady', transport: 'sse', url, timeoutMs: 5000 }] });
    t.after(() => gateway.close());
    const upstream = gateway.upstreams[0]!;
    assert.equal(upstream.state, 'down');
    assert.match(upstream.lastError ?? '', /endpoint event refused/);
    assert.deepEqual(posts, []);
});

test('many requests at once: sockets bounded by maxConcurrency (plus a few), no listener leak warnings', { timeout: 60_000 }, async t => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    t.after(() => process.off('warning', onWarning));
    const { fixture, client } = await setUp(t, [], { maxConcurrency: 4 });
    const ref = { type: 'ref/prompt' as const, name: 'web__ok-0' };
    const answers = await Promise.all(Array.from({ length: 60 }, () => client.complete({ ref, argument: { name: 'topic', value: 'b' } })));
    for (const answer of answers) assert.deepEqual(answer.completion.values, ['beta']);
    const { peakConnections } = await statsOf(fixture);
    // The pool's maxConcurrency + 4, and the socket of this test's own /stats request while the pool's are still open.
    assert.ok(peakConnections <= 4 + 4 + 1, `${peakConnections} sockets open at once`);
    assert.deepEqual(
        warnings.filter(warning => warning.includes('MaxListeners')),
        []
    );
});

test('an answer stream the server keeps open after the answer is closed: sockets do not stay taken', { timeout: 120_000 }, async t => {
    // 2 + 4 sockets: with each answer's stream held for good, the seventh request would find none free.
    const { fixture, client } = await setUp(t, ['--sse-answers', '--keep-streams-open'], { maxConcurrency: 2 });
    for (let request = 0; request < 10; request++) {
        const result = await client.getPrompt({ name: 'web__ok-0', arguments: { topic: `n${request}` } });
        assert.match(JSON.stringify(result.messages), new RegExp(`n${request}`));
    }
    await waitFor(async () => (await statsOf(fixture)).answers.closedEarly >= 10, 20_000, 'the held answer streams closed by the gateway');
});

/**
 * A Streamable HTTP server that ends its SSE streams early with a `retry` and an event id, as a server with an
 * event store does, and carries on when the client comes back with a GET and Last-Event-ID: the standalone stream
 * is closed at once (id g1) and resumed with a list_changed; a prompts/get answer stream is closed before the
 * answer (id a1) and the answer comes on the resumed stream.
 */
async function startResumableServer(t: TestContext) {
    const seen = { gets: [] as { lastEventId: string | undefined; at: number }[], lists: 0, firstClosedAt: 0 };
    const sse = { 'content-type': 'text/event-stream' };
    let answer: unknown;
    const json = (res: ServerResponse, message: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(message));
    const handle = async (req: IncomingMessage, res: ServerResponse) => {
        if (req.method === 'GET') {
            const lastEventId = req.headers['last-event-id'] as string | undefined;
            seen.gets.push({ lastEventId, at: performance.now() });
            res.writeHead(200, sse);
            if (lastEventId === 'a1') return res.end(`id: a2\ndata: ${JSON.stringify(answer)}\n\n`);
            if (lastEventId === 'g1') return res.write(`id: g2\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed' })}\n\n`);
            seen.firstClosedAt = performance.now();
            return res.end('id: g1\nretry: 300\ndata: \n\n');
        }
        if (req.method === 'DELETE') return res.writeHead(200).end();
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const message = JSON.parse(Buffer.concat(chunks).toString()) as { id?: number; method: string; params?: { protocolVersion?: string } };
        if (message.id === undefined) return res.writeHead(202).end();
        const reply = (result: unknown) => ({ jsonrpc: '2.0', id: message.id, result });
        switch (message.method) {
            case 'initialize': {
                const capabilities = { prompts: { listChanged: true } };
                const result = { protocolVersion: message.params?.protocolVersion, capabilities, serverInfo: { name: 'resumable', version: '1' } };
                return json(res, reply(result), { 'mcp-session-id': 's-1' });
            }
            case 'prompts/list':
                seen.lists++;
                return json(res, reply({ prompts: [{ name: 'p' }] }));
            case 'prompts/get':
                answer = reply({ messages: [{ role: 'user', content: { type: 'text', text: 'resumed' } }] });
                return res.writeHead(200, sse).end('id: a1\nretry: 300\ndata: \n\n');
            default:
                return json(res, reply({}));
        }
    };
    const server = createServer((req, res) => void handle(req, res));
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    t.after(() => {
        server.closeAllConnections();
        return new Promise(resolve => server.close(resolve));
    });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen };
}

test("SSE streams that end early are resumed after the server's retry, with Last-Event-ID", { timeout: 30_000 }, async t => {
    const { url, seen } = await startResumableServer(t);
    const gateway = await startTestGateway({ upstreams: [{ id: 'resumable', transport: 'streamable-http', url, pingIntervalMs: 0 }] });
    t.after(() => gateway.close());
    await upstreamsReady(gateway);
    // The standalone stream: closed at once, reopened no sooner than `retry` says, from its last event.
    await waitFor(() => seen.gets.some(get => get.lastEventId === 'g1'), 10_000, 'the GET stream to be resumed');
    const resumed = seen.gets.find(get => get.lastEventId === 'g1')!;
    assert.ok(resumed.at - seen.firstClosedAt >= 300 - 20, `resumed ${(resumed.at - seen.firstClosedAt).toFixed(0)} ms after the stream ended`);
    await waitFor(() => seen.lists >= 2, 10_000, 'the list_changed on the resumed stream to make the gateway list again');
    // An answer stream that ended before its answer: resumed the same way, the answer arrives on the GET.
    const client = await connectHttp(gateway.url!);
    t.after(() => client.close());
    const got = await client.getPrompt({ name: 'resumable__p' });
    assert.deepEqual(got.messages, [{ role: 'user', content: { type: 'text', text: 'resumed' } }]);
    assert.ok(seen.gets.some(get => get.lastEventId === 'a1'));
});
