/**
 * The access-log line's fields, written by the gateway's own logger: the request's trace as `trace_id` and
 * `span_id` when it has one, no such keys when it has none.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import type { UsageEvent } from '../../src/catalog/usage.js';
import { createLogger } from '../../src/diagnostics/logger.js';
import { accessFields, accessLog } from '../../src/observability/telemetry.js';

function written(event: UsageEvent): Record<string, unknown> {
    const chunks: string[] = [];
    const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
            chunks.push(chunk.toString());
            done();
        }
    });
    createLogger({ level: 'info', format: 'json', destination: sink }).info(accessFields(event), 'prompt get');
    return JSON.parse(chunks.join('')) as Record<string, unknown>;
}

const GET: UsageEvent = { operation: 'get', client: 'alice', entry: undefined, outcome: 'invalid_params', seconds: 0.00123 };

test('a traced request: trace_id and span_id on its line', () => {
    const line = written({ ...GET, trace: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', sampled: true } });
    assert.equal(line.trace_id, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(line.span_id, '00f067aa0ba902b7');
    assert.equal(line.ms, 1.2);
});

test("the caller's trace without a recorded span of the gateway's (tracing off, or unsampled): trace_id alone", () => {
    const line = written({ ...GET, trace: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', sampled: false } });
    assert.equal(line.trace_id, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.ok(!('span_id' in line));
});

test('no trace: no trace keys', () => {
    const line = written(GET);
    assert.deepEqual(
        Object.keys(line).filter(key => key.includes('_id')),
        []
    );
    assert.equal(line.client, 'alice');
    assert.equal(line.outcome, 'invalid_params');
});

test("the access line keeps the log's safety and level: a secret in a field is redacted, a level change reaches it", () => {
    const chunks: string[] = [];
    const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
            chunks.push(chunk.toString());
            done();
        }
    });
    const logger = createLogger({ level: 'info', format: 'json', destination: sink, secrets: ['alice-token-123'] });
    const access = accessLog(logger);
    access({ ...GET, client: 'alice-token-123' });
    const line = JSON.parse(chunks.join('')) as Record<string, unknown>;
    assert.equal(line.client, '[redacted]');
    assert.equal(line.msg, 'prompt get');
    assert.equal(line.name, 'mcp-prompt-gateway');

    // A reload sets the level on the gateway's logger: the access line follows it both ways.
    logger.level = 'warn';
    access(GET);
    assert.equal(chunks.length, 1);
    logger.level = 'debug';
    access({ ...GET, operation: 'list' });
    assert.equal(chunks.length, 2);
});
