/**
 * `npm run conformance`: the official MCP conformance suite
 * (`@modelcontextprotocol/conformance`, a root devDependency) against the
 * gateway, at protocol revisions 2025-06-18, 2025-11-25 and 2026-07-28 (the
 * stateless one: the suite's client and the scenario servers speak it). Writes
 * CONFORMANCE.md and keeps the suite's per-check results in
 * conformance/results/ (gitignored).
 *
 * - Server side: the built gateway (dist/cli.js) with one upstream,
 *   test/fixtures/conformance-server.ts (`"namespace": false`, so the suite
 *   sees the names it asks for), tested with `conformance server --suite all`;
 *   each revision twice: in front of the fixture as a 2025-era stdio server,
 *   and in front of it as a 2026-07-28 server over HTTP (`--era 2026-07-28`,
 *   `protocol: "auto"`, so the era probe is exercised too), where requests
 *   that ask the client for input (input_required) can pass through.
 * - Client side: every client scenario of each revision, one at a time, with
 *   conformance/client-wrapper.ts as the client: it puts a gateway in front of
 *   the scenario's server, so what is tested is the gateway's upstream client.
 *
 * conformance/expected-failures.yml (the 2025 revisions) and
 * expected-failures-2026-07-28.yml list what is out of scope (tools,
 * resources, logging, elicitation, input_required, upstream OAuth), each entry
 * with its reason. A server entry whose reason starts `[2025 upstream]` is
 * expected only in front of the 2025-era upstream; each server run is given
 * its own list (conformance/results/expected-<revision>-<era>.yml).
 * Exit code 1 on any other failure (a WARNING counts, as in the suite's
 * baseline mode), on an expected failure that passes, or on missing results.
 *
 * The suite's CLI needs Node 22+ (fs.globSync), while the gateway and its tests
 * run on Node 20: it runs on the LTS Node of the nested package runtimes/node-lts/
 * (`npm ci --prefix runtimes/node-lts`, once; CI runs the test suite on it too);
 * the gateway, the fixture and the client wrapper run on the Node that runs this
 * file.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { revisionOf } from '../src/protocol/revisions.js';
import { compiledConformanceWrapper, compiledFixture } from '../test/fixture-build.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HERE = path.join(ROOT, 'conformance');
const RESULTS = path.join(HERE, 'results');
/**
 * The expected failures of each revision: the 2025 revisions share a file; 2026-07-28, where a scenario of the same
 * name may fail for other reasons (a method the revision answers 404), has its own.
 */
function expectedFailuresFile(specVersion: string): string {
    return path.join(HERE, revisionOf(specVersion)?.era === 'stateless' ? `expected-failures-${specVersion}.yml` : 'expected-failures.yml');
}
const SUITE_PACKAGE = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance');
const SUITE_CLI = path.join(SUITE_PACKAGE, 'dist/index.js');
const RUNTIME = path.join(ROOT, 'runtimes/node-lts');
const RUNTIME_NODE = path.join(RUNTIME, 'node_modules/.bin/node');
const SPEC_VERSIONS = ['2025-06-18', '2025-11-25', '2026-07-28'] as const;
/** The eras the server side's upstream speaks: the fixture on stdio as a 2025-era server, or over HTTP at 2026-07-28. */
const UPSTREAM_ERAS = ['2025', '2026-07-28'] as const;
type UpstreamEra = (typeof UPSTREAM_ERAS)[number];
/** Starts the reason of an expected failure that the 2026-07-28 upstream does not have. */
const ONLY_2025_UPSTREAM = '[2025 upstream]';
const UPSTREAM_LABEL: Record<UpstreamEra, string> = { '2025': '2025-era stdio', '2026-07-28': '2026-07-28 HTTP' };
/** Client scenarios run this many at a time (each starts a gateway; the machine may have 2 cores). */
const CLIENT_CONCURRENCY = Number(process.env.CONFORMANCE_CONCURRENCY ?? 2);
const REPRODUCE = 'npm ci && npm run conformance';

type Side = 'server' | 'client';

interface Check {
    id: string;
    name?: string;
    status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
    errorMessage?: string;
    description?: string;
}

interface Expectation {
    scenario: string;
    checkId?: string;
    reason: string;
}

type Verdict = 'passed' | 'failed' | 'expected failure' | 'stale expectation';

interface Outcome {
    side: Side;
    specVersion: string;
    /** The server side's upstream era; undefined on the client side (the scenario's own server is the upstream). */
    upstream: UpstreamEra | undefined;
    scenario: string;
    verdict: Verdict;
    /** Counts over the scenario's checks. */
    counts: Record<Check['status'], number>;
    /** What failed, what was expected, why. */
    note: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Processes: every child is started in its own process group and killed with it, also when this script fails.

const children = new Set<ChildProcess>();

function track(child: ChildProcess): ChildProcess {
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
        process.kill(-child.pid, signal);
    } catch {
        child.kill(signal);
    }
}

async function stop(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    killGroup(child, 'SIGTERM');
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
}

process.on('exit', () => {
    for (const child of children) killGroup(child, 'SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
        process.stderr.write(`conformance: ${signal}, stopping\n`);
        void Promise.all([...children].map(stop)).finally(() => process.exit(130));
    });
}

/** Runs a command to completion; stdout and stderr go to `logFile` (and, with `echo`, to ours too). */
async function run(command: string, args: string[], logFile: string, echo = false): Promise<number> {
    const log = createWriteStream(logFile);
    const child = track(spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
    for (const stream of [child.stdout!, child.stderr!]) {
        stream.on('data', (chunk: Buffer) => {
            log.write(chunk);
            if (echo) process.stdout.write(chunk);
        });
    }
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    await new Promise(resolve => log.end(resolve));
    return code ?? (signal === null ? 1 : 128);
}

// ---------------------------------------------------------------------------------------------------------------
// Set-up

function pinnedRuntimeVersion(): string {
    const manifest = JSON.parse(readFileSync(path.join(RUNTIME, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    return manifest.dependencies['node']!;
}

/** The suite's Node: installed from runtimes/node-lts/package-lock.json unless the pinned version is there already. */
function ensureRuntime(): string {
    const wanted = pinnedRuntimeVersion();
    const installed = () => {
        if (!existsSync(RUNTIME_NODE)) return undefined;
        const result = spawnSync(RUNTIME_NODE, ['--version'], { encoding: 'utf8' });
        return result.status === 0 ? result.stdout.trim() : undefined;
    };
    if (installed() !== `v${wanted}`) {
        console.log(`conformance: installing Node ${wanted} for the suite (npm ci --prefix runtimes/node-lts)`);
        const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
        const result = spawnSync(npm, ['ci', '--prefix', 'runtimes/node-lts', '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
        if (result.status !== 0) throw new Error(`npm ci --prefix runtimes/node-lts failed (exit ${result.status})`);
    }
    const version = installed();
    if (version !== `v${wanted}`) throw new Error(`${RUNTIME_NODE} is ${version ?? 'missing'}, expected v${wanted}`);
    return version;
}

/**
 * The expected failures and their reasons. The suite reads the same file; this reads only what it needs: list items
 * under `server:` and `client:`, each with its reason as a same-line comment.
 */
function readExpectations(file: string): Record<Side, Expectation[]> {
    const expectations: Record<Side, Expectation[]> = { server: [], client: [] };
    let side: Side | undefined;
    const problems: string[] = [];
    readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
            if (/^\s*(#.*)?$/.test(line)) return;
            const key = /^(server|client):\s*(#.*)?$/.exec(line);
            if (key) {
                side = key[1] as Side;
                return;
            }
            const item = /^\s+-\s+([^\s#]+)\s+#\s*(\S.*)$/.exec(line);
            if (!item || side === undefined) {
                problems.push(`line ${index + 1}: expected "  - <scenario>[:<check-id>] # <reason>" under server: or client:`);
                return;
            }
            const [scenario, checkId] = item[1]!.split(/:(.*)/s);
            expectations[side].push({ scenario: scenario!, ...(checkId ? { checkId } : {}), reason: item[2]!.trim() });
        });
    if (problems.length > 0) throw new Error(`${path.relative(ROOT, file)}:\n  ${problems.join('\n  ')}`);
    return expectations;
}

// ---------------------------------------------------------------------------------------------------------------
// Server side

interface Gateway {
    url: string;
    child: ChildProcess;
}

/** The fixture at 2026-07-28, over HTTP: started first, as the gateway's config names its URL. */
async function startModernFixture(runName: string): Promise<{ url: string; child: ChildProcess }> {
    const log = createWriteStream(path.join(RESULTS, `fixture-${runName}.log`));
    const child = track(spawn(process.execPath, [compiledFixture('conformance-server'), '--era', '2026-07-28'], { cwd: ROOT, stdio: ['pipe', 'ignore', 'pipe'], detached: true }));
    const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the 2026-07-28 fixture did not listen within 20 s')), 20_000);
        createInterface({ input: child.stderr! }).on('line', line => {
            log.write(`${line}\n`);
            const match = /^FIXTURE_URL=(\S+)$/.exec(line);
            if (match) {
                clearTimeout(timer);
                resolve(match[1]!);
            }
        });
        child.once('exit', code => {
            clearTimeout(timer);
            reject(new Error(`the 2026-07-28 fixture exited with ${code}; see ${path.relative(ROOT, log.path.toString())}`));
        });
    });
    return { url, child };
}

function upstreamConfig(era: UpstreamEra, modernUrl: string | undefined): Record<string, unknown> {
    const common = { id: 'conformance', namespace: false, required: true };
    if (era === '2026-07-28') return { ...common, transport: 'streamable-http', url: modernUrl, protocol: 'auto' };
    return { ...common, transport: 'stdio', command: process.execPath, args: [compiledFixture('conformance-server')], cwd: ROOT };
}

async function startGateway(runName: string, upstream: Record<string, unknown>): Promise<Gateway> {
    const config = path.join(RESULTS, `gateway-${runName}.json`);
    await writeFile(config, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, upstreams: [upstream] }, null, 2));
    const log = createWriteStream(path.join(RESULTS, `gateway-${runName}.log`));
    const child = track(
        spawn(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--config', config], {
            cwd: ROOT,
            stdio: ['ignore', 'ignore', 'pipe'],
            detached: true,
            env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' }
        })
    );
    const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the gateway did not listen within 20 s')), 20_000);
        createInterface({ input: child.stderr! }).on('line', line => {
            log.write(`${line}\n`);
            const match = /^listening on (\S+)$/.exec(line);
            if (match) {
                clearTimeout(timer);
                resolve(match[1]!);
            }
        });
        child.once('exit', code => {
            clearTimeout(timer);
            reject(new Error(`the gateway exited with ${code} before listening; see ${path.relative(ROOT, log.path.toString())}`));
        });
    });
    // Ready = the fixture (a required upstream) is connected and its prompts are listed.
    const deadline = Date.now() + 20_000;
    for (;;) {
        const response = await fetch(new URL('/readyz', url));
        const body = await response.text();
        if (response.status === 200) break;
        if (Date.now() > deadline) throw new Error(`the gateway is not ready after 20 s: ${body}`);
        await new Promise(resolve => setTimeout(resolve, 50));
    }
    return { url, child };
}

/** A server run's expected failures: the server entries that apply in front of `era`'s upstream. */
function serverExpectations(all: Record<Side, Expectation[]>, era: UpstreamEra): Expectation[] {
    return era === '2025' ? all.server : all.server.filter(expectation => !expectation.reason.startsWith(ONLY_2025_UPSTREAM));
}

/** The same list as a file the suite reads (`--expected-failures`). */
async function writeExpectations(file: string, expectations: readonly Expectation[]): Promise<void> {
    const items = expectations.map(({ scenario, checkId, reason }) => `  - ${scenario}${checkId === undefined ? '' : `:${checkId}`} # ${reason}`);
    const server = items.length === 0 ? 'server: []' : `server:\n${items.join('\n')}`;
    await writeFile(file, `# Written by conformance/run.ts for one server run.\n${server}\nclient: []\n`);
}

async function runServerSide(
    specVersion: string,
    era: UpstreamEra,
    expectations: readonly Expectation[]
): Promise<{ exitCode: number; results: Map<string, Check[]>; planned: number }> {
    const name = `${specVersion}-${era}`;
    const outputDir = path.join(RESULTS, `server-${name}`);
    const expectedFile = path.join(RESULTS, `expected-${name}.yml`);
    await writeExpectations(expectedFile, expectations);
    const fixture = era === '2026-07-28' ? await startModernFixture(name) : undefined;
    let exitCode: number;
    try {
        const gateway = await startGateway(name, upstreamConfig(era, fixture?.url));
        try {
            console.log(`conformance: server side, ${specVersion}, ${era} upstream, gateway at ${gateway.url}`);
            exitCode = await run(
                RUNTIME_NODE,
                [SUITE_CLI, 'server', '--url', gateway.url, '--suite', 'all', '--spec-version', specVersion, '--expected-failures', expectedFile, '-o', outputDir],
                path.join(RESULTS, `server-${name}.log`)
            );
        } finally {
            await stop(gateway.child);
        }
    } finally {
        if (fixture !== undefined) await stop(fixture.child);
    }
    const log = readFileSync(path.join(RESULTS, `server-${name}.log`), 'utf8');
    const planned = Number(/Running \S+ suite \((\d+) scenarios\)/.exec(log)?.[1] ?? NaN);
    // One folder per scenario: server-<scenario>-<timestamp>/checks.json
    const results = new Map<string, Check[]>();
    for (const entry of existsSync(outputDir) ? readdirSync(outputDir) : []) {
        const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(entry);
        const file = path.join(outputDir, entry, 'checks.json');
        if (match && existsSync(file)) results.set(match[1]!, JSON.parse(readFileSync(file, 'utf8')) as Check[]);
    }
    return { exitCode, results, planned };
}

// ---------------------------------------------------------------------------------------------------------------
// Client side

async function listClientScenarios(specVersion: string): Promise<string[]> {
    const logFile = path.join(RESULTS, `client-${specVersion}-list.log`);
    const code = await run(RUNTIME_NODE, [SUITE_CLI, 'list', '--client', '--spec-version', specVersion], logFile);
    if (code !== 0) throw new Error(`conformance list --client failed; see ${path.relative(ROOT, logFile)}`);
    return [...readFileSync(logFile, 'utf8').matchAll(/^\s+- (\S+) \[/gm)].map(match => match[1]!);
}

/** `--command` is split on spaces by the suite (quotes are not honoured). */
function wrapperCommand(): string {
    const node = /\s/.test(process.execPath) ? 'node' : process.execPath;
    // Compiled: the suite starts it for every client scenario, and tsx would compile it and the SDK each time.
    return `${node} ${path.relative(ROOT, compiledConformanceWrapper())}`;
}

async function runClientScenario(specVersion: string, scenario: string): Promise<{ exitCode: number; checks?: Check[] }> {
    const safe = scenario.replace(/[^A-Za-z0-9._-]/g, '_');
    const outputDir = path.join(RESULTS, `client-${specVersion}`, safe);
    const exitCode = await run(
        RUNTIME_NODE,
        [
            SUITE_CLI,
            'client',
            '--command',
            wrapperCommand(),
            '--scenario',
            scenario,
            '--spec-version',
            specVersion,
            '--expected-failures',
            expectedFailuresFile(specVersion),
            '-o',
            outputDir
        ],
        path.join(RESULTS, `client-${specVersion}`, `${safe}.log`)
    );
    const file = findFile(outputDir, 'checks.json');
    return { exitCode, ...(file === undefined ? {} : { checks: JSON.parse(readFileSync(file, 'utf8')) as Check[] }) };
}

function findFile(dir: string, name: string): string | undefined {
    if (!existsSync(dir)) return undefined;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isFile() && entry.name === name) return full;
        if (entry.isDirectory()) {
            const found = findFile(full, name);
            if (found !== undefined) return found;
        }
    }
    return undefined;
}

async function pool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
    const results: R[] = new Array<R>(items.length);
    let next = 0;
    const worker = async () => {
        while (next < items.length) {
            const index = next++;
            results[index] = await work(items[index]!);
        }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
    return results;
}

// ---------------------------------------------------------------------------------------------------------------
// Verdicts: the suite's baseline rules (a FAILURE or a WARNING fails a check), with the reasons for the report.

const failing = (check: Check) => check.status === 'FAILURE' || check.status === 'WARNING';
const describe = (check: Check) => `${check.id} ${check.status}${check.errorMessage ? `: ${check.errorMessage}` : ''}`;
const describeShort = (check: Check) => {
    const message = check.errorMessage ?? '';
    return `${check.id}${message ? ` (${message.length > 90 ? `${message.slice(0, 87)}...` : message})` : ''}`;
};

interface Run {
    side: Side;
    specVersion: string;
    upstream: UpstreamEra | undefined;
}

function judge({ side, specVersion, upstream }: Run, scenario: string, checks: Check[] | undefined, expectations: readonly Expectation[]): Outcome {
    const counts: Record<Check['status'], number> = { SUCCESS: 0, FAILURE: 0, WARNING: 0, INFO: 0, SKIPPED: 0 };
    const base = { side, specVersion, upstream, scenario, counts };
    if (checks === undefined) return { ...base, verdict: 'failed', note: 'no results (checks.json missing)' };
    for (const check of checks) counts[check.status]++;
    const failed = checks.filter(failing);
    const whole = expectations.find(expectation => expectation.scenario === scenario && expectation.checkId === undefined);
    if (whole) {
        return failed.length > 0
            ? { ...base, verdict: 'expected failure', note: `${whole.reason}. Failing: ${failed.map(describeShort).join('; ')}` }
            : { ...base, verdict: 'stale expectation', note: `passed, but listed as an expected failure (${whole.reason})` };
    }
    const perCheck = expectations.filter(expectation => expectation.scenario === scenario && expectation.checkId !== undefined);
    const unexpected = failed.filter(check => !perCheck.some(expectation => expectation.checkId === check.id));
    const stale = perCheck.filter(expectation => checks.find(check => check.id === expectation.checkId && check.status !== 'INFO')?.status === 'SUCCESS');
    if (unexpected.length > 0) return { ...base, verdict: 'failed', note: unexpected.map(describe).join('; ') };
    if (stale.length > 0) {
        return { ...base, verdict: 'stale expectation', note: `now passing, but listed as expected failures: ${stale.map(e => e.checkId).join(', ')}` };
    }
    const expected = failed.map(check => {
        const reason = perCheck.find(expectation => expectation.checkId === check.id)?.reason ?? '';
        return `expected ${check.id} ${check.status}: ${reason}`;
    });
    return { ...base, verdict: 'passed', note: expected.join('; ') };
}

// ---------------------------------------------------------------------------------------------------------------
// Report

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

function report(outcomes: Outcome[], meta: { suiteVersion: string; runtime: string; seconds: number; problems: string[] }): string {
    const sections: string[] = [];
    const summary: string[] = [];
    const runs: Run[] = [
        ...UPSTREAM_ERAS.flatMap(upstream => SPEC_VERSIONS.map(specVersion => ({ side: 'server' as const, specVersion, upstream }))),
        ...SPEC_VERSIONS.map(specVersion => ({ side: 'client' as const, specVersion, upstream: undefined }))
    ];
    for (const { side, specVersion, upstream } of runs) {
        const rows = outcomes.filter(outcome => outcome.side === side && outcome.specVersion === specVersion && outcome.upstream === upstream);
        const count = (verdict: Verdict) => rows.filter(row => row.verdict === verdict).length;
        const upstreamCell = upstream === undefined ? "the scenario's server" : UPSTREAM_LABEL[upstream];
        summary.push(
            `| ${side} | ${specVersion} | ${upstreamCell} | ${rows.length} | ${count('passed')} | ${count('failed')} | ${count('expected failure')} | ${count('stale expectation')} |`
        );
        const table = rows
            .map(row => {
                const c = row.counts;
                const checks = `${c.SUCCESS} ok, ${c.FAILURE} failed, ${c.WARNING} warnings${c.SKIPPED ? `, ${c.SKIPPED} skipped` : ''}`;
                return `| ${row.scenario} | ${row.verdict} | ${checks} | ${cell(row.note)} |`;
            })
            .join('\n');
        sections.push(`### ${side === 'server' ? 'Server' : 'Client'} side, ${specVersion}${upstream === undefined ? '' : `, ${UPSTREAM_LABEL[upstream]} upstream`}

| scenario | result | checks | notes |
| --- | --- | --- | --- |
${table}`);
    }
    const failures = outcomes.filter(outcome => outcome.verdict === 'failed' || outcome.verdict === 'stale expectation');
    const where = (f: Outcome) => `${f.side} ${f.specVersion}${f.upstream === undefined ? '' : ` (${f.upstream} upstream)`}`;
    const verdict =
        failures.length === 0 && meta.problems.length === 0
            ? 'Every in-scope scenario passes; every other scenario fails as expected.'
            : `**Not clean**: ${[...failures.map(f => `${where(f)} ${f.scenario} (${f.verdict})`), ...meta.problems].join('; ')}.`;
    return `# Conformance

Generated by \`npm run conformance\` on ${new Date().toISOString().slice(0, 10)} with
\`@modelcontextprotocol/conformance\` ${meta.suiteVersion} (the suite ran on Node
${meta.runtime}; the gateway, its upstream fixture and the client wrapper on Node
${process.version}), in ${meta.seconds.toFixed(0)} s. Reproduce with \`${REPRODUCE}\`.

${verdict}

- **Server side**: the built gateway (\`dist/cli.js\`) on 127.0.0.1, with one
  upstream, [\`test/fixtures/conformance-server.ts\`](test/fixtures/conformance-server.ts)
  (the prompts the suite asks for, \`"namespace": false\`), tested with
  \`conformance server --suite all --spec-version <revision>\`; each revision twice:
  in front of the fixture as a 2025-era server over stdio, and in front of it as a
  2026-07-28 server over Streamable HTTP (\`--era 2026-07-28\`, the SDK's
  \`createMcpHandler\`, found by the era probe), whose
  \`test_input_required_result_prompt\` asks the client for input (\`input_required\`):
  the gateway relays the capabilities its client declared, and the elicitation and the
  retry pass through. A server entry marked \`[2025 upstream]\` is expected to fail
  only in front of the 2025-era upstream.
- **Client side**: every client scenario of the revision, with
  [\`conformance/client-wrapper.ts\`](conformance/client-wrapper.ts) as the client: it
  starts a gateway whose one upstream (transport \`http\`) is the scenario's server,
  waits for \`/readyz\`, and lists and gets the prompts through it. What is tested is
  the gateway's upstream client.
- Out of scope, and listed with a reason in
  [\`conformance/expected-failures.yml\`](conformance/expected-failures.yml): tools,
  resources, logging, sampling and elicitation (the gateway serves prompts only) and
  upstream OAuth. As in the suite's baseline mode, a WARNING fails a check, and an
  expected failure that passes fails the run.
- Each scenario's checks include the suite's \`wire-schema-valid\` check where it
  makes one (every message validated against the JSON Schema of the negotiated
  revision). Per-check output: \`conformance/results/\` (not committed).

| side | revision | upstream | scenarios | passed | failed | expected failures | stale expectations |
| --- | --- | --- | --- | --- | --- | --- | --- |
${summary.join('\n')}

${sections.join('\n\n')}
`;
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
    const started = Date.now();
    if (!existsSync(path.join(ROOT, 'dist/cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` first');
    const runtime = ensureRuntime();
    const suiteVersion = (JSON.parse(readFileSync(path.join(SUITE_PACKAGE, 'package.json'), 'utf8')) as { version: string }).version;
    const expectations = Object.fromEntries(SPEC_VERSIONS.map(version => [version, readExpectations(expectedFailuresFile(version))]));
    await rm(RESULTS, { recursive: true, force: true });
    await mkdir(RESULTS, { recursive: true });

    const outcomes: Outcome[] = [];
    const problems: string[] = [];

    for (const upstream of UPSTREAM_ERAS) {
        for (const specVersion of SPEC_VERSIONS) {
            const expected = serverExpectations(expectations[specVersion]!, upstream);
            const { exitCode, results, planned } = await runServerSide(specVersion, upstream, expected);
            const where = `server ${specVersion} (${upstream} upstream)`;
            if (results.size !== planned) problems.push(`${where}: the suite planned ${planned} scenarios, ${results.size} left results`);
            const judged = [...results].map(([scenario, checks]) => judge({ side: 'server', specVersion, upstream }, scenario, checks, expected));
            outcomes.push(...judged);
            const bad = judged.some(outcome => outcome.verdict === 'failed' || outcome.verdict === 'stale expectation');
            if ((exitCode !== 0) !== bad) problems.push(`${where}: the suite exited with ${exitCode}, which does not match the checks`);
        }
    }

    for (const specVersion of SPEC_VERSIONS) {
        await mkdir(path.join(RESULTS, `client-${specVersion}`), { recursive: true });
        const scenarios = await listClientScenarios(specVersion);
        console.log(`conformance: client side, ${specVersion}, ${scenarios.length} scenarios`);
        const results = await pool(scenarios, CLIENT_CONCURRENCY, scenario => runClientScenario(specVersion, scenario));
        scenarios.forEach((scenario, index) => {
            const { exitCode, checks } = results[index]!;
            const outcome = judge({ side: 'client', specVersion, upstream: undefined }, scenario, checks, expectations[specVersion]!.client);
            outcomes.push(outcome);
            const bad = outcome.verdict === 'failed' || outcome.verdict === 'stale expectation';
            if ((exitCode !== 0) !== bad) problems.push(`client ${specVersion} ${scenario}: the suite exited with ${exitCode}, which does not match the checks`);
        });
    }

    const seconds = (Date.now() - started) / 1000;
    await writeFile(path.join(ROOT, 'CONFORMANCE.md'), report(outcomes, { suiteVersion, runtime, seconds, problems }));

    for (const outcome of outcomes) {
        const mark = outcome.verdict === 'passed' ? 'ok  ' : outcome.verdict === 'expected failure' ? 'xf  ' : 'FAIL';
        if (mark === 'FAIL' || process.env.CONFORMANCE_VERBOSE) {
            console.log(
                `${mark} ${outcome.side} ${outcome.specVersion}${outcome.upstream === undefined ? '' : ` (${outcome.upstream} upstream)`} ${outcome.scenario}: ${outcome.verdict}${outcome.note ? ` (${outcome.note})` : ''}`
            );
        }
    }
    for (const problem of problems) console.log(`FAIL ${problem}`);
    const tally = (verdict: Verdict) => outcomes.filter(outcome => outcome.verdict === verdict).length;
    console.log(
        `conformance: ${outcomes.length} scenario runs: ${tally('passed')} passed, ${tally('failed')} failed, ` +
            `${tally('expected failure')} expected failures, ${tally('stale expectation')} stale expectations; ` +
            `${seconds.toFixed(0)} s (suite ${suiteVersion} on Node ${runtime}, gateway on Node ${process.version}, ${os.cpus().length} cores). ` +
            `Wrote CONFORMANCE.md; per-check results in ${path.relative(ROOT, RESULTS)}/`
    );
    process.exitCode = tally('failed') + tally('stale expectation') + problems.length > 0 ? 1 : 0;
}

main().catch(async (error: unknown) => {
    process.stderr.write(`conformance: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
    await Promise.all([...children].map(stop));
});
