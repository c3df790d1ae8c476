/**
 * The log is written in batches (asynchronously, 4 KiB or 250 ms at a time), and nothing of it is lost on the way
 * out: the gateway run as users run it (dist/cli.js), stopped by SIGTERM right after its last answer over HTTP and
 * over --stdio, failing at start-up, and refusing a bad config with exit 2. Each line the process wrote is on stderr,
 * whole, and in order (what the CLI prints on its way out after the log's lines).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { test, type TestContext } from 'node:test';
import { ROOT, stopChild, waitFor } from './helpers.js';
import { messagesOf, openRawSession, post } from './raw-http.js';

const CLI = path.join(ROOT, 'dist/cli.js');
const GETS = 5;

/** A config file with a files upstream `docs` holding one prompt, `docs__hello`. */
async function configFile(t: TestContext, config: Record<string, unknown> = {}): Promise<string> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-log-flush-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await mkdir(path.join(dir, 'prompts'));
    await writeFile(path.join(dir, 'prompts', 'hello.md'), '---\ntitle: Hello\n---\nHello there.\n');
    const file = path.join(dir, 'gateway.json');
    await writeFile(file, JSON.stringify({ listen: { port: 0 }, upstreams: [{ id: 'docs', transport: 'files', path: path.join(dir, 'prompts') }], ...config }));
    return file;
}

interface Run {
    child: ChildProcessWithoutNullStreams;
    stderr: () => string;
    exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function run(t: TestContext, args: string[], env: Record<string, string> = {}): Run {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, LOG_FORMAT: 'json', LOG_LEVEL: 'info', ...env }, stdio: 'pipe' });
    t.after(() => stopChild(child));
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // 'close': stderr read to its end too.
    const exited = once(child, 'close').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
    return { child, stderr: () => stderr, exited };
}

/** The JSON lines of stderr (the lines the CLI prints itself are not JSON). */
function logLines(stderr: string): Record<string, unknown>[] {
    return stderr
        .split('\n')
        .filter(line => line.startsWith('{'))
        .map(line => JSON.parse(line) as Record<string, unknown>);
}

test('HTTP: SIGTERM right after the last answer: every access line is written, then the shutdown', async t => {
    const gateway = run(t, ['--config', await configFile(t)]);
    await waitFor(() => /listening on (\S+)/.test(gateway.stderr()), 60_000, 'listening');
    const url = /listening on (\S+)/.exec(gateway.stderr())![1]!;
    const session = await openRawSession(url);
    const requestIds: string[] = [];
    for (let i = 0; i < GETS; i++) {
        const requestId = `flush-http-${i}`;
        const response = await post(url, { jsonrpc: '2.0', id: 10 + i, method: 'prompts/get', params: { name: 'docs__hello' } }, { ...session.headers, 'x-request-id': requestId });
        const [answer] = await messagesOf(response);
        assert.ok(answer?.result !== undefined, JSON.stringify(answer));
        requestIds.push(requestId);
    }
    gateway.child.kill('SIGTERM');
    const { code } = await gateway.exited;
    assert.equal(code, 0);
    const lines = logLines(gateway.stderr());
    const access = lines.filter(line => line.msg === 'prompt get');
    assert.deepEqual(
        access.map(line => [line.requestId, line.prompt, line.outcome]),
        requestIds.map(id => [id, 'docs__hello', 'ok'])
    );
    const shutdown = lines.findIndex(line => line.msg === 'shutting down');
    assert.ok(shutdown > lines.indexOf(access.at(-1)!), 'the shutdown line comes after the last access line');
});

test('--stdio: SIGTERM right after the last answer: every access line is on stderr', async t => {
    const gateway = run(t, ['--config', await configFile(t), '--stdio']);
    const answers: string[] = [];
    createInterface({ input: gateway.child.stdout }).on('line', line => answers.push(line));
    const send = (message: unknown) => gateway.child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await waitFor(() => answers.length >= 1, 60_000, 'initialize answered');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    for (let i = 0; i < GETS; i++) send({ jsonrpc: '2.0', id: 10 + i, method: 'prompts/get', params: { name: 'docs__hello' } });
    await waitFor(() => answers.length >= 1 + GETS, 60_000, 'the gets answered');
    gateway.child.kill('SIGTERM');
    const { code } = await gateway.exited;
    assert.equal(code, 0);
    const access = logLines(gateway.stderr()).filter(line => line.msg === 'prompt get');
    assert.equal(access.length, GETS);
    assert.equal(new Set(access.map(line => line.requestId)).size, GETS);
});

test('a failed start-up (the port is taken): the log lines, then the reason, exit 1', async t => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    t.after(() => taken.close());
    const { port } = taken.address() as { port: number };
    const gateway = run(t, ['--config', await configFile(t, { listen: { host: '127.0.0.1', port } })], { LOG_LEVEL: 'debug' });
    const { code } = await gateway.exited;
    assert.equal(code, 1);
    const stderr = gateway.stderr();
    // The last line the log wrote before the process gave up, whole, and before the CLI's own last word.
    const lastLogLine = stderr.lastIndexOf('"msg":"start-up failed; stopping what was started"}\n');
    const reason = stderr.indexOf('mcp-prompt-gateway: ');
    assert.ok(lastLogLine >= 0, stderr);
    assert.ok(reason > lastLogLine, stderr);
    assert.match(stderr.slice(reason), /EADDRINUSE/);
});

test('a bad config: its message, whole, and exit 2', async t => {
    const gateway = run(t, ['--config', await configFile(t, { listen: { port: 'eighty' } })]);
    const { code } = await gateway.exited;
    assert.equal(code, 2);
    assert.match(gateway.stderr(), /listen\.port/);
    assert.ok(gateway.stderr().endsWith('\n'));
});

test('a bad LOG_LEVEL: the message and the usage to its last line, exit 2', async t => {
    const gateway = run(t, ['--config', await configFile(t)], { LOG_LEVEL: 'loud' });
    const { code } = await gateway.exited;
    assert.equal(code, 2);
    assert.match(gateway.stderr(), /^LOG_LEVEL must be one of /);
    assert.match(gateway.stderr(), /--help {11}print this help\n$/);
});
