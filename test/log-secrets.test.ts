/**
 * No configured secret reaches the log, at any level, whatever an upstream sends back: transport errors carry
 * HTTP statuses, never response bodies, and the logger redacts configured secret values wherever they appear in a
 * line (here, an upstream's stderr), with the values of the config in force after a reload.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../src/config/load.js';
import { capturingLogger, startRawHttp, startTestGateway, waitFor } from './helpers.js';

const BEARER = 'upstream-bearer-token-0123456789';
const API_KEY = 'upstream-api-key-9876543210';

test('an upstream answering 401 with the request headers in its body: no secret and no body text in any log line', { timeout: 60_000 }, async t => {
    const fixture = await startRawHttp(['--unauthorized-echo']);
    t.after(() => fixture.close());
    const { logger, lines } = capturingLogger();
    const headers = { Authorization: `Bearer ${BEARER}`, 'X-API-Key': API_KEY };
    const gateway = await startTestGateway(
        {
            reconnect: { initialMs: 60_000, maxMs: 60_000 },
            upstreams: (['streamable-http', 'sse', 'http'] as const).map(transport => ({ id: transport, transport, url: fixture.url, timeoutMs: 5000, headers }))
        },
        logger
    );
    t.after(() => gateway.close());
    for (const upstream of gateway.upstreams) {
        assert.equal(upstream.state, 'down', upstream.id);
        assert.match(upstream.lastError ?? '', /HTTP 401/, upstream.id);
    }
    const logged = lines()
        .map(line => JSON.stringify(line))
        .join('\n');
    assert.match(logged, /upstream down/, 'the failures were logged');
    for (const secret of [BEARER, API_KEY]) assert.ok(!logged.includes(secret), `${secret} in the log:\n${logged}`);
    assert.ok(!logged.includes('you sent'), `upstream body text in the log:\n${logged}`);
});

const ENV_SECRET = 'stdio-env-secret-0123456789';
const NEXT_SECRET = 'stdio-env-secret-after-reload';

/** A child that prints its LEAKY_TOKEN on stderr and then waits (it is no MCP server: its handshake times out). */
function leakyChild(token: string) {
    const script = 'process.stderr.write("my token is " + process.env.LEAKY_TOKEN + "\\n"); setInterval(() => {}, 1000);';
    return { id: 'leaky', transport: 'stdio', command: process.execPath, args: ['-e', script], env: { LEAKY_TOKEN: token }, timeoutMs: 1000 };
}

test('a stdio upstream that prints a configured env value on stderr: redacted in the log, also after a reload', { timeout: 60_000 }, async t => {
    const { logger, lines } = capturingLogger();
    const config = { reconnect: { initialMs: 60_000, maxMs: 60_000 }, upstreams: [leakyChild(ENV_SECRET)] };
    const gateway = await startTestGateway(config, logger);
    t.after(() => gateway.close());
    const stderrLines = () => lines().filter(line => line.stream === 'stderr');
    await waitFor(() => stderrLines().length === 1, 10_000, "the child's stderr line");
    assert.equal(stderrLines()[0]!.msg, 'my token is [redacted]');

    await gateway.reload(parseConfig(JSON.stringify({ listen: { port: 0 }, ...config, upstreams: [leakyChild(NEXT_SECRET)] }), 'test config', process.env));
    await waitFor(() => stderrLines().length === 2, 10_000, "the restarted child's stderr line");
    assert.equal(stderrLines()[1]!.msg, 'my token is [redacted]');
    const logged = JSON.stringify(lines());
    for (const secret of [ENV_SECRET, NEXT_SECRET]) assert.ok(!logged.includes(secret), `${secret} in the log`);
});
