/**
 * The exposition of a real metric registry in both formats: the MCP operation histograms (labels, buckets, trace
 * exemplars shown in OpenMetrics only), and a Prometheus-format scrape after an OpenMetrics one unchanged
 * (prom-client would otherwise keep counters renamed). Which Accept headers ask for OpenMetrics.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayMetrics, wantsOpenMetrics, type PromptRequest } from '../../src/observability/metrics.js';
import { bucket, count, labelValues, parseExposition } from '../prometheus.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

function metricsWith(requests: PromptRequest[]): GatewayMetrics {
    const metrics = new GatewayMetrics(
        { upstreams: () => [], sessions: () => ({}), requestsInFlight: () => ({ call: 0, listen: 0 }), faults: () => [] },
        { version: '9.9.9', processMetrics: false }
    );
    for (const request of requests) metrics.promptRequest(request);
    return metrics;
}

const get = (prompt: string | undefined, outcome: string, seconds: number, trace?: PromptRequest['trace']): PromptRequest => ({
    operation: 'get',
    client: 'alice',
    upstream: prompt?.split('__')[0],
    prompt,
    outcome,
    seconds,
    trace
});

test('server operations by method, upstream and outcome; the prompt on successful gets only', async () => {
    const metrics = metricsWith([
        get('docs__a', 'ok', 0.003),
        get('docs__a', 'ok', 0.2),
        get('docs__a', 'timeout', 10),
        get(undefined, 'invalid_params', 0.001),
        { operation: 'list', client: 'alice', upstream: undefined, prompt: undefined, outcome: 'ok', seconds: 0.002 },
        { operation: 'complete', client: 'alice', upstream: 'docs', prompt: 'docs__a', outcome: 'ok', seconds: 0.004 }
    ]);
    metrics.upstreamRequest('docs', 'prompts/get', 0.15, 'ok');
    metrics.upstreamRequest('docs', 'prompts/get', 10, 'timeout');
    const scraped = parseExposition((await metrics.exposition()).body);
    const server = 'mcp_server_operation_duration_seconds';
    assert.equal(count(scraped, server, { method: 'prompts/get', upstream: 'docs', outcome: 'ok', prompt: 'docs__a' }), 2);
    assert.equal(bucket(scraped, server, '0.005', { method: 'prompts/get', upstream: 'docs', outcome: 'ok', prompt: 'docs__a' }), 1);
    assert.equal(count(scraped, server, { method: 'prompts/get', upstream: 'docs', outcome: 'timeout' }), 1);
    assert.equal(count(scraped, server, { method: 'prompts/get', upstream: '_unknown', outcome: 'invalid_params' }), 1);
    assert.equal(count(scraped, server, { method: 'prompts/list', outcome: 'ok' }), 1);
    assert.equal(count(scraped, server, { method: 'completion/complete', upstream: 'docs', outcome: 'ok' }), 1);
    assert.deepEqual([...labelValues(scraped, `${server}_count`, 'prompt')], ['docs__a']);
    const client = 'mcp_client_operation_duration_seconds';
    assert.equal(count(scraped, client, { method: 'prompts/get', upstream: 'docs', outcome: 'ok' }), 1);
    assert.equal(bucket(scraped, client, '60', { method: 'prompts/get', upstream: 'docs', outcome: 'timeout' }), 1);
    assert.equal(bucket(scraped, client, '5', { method: 'prompts/get', upstream: 'docs', outcome: 'timeout' }), 0);
    // Buckets from 1 ms to 60 s.
    const bounds = [...labelValues(scraped, `${client}_bucket`, 'le')];
    assert.equal(bounds[0], '0.001');
    assert.deepEqual(bounds.slice(-2), ['60', '+Inf']);
});

test("OpenMetrics shows the trace of a bucket's last observation of a sampled trace; the Prometheus format shows none", async () => {
    const unsampled = '5bf92f3577b34da6a3ce929d0e0e4736';
    const metrics = metricsWith([
        get('docs__a', 'ok', 0.003, { traceId: TRACE_ID, spanId: SPAN_ID, sampled: true }),
        get('docs__a', 'ok', 0.2),
        get('docs__b', 'ok', 0.2, { traceId: TRACE_ID, sampled: true }),
        // Last in its bucket, but no backend holds its trace: the sampled one stays the bucket's exemplar.
        get('docs__a', 'ok', 0.003, { traceId: unsampled, sampled: false })
    ]);
    const open = await metrics.exposition(true);
    assert.equal(open.contentType, 'application/openmetrics-text; version=1.0.0; charset=utf-8');
    assert.ok(open.body.endsWith('# EOF\n'));
    const exemplars = open.body.split('\n').filter(line => line.includes(' # {'));
    assert.deepEqual(
        exemplars.map(line => line.replace(/ [\d.]+$/, ' <timestamp>')),
        [
            `mcp_server_operation_duration_seconds_bucket{le="0.005",method="prompts/get",upstream="docs",outcome="ok",prompt="docs__a"} 2 # {trace_id="${TRACE_ID}",span_id="${SPAN_ID}"} 0.003 <timestamp>`,
            `mcp_server_operation_duration_seconds_bucket{le="0.25",method="prompts/get",upstream="docs",outcome="ok",prompt="docs__b"} 1 # {trace_id="${TRACE_ID}"} 0.2 <timestamp>`
        ]
    );
    assert.ok(!open.body.includes(unsampled));
    // Ids longer than W3C's are no exemplar (OpenMetrics bounds them), and never an error on the request's path.
    metrics.promptRequest(get('docs__c', 'ok', 0.2, { traceId: 'f'.repeat(200), sampled: true }));
    assert.ok(!(await metrics.exposition(true)).body.includes('f'.repeat(200)));
    const plain = await metrics.exposition(false);
    assert.equal(plain.contentType, 'text/plain; version=0.0.4; charset=utf-8');
    assert.ok(!plain.body.includes(TRACE_ID));
});

test('an OpenMetrics scrape leaves the Prometheus format and the JSON the dashboard reads as they were', async () => {
    const metrics = metricsWith([get('docs__a', 'ok', 0.003)]);
    const before = (await metrics.exposition(false)).body;
    const jsonBefore = (await metrics.registry.getMetricsAsJSON()).map(family => family.name);
    const open = (await metrics.exposition(true)).body;
    // OpenMetrics names a counter's family without `_total` and its samples with it.
    assert.match(open, /^# TYPE mcp_gateway_prompt_gets counter$/m);
    assert.match(open, /^mcp_gateway_prompt_gets_total\{/m);
    assert.equal((await metrics.exposition(false)).body, before);
    assert.match(before, /^# TYPE mcp_gateway_prompt_gets_total counter$/m);
    assert.deepEqual(
        (await metrics.registry.getMetricsAsJSON()).map(family => family.name),
        jsonBefore
    );
    assert.equal(await metrics.promptGetsTotal(), 1);
});

test("OpenMetrics when the scrape's Accept header asks for it at a q above 0", () => {
    const prometheus = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
    assert.equal(wantsOpenMetrics(prometheus), true);
    assert.equal(wantsOpenMetrics('Application/OpenMetrics-Text'), true);
    assert.equal(wantsOpenMetrics(undefined), false);
    assert.equal(wantsOpenMetrics('text/plain;version=0.0.4'), false);
    assert.equal(wantsOpenMetrics('*/*'), false);
    assert.equal(wantsOpenMetrics('application/openmetrics-text;q=0, text/plain'), false);
    assert.equal(wantsOpenMetrics('application/openmetrics-text; q=0.000'), false);
});
