/**
 * The tracer takes everything from the environment it is given (GatewayOptions.env, the config loader's), never from
 * process.env: an embedder or a test that gives the gateway its own OTEL_* variables gets those alone.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { GatewayConfigSchema } from '../src/config/schema.js';
import { startTracing, tracingSettings } from '../src/observability/tracing.js';
import { startOtlpReceiver } from './fixtures/otlp-receiver.js';

const PROCESS_ONLY = {
    OTEL_EXPORTER_OTLP_HEADERS: 'x-process=leaked',
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-process-traces=leaked',
    OTEL_RESOURCE_ATTRIBUTES: 'process.only=leaked',
    OTEL_SERVICE_NAME: 'process-name',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/process'
};

test("the exporter and the resource read the environment given, not the process's", async t => {
    const otlp = await startOtlpReceiver();
    t.after(() => otlp.close());
    for (const [name, value] of Object.entries(PROCESS_ONLY)) {
        const before = process.env[name];
        process.env[name] = value;
        t.after(() => (before === undefined ? delete process.env[name] : (process.env[name] = before)));
    }
    const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-given=yes',
        OTEL_RESOURCE_ATTRIBUTES: 'team=a%20b',
        OTEL_SERVICE_NAME: 'given-name'
    };
    const tracing = await startTracing(tracingSettings(GatewayConfigSchema.shape.tracing.parse({}), env), pino({ level: 'silent' }));
    t.after(() => tracing.shutdown(5000));
    tracing.tracer.start('prompts/list', { kind: 'server' })!.end();
    await tracing.shutdown(5000);
    const [span] = await otlp.until(spans => spans.length > 0);
    assert.equal(span!.resource['service.name'], 'given-name');
    assert.equal(span!.resource.team, 'a b');
    assert.equal(span!.resource['process.only'], undefined);
    assert.equal(otlp.headers[0]!['x-given'], 'yes');
    assert.equal(otlp.headers[0]!['x-process'], undefined);
    assert.equal(otlp.headers[0]!['x-process-traces'], undefined);
});
