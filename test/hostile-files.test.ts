/**
 * The built gateway (dist/cli.js) given files that are not regular files: a FIFO in a prompt folder (at start and
 * while running), an env file that turns into a FIFO under a running gateway, and --check over a FIFO, /dev/zero and
 * a client config nested 200,000 deep. The gateway answers, reports the file, keeps reloading and stops on SIGTERM.
 * Every wait is on an event (a stderr line, a notification, the process's exit), bounded by the test's timeout; a
 * gateway that blocks is killed at teardown and the FIFOs let go of their readers.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { before, describe, test, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { killAfter, makeFifo } from './fifo.js';
import { CLI_RUN_BOUND_MS, closeAfter, connectHttp, getJson, listAllPages, ROOT, silentStdio } from './helpers.js';

const CLI = path.join(ROOT, 'dist/cli.js');
const TIMEOUT = { timeout: 90_000 };
/** How long a stopped gateway may take to exit before the test fails (it exits in well under a second). */
const EXIT_MS = 20_000;

interface RunningCli {
    child: ChildProcess;
    url: string;
    logs: Record<string, unknown>[];
    /** Resolves with the first log line (present or future) that `match` accepts. */
    logged(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

async function startCli(t: TestContext, args: string[]): Promise<RunningCli> {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    killAfter(t, child);
    const logs: Record<string, unknown>[] = [];
    const waiting = new Set<{ match: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }>();
    const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stderr }).on('line', line => {
            const listening = /^listening on (\S+)$/.exec(line);
            if (listening) resolve(listening[1]!);
            if (!line.startsWith('{')) return;
            const entry = JSON.parse(line) as Record<string, unknown>;
            logs.push(entry);
            for (const waiter of waiting) {
                if (!waiter.match(entry)) continue;
                waiting.delete(waiter);
                waiter.resolve(entry);
            }
        });
        child.once('exit', code => reject(new Error(`gateway exited with ${code}`)));
    });
    const logged = (match: (line: Record<string, unknown>) => boolean) =>
        new Promise<Record<string, unknown>>(resolve => {
            const found = logs.find(match);
            if (found !== undefined) resolve(found);
            else waiting.add({ match, resolve });
        });
    return { child, url, logs, logged };
}

/** SIGTERM, then the exit code; fails if the process has not exited within EXIT_MS. */
async function stopWithSigterm(child: ChildProcess): Promise<number | null> {
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`no exit ${EXIT_MS} ms after SIGTERM`)), EXIT_MS);
    });
    try {
        const [code] = await Promise.race([exited, late]);
        return code;
    } finally {
        clearTimeout(timer);
    }
}

async function folder(t: TestContext): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-hostile-files-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    return dir;
}

/** Calls `check` after every list_changed notification until it returns true. */
async function untilListed(client: Client, check: (names: string[]) => boolean): Promise<void> {
    let notified: () => void = () => {};
    client.setNotificationHandler('notifications/prompts/list_changed', () => notified());
    for (;;) {
        const next = new Promise<void>(resolve => (notified = resolve));
        if (check((await listAllPages(client)).names)) return;
        await next;
    }
}

interface UpstreamHealth {
    id: string;
    state: string;
    problems?: { source: string; message: string }[];
}

describe('files that are not regular files, against the built gateway', () => {
    before(() => assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)'));

    test('a FIFO in a prompt folder: reported at start and while running, the folder keeps updating, SIGTERM exits', TIMEOUT, async t => {
        const dir = await folder(t);
        const prompts = path.join(dir, 'prompts');
        await writeFile(path.join(dir, 'gateway.json'), JSON.stringify({ listen: { port: 0 }, upstreams: [{ id: 'team', transport: 'files', path: 'prompts' }] }));
        await mkdir(prompts);
        await writeFile(path.join(prompts, 'ok.md'), 'Fine.');
        makeFifo(t, path.join(prompts, 'target'));
        await symlink(path.join(prompts, 'target'), path.join(prompts, 'p.md'));
        makeFifo(t, path.join(prompts, 'pipe.md'));

        const gateway = await startCli(t, ['--config', path.join(dir, 'gateway.json')]);
        const health = await getJson(new URL('/healthz', gateway.url).href);
        const [team] = health.body.upstreams as UpstreamHealth[];
        assert.equal(team?.state, 'ready');
        assert.deepEqual(
            team?.problems?.map(problem => [problem.source, problem.message]),
            [
                ['p.md', 'is a FIFO, not a regular file; not read'],
                ['pipe.md', 'is a FIFO, not a regular file; not read']
            ]
        );
        const warning = await gateway.logged(line => line.file === 'p.md');
        assert.equal(warning.msg, 'prompt file left out: p.md: is a FIFO, not a regular file; not read');
        const dashboard = await getJson(new URL('/dashboard/data', gateway.url).href);
        const shown = (dashboard.body.upstreams as { id: string; lastError?: string }[]).find(upstream => upstream.id === 'team');
        assert.match(shown?.lastError ?? '', /^p\.md: is a FIFO, not a regular file; not read \(and 1 more file left out\)$/);

        const client = await connectHttp(gateway.url);
        closeAfter(t, () => client.close());
        assert.deepEqual((await listAllPages(client)).names, ['team__ok']);
        // While running: a new link to a FIFO, then a new file; the new file is served, the link reported.
        makeFifo(t, path.join(prompts, 'other'));
        await symlink(path.join(prompts, 'other'), path.join(prompts, 'q.md'));
        await writeFile(path.join(prompts, 'new.md'), 'New.');
        await untilListed(client, names => names.includes('team__new'));
        await gateway.logged(line => line.file === 'q.md');
        await writeFile(path.join(prompts, 'later.md'), 'Later.');
        await untilListed(client, names => names.includes('team__later'));

        assert.equal(await stopWithSigterm(gateway.child), 0);
    });

    test('an env file that turns into a FIFO: the reload is rejected naming it, a later one applies, SIGTERM exits', TIMEOUT, async t => {
        const dir = await folder(t);
        const envFile = path.join(dir, 'quiet.env');
        await writeFile(envFile, 'MODE=one\n');
        const quiet = silentStdio('quiet', 'answer', {});
        await writeFile(path.join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { quiet: { command: quiet.command, args: quiet.args, envFile } } }));
        await writeFile(path.join(dir, 'gateway.json'), JSON.stringify({ listen: { port: 0 }, log: { level: 'debug' }, upstreamsFrom: [{ file: 'mcp.json' }] }));
        const gateway = await startCli(t, ['--config', path.join(dir, 'gateway.json')]);

        // Swapped in as editors and ConfigMaps do: made beside it, renamed over it.
        makeFifo(t, path.join(dir, 'fifo.tmp'));
        await rename(path.join(dir, 'fifo.tmp'), envFile);
        t.after(() => rm(envFile, { force: true }));
        const rejected = await gateway.logged(line => line.msg === 'config reload rejected; keeping the running config');
        assert.match(String(rejected.problems), new RegExp(`mcpServers\\.quiet\\.envFile: is a FIFO, not a regular file \\(${envFile}\\); fix envFile`));

        await writeFile(path.join(dir, 'env.tmp'), 'MODE=two\n');
        await rename(path.join(dir, 'env.tmp'), envFile);
        const reloaded = await gateway.logged(line => line.msg === 'config reloaded');
        assert.deepEqual(reloaded.restarted, ['quiet']);

        assert.equal(await stopWithSigterm(gateway.child), 0);
    });

    describe('--check', () => {
        const check = (args: string[]) => spawnSync(process.execPath, [CLI, ...args, '--check'], { cwd: ROOT, encoding: 'utf8', timeout: CLI_RUN_BOUND_MS, killSignal: 'SIGKILL' });
        const client = (dir: string, envFile: string) => {
            const file = path.join(dir, 'mcp.json');
            return writeFile(file, JSON.stringify({ mcpServers: { docs: { command: 'node', envFile } } })).then(() => file);
        };

        test('--from a client config whose envFile is a FIFO or /dev/zero exits 2 naming it', TIMEOUT, async t => {
            const dir = await folder(t);
            const fifo = makeFifo(t, path.join(dir, 'docs.env'));
            for (const [envFile, what] of [
                [fifo, 'a FIFO'],
                ['/dev/zero', 'a device']
            ] as const) {
                const result = check(['--from', await client(dir, envFile)]);
                assert.equal(result.status, 2, result.stderr);
                assert.match(result.stderr, new RegExp(`mcpServers\\.docs\\.envFile: is ${what}, not a regular file \\(${envFile}\\); fix envFile`));
            }
        });

        test('a config that is a FIFO exits 2 naming it', TIMEOUT, async t => {
            const fifo = makeFifo(t, path.join(await folder(t), 'gateway.json'));
            const result = check(['--config', fifo]);
            assert.equal(result.status, 2, result.stderr);
            assert.match(result.stderr, new RegExp(`is a FIFO, not a regular file \\(${fifo}\\); pass an existing JSON file with --config`));
        });

        test('a client config nested 200,000 deep exits 2 with one message naming the file and the limit', TIMEOUT, async t => {
            const dir = await folder(t);
            const file = path.join(dir, 'mcp.json');
            await writeFile(file, `// deep\n{ "mcpServers": { "docs": { "command": "node", "args": ${'['.repeat(200_000)}${']'.repeat(200_000)} } } }`);
            const result = check(['--from', file]);
            assert.equal(result.status, 2, result.stderr);
            // Column 117: the 62nd "[", inside three objects, opens level 65.
            assert.equal(
                result.stderr.trim(),
                `Invalid config ${file}:2:117:\n  - (top level): nested deeper than 64 levels (the limit for client config files); flatten it there`
            );
        });

        test('a gateway config nested 100,000 deep exits 2 naming the file, the place and the limit', TIMEOUT, async t => {
            const file = path.join(await folder(t), 'gateway.json');
            await writeFile(file, `{ "upstreams": [ ${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)} ] }`);
            const result = check(['--config', file]);
            assert.equal(result.status, 2, result.stderr);
            // Column 328: the 63rd object in the array (after the top-level object and the array) opens level 65.
            assert.equal(
                result.stderr.trim(),
                `Invalid config ${file}:\n  - (top level): nested deeper than 64 levels at line 1, column 328 (the limit for config files); flatten it there`
            );
        });
    });
});
