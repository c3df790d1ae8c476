/**
 * Liveness: an upstream that stops answering is reconnected even under load,
 * an HTTP upstream that dies mid-response fails its requests at once, and an
 * upstream that answers pings with an error is alive.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { UpstreamEvent } from '../src/upstream/connection.js';
import { capturingLogger, connectHttp, rpcError, startHttpFixture, startTestGateway, upstreamsReady, waitFor, type HttpFixture } from './helpers.js';

const FAST_RECONNECT = { initialMs: 50, maxMs: 400 };

/**
 * A minimal stdio MCP server: it answers initialize and prompts/list, never answers prompts/get, and answers
 * ping as PING_MODE says ("error": -32601, the way a server without ping support would; "answer": {}). It writes
 * "ping" to stderr for every ping it receives, so the test can count them in the gateway's log.
 */
const SILENT_SERVER = `
const readline = require('node:readline');
const send = message => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\\n');
readline.createInterface({ input: process.stdin }).on('line', line => {
    const { id, method, params } = JSON.parse(line);
    if (id === undefined) return;
    if (method === 'initialize') {
        send({ id, result: { protocolVersion: params.protocolVersion, capabilities: { prompts: {} }, serverInfo: { name: 'silent', version: '1' } } });
    } else if (method === 'prompts/list') {
        send({ id, result: { prompts: [{ name: 'p' }] } });
    } else if (method === 'ping') {
        process.stderr.write('ping\\n');
        if (process.env.PING_MODE === 'error') send({ id, error: { code: -32601, message: 'Method not found' } });
        else send({ id, result: {} });
    }
});
`;

function silentStdio(id: string, pingMode: 'error' | 'answer', extra: Record<string, unknown>) {
    return { id, transport: 'stdio', command: process.execPath, args: ['-e', SILENT_SERVER], env: { PING_MODE: pingMode }, ...extra };
}

function pingsLogged(lines: () => Record<string, unknown>[], upstream: string): number {
    return lines().filter(line => line.upstream === upstream && line.stream === 'stderr' && line.msg === 'ping').length;
}

function statesOf(gateway: Awaited<ReturnType<typeof startTestGateway>>, index: number): string[] {
    const states: string[] = [];
    gateway.upstreams[index]!.events.subscribe((event: UpstreamEvent) => {
        if (event.type === 'state') states.push(event.state);
    });
    return states;
}

test('an upstream that answers no request, three in a row, is reconnected (pings alone would never catch it under load)', async t => {
    const { logger, lines } = capturingLogger();
    // A plain script, not a tsx fixture: on a busy machine tsx alone can take longer than the 300 ms handshake.
    const gateway = await startTestGateway({ reconnect: FAST_RECONNECT, upstreams: [silentStdio('hung', 'answer', { timeoutMs: 300, pingIntervalMs: 0 })] }, logger);
    t.after(() => gateway.close());
    const client = await connectHttp(gateway.url!);
    t.after(() => client.close());
    await upstreamsReady(gateway);
    const states = statesOf(gateway, 0);
    for (let i = 1; i <= 3; i++) {
        const error = await rpcError(client.getPrompt({ name: 'hung__p' }));
        assert.equal(error.code, -32603);
        assert.match(error.message, /Upstream hung failed: timed out after 300 ms/);
        if (i < 3) assert.equal(gateway.upstreams[0]!.state, 'ready', `still ready after ${i} timeouts`);
    }
    await waitFor(() => states.includes('down') && gateway.upstreams[0]!.state === 'ready', 5000, 'the upstream to be reconnected');
    assert.deepEqual(states.slice(0, 3), ['down', 'connecting', 'ready']);
    const faults = gateway.faults.of('hung');
    assert.equal(faults.timeout, 3);
    assert.equal(faults.disconnected, 1, 'the lost connection is counted once');
    // The last one: on a busy machine a first handshake may have timed out before the upstream was ready.
    const down = lines().findLast(line => line.upstream === 'hung' && typeof line.msg === 'string' && line.msg.startsWith('upstream down'));
    assert.equal(down?.msg, 'upstream down (no answer to 3 requests in a row)');
    assert.equal(down?.level, 'warn');
});

test('pings go out while a request is in flight, when nothing has come back for pingIntervalMs', async () => {
    const { logger, lines } = capturingLogger();
    const gateway = await startTestGateway(
        { upstreams: [silentStdio('busy', 'answer', { timeoutMs: 10_000, pingIntervalMs: 150 })] },
        logger
    );
    const client = await connectHttp(gateway.url!);
    const stuck = new AbortController();
    try {
        const inFlight = client.getPrompt({ name: 'busy__p' }, { signal: stuck.signal }).catch(() => {});
        await waitFor(() => gateway.upstreams[0]!.load.active === 1, 5000, 'the request to reach the upstream');
        const before = pingsLogged(lines, 'busy');
        await new Promise(resolve => setTimeout(resolve, 1000));
        assert.equal(gateway.upstreams[0]!.load.active, 1, 'the request is still in flight');
        const during = pingsLogged(lines, 'busy') - before;
        assert.ok(during >= 3, `${during} pings while busy`);
        assert.equal(gateway.upstreams[0]!.state, 'ready');
        stuck.abort();
        await inFlight;
    } finally {
        await client.close();
        await gateway.close();
    }
});

test('an upstream that answers ping with a JSON-RPC error (e.g. -32601) is alive, not reconnected', async () => {
    const { logger, lines } = capturingLogger();
    const gateway = await startTestGateway(
        { reconnect: FAST_RECONNECT, upstreams: [silentStdio('noping', 'error', { timeoutMs: 1000, pingIntervalMs: 100 })] },
        logger
    );
    await upstreamsReady(gateway);
    const states = statesOf(gateway, 0);
    try {
        await waitFor(() => pingsLogged(lines, 'noping') >= 6, 5000, 'six pings');
        assert.deepEqual(states, [], 'no state change');
        assert.equal(gateway.upstreams[0]!.state, 'ready');
        assert.equal(gateway.faults.of('noping').disconnected, undefined);
    } finally {
        await gateway.close();
    }
});

test('an HTTP upstream killed while a response is streaming fails that request at once, not at its timeout', async t => {
    const timeoutMs = 15_000;
    let web: HttpFixture | undefined = await startHttpFixture('streamable-http');
    const gateway = await startTestGateway({
        reconnect: FAST_RECONNECT,
        upstreams: [{ id: 'web', transport: 'streamable-http', url: web.url, timeoutMs }]
    });
    const client = await connectHttp(gateway.url!);
    try {
        const inFlight = rpcError(client.getPrompt({ name: 'web__slow', arguments: { ms: '12000' } }));
        await waitFor(() => gateway.upstreams[0]!.load.active === 1, 5000, 'the slow request to reach the upstream');
        await new Promise(resolve => setTimeout(resolve, 200));
        const killedAt = Date.now();
        web.child.kill('SIGKILL');
        const failure = await inFlight;
        const failedAfter = Date.now() - killedAt;
        t.diagnostic(`SIGKILL -> request failed: ${failedAfter} ms (timeoutMs ${timeoutMs})`);
        assert.equal(failure.code, -32603);
        assert.match(failure.message, /^Upstream web failed: /);
        assert.ok(failedAfter < 3000, `the request failed ${failedAfter} ms after the upstream died`);
        await waitFor(() => gateway.upstreams[0]!.state !== 'ready', 2000, 'the upstream to be marked down');
        assert.equal(gateway.faults.of('web').disconnected, 1, 'the lost connection is counted once');
        assert.match(gateway.upstreams[0]!.lastError ?? '', /^Upstream web failed: /);
        web = undefined;
    } finally {
        await client.close();
        await gateway.close();
        await web?.close();
    }
});

test('connecting is bounded by timeoutMs as a whole: an SSE server that never sends its endpoint event', async () => {
    // Opens the SSE stream and then says nothing: the SDK's transport would wait for the endpoint event forever.
    const mute = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders());
    await new Promise<void>(resolve => mute.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(mute.address() as AddressInfo).port}/sse`;
    const started = Date.now();
    const gateway = await startTestGateway({ reconnect: { initialMs: 60_000, maxMs: 60_000 }, upstreams: [{ id: 'mute', transport: 'sse', url, timeoutMs: 500 }] });
    try {
        const took = Date.now() - started;
        assert.ok(took < 3000, `the first connection attempt took ${took} ms`);
        const upstream = gateway.upstreams[0]!;
        assert.equal(upstream.state, 'down');
        assert.equal(upstream.lastError, 'Upstream mute failed: timed out after 500 ms (connecting)');
        assert.equal(gateway.faults.of('mute').connect_failed, 1);
    } finally {
        await gateway.close();
        mute.closeAllConnections();
        await new Promise(resolve => mute.close(resolve));
    }
});
