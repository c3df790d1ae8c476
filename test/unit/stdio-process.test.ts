/**
 * StdioProcessTransport and ChildReaper against real processes: garbage on stdout,
 * children and grandchildren that resist ending, and owners killed with SIGKILL.
 * Processes are found by a random marker in their command line (/proc/<pid>/cmdline).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { Client, SdkError, SdkErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { isOversizedMark } from '../../src/upstream/oversized.js';
import { ChildReaper } from '../../src/upstream/reaper.js';
import { StdioProcessTransport, type StdioProcessOptions } from '../../src/upstream/stdio-process.js';
import { compiledFixture } from '../fixture-build.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STUBBORN = compiledFixture('stubborn-server');
const DRIVER = compiledFixture('reaper-driver');
const ENV = { PATH: process.env.PATH ?? '' };
const MAX_LINE = 1024 * 1024;
const TIMEOUT = { timeout: 60_000 };

function newMarker(): string {
    return `stdio-test-${randomBytes(6).toString('hex')}`;
}

/** Live (not zombie) processes other than this one whose command line holds the marker. */
function markerPids(marker: string): number[] {
    const pids: number[] = [];
    for (const entry of readdirSync('/proc')) {
        const pid = Number(entry);
        if (!Number.isInteger(pid) || pid === process.pid) continue;
        try {
            if (
                readFileSync(`/proc/${pid}/cmdline`, 'utf8')
                    .split('\0')
                    .some(arg => arg.includes(marker)) &&
                isRunning(pid)
            )
                pids.push(pid);
        } catch {
            // Gone between the listing and the read.
        }
    }
    return pids;
}

/** A zombie has exited; only its parent has not collected it yet. */
function isRunning(pid: number): boolean {
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
        return false;
    }
}

function killByMarker(marker: string): void {
    for (const pid of markerPids(marker)) {
        try {
            process.kill(pid, 'SIGKILL');
        } catch {
            // Already gone.
        }
    }
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
        if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await new Promise(resolve => setTimeout(resolve, 50));
    }
}

function stubborn(marker: string, flags: string[], extra: Partial<StdioProcessOptions> = {}): StdioProcessTransport {
    return new StdioProcessTransport({
        command: process.execPath,
        args: [STUBBORN, '--marker', marker, ...flags],
        env: ENV,
        cwd: ROOT,
        killGraceMs: 500,
        maxLineBytes: MAX_LINE,
        ...extra
    });
}

/** Counts onclose calls and resolves `closed` on the first. */
function watchClose(transport: StdioProcessTransport): { count: () => number; closed: Promise<void> } {
    let count = 0;
    const closed = new Promise<void>(resolve => {
        transport.onclose = () => {
            count++;
            resolve();
        };
    });
    return { count: () => count, closed };
}

describe('StdioProcessTransport: stdout', () => {
    test('garbage lines go to onNoise, messages around them still arrive, and send() reaches the child', TIMEOUT, async () => {
        const script = `
            const out = text => process.stdout.write(text);
            out('not json\\n');
            out('{"jsonrpc":"2.0","method":"notifications/first"}\\n');
            out('{"valid":"json, but not JSON-RPC"}\\n');
            out('\\n   \\n');
            out('${'x'.repeat(1000)}\\n');
            out('{"jsonrpc":"2.0","id":1,"result":{}}\\r\\n');
            out('{"jsonrpc":"2.0",');
            setTimeout(() => out('"method":"notifications/split"}\\n'), 50);
            process.stderr.write('to stderr\\n');
            // Says so if it is signalled: it should end by itself, when its stdin does.
            process.on('SIGTERM', () => { process.stderr.write('SIGTERM\\n'); process.exit(1); });
            // Echo every line from stdin; ends when stdin ends.
            require('node:readline').createInterface({ input: process.stdin }).on('line', line => out(line + '\\n'));
        `;
        const messages: JSONRPCMessage[] = [];
        const noise: string[] = [];
        const stderr: string[] = [];
        const transport = new StdioProcessTransport({
            command: process.execPath,
            args: ['-e', script],
            env: ENV,
            killGraceMs: 2000,
            maxLineBytes: MAX_LINE,
            onNoise: line => noise.push(line),
            onStderrLine: line => stderr.push(line)
        });
        const errors: Error[] = [];
        transport.onerror = error => errors.push(error);
        transport.onmessage = message => messages.push(message);
        const close = watchClose(transport);
        await transport.start();
        try {
            await waitFor('the split message', () => messages.length === 3);
            await transport.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
            await waitFor('the echo', () => messages.length === 4);

            assert.deepEqual(messages, [
                { jsonrpc: '2.0', method: 'notifications/first' },
                { jsonrpc: '2.0', id: 1, result: {} },
                { jsonrpc: '2.0', method: 'notifications/split' },
                { jsonrpc: '2.0', id: 7, method: 'ping' }
            ]);
            assert.deepEqual(noise, ['not json', '{"valid":"json, but not JSON-RPC"}', 'x'.repeat(200)]);
            await waitFor('the stderr line', () => stderr.includes('to stderr'));
            assert.deepEqual(errors, []);

            // This child ends when its stdin does: close() needs no signal.
            await transport.close();
            assert.ok(!stderr.includes('SIGTERM'), 'the child got SIGTERM: close() did not let it end by itself on stdin end');
            assert.equal(close.count(), 1);
            await assert.rejects(transport.send({ jsonrpc: '2.0', method: 'x' }), (error: unknown) => {
                return error instanceof SdkError && error.code === SdkErrorCode.NotConnected;
            });
        } finally {
            await transport.close();
        }
    });

    test('a line over maxLineBytes is skipped: a response fails its own request, anything else is dropped; the transport stays', TIMEOUT, async () => {
        const script = `
            const out = text => process.stdout.write(text);
            const pad = 'y'.repeat(5000);
            out('{"jsonrpc":"2.0","id":3,"result":{"pad":"' + pad + '"}}\\n');
            out('{"jsonrpc":"2.0","method":"notifications/big","params":{"pad":"' + pad + '"}}\\n');
            out('{"jsonrpc":"2.0","result":{"pad":"' + pad + '"},"id":"s-1"}\\r\\n');
            out('{"jsonrpc":"2.0","id":4,"result":{}}\\n');
            require('node:readline').createInterface({ input: process.stdin }).on('line', line => out(line + '\\n'));
        `;
        const messages: JSONRPCMessage[] = [];
        const dropped: number[] = [];
        const transport = new StdioProcessTransport({
            command: process.execPath,
            args: ['-e', script],
            env: ENV,
            killGraceMs: 200,
            maxLineBytes: 1024,
            onOversizedDropped: bytes => dropped.push(bytes)
        });
        const errors: Error[] = [];
        transport.onerror = error => errors.push(error);
        transport.onmessage = message => messages.push(message);
        const close = watchClose(transport);
        await transport.start();
        try {
            await waitFor('the small response', () => messages.length === 3);
            await transport.send({ jsonrpc: '2.0', id: 8, method: 'ping' });
            await waitFor('the echo', () => messages.length === 4);

            const standIn = (id: string | number) => ({ jsonrpc: '2.0', id, error: { code: -32603, message: 'response larger than 1024 bytes (limits.maxUpstreamMessageBytes)' } });
            const [first, second, ...rest] = messages.map(message => {
                if (!('error' in message)) return message;
                assert.ok(isOversizedMark(message.error.data), 'marked as the stand-in for an oversized response');
                return { ...message, error: { code: message.error.code, message: message.error.message } };
            });
            assert.deepEqual([first, second], [standIn(3), standIn('s-1')]);
            assert.deepEqual(rest, [
                { jsonrpc: '2.0', id: 4, result: {} },
                { jsonrpc: '2.0', id: 8, method: 'ping' }
            ]);
            assert.deepEqual(dropped, [5000 + '{"jsonrpc":"2.0","method":"notifications/big","params":{"pad":""}}'.length]);
            assert.deepEqual(errors, []);
            assert.equal(close.count(), 0, 'still open');
        } finally {
            await transport.close();
        }
    });

    test('send() fails instead of queueing without end when the child never reads its stdin', TIMEOUT, async () => {
        const transport = new StdioProcessTransport({
            command: process.execPath,
            args: ['-e', 'setInterval(() => {}, 1e6)'],
            env: ENV,
            killGraceMs: 200,
            maxLineBytes: MAX_LINE,
            maxPendingWriteBytes: 64 * 1024
        });
        const errors: Error[] = [];
        transport.onerror = error => errors.push(error);
        await transport.start();
        try {
            const message: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/big', params: { pad: 'z'.repeat(32 * 1024) } };
            let failure: unknown;
            // The kernel's pipe buffer takes the first few hundred KiB; then the queue grows up to the cap.
            for (let sent = 0; sent < 1000 && failure === undefined; sent++) {
                const send = transport.send(message);
                // The queued sends settle (with an error) only when close() destroys the pipe.
                send.catch(() => {});
                const nextTurn = new Promise<undefined>(resolve => setImmediate(resolve, undefined));
                failure = await Promise.race([
                    send.then(
                        () => undefined,
                        (error: unknown) => error
                    ),
                    nextTurn
                ]);
            }
            assert.ok(failure instanceof SdkError && failure.code === SdkErrorCode.SendFailed, `send failed with: ${String(failure)}`);
            assert.ok(errors.includes(failure), 'reported through onerror as well');
        } finally {
            await transport.close();
        }
    });

    test('a command that does not exist rejects start() saying so, and onclose fires once', TIMEOUT, async () => {
        for (const [command, env, message] of [
            ['/nonexistent/mcp-server', ENV, 'command "/nonexistent/mcp-server" not found'],
            ['mcp-no-such-server', { PATH: '/nonexistent/bin' }, 'command "mcp-no-such-server" not found (searched PATH: /nonexistent/bin)']
        ] as const) {
            const transport = new StdioProcessTransport({ command, args: [], env, killGraceMs: 100, maxLineBytes: MAX_LINE });
            const close = watchClose(transport);
            await assert.rejects(transport.start(), (error: NodeJS.ErrnoException) => {
                assert.equal(error.message, message);
                assert.equal(error.code, 'ENOENT');
                return true;
            });
            await close.closed;
            await transport.close();
            assert.equal(close.count(), 1);
            assert.equal(transport.pid, undefined);
        }
    });
});

describe('StdioProcessTransport: with the SDK Client', () => {
    test('a Client connects, lists prompts and closes the child with it', TIMEOUT, async () => {
        const marker = newMarker();
        const transport = stubborn(marker, [], { killGraceMs: 300 });
        const close = watchClose(transport);
        const client = new Client({ name: 'test', version: '1.0.0' });
        try {
            await client.connect(transport);
            const { prompts } = await client.listPrompts();
            assert.deepEqual(
                prompts.map(prompt => prompt.name),
                ['hello']
            );
            await client.close();
            await close.closed;
            assert.deepEqual(markerPids(marker), []);
        } finally {
            killByMarker(marker);
        }
    });
});

describe('StdioProcessTransport: ending children', () => {
    test('close() ends a server that ignores stdin end and SIGTERM, and its grandchild', TIMEOUT, async () => {
        const marker = newMarker();
        const reaper = new ChildReaper();
        const transport = stubborn(marker, ['--ignore-sigterm', '--grandchild'], { reaper });
        const close = watchClose(transport);
        try {
            assert.ok(reaper.available, 'the watchdog started');
            await transport.start();
            await waitFor('server and grandchild', () => markerPids(marker).length === 2, 20_000);

            const started = Date.now();
            await Promise.all([transport.close(), transport.close()]);
            const elapsed = Date.now() - started;

            assert.deepEqual(markerPids(marker), []);
            assert.ok(elapsed >= 2 * 500 - 50, `stdin end and SIGTERM each got their grace period (took ${elapsed} ms)`);
            assert.equal(close.count(), 1);
        } finally {
            killByMarker(marker);
            const watchdog = reaper.pid;
            await reaper.close();
            if (watchdog !== undefined) await waitFor('the watchdog to exit', () => !isRunning(watchdog));
        }
    });

    test('a server that exits by itself fires onclose once, and its grandchild is killed', TIMEOUT, async () => {
        const marker = newMarker();
        const transport = stubborn(marker, ['--ignore-sigterm', '--grandchild', '--exit-after', '1500']);
        const close = watchClose(transport);
        const errors: Error[] = [];
        transport.onerror = error => errors.push(error);
        try {
            await transport.start();
            // Starting takes a moment; the grandchild has to be up before the server leaves.
            await waitFor('server and grandchild', () => markerPids(marker).length === 2, 20_000);
            await close.closed;
            await waitFor('no marker process', () => markerPids(marker).length === 0, 5_000);
            await new Promise(resolve => setTimeout(resolve, 100));
            assert.equal(close.count(), 1);
            await transport.close();
            assert.equal(close.count(), 1);
            assert.deepEqual(errors, []);
        } finally {
            killByMarker(marker);
        }
    });

    for (const how of ['close()', 'the server exiting by itself'] as const) {
        test(`a grandchild gets SIGTERM and its grace, not SIGKILL at once, after ${how}`, TIMEOUT, async () => {
            const marker = newMarker();
            const dir = mkdtempSync(path.join(tmpdir(), 'stdio-test-'));
            const file = path.join(dir, 'sigterm');
            let gracefulLines = 0;
            const exitAfter = how === 'close()' ? [] : ['--exit-after', '3000'];
            const transport = stubborn(marker, ['--grandchild-graceful', file, ...exitAfter], {
                killGraceMs: 1000,
                onStderrLine: line => (gracefulLines += line === 'stubborn: grandchild graceful' ? 1 : 0)
            });
            const close = watchClose(transport);
            try {
                await transport.start();
                await waitFor('the grandchild to listen for SIGTERM', () => gracefulLines === 1, 20_000);
                // The server ends on SIGTERM at once (like npx); the grandchild takes 200 ms.
                if (how === 'close()') await transport.close();
                else await close.closed;
                assert.equal(readFileSync(file, 'utf8'), 'SIGTERM');
                assert.deepEqual(markerPids(marker), []);
                assert.equal(close.count(), 1);
            } finally {
                killByMarker(marker);
                rmSync(dir, { recursive: true, force: true });
            }
        });
    }

    test('a reaper whose watchdog cannot start is not available, and children still work', TIMEOUT, async () => {
        const reaper = new ChildReaper({ nodePath: '/nonexistent/node' });
        assert.equal(reaper.available, false);
        const transport = new StdioProcessTransport({
            command: process.execPath,
            args: ['-e', 'process.stdin.resume()'],
            env: ENV,
            killGraceMs: 500,
            maxLineBytes: MAX_LINE,
            reaper
        });
        await transport.start();
        await transport.close();
        await reaper.close();
    });
});

describe('ChildReaper: the owner killed with SIGKILL', () => {
    for (const scope of ['the driver', "the driver's whole process group"] as const) {
        test(`SIGKILL of ${scope} leaves no server, grandchild or watchdog behind`, TIMEOUT, async () => {
            const marker = newMarker();
            const driver = spawn(process.execPath, [DRIVER, '--marker', marker, '--count', '2'], {
                cwd: ROOT,
                env: ENV,
                stdio: ['ignore', 'pipe', 'pipe'],
                detached: scope !== 'the driver'
            });
            let driverStderr = '';
            driver.stderr.on('data', (chunk: Buffer) => (driverStderr += chunk.toString()));
            const driverExited = new Promise(resolve => driver.once('exit', resolve));
            try {
                const ready = await new Promise<string>((resolve, reject) => {
                    const timer = setTimeout(() => reject(new Error(`driver not ready; stderr: ${driverStderr}`)), 30_000);
                    createInterface({ input: driver.stdout }).on('line', line => {
                        if (!line.startsWith('READY ')) return;
                        clearTimeout(timer);
                        resolve(line);
                    });
                    driver.once('exit', code => reject(new Error(`driver exited (${code}); stderr: ${driverStderr}`)));
                });
                const watchdog = Number(ready.split(' ')[1]);
                assert.ok(Number.isInteger(watchdog), `the driver has a watchdog: ${ready}`);
                const children = () => markerPids(marker).filter(pid => pid !== driver.pid);
                assert.equal(children().length, 4, 'two servers, each with a grandchild');

                if (scope === 'the driver') driver.kill('SIGKILL');
                else process.kill(-(driver.pid ?? 0), 'SIGKILL');
                await driverExited;

                // The servers ignore SIGTERM: the watchdog waits its 2 s grace, then SIGKILLs.
                await waitFor('no marker process', () => children().length === 0, 10_000);
                await waitFor('the watchdog to exit', () => !isRunning(watchdog), 5_000);
            } finally {
                driver.kill('SIGKILL');
                killByMarker(marker);
            }
        });
    }
});
