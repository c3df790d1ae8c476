/**
 * What joins the gateway's logs and metrics to traces, for sampled and unsampled traces, tracing on and off: the
 * access line's `trace_id` (always, when the request has a trace) and `span_id` (only a span the gateway records),
 * and the exemplars of an OpenMetrics scrape (only for a sampled trace: one a backend holds). A gateway in this
 * process, its log captured, in front of test/fixtures/trace-recorder.ts over stdio; spans go to
 * test/fixtures/otlp-receiver.ts.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { parseConfig } from '../src/config/load.js';
import { startGateway } from '../src/gateway.js';
import { compiledFixture } from './fixture-build.js';
import { startOtlpReceiver, SPAN_KIND, type OtlpReceiver } from './fixtures/otlp-receiver.js';
import { capturingLogger, closeAfter, connectHttp, ROOT, upstreamsReady } from './helpers.js';

const CLIENT_SPAN = '00f067aa0ba902b7';
const SAMPLED = '4bf92f3577b34da6a3ce929d0e0e4736';
const UNSAMPLED = '5bf92f3577b34da6a3ce929d0e0e4736';
const traceparent = (trace: string, flags: string) => `00-${trace}-${CLIENT_SPAN}-${flags}`;

interface Joined {
    client: Client;
    url: string;
    /** The access line of the get whose trace is `traceId`. */
    accessLine: (traceId: string) => Record<string, unknown> | undefined;
}

/** The gateway (tracing on: exporting to `otlp`), with a 2025 stdio recorder and a connected client. */
async function joined(t: TestContext, otlp?: OtlpReceiver): Promise<Joined> {
    const upstream = { id: 's25', transport: 'stdio', command: process.execPath, args: [compiledFixture('trace-recorder'), '--era', '2025'], cwd: ROOT, timeoutMs: 30_000 };
    const tracing = otlp === undefined ? {} : { tracing: { enabled: true, endpoint: otlp.url } };
    const config = parseConfig(JSON.stringify({ listen: { port: 0 }, upstreams: [upstream], ...tracing }), 'test config', {});
    const { logger, lines } = capturingLogger();
    const gateway = await startGateway(config, { logger, env: { OTEL_BSP_SCHEDULE_DELAY: '20' } });
    closeAfter(t, () => gateway.close());
    await upstreamsReady(gateway);
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    return { client, url: gateway.url!, accessLine: traceId => lines().find(line => line.msg === 'prompt get' && line.trace_id === traceId) };
}

async function getTraced(client: Client, trace: string, flags: string): Promise<void> {
    await client.getPrompt({ name: 's25__echo', _meta: { traceparent: traceparent(trace, flags) } });
}

/** The OpenMetrics scrape's exemplars, as their label sets. */
async function exemplars(url: string): Promise<string[]> {
    const response = await fetch(new URL('/metrics', url), { headers: { accept: 'application/openmetrics-text; version=1.0.0' } });
    assert.match(response.headers.get('content-type') ?? '', /openmetrics/);
    return [...(await response.text()).matchAll(/ # (\{[^}]*\})/g)].map(match => match[1]!);
}

describe('logs and metrics join traces', () => {
    test('tracing on: a sampled trace is on the access line with the SERVER span and is an exemplar; an unsampled one has no span_id and no exemplar', async t => {
        const otlp = await startOtlpReceiver();
        closeAfter(t, () => otlp.close());
        const { client, url, accessLine } = await joined(t, otlp);
        await getTraced(client, SAMPLED, '01');
        // After the sampled one: an exemplar is the last of its bucket, and the unsampled get must not take its place.
        await getTraced(client, UNSAMPLED, '00');
        const spans = await otlp.until(all => all.some(span => span.traceId === SAMPLED && span.kind === SPAN_KIND.server));
        const server = spans.find(span => span.traceId === SAMPLED && span.kind === SPAN_KIND.server)!;
        assert.equal(accessLine(SAMPLED)?.span_id, server.spanId);
        const unsampled = accessLine(UNSAMPLED);
        assert.ok(unsampled, 'the unsampled get is logged with its trace_id');
        assert.ok(!('span_id' in unsampled), `no span_id of a span nobody records: ${JSON.stringify(unsampled)}`);
        const shown = await exemplars(url);
        assert.ok(shown.includes(`{trace_id="${SAMPLED}",span_id="${server.spanId}"}`), shown.join('\n'));
        assert.ok(!shown.some(exemplar => exemplar.includes(UNSAMPLED)), shown.join('\n'));
    });

    test("tracing off: the caller's sampled trace is an exemplar (trace_id alone), its unsampled one is not; both are on the access line without span_id", async t => {
        const { client, url, accessLine } = await joined(t);
        await getTraced(client, SAMPLED, '01');
        await getTraced(client, UNSAMPLED, '00');
        for (const trace of [SAMPLED, UNSAMPLED]) {
            const line = accessLine(trace);
            assert.ok(line, `the get of ${trace} is logged with its trace_id`);
            assert.ok(!('span_id' in line));
        }
        const shown = await exemplars(url);
        assert.ok(shown.includes(`{trace_id="${SAMPLED}"}`), shown.join('\n'));
        assert.ok(!shown.some(exemplar => exemplar.includes(UNSAMPLED)), shown.join('\n'));
    });
});
