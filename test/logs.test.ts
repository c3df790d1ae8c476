/**
 * Logs: a request id from the downstream request to the upstream call and back (response header, HTTP upstream
 * header, every log line written on the request's behalf), upstream lines naming their upstream, the access log,
 * and, in --stdio mode, nothing but protocol messages on stdout whatever the log level and format.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../src/gateway.js';
import { capturingLogger, ROOT, startRawHttp, startTestGateway, stdioFixture, stopChild, waitFor, type HttpFixture } from './helpers.js';
import { openRawSession, type RawSession } from './raw-http.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request ids and the access log over HTTP', () => {
    let remote: HttpFixture;
    let gateway: RunningGateway;
    let session: RawSession;
    const { logger, lines } = capturingLogger();

    before(async () => {
        remote = await startRawHttp(['--echo-request-id']);
        gateway = await startTestGateway({ upstreams: [{ id: 'remote', transport: 'streamable-http', url: remote.url }, stdioFixture('local')] }, logger);
        session = await openRawSession(gateway.url!);
    });

    after(async () => {
        await gateway?.close();
        await remote?.close();
    });

    const get = (name: string, requestId?: string) => post(name, requestId === undefined ? session.headers : { ...session.headers, 'x-request-id': requestId });

    // JSON-RPC ids must be unique among a session's requests in flight: the transport routes answers by id.
    let nextId = 100;
    async function post(name: string, headers: Record<string, string>) {
        const response = await fetch(gateway.url!, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
            body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'prompts/get', params: { name } })
        });
        const body = await response.text();
        return { requestId: response.headers.get('x-request-id'), body };
    }

    const linesOf = (requestId: string) => lines().filter(line => line.requestId === requestId);

    test('a plain incoming id is answered back, passed to the HTTP upstream and put on the access-log line', async () => {
        const { requestId, body } = await get('remote__ok-0', 'trace-abc-123');
        assert.equal(requestId, 'trace-abc-123');
        assert.match(body, /\(x-request-id: trace-abc-123\)/, 'the upstream received the same id');
        const access = linesOf('trace-abc-123').find(line => line.msg === 'prompt get');
        assert.deepEqual(
            { ...access, time: undefined, ms: undefined },
            {
                level: 'info',
                name: 'mcp-prompt-gateway',
                requestId: 'trace-abc-123',
                operation: 'get',
                client: 'anonymous',
                upstream: 'remote',
                prompt: 'remote__ok-0',
                outcome: 'ok',
                msg: 'prompt get',
                time: undefined,
                ms: undefined
            }
        );
        assert.equal(typeof access?.ms, 'number');
    });

    test('without an id, or with one that could forge a header or a log line, the gateway makes its own', async () => {
        for (const incoming of [undefined, 'has space', 'x'.repeat(200)]) {
            const { requestId, body } = await get('remote__ok-1', incoming);
            assert.match(requestId ?? '', UUID, String(incoming));
            assert.match(body, new RegExp(`\\(x-request-id: ${requestId}\\)`));
            assert.equal(linesOf(requestId!).filter(line => line.msg === 'prompt get').length, 1);
        }
    });

    test('an upstream failure: its lines carry the request id and the upstream id, the access line is a warning', async () => {
        await get('local__fail-internal', 'trace-fail-1');
        await waitFor(() => linesOf('trace-fail-1').length >= 2, 20_000, 'the failure logged');
        const failure = linesOf('trace-fail-1').find(line => line.msg === 'upstream request failed');
        assert.equal(failure?.upstream, 'local');
        const access = linesOf('trace-fail-1').find(line => line.msg === 'prompt get');
        assert.equal(access?.level, 'warn');
        assert.equal(access?.outcome, 'upstream_error');
        // The upstream's secret-bearing message stays out of the logs.
        assert.ok(!JSON.stringify(linesOf('trace-fail-1')).includes('hunter2'));
    });

    test('each request has its own id: concurrent requests never share one', async () => {
        const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => get(`remote__ok-${i % 3}`)));
        assert.equal(new Set(ids.map(result => result.requestId)).size, 8);
        for (const { requestId, body } of ids) assert.match(body, new RegExp(`\\(x-request-id: ${requestId}\\)`));
    });

    test('a request turned away before MCP still names its request id', async () => {
        const unknownSession = await fetch(gateway.url!, {
            method: 'POST',
            headers: { 'mcp-session-id': 'nope', 'x-request-id': 'trace-404', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: '{}'
        });
        assert.equal(unknownSession.status, 404);
        assert.equal(unknownSession.headers.get('x-request-id'), 'trace-404');
        const foreign = await fetch(gateway.url!, { method: 'POST', headers: { origin: 'https://evil.example' } });
        assert.equal(foreign.status, 403);
        assert.match(foreign.headers.get('x-request-id') ?? '', UUID);
    });
});

describe('--stdio: stdout carries protocol messages only', () => {
    for (const format of ['json', 'pretty'] as const) {
        test(`LOG_FORMAT=${format} at debug: every stdout line is JSON-RPC, logs go to stderr (and name the request)`, async () => {
            const dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-logs-'));
            const file = path.join(dir, 'stdio.json');
            await writeFile(file, JSON.stringify({ upstreams: [stdioFixture('local')] }));
            const child = spawn(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--config', file, '--stdio'], {
                cwd: ROOT,
                env: { ...process.env, LOG_LEVEL: 'debug', LOG_FORMAT: format },
                stdio: ['pipe', 'pipe', 'pipe']
            });
            const stdout: string[] = [];
            let stderr = '';
            createInterface({ input: child.stdout }).on('line', line => stdout.push(line));
            child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
            const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
            try {
                send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
                await waitFor(() => stdout.length >= 1, 60_000, 'initialize answered');
                send({ jsonrpc: '2.0', method: 'notifications/initialized' });
                send({ jsonrpc: '2.0', id: 2, method: 'prompts/list', params: {} });
                send({ jsonrpc: '2.0', id: 3, method: 'prompts/get', params: { name: 'local__with-required', arguments: { topic: 'logs' } } });
                send({ jsonrpc: '2.0', id: 4, method: 'prompts/get', params: { name: 'local__fail-internal' } });
                // Both access lines: a get's line may be written after its answer reached stdout.
                await waitFor(() => stdout.length >= 4 && stderr.split('prompt get').length > 2, 60_000, 'answers and access lines');
                for (const line of stdout) assert.equal((JSON.parse(line) as { jsonrpc?: string }).jsonrpc, '2.0', line);
                if (format === 'json') {
                    const logs = stderr
                        .split('\n')
                        .filter(line => line !== '')
                        .map(line => JSON.parse(line) as Record<string, unknown>);
                    const access = logs.filter(line => line.msg === 'prompt get');
                    assert.equal(access.length, 2);
                    for (const line of access) assert.match(String(line.requestId), UUID);
                    assert.notEqual(access[0]!.requestId, access[1]!.requestId);
                    assert.ok(logs.some(line => line.upstream === 'local' && line.msg === 'upstream connected'));
                } else {
                    // Readable lines for a person: not JSON, level names spelled out, fields still there.
                    assert.throws(() => JSON.parse(stderr.split('\n')[0]!) as unknown);
                    assert.match(stderr, /INFO.*prompt get/);
                    assert.match(stderr, /requestId: "[0-9a-f-]{36}"/);
                }
            } finally {
                child.stdin.end();
                await stopChild(child);
            }
        });
    }
});
