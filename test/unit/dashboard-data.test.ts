/**
 * The dashboard's JSON from a real metric registry: events recorded through GatewayMetrics, read back through
 * prom-client's JSON, then derived (top prompts, error rates, clients, history).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildDashboardData, latencyBuckets, SERVER_OPERATIONS, TOP_PROMPTS, type DashboardInput } from '../../src/observability/dashboard-data.js';
import { DashboardFeed } from '../../src/observability/dashboard-feed.js';
import { GatewayMetrics, type PromptRequest } from '../../src/observability/metrics.js';
import { requestIdFrom } from '../../src/diagnostics/log-context.js';

const UPSTREAMS = [
    { id: 'docs', up: true, prompts: 14 },
    { id: 'code', up: false, prompts: 0 }
];

function metricsWith(requests: PromptRequest[]): GatewayMetrics {
    const metrics = new GatewayMetrics(
        {
            upstreams: () => UPSTREAMS,
            sessions: () => ({ http: 3, stdio: 1 }),
            requestsInFlight: () => ({ call: 2, listen: 1 }),
            faults: () => [{ upstream: 'code', kind: 'connect_failed', count: 2 }]
        },
        { version: '9.9.9', processMetrics: false }
    );
    for (const request of requests) metrics.promptRequest(request);
    return metrics;
}

const get = (prompt: string | undefined, client: string, outcome: string, ms = 2): PromptRequest => ({
    operation: 'get',
    client,
    upstream: prompt?.split('__')[0],
    prompt,
    outcome,
    seconds: ms / 1000
});

async function dataOf(metrics: GatewayMetrics, extra: Partial<DashboardInput> = {}) {
    return buildDashboardData({
        families: await metrics.registry.getMetricsAsJSON(),
        upstreams: [
            { id: 'docs', state: 'ready' },
            {
                id: 'code',
                state: 'down',
                lastError: 'Upstream code failed: connection closed',
                overrides: { unmatched: ['retired'], unknownArguments: [], clashes: [] }
            }
        ],
        recent: [],
        samples: [0],
        intervalSeconds: 5,
        version: '9.9.9',
        uptimeSeconds: 12.4,
        now: new Date('2026-11-21T10:00:00Z'),
        ...extra
    });
}

test('totals, upstream rows and error rates count what was recorded', async () => {
    const requests = [
        ...Array.from({ length: 6 }, () => get('docs__a', 'alice', 'ok')),
        get('docs__a', 'alice', 'upstream_error'),
        get('docs__a', 'bob', 'timeout'),
        get('docs__b', 'bob', 'invalid_params'),
        get('docs__b', 'bob', 'denied'),
        get(undefined, 'bob', 'invalid_params')
    ];
    const metrics = metricsWith(requests);
    metrics.promptRequest({ operation: 'list', client: 'carol', upstream: undefined, prompt: undefined, outcome: 'ok', seconds: 0.001 });
    metrics.listChanged('docs');
    metrics.reconnecting('code');
    metrics.rejected('unauthorized');
    const data = await dataOf(metrics);
    assert.deepEqual(data.totals, {
        promptGets: 11,
        promptGetErrors: 5,
        promptLists: 1,
        completions: 0,
        listChangedReceived: 1,
        listChangedSent: 0,
        rejected: 1,
        sessions: { http: 3, stdio: 1 }
    });
    const [docs, code] = data.upstreams;
    // Only upstream_error and timeout count against the upstream: invalid and denied requests are the caller's.
    assert.deepEqual(docs, {
        id: 'docs',
        state: 'ready',
        up: true,
        prompts: 14,
        gets: 10,
        errors: 2,
        errorRate: 0.2,
        reconnects: 0,
        listChangedReceived: 1,
        inputRounds: 0,
        inputRoundsByPath: {}
    });
    assert.equal(code?.errorRate, null, 'no gets, no rate');
    assert.equal(code?.up, false);
    assert.equal(code?.reconnects, 1);
    assert.equal(code?.lastError, 'Upstream code failed: connection closed');
    assert.deepEqual(code?.overrides, { unmatched: ['retired'], unknownArguments: [], clashes: [] }, 'overrides that did not apply are shown');
    assert.equal(data.uptimeSeconds, 12);
    assert.equal(data.generatedAt, '2026-11-21T10:00:00.000Z');
});

test('input rounds per upstream, in all and by path, from the gets that asked; input requests by path, method and outcome; what waits', async () => {
    const metrics = new GatewayMetrics(
        {
            upstreams: () => UPSTREAMS,
            sessions: () => ({}),
            requestsInFlight: () => ({ call: 0, listen: 0 }),
            faults: () => [],
            inputWaiting: () => ({ asked: 2, held: 1 })
        },
        { version: '9.9.9', processMetrics: false }
    );
    const asked = (path: string, rounds: number, outcome = 'ok'): PromptRequest => ({ ...get('docs__a', 'alice', outcome), rounds, path });
    for (const request of [asked('mrtr', 1), asked('mrtr', 1), asked('request', 2), asked('request_to_mrtr', 1, 'timeout'), get('docs__a', 'bob', 'ok')]) {
        metrics.promptRequest(request);
    }
    metrics.inputRequestEnded({ upstream: 'docs', path: 'request', method: 'elicitation/create', outcome: 'answered' });
    metrics.inputRequestEnded({ upstream: 'docs', path: 'mrtr', method: 'sampling/createMessage', outcome: 'refused' });
    const data = await dataOf(metrics);
    const [docs, code] = data.upstreams;
    assert.equal(docs?.inputRounds, 5);
    assert.deepEqual(docs?.inputRoundsByPath, { mrtr: 2, request: 2, request_to_mrtr: 1 });
    assert.deepEqual([code?.inputRounds, code?.inputRoundsByPath], [0, {}]);
    const families = await metrics.registry.getMetricsAsJSON();
    const family = (name: string) => families.find(candidate => candidate.name === name)?.values.map(({ labels, value }) => ({ ...labels, value }));
    assert.deepEqual(family('mcp_gateway_input_requests_total'), [
        { upstream: 'docs', path: 'request', method: 'elicitation/create', outcome: 'answered', value: 1 },
        { upstream: 'docs', path: 'mrtr', method: 'sampling/createMessage', outcome: 'refused', value: 1 }
    ]);
    assert.deepEqual(family('mcp_gateway_input_waiting'), [
        { kind: 'asked', value: 2 },
        { kind: 'held', value: 1 }
    ]);
});

test('top prompts: by gets, ties by name, at most ten, never the unknown bucket; latency only from successful gets', async () => {
    const requests: PromptRequest[] = [];
    for (let i = 0; i < 12; i++) for (let n = 0; n <= i; n++) requests.push(get(`docs__p${String(i).padStart(2, '0')}`, 'alice', 'ok', 1 + i));
    requests.push(get('docs__tie-b', 'alice', 'ok'), get('docs__tie-a', 'alice', 'ok'));
    requests.push(...Array.from({ length: 50 }, () => get(undefined, 'alice', 'invalid_params')));
    requests.push(get('docs__failing', 'alice', 'upstream_error'), get('docs__failing', 'alice', 'upstream_error'));
    const data = await dataOf(metricsWith(requests));
    assert.equal(data.prompts.length, TOP_PROMPTS);
    assert.deepEqual(
        data.prompts.map(row => row.prompt),
        ['docs__p11', 'docs__p10', 'docs__p09', 'docs__p08', 'docs__p07', 'docs__p06', 'docs__p05', 'docs__p04', 'docs__p03', 'docs__p02']
    );
    const top = data.prompts[0]!;
    assert.equal(top.gets, 12);
    assert.equal(top.upstream, 'docs');
    // Every observation of p11 took 12 ms: all 12 in the bucket from 10 to 25 ms, the quantiles interpolated in it
    // as Prometheus' histogram_quantile does.
    assert.ok(Math.abs(top.p50Ms! - (10 + 15 * 0.5)) < 1e-9 && Math.abs(top.p95Ms! - (10 + 15 * 0.95)) < 1e-9, `${top.p50Ms} / ${top.p95Ms}`);
    // p02's 3 gets took 3 ms each: in the bucket from 2.5 to 5 ms.
    const p02 = data.prompts.at(-1)!;
    assert.ok(Math.abs(p02.p50Ms! - (2.5 + 2.5 * 0.5)) < 1e-9, `${p02.p50Ms}`);

    const ties = await dataOf(metricsWith([get('docs__tie-b', 'alice', 'ok'), get('docs__tie-a', 'alice', 'ok'), get('docs__failing', 'alice', 'timeout')]));
    assert.deepEqual(
        ties.prompts.map(row => [row.prompt, row.gets, row.errors, row.p50Ms === null]),
        [
            ['docs__failing', 1, 1, true],
            ['docs__tie-a', 1, 0, false],
            ['docs__tie-b', 1, 0, false]
        ]
    );
});

test('clients: gets, lists and errors per client, busiest first', async () => {
    const metrics = metricsWith([get('docs__a', 'alice', 'ok'), get('docs__a', 'bob', 'ok'), get('docs__a', 'bob', 'denied'), get(undefined, 'bob', 'invalid_params')]);
    for (let i = 0; i < 5; i++) metrics.promptRequest({ operation: 'list', client: 'carol', upstream: undefined, prompt: undefined, outcome: 'ok', seconds: 0.001 });
    const data = await dataOf(metrics);
    assert.deepEqual(data.clients, [
        { client: 'carol', gets: 0, lists: 5, errors: 0 },
        { client: 'bob', gets: 3, lists: 0, errors: 2 },
        { client: 'alice', gets: 1, lists: 0, errors: 0 }
    ]);
});

test('history: gets per interval from the running totals, the current interval last', async () => {
    const metrics = metricsWith(Array.from({ length: 17 }, () => get('docs__a', 'alice', 'ok')));
    const data = await dataOf(metrics, { samples: [0, 4, 4, 10] });
    assert.deepEqual(data.history, { intervalSeconds: 5, promptGets: [4, 0, 6, 7] });
    assert.equal(await metrics.promptGetsTotal(), 17);
});

test('request ids: a plain incoming id is kept; anything else is replaced by a fresh one', () => {
    assert.equal(requestIdFrom('abc-123_X.y:z'), 'abc-123_X.y:z');
    for (const bad of [undefined, '', 'a b', 'line\nbreak', 'x'.repeat(129), '"quoted"', ['a', 'b'], 42]) {
        const id = requestIdFrom(bad);
        assert.match(id, /^[0-9a-f-]{36}$/, JSON.stringify(bad));
        assert.notEqual(id, requestIdFrom(bad), 'fresh each time');
    }
});

test("top prompts' latency: of the gets since the window's start; a prompt the start lacks, since the beginning", async () => {
    const metrics = metricsWith(Array.from({ length: 10 }, () => get('docs__a', 'alice', 'ok', 2)));
    const since = latencyBuckets((await metrics.registry.getMetricsAsJSON()).find(family => family.name === SERVER_OPERATIONS)!.values);
    for (let i = 0; i < 10; i++) metrics.promptRequest(get('docs__a', 'alice', 'ok', 200));
    for (let i = 0; i < 4; i++) metrics.promptRequest(get('docs__b', 'alice', 'ok', 30));
    const rows = async (extra: Partial<DashboardInput>) => new Map((await dataOf(metrics, extra)).prompts.map(row => [row.prompt, row.p50Ms]));
    // Since the start: half the gets at most 2.5 ms.
    assert.equal((await rows({})).get('docs__a'), 2.5);
    const windowed = await rows({ latencySince: since });
    // The window's 10 gets, all from 100 to 250 ms.
    assert.equal(windowed.get('docs__a'), 100 + 150 * 0.5);
    // A prompt the start lacks: since the beginning.
    assert.ok(Math.abs(windowed.get('docs__b')! - (25 + 25 * 0.5)) < 1e-9, String(windowed.get('docs__b')));
    // Nothing since the start: no latency.
    const latest = latencyBuckets((await metrics.registry.getMetricsAsJSON()).find(family => family.name === SERVER_OPERATIONS)!.values);
    assert.equal((await rows({ latencySince: latest })).get('docs__a'), null);
});

test('the feed: latency of the last ten minutes, from a snapshot a minute', async t => {
    t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: 0 });
    const metrics = metricsWith(Array.from({ length: 10 }, () => get('docs__a', 'alice', 'ok', 2)));
    const feed = new DashboardFeed(metrics, { version: '9.9.9', upstreams: () => [] });
    t.after(() => feed.close());
    const minutes = async (count: number) => {
        for (let i = 0; i < count; i++) {
            t.mock.timers.tick(60_000);
            // The snapshot reads the histogram asynchronously.
            await new Promise(resolve => setImmediate(resolve));
        }
    };
    const p50 = async () => (await feed.data()).prompts.find(row => row.prompt === 'docs__a')?.p50Ms;
    await minutes(1);
    assert.equal(await p50(), 1 + 1.5 * 0.5);
    for (let i = 0; i < 10; i++) metrics.promptRequest(get('docs__a', 'alice', 'ok', 200));
    // Minute 11: the window starts at the snapshot of minute 1, before the slow gets.
    await minutes(10);
    assert.equal(await p50(), 100 + 150 * 0.5);
    // Minute 12: at minute 2's, after them: nothing in the window.
    await minutes(1);
    assert.equal(await p50(), null);
});
