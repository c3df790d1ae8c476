/**
 * Liveness: an upstream that stops answering is reconnected even under load,
 * an HTTP upstream that dies mid-response fails its requests at once, and an
 * upstream that answers pings with an error is alive.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { UpstreamEvent } from '../src/upstream/upstream.js';
import { capturingLogger, closeAfter, connectHttp, fixtureStats, rpcError, silentStdio, startHttpFixture, startTestGateway, upstreamsReady, waitFor } from './helpers.js';

const FAST_RECONNECT = { initialMs: 50, maxMs: 400 };
/** Bounds each test: its waits are on events, this only turns a hang into a failure. */
const TIMEOUT = { timeout: 120_000 };

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

test('an upstream that answers no request, three in a row, is reconnected (pings alone would never catch it under load)', TIMEOUT, async t => {
    const { logger, lines } = capturingLogger();
    const gateway = await startTestGateway({ reconnect: FAST_RECONNECT, upstreams: [silentStdio('hung', 'answer', { timeoutMs: 1500 })] }, logger);
    closeAfter(t, () => gateway.close());
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    await upstreamsReady(gateway);
    const states = statesOf(gateway, 0);
    for (let i = 1; i <= 3; i++) {
        const error = await rpcError(client.getPrompt({ name: 'hung__p' }));
        assert.equal(error.code, -32603);
        assert.match(error.message, /Upstream hung failed: timed out after 1500 ms/);
        if (i < 3) assert.equal(gateway.upstreams[0]!.state, 'ready', `still ready after ${i} timeouts`);
    }
    await waitFor(() => states.includes('down') && gateway.upstreams[0]!.state === 'ready', 30_000, 'the upstream to be reconnected');
    assert.deepEqual(states.slice(0, 2), ['down', 'connecting']);
    const faults = gateway.faults.of('hung');
    assert.equal(faults.timeout, 3);
    assert.equal(faults.disconnected, 1, 'the lost connection is counted once');
    // The last one: on a busy machine a first handshake may have timed out before the upstream was ready.
    const down = lines().findLast(line => line.upstream === 'hung' && typeof line.msg === 'string' && line.msg.startsWith('upstream down'));
    assert.equal(down?.msg, 'upstream down (no answer to 3 requests in a row)');
    assert.equal(down?.level, 'warn');
});

test('pings go out while a request is in flight, when nothing has come back for pingIntervalMs', TIMEOUT, async t => {
    const { logger, lines } = capturingLogger();
    const gateway = await startTestGateway({ upstreams: [silentStdio('busy', 'answer', { timeoutMs: 60_000, pingIntervalMs: 150 })] }, logger);
    closeAfter(t, () => gateway.close());
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    const stuck = new AbortController();
    const inFlight = client.getPrompt({ name: 'busy__p' }, { signal: stuck.signal }).catch(() => {});
    await waitFor(() => gateway.upstreams[0]!.load.active === 1, 20_000, 'the request to reach the upstream');
    const before = pingsLogged(lines, 'busy');
    await waitFor(() => pingsLogged(lines, 'busy') - before >= 3, 20_000, 'three pings while the request is in flight');
    assert.equal(gateway.upstreams[0]!.load.active, 1, 'the request is still in flight');
    assert.equal(gateway.upstreams[0]!.state, 'ready');
    stuck.abort();
    await inFlight;
});

test('an upstream that answers ping with a JSON-RPC error (e.g. -32601) is alive, not reconnected', TIMEOUT, async t => {
    const { logger, lines } = capturingLogger();
    const gateway = await startTestGateway({ reconnect: FAST_RECONNECT, upstreams: [silentStdio('noping', 'error', { timeoutMs: 10_000, pingIntervalMs: 100 })] }, logger);
    closeAfter(t, () => gateway.close());
    await upstreamsReady(gateway);
    const states = statesOf(gateway, 0);
    await waitFor(() => pingsLogged(lines, 'noping') >= 6, 20_000, 'six pings');
    assert.deepEqual(states, [], 'no state change');
    assert.equal(gateway.upstreams[0]!.state, 'ready');
    assert.equal(gateway.faults.of('noping').disconnected, undefined);
});

test('an HTTP upstream killed while a response is streaming fails that request at once, not at its timeout', TIMEOUT, async t => {
    const timeoutMs = 60_000;
    const web = await startHttpFixture('streamable-http');
    closeAfter(t, () => web.close());
    const gateway = await startTestGateway({
        reconnect: FAST_RECONNECT,
        // No pings: failed ones would find the dead upstream too, by another way than the one under test.
        upstreams: [{ id: 'web', transport: 'streamable-http', url: web.url, timeoutMs, pingIntervalMs: 0 }]
    });
    closeAfter(t, () => gateway.close());
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    const direct = await connectHttp(web.url);
    closeAfter(t, () => direct.close());
    await upstreamsReady(gateway);

    const inFlight = rpcError(client.getPrompt({ name: 'web__slow', arguments: { ms: String(timeoutMs - 5000) } }));
    // The fixture is working on it: the response is open, its answer not yet written.
    await waitFor(async () => (await fixtureStats(direct, 'stats')).slowStarted === 1, 20_000, 'the slow request to reach the fixture');
    web.child.kill('SIGKILL');
    // Failed by the cut-off, not by a timeout (the gateway's timeoutMs or the client's own, both 60 s).
    assert.deepEqual(await inFlight, { code: -32603, message: 'Upstream web failed: connection closed' });
    await waitFor(() => gateway.upstreams[0]!.state !== 'ready', 20_000, 'the upstream to be marked down');
    assert.equal(gateway.faults.of('web').disconnected, 1, 'the lost connection is counted once');
    assert.match(gateway.upstreams[0]!.lastError ?? '', /^Upstream web failed: /);
});

test('connecting is bounded by timeoutMs as a whole: an SSE server that never sends its endpoint event', TIMEOUT, async t => {
    // Opens the SSE stream and then says nothing: the SDK's transport would wait for the endpoint event forever, and
    // so would start-up (this test's timeout turns that into a failure).
    const mute = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders());
    closeAfter(t, () => {
        mute.closeAllConnections();
        return new Promise(resolve => mute.close(resolve));
    });
    await new Promise<void>(resolve => mute.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(mute.address() as AddressInfo).port}/sse`;
    const gateway = await startTestGateway({ reconnect: { initialMs: 60_000, maxMs: 60_000 }, upstreams: [{ id: 'mute', transport: 'sse', url, timeoutMs: 500 }] });
    closeAfter(t, () => gateway.close());
    const upstream = gateway.upstreams[0]!;
    assert.equal(upstream.state, 'down');
    assert.equal(upstream.lastError, 'Upstream mute failed: timed out after 500 ms (connecting)');
    assert.equal(gateway.faults.of('mute').connect_failed, 1);
});
