/**
 * The gateway's HTTP client side, watched from the upstream: an answer over the limits is not read to its end
 * (the upstream sees the connection closed early), and a request that times out or that its client cancels has
 * its HTTP exchange aborted at once, so sockets do not pile up. Each case over a JSON answer and an SSE one.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, rpcError, startRawHttp, startTestGateway, upstreamsReady, waitFor, type HttpFixture } from './helpers.js';

/** GET /stats of the raw fixture (see test/fixtures/raw-server.ts). */
interface UpstreamStats {
    connections: number;
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
    const gateway: RunningGateway = await startTestGateway({ ...config, upstreams: [{ id: 'web', transport: 'streamable-http', url: fixture.url, pingIntervalMs: 0, ...upstream }] });
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
        const { fixture, gateway, client } = await setUp(t, ['--huge-result', String(HUGE), ...flags], {}, { limits: { maxResultBytes: MIB, maxUpstreamMessageBytes: 4 * MIB } });
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
