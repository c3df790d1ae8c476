/** Shared set-up for the integration tests: real fixture servers, a real gateway, real clients. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport, SSEClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { pino, type Logger } from 'pino';
import { Writable } from 'node:stream';
import { parseConfig } from '../src/config/load.js';
import { startGateway, type RunningGateway } from '../src/gateway.js';
import { createLogger } from '../src/diagnostics/logger.js';
import { compiledFixture } from './fixture-build.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const FIXTURE = compiledFixture('prompt-server');
export const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

export interface FixtureOptions {
    prompts?: number;
    pageSize?: number;
    name?: string;
    /** Prompts with exactly these names (see --extra-prompts of the fixture). */
    extraPrompts?: (string | { name: string; arguments?: { name: string; required?: boolean }[] })[];
    flags?: string[];
}

function fixtureArgs(transport: string, options: FixtureOptions): string[] {
    return [
        FIXTURE,
        '--transport',
        transport,
        '--prompts',
        String(options.prompts ?? 5),
        '--page-size',
        String(options.pageSize ?? 0),
        '--name',
        options.name ?? 'fixture',
        ...(options.extraPrompts === undefined ? [] : ['--extra-prompts', JSON.stringify(options.extraPrompts)]),
        ...(options.flags ?? [])
    ];
}

/**
 * The timeoutMs of a fixture run as a stdio child unless a test sets its own. Connecting is bounded by timeoutMs, and
 * starting a fixture (the SDK) takes seconds on a loaded machine: with a short timeoutMs every reconnect would
 * time out and start another. A test about request timeouts sets a short one on an upstream that starts fast: an
 * HTTP fixture (started once, by the test, without a bound) or a plain `node -e` child.
 */
const STDIO_FIXTURE_TIMEOUT_MS = 30_000;

/** Config entry that makes the gateway start the fixture as a stdio child. */
export function stdioFixture(id: string, options: FixtureOptions = {}, extra: Record<string, unknown> = {}) {
    return { id, transport: 'stdio', command: process.execPath, args: fixtureArgs('stdio', options), cwd: ROOT, timeoutMs: STDIO_FIXTURE_TIMEOUT_MS, ...extra };
}

/**
 * A minimal stdio MCP server, for tests of request timeouts and pings: it answers initialize and prompts/list, never answers prompts/get, answers
 * other methods (server/discover included) with -32601, and answers ping as PING_MODE says ("error": -32601, the way a server without ping support would; "answer": {}). It writes
 * "ping" to stderr for every ping it receives, so the test can count them in the gateway's log. Plain JavaScript
 * without imports: it starts in a fraction of the short timeoutMs these tests give it, even on a loaded machine.
 */
const SILENT_SERVER = `
const readline = require('node:readline');
const send = message => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\\n');
readline.createInterface({ input: process.stdin }).on('line', line => {
    const { id, method, params } = JSON.parse(line);
    if (id === undefined) return;
    if (method === 'initialize') {
        send({ id, result: { protocolVersion: params.protocolVersion, capabilities: { prompts: {} }, serverInfo: { name: 'silent', version: '1' } } });
    } else if (method === 'prompts/list') {
        send({ id, result: { prompts: [{ name: 'p' }] } });
    } else if (method === 'ping') {
        process.stderr.write('ping\\n');
        if (process.env.PING_MODE === 'error') send({ id, error: { code: -32601, message: 'Method not found' } });
        else send({ id, result: {} });
    } else if (method !== 'prompts/get') {
        send({ id, error: { code: -32601, message: 'Method not found' } });
    }
});
`;

export function silentStdio(id: string, pingMode: 'error' | 'answer', extra: Record<string, unknown>) {
    return { id, transport: 'stdio', command: process.execPath, args: ['-e', SILENT_SERVER], env: { PING_MODE: pingMode }, ...extra };
}

export function everythingUpstream(id = 'everything') {
    return { id, transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] };
}

export interface HttpFixture {
    url: string;
    child: ChildProcess;
    close(): Promise<void>;
}

/** Starts the fixture as its own process serving Streamable HTTP or legacy SSE on 127.0.0.1:0. */
export function startHttpFixture(transport: 'streamable-http' | 'sse', options: FixtureOptions = {}): Promise<HttpFixture> {
    return spawnHttpFixture(fixtureArgs(transport, options));
}

/** A 2026-07-28-only server over Streamable HTTP (the SDK's createMcpHandler with legacy: 'reject'). */
export function startModernHttpFixture(): Promise<HttpFixture> {
    return spawnHttpFixture([compiledFixture('modern-http-server')]);
}

/**
 * Spawns a fixture server and resolves once it prints its URL. Its stdin is a pipe this process keeps open: the
 * fixture exits when it ends, so a test process killed on a timeout leaves no server behind (see lifetime.ts).
 */
export async function spawnHttpFixture(args: string[]): Promise<HttpFixture> {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'ignore', 'pipe'] });
    const url = await new Promise<string>((resolve, reject) => {
        let stderr = '';
        createInterface({ input: child.stderr }).on('line', line => {
            stderr += `${line}\n`;
            const match = /^FIXTURE_URL=(\S+)/.exec(line);
            if (match) resolve(match[1]!);
        });
        child.once('error', reject);
        child.once('exit', code => reject(new Error(`fixture ${path.basename(args[0] ?? '')} exited with ${code}:\n${stderr}`)));
    });
    return { url, child, close: () => stopChild(child) };
}

/** Where teardown goes: a node:test TestContext, or anything else that runs `after` hooks (the bench's own scope). */
export interface TeardownScope {
    after(fn: () => unknown): void;
}

const teardowns = new WeakMap<TeardownScope, (() => unknown)[]>();

/**
 * Closes a resource when the test ends, however it ends (failed, timed out): call it the moment the resource exists.
 * Resources close last-opened first, a client before its gateway before its fixture (node:test runs `after` hooks
 * first-in, first-out); every one is closed even if another's close throws.
 */
export function closeAfter(t: TeardownScope, close: () => unknown): void {
    const stack = teardowns.get(t);
    if (stack !== undefined) {
        stack.push(close);
        return;
    }
    const closers = [close];
    teardowns.set(t, closers);
    t.after(async () => {
        const failures: unknown[] = [];
        for (const next of closers.reverse())
            await Promise.resolve()
                .then(next)
                .catch((error: unknown) => failures.push(error));
        if (failures.length > 0) throw failures[0];
    });
}

export interface RunningCli {
    child: ChildProcess;
    url: string;
    /** Every line it wrote to stderr, in order. */
    stderr: string[];
    /** The JSON log lines among them, parsed. */
    logs: Record<string, unknown>[];
}

/** Starts the built gateway (dist/cli.js) with `args` and resolves with its URL once it listens; stopped when the test ends. */
export async function startGatewayCli(t: TeardownScope, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<RunningCli> {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist/cli.js'), ...args], {
        cwd: options.cwd ?? ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, ...options.env }
    });
    closeAfter(t, () => stopChild(child));
    const stderr: string[] = [];
    const logs: Record<string, unknown>[] = [];
    const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stderr }).on('line', line => {
            stderr.push(line);
            const match = /^listening on (\S+)$/.exec(line);
            if (match) resolve(match[1]!);
            else if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>);
        });
        child.once('exit', code => reject(new Error(`gateway exited with ${code}:\n${stderr.join('\n')}`)));
    });
    return { child, url, stderr, logs };
}

export async function stopChild(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
}

/** Runs the gateway in this process from a config object, with defaults applied as for a file. */
export async function startTestGateway(config: Record<string, unknown>, logger?: Logger): Promise<RunningGateway> {
    const parsed = parseConfig(JSON.stringify({ listen: { port: 0 }, ...config }), 'test config', process.env);
    return startGateway(parsed, { logger: logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
}

/**
 * Waits until the upstreams (default: all) are connected. A test giving an upstream a short timeoutMs must: on a
 * loaded machine starting a child can take longer than that, and the first attempt then fails and is retried.
 */
export async function upstreamsReady(gateway: RunningGateway, ids?: readonly string[], ms = 20_000): Promise<void> {
    const wanted = (upstream: { id: string }) => ids === undefined || ids.includes(upstream.id);
    await waitFor(() => gateway.upstreams.filter(wanted).every(upstream => upstream.state === 'ready'), ms, `upstreams ready: ${ids?.join(', ') ?? 'all'}`);
}

/** A logger whose JSON lines the test can read. */
export function capturingLogger(): { logger: Logger; lines: () => Record<string, unknown>[] } {
    const chunks: string[] = [];
    const sink = new Writable({
        write(chunk: Buffer, _encoding, callback) {
            chunks.push(chunk.toString());
            callback();
        }
    });
    // The gateway's own logger (redaction, request ids, level names), writing JSON into the test.
    const logger = createLogger({ level: 'debug', format: 'json', destination: sink });
    const lines = () =>
        chunks
            .join('')
            .split('\n')
            .filter(line => line !== '')
            .map(line => JSON.parse(line) as Record<string, unknown>);
    return { logger, lines };
}

export interface ConnectOptions {
    protocolVersion?: string;
    /** Sent with every request, e.g. { authorization: 'Bearer <key>' }. */
    headers?: Record<string, string>;
}

export async function connectHttp(url: string, options: ConnectOptions = {}): Promise<Client> {
    const client = newClient(options);
    await client.connect(new StreamableHTTPClientTransport(new URL(url), options.headers === undefined ? {} : { requestInit: { headers: options.headers } }));
    return client;
}

export async function connectSse(url: string): Promise<Client> {
    const client = newClient({});
    await client.connect(new SSEClientTransport(new URL(url)));
    return client;
}

export async function connectStdio(command: string, args: string[], options: { cwd?: string } = {}): Promise<Client> {
    const client = newClient({});
    await client.connect(new StdioClientTransport({ command, args, cwd: options.cwd ?? ROOT, stderr: 'pipe' }));
    return client;
}

/**
 * An SDK client pinned to 2026-07-28 (stateless: its connect is a `server/discover`, each request carries `_meta`):
 * it fails loudly unless the server speaks that revision.
 */
export async function connectModernHttp(url: string, options: Omit<ConnectOptions, 'protocolVersion'> = {}): Promise<Client> {
    const client = new Client({ name: 'gateway-test-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), options.headers === undefined ? {} : { requestInit: { headers: options.headers } }));
    return client;
}

/** As connectModernHttp, over stdio (the gateway with --stdio, or a server it starts). */
export async function connectModernStdio(command: string, args: string[]): Promise<Client> {
    const client = new Client({ name: 'gateway-test-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StdioClientTransport({ command, args, cwd: ROOT, stderr: 'pipe' }));
    return client;
}

function newClient(options: ConnectOptions): Client {
    return new Client({ name: 'gateway-test', version: '1.0.0' }, options.protocolVersion === undefined ? {} : { supportedProtocolVersions: [options.protocolVersion] });
}

/** Every prompt of a server, walked page by page with its own cursors. */
export async function listAllPages(client: Client): Promise<{ names: string[]; pages: number[]; cursors: number }> {
    const names: string[] = [];
    const pages: number[] = [];
    let cursor: string | undefined;
    let cursors = 0;
    do {
        const page = await client.request({ method: 'prompts/list', params: cursor === undefined ? {} : { cursor } });
        names.push(...page.prompts.map(prompt => prompt.name));
        pages.push(page.prompts.length);
        cursor = page.nextCursor;
        if (cursor !== undefined) cursors++;
        if (pages.length > 10_000) throw new Error('pagination does not end');
    } while (cursor !== undefined);
    return { names, pages, cursors };
}

/** The JSON-RPC error a request fails with. */
export async function rpcError(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
    try {
        await promise;
    } catch (error) {
        const { code, message } = error as { code: number; message: string };
        return { code, message };
    }
    throw new Error('expected the request to fail');
}

/** Resolves once `predicate` holds, polling; rejects after `ms` (a bound for a loaded machine: it costs nothing when the condition comes). */
export async function waitFor(predicate: () => boolean | Promise<boolean>, ms = 20_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await predicate())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise(resolve => setTimeout(resolve, 20));
    }
}

/**
 * Resolves once no list_changed is pending or on its way from an in-process gateway: nothing waits to be published,
 * and every one the gateway sent (its own count, so its metrics must be on) has arrived, as `received` counts them.
 * Counts checked then are final: what a test checks instead of waiting for a notification not to come.
 */
export async function notificationsSettled(gateway: RunningGateway, received: () => number): Promise<void> {
    await waitFor(async () => !gateway.catalog.changePending && (await listChangedSent(gateway)) === received(), 20_000, 'every list_changed sent to arrive');
}

/** The list_changed notifications an in-process gateway has sent to its sessions so far (its metrics must be on). */
export async function listChangedSent(gateway: RunningGateway): Promise<number> {
    const metric = gateway.metrics?.registry.getSingleMetric('mcp_gateway_list_changed_sent_total');
    if (metric === undefined) throw new Error('the gateway does not count the notifications it sends: its metrics are off');
    return (await metric.get()).values.reduce((sum, { value }) => sum + value, 0);
}

/**
 * The bound on one run of the built CLI that checks or refuses something and exits (spawnSync): a hang guard, not a
 * speed check, so it is far above what a run takes on a loaded machine (a 30 s bound fired at a load of 30).
 */
export const CLI_RUN_BOUND_MS = 180_000;

export const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

export const RAW_SERVER = compiledFixture('raw-server');

/** Config entry for the hand-written, deliberately misbehaving fixture (see raw-server.ts) as a stdio child. */
export function rawStdio(id: string, flags: string[] = [], extra: Record<string, unknown> = {}) {
    return { id, transport: 'stdio', command: process.execPath, args: [RAW_SERVER, ...flags], cwd: ROOT, timeoutMs: STDIO_FIXTURE_TIMEOUT_MS, ...extra };
}

/** Starts the raw fixture as its own Streamable HTTP process. */
export function startRawHttp(flags: string[] = []): Promise<HttpFixture> {
    return spawnHttpFixture([RAW_SERVER, '--transport', 'streamable-http', ...flags]);
}

/** GET a JSON endpoint of the gateway (e.g. /readyz), with its status. */
export async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(url);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** PIDs of live processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
    const pids: number[] = [];
    for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
        try {
            const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
            const state = /^\S+ \(.*\) (\S)/.exec(readFileSync(`/proc/${entry}/stat`, 'utf8'))?.[1];
            if (cmdline.includes(marker) && state !== 'Z') pids.push(Number(entry));
        } catch {
            // The process ended while we looked.
        }
    }
    return pids;
}

export interface FixtureStats {
    slowStarted: number;
    slowCancelled: number;
    slowCompleted: number;
    /** Requests the fixture received (its own `stats` gets not counted). */
    requests: { list: number; get: number; complete: number };
}

/** The fixture's `stats` prompt, parsed. */
export async function fixtureStats(client: Client, prompt: string): Promise<FixtureStats> {
    const result = await client.getPrompt({ name: prompt });
    const content = result.messages[0]!.content;
    if (content.type !== 'text') throw new Error('stats prompt returned no text');
    return JSON.parse(content.text) as FixtureStats;
}

/** A TCP port that was free a moment ago, for a server the test starts later on purpose. */
export async function freePort(): Promise<number> {
    const server = createServer();
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise(resolve => server.close(resolve));
    return port;
}

/** A process as /proc shows it: its start time (clock ticks after boot) tells it apart from a later one with its PID. */
export interface ProcessId {
    pid: number;
    started: string;
    cmdline: string;
}

function processInfo(pid: number): (ProcessId & { ppid: number; state: string }) | undefined {
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        // Fields after the command name, which may hold spaces: state, ppid, ..., starttime (field 22 of the line).
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
        return { pid, ppid: Number(fields[1]), state: fields[0]!, started: fields[19]!, cmdline };
    } catch {
        return undefined;
    }
}

/** Every live process below `root` (children, grandchildren, ...). */
export function descendantsOf(root: number): ProcessId[] {
    const all = readdirSync('/proc')
        .filter(entry => /^\d+$/.test(entry))
        .map(entry => processInfo(Number(entry)))
        .filter(info => info !== undefined && info.state !== 'Z');
    const found: ProcessId[] = [];
    const parents = new Set([root]);
    for (let grew = true; grew;) {
        grew = false;
        for (const info of all) {
            if (info !== undefined && parents.has(info.ppid) && !parents.has(info.pid)) {
                parents.add(info.pid);
                found.push({ pid: info.pid, started: info.started, cmdline: info.cmdline });
                grew = true;
            }
        }
    }
    return found;
}

/** Those of `processes` still running (not reaped, not a zombie, not replaced by a new process with the same PID). */
export function stillRunning(processes: readonly ProcessId[]): ProcessId[] {
    return processes.filter(known => {
        const now = processInfo(known.pid);
        return now !== undefined && now.state !== 'Z' && now.started === known.started;
    });
}
