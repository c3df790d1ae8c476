/**
 * Stopping the built CLI (`dist/cli.js`): SIGTERM/SIGINT drain requests in flight (bounded by shutdownTimeoutMs),
 * refuse new ones with 503 and exit 0 with every child gone; SIGKILL of the gateway (or of its process group)
 * still leaves no child behind, thanks to the watchdog. Processes are found by a random marker in their argv.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { connectHttp, fixtureStats, getJson, processesWith, ROOT, sleep, stdioFixture, waitFor } from './helpers.js';
import { compiledFixture } from './fixture-build.js';
import { initializeBody, post } from './raw-http.js';

const CLI = path.join(ROOT, 'dist/cli.js');
const STUBBORN = compiledFixture('stubborn-server');
const TIMEOUT = { timeout: 120_000 };
let dir: string;

interface Gateway {
    child: ChildProcess;
    url: string;
    /** Resolves with the exit code (null when killed by a signal). */
    exited: Promise<number | null>;
    stderr: () => string;
    /** The reaper's watchdog process, a child of the gateway. */
    watchdog: number | undefined;
}

/** Upstreams whose processes all carry `token` in their argv: a fixture, and a stubborn server with a grandchild. */
function upstreams(token: string) {
    return [
        stdioFixture('local', { name: `${token}-fixture` }),
        {
            id: 'stubborn',
            transport: 'stdio',
            command: process.execPath,
            args: [STUBBORN, '--marker', `${token}-stubborn`, '--ignore-sigterm', '--grandchild'],
            cwd: ROOT,
            killGraceMs: 300,
            // Start-up of a node process on a loaded machine (connecting is bounded by timeoutMs).
            timeoutMs: 30_000
        }
    ];
}

/** The fields of /proc/<pid>/stat after the command name (state, ppid, ...), and the command line; undefined when gone. */
function proc(pid: number | string): { state: string; ppid: number; cmdline: string } | undefined {
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const [state = '', ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return { state, ppid: Number(ppid), cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8') };
    } catch {
        return undefined;
    }
}

/** The reaper's watchdog (`node -e <script>`) is the child of the gateway whose command line holds its script. */
const isWatchdog = (info: ReturnType<typeof proc>) => info !== undefined && info.state !== 'Z' && info.cmdline.includes('GRACE_MS');
const watchdogOf = (gatewayPid: number) => readdirSync('/proc').find(entry => /^\d+$/.test(entry) && proc(entry)?.ppid === gatewayPid && isWatchdog(proc(entry)));
const watchdogAlive = (gateway: Gateway) => gateway.watchdog !== undefined && isWatchdog(proc(gateway.watchdog));

function killAll(pids: number[]): void {
    for (const pid of pids) {
        try {
            process.kill(pid, 'SIGKILL');
        } catch {
            // Already gone.
        }
    }
}

async function startCli(token: string, extra: Record<string, unknown> = {}, detached = false): Promise<Gateway> {
    const file = path.join(dir, `${randomBytes(4).toString('hex')}.json`);
    await writeFile(file, JSON.stringify({ listen: { port: 0 }, reload: { watch: false }, upstreams: upstreams(token), ...extra }));
    const child = spawn(process.execPath, [CLI, '--config', file], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], detached });
    const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)));
    let stderr = '';
    const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stderr }).on('line', line => {
            stderr += `${line}\n`;
            const match = /^listening on (http:\/\/\S+)$/.exec(line);
            if (match) resolve(match[1]!);
        });
        void exited.then(code => reject(new Error(`gateway exited with ${code} before listening:\n${stderr}`)));
    });
    // fixture + stubborn + its grandchild
    await waitFor(() => processesWith(token).length >= 3, 60_000, 'the upstream processes');
    return { child, url, exited, stderr: () => stderr, watchdog: Number(watchdogOf(child.pid!)) || undefined };
}

/** Kills whatever a test left behind: the gateway, its watchdog, every marker process. */
function cleanUp(gateway: Gateway | undefined, token: string): void {
    if (gateway !== undefined && gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGKILL');
    if (gateway !== undefined && watchdogAlive(gateway)) killAll([gateway.watchdog!]);
    killAll(processesWith(token));
}

/** After the gateway is gone: no marker process and no watchdog within `ms`. */
async function assertNothingLeft(gateway: Gateway, token: string, ms: number): Promise<number> {
    const start = Date.now();
    try {
        await waitFor(() => processesWith(token).length === 0 && !watchdogAlive(gateway), ms, 'no leftovers');
    } catch {
        assert.fail(`left behind: markers ${JSON.stringify(processesWith(token))}, watchdog alive ${watchdogAlive(gateway)}`);
    }
    return Date.now() - start;
}

type Outcome<T> = { ok: true; value: T; at: number } | { ok: false; error: unknown; at: number };

/** How `promise` settles, and when; never rejects. */
function outcome<T>(promise: Promise<T>): Promise<Outcome<T>> {
    return promise.then(
        value => ({ ok: true as const, value, at: Date.now() }),
        (error: unknown) => ({ ok: false as const, error, at: Date.now() })
    );
}

/** The outcome if it arrives within `ms`, else undefined. */
const within = <T>(promise: Promise<T>, ms: number) => Promise.race([promise, sleep(ms).then(() => undefined)]);

const newToken = () => `shutdown-${randomBytes(6).toString('hex')}`;

/** Waits until the fixture is working on a slow request (asked through the gateway, before it is signalled). */
async function slowStarted(client: Client): Promise<void> {
    await waitFor(async () => (await fixtureStats(client, 'local__stats')).slowStarted > 0, 20_000, 'the slow request to reach the fixture');
}

describe('CLI shutdown', () => {
    before(async () => {
        assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)');
        dir = await mkdtemp(path.join(tmpdir(), 'gateway-shutdown-'));
    });
    after(() => rm(dir, { recursive: true, force: true }));

    test('SIGTERM: the request in flight completes, new requests get 503, exit 0, no child left', TIMEOUT, async t => {
        const token = newToken();
        let gateway: Gateway | undefined;
        const clients: Client[] = [];
        try {
            gateway = await startCli(token);
            assert.ok(gateway.watchdog !== undefined, 'the watchdog runs');
            const client = await connectHttp(gateway.url);
            const other = await connectHttp(gateway.url);
            clients.push(client, other);
            const readyz = new URL('/readyz', gateway.url).href;
            assert.equal((await getJson(readyz)).status, 200);

            let slowSettled = false;
            const slow = outcome(client.getPrompt({ name: 'local__slow', arguments: { ms: '5000' } }, { timeout: 25_000 })).finally(() => (slowSettled = true));
            await slowStarted(other);
            const signalled = Date.now();
            gateway.child.kill('SIGTERM');
            await waitFor(async () => (await getJson(readyz)).body.status === 'stopping', 10_000, '/readyz to say stopping');
            assert.equal((await getJson(readyz)).status, 503);

            const late = await post(gateway.url, initializeBody());
            assert.equal(late.status, 503, 'a new session during the drain');
            assert.match(JSON.stringify(await late.json()), /Gateway is shutting down/);
            await assert.rejects(other.listPrompts(), 'a request on an existing session during the drain');
            assert.ok(!slowSettled, 'the 503s came while the slow request was still running');

            assert.equal(await gateway.exited, 0, gateway.stderr());
            t.diagnostic(`SIGTERM to exit: ${Date.now() - signalled} ms (request of 5000 ms in flight)`);
            const settled = await within(slow, 10_000);
            assert.ok(settled !== undefined, 'no answer to the request in flight 10 s after the gateway exited: its response was lost');
            assert.ok(settled.ok, `the request in flight failed: ${String(!settled.ok && settled.error)}`);
            const content = settled.value.messages[0]?.content;
            assert.equal(content?.type === 'text' ? content.text : undefined, 'slept');
            await assertNothingLeft(gateway, token, 10_000);
        } finally {
            for (const client of clients) await client.close().catch(() => {});
            cleanUp(gateway, token);
        }
    });

    test('shutdownTimeoutMs bounds the wait: a request that runs on fails, and the gateway exits 0 in time', TIMEOUT, async t => {
        const token = newToken();
        let gateway: Gateway | undefined;
        let client: Client | undefined;
        try {
            gateway = await startCli(token, { shutdownTimeoutMs: 500 });
            client = await connectHttp(gateway.url);
            const slowMs = 60_000;
            const slow = outcome(client.getPrompt({ name: 'local__slow', arguments: { ms: String(slowMs) } }, { timeout: slowMs + 5000 }));
            await slowStarted(client);
            const signalled = Date.now();
            gateway.child.kill('SIGTERM');
            assert.equal(await gateway.exited, 0, gateway.stderr());
            const exitMs = Date.now() - signalled;
            t.diagnostic(`SIGTERM to exit: ${exitMs} ms (shutdownTimeoutMs 500, killGraceMs 300 / 2000)`);
            // It gave up on the request rather than wait for it: the request fails (below) instead of answering after slowMs.
            assert.match(gateway.stderr(), /requests still in flight at shutdown/);

            const settled = await within(slow, 10_000);
            assert.ok(settled !== undefined, 'the request in flight still hangs 10 s after the gateway exited: it got no error response');
            assert.ok(!settled.ok, 'the request in flight fails');
            t.diagnostic(`request failed ${settled.at - signalled} ms after SIGTERM: ${String(settled.error)}`);
            await assertNothingLeft(gateway, token, 10_000);
        } finally {
            await client?.close().catch(() => {});
            cleanUp(gateway, token);
        }
    });

    test('SIGINT stops it like SIGTERM', TIMEOUT, async () => {
        const token = newToken();
        let gateway: Gateway | undefined;
        try {
            gateway = await startCli(token);
            gateway.child.kill('SIGINT');
            assert.equal(await gateway.exited, 0, gateway.stderr());
            await assertNothingLeft(gateway, token, 10_000);
        } finally {
            cleanUp(gateway, token);
        }
    });

    for (const [what, detached] of [
        ['SIGKILL of the gateway', false],
        ["SIGKILL of the gateway's process group", true]
    ] as const) {
        test(`${what}: the watchdog ends every child and grandchild`, TIMEOUT, async t => {
            const token = newToken();
            let gateway: Gateway | undefined;
            try {
                gateway = await startCli(token, {}, detached);
                assert.equal((await getJson(new URL('/readyz', gateway.url).href)).status, 200);
                assert.ok(processesWith(token).length >= 3, 'fixture, stubborn server and its grandchild run');
                assert.ok(gateway.watchdog !== undefined, 'the watchdog runs');
                if (detached) process.kill(-gateway.child.pid!, 'SIGKILL');
                else gateway.child.kill('SIGKILL');
                assert.equal(await gateway.exited, null);
                const reapedMs = await assertNothingLeft(gateway, token, 10_000);
                t.diagnostic(`every child gone ${reapedMs} ms after the gateway died (watchdog grace 2000 ms)`);
            } finally {
                cleanUp(gateway, token);
            }
        });
    }
});
