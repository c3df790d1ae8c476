/**
 * HTTP upstreams flooding their standalone SSE stream with tiny lines (`data: {}` events, `:` comments, `retry: 0`),
 * and a stdio upstream flooding its stdout with `{}` lines, as fast as the gateway reads, beside a calm upstream: each
 * flood is counted and logged as `stream_flood`, the flooding stream is throttled rather than reopened, and the calm
 * upstream and the flooders' own answers are served.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { capturingLogger, connectHttp, rawStdio, startRawHttp, startTestGateway, stdioFixture, upstreamsReady, waitFor, type HttpFixture } from './helpers.js';

const KINDS = ['events', 'comments', 'retry'] as const;
const FLOODERS = [...KINDS.map(kind => `flood-${kind}`), 'flood-stdout'];

async function floodStreams(fixture: HttpFixture): Promise<{ opened: number; closed: number }> {
    const response = await fetch(new URL('/stats', fixture.url));
    return ((await response.json()) as { floodStreams: { opened: number; closed: number } }).floodStreams;
}

test('SSE streams flooded with tiny lines are throttled and reported; the other upstreams are served meanwhile', { timeout: 180_000 }, async t => {
    const fixtures = await Promise.all(KINDS.map(kind => startRawHttp(['--flood-stream', kind])));
    for (const fixture of fixtures) t.after(() => fixture.close());
    const { logger, lines } = capturingLogger();
    const gateway = await startTestGateway(
        {
            upstreams: [
                ...KINDS.map((kind, i) => ({ id: `flood-${kind}`, transport: 'streamable-http', url: fixtures[i]!.url, pingIntervalMs: 0 })),
                rawStdio('flood-stdout', ['--flood-stdout'], { pingIntervalMs: 0 }),
                stdioFixture('calm')
            ]
        },
        logger
    );
    t.after(() => gateway.close());
    await upstreamsReady(gateway);
    const client = await connectHttp(gateway.url!);
    t.after(() => client.close());
    for (const id of FLOODERS) {
        await waitFor(() => (gateway.faults.of(id).stream_flood ?? 0) >= 1, 60_000, `the flood of ${id} to be counted`);
        assert.ok(
            lines().some(line => line.upstream === id && line.fault === 'stream_flood'),
            `the flood of ${id} is logged`
        );
    }
    // While the floods go on: the calm upstream answers, and so do the flooders on their own requests.
    for (let i = 0; i < 5; i++) assert.equal((await client.getPrompt({ name: 'calm__prompt-000' })).messages.length, 1);
    for (const id of FLOODERS) assert.equal((await client.getPrompt({ name: `${id}__ok-0` })).messages.length, 1, id);
    // Throttled, not closed: each flooding stream is the one the gateway opened first, still open, and the upstream is up.
    for (const [i, kind] of KINDS.entries()) {
        assert.deepEqual(await floodStreams(fixtures[i]!), { opened: 1, closed: 0 }, kind);
    }
    for (const id of FLOODERS) assert.equal(gateway.upstreams.find(upstream => upstream.id === id)?.state, 'ready', id);
});
