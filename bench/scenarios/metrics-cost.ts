/**
 * What recording a request costs, in the bench process (no HTTP): the metric updates of one prompts/get, timed in a
 * tight loop over realistic label cardinality, and the access-log line of one request written by the gateway's own
 * logger to a sink that drops it, with and without configured secret values to redact (the two taking turns), and
 * the search alone. End to end, the line-up's "gateway, metrics and dashboard off" (full runs) compares the same
 * gateway with metrics on and off.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/diagnostics/logger.js';
import { GatewayMetrics } from '../../src/observability/metrics.js';
import { Redactor } from '../../src/diagnostics/redaction.js';

export interface MetricsCostResult {
    /** Nanoseconds per prompts/get for its metric updates (the gets counter, the server and client operation histograms). */
    metricsNs: number;
    /** Nanoseconds per access-log line (the gateway's logger, JSON, to a sink that drops it). */
    logLineNs: number;
    /** The same, with `secrets` configured secret values searched for (and redacted) in every line. */
    logLineRedactedNs: number;
    /** The search alone, over one serialised access-log line. */
    redactNs: number;
    secrets: number;
    prompts: number;
    clients: number;
    rounds: number;
}

const PROMPTS = 200;
/** Configured secret values (header, env, URL and auth values) a gateway with a dozen upstreams may have. */
const SECRETS = 20;
const CLIENTS = 10;

const BLOCK = 1_000;

/**
 * Nanoseconds per call of each op, after as many calls (up to 20,000) of each to warm them up; the ops take turns
 * in blocks of a thousand calls, so that neither is timed alone while the JIT or the GC works for the other.
 */
function nsPerOp(rounds: number, ...ops: ((i: number) => void)[]): number[] {
    for (const op of ops) for (let i = 0; i < Math.min(rounds, 20_000); i++) op(i);
    const totals = ops.map(() => 0n);
    for (let from = 0; from < rounds; from += BLOCK) {
        ops.forEach((op, k) => {
            const start = process.hrtime.bigint();
            for (let i = from; i < Math.min(rounds, from + BLOCK); i++) op(i);
            totals[k]! += process.hrtime.bigint() - start;
        });
    }
    return totals.map(total => Number(total) / rounds);
}

export function measureMetricsCost(rounds: number): MetricsCostResult {
    const metrics = new GatewayMetrics(
        { upstreams: () => [], sessions: () => ({}), requestsInFlight: () => ({ call: 0, listen: 0 }), faults: () => [] },
        { version: 'bench', processMetrics: false }
    );
    const prompts = Array.from({ length: PROMPTS }, (_, i) => `up-${i % 5}__prompt-${String(i).padStart(3, '0')}`);
    const clients = Array.from({ length: CLIENTS }, (_, i) => `client-${i}`);
    const [metricsNs] = nsPerOp(rounds, i => {
        const prompt = prompts[i % PROMPTS]!;
        const upstream = prompt.slice(0, 4);
        metrics.promptRequest({ operation: 'get', client: clients[i % CLIENTS]!, upstream, prompt, outcome: 'ok', seconds: 0.0012 + (i % 7) * 1e-4 });
        metrics.upstreamRequest(upstream, 'prompts/get', 0.001, 'ok');
    });
    const secrets = Array.from({ length: SECRETS }, (_, i) => `secret-${i}-${randomBytes(12).toString('base64url')}`);
    const accessLine = (logger: Logger) => (i: number) =>
        logger.info({ operation: 'get', client: clients[i % CLIENTS], upstream: 'up-1', prompt: prompts[i % PROMPTS], outcome: 'ok', ms: 1.2 }, 'prompt get');
    const logTo = (secretsToRedact: string[]) =>
        createLogger({ level: 'info', format: 'json', destination: new Writable({ write: (_chunk, _encoding, done) => done() }), secrets: secretsToRedact });
    const [logLineNs, logLineRedactedNs] = nsPerOp(rounds / 4, accessLine(logTo([])), accessLine(logTo(secrets)));
    const redactor = new Redactor(secrets);
    const line = `${JSON.stringify({ level: 'info', time: new Date().toISOString(), name: 'mcp-prompt-gateway', requestId: randomUUID(), operation: 'get', client: clients[0], upstream: 'up-1', prompt: prompts[0], outcome: 'ok', ms: 1.2, msg: 'prompt get' })}\n`;
    const [redactNs] = nsPerOp(rounds, () => redactor.redact(line));
    return {
        metricsNs: metricsNs!,
        logLineNs: logLineNs!,
        logLineRedactedNs: logLineRedactedNs!,
        redactNs: redactNs!,
        secrets: SECRETS,
        prompts: PROMPTS,
        clients: CLIENTS,
        rounds
    };
}
