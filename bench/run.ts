/**
 * The benchmark of issue 14: what a prompt request through the gateway costs against one plain HTTP hop, in one
 * run on this machine, the targets interleaved. See BENCHMARKS.md for what each scenario does.
 *
 *   npm run bench                                   # full run: writes BENCHMARKS.md and bench/results/<commit>.json
 *   npm run bench -- --quick                        # every scenario small (< 1 min), its report in a temporary folder (CI runs it)
 *   npm run bench -- --gateway /path/to/checkout    # measure that checkout's dist/cli.js (build it there first)
 *   npm run bench -- --baseline /path/to/checkout   # also that build, interleaved, as "gateway, baseline build"
 *   npm run bench -- --before bench/results/before-da4130c.json   # BENCHMARKS.md shows those results beside
 *   npm run bench -- --save bench/results/x.json    # where the results go (full run)
 *   npm run bench -- --label da4130c                # what the gateway is called (default: its checkout's commit)
 *   npm run bench -- --only replicas,session-id --merge bench/results/x.json
 *                                                   # only those scenarios, added to x.json (each stamped with its
 *                                                   # commit and date), and BENCHMARKS.md again from it
 *   node --import tsx bench/run.ts --render bench/results/x.json   # BENCHMARKS.md again from saved results, no run
 */
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gatewayUnderTest, measureGatewayAt } from './lib/gateway.js';
import { onProcessFailure, ROOT, startBenchServer, type Watched } from './lib/processes.js';
import { renderReport, renderVerdicts } from './report.js';
import type { BenchResults, Stamped } from './results.js';
import { measureCatalog } from './scenarios/catalog.js';
import { measureHttpMemory } from './scenarios/http-memory.js';
import { measureLatency } from './scenarios/latency.js';
import { measureMetricsCost } from './scenarios/metrics-cost.js';
import { measureNarrowClients } from './scenarios/narrow-clients.js';
import { measureOverload } from './scenarios/overload.js';
import { profileTarget } from './scenarios/profile.js';
import { measurePromptFiles, type PromptFilesResult } from './scenarios/prompt-files.js';
import { measureReplicas, type ReplicasResult } from './scenarios/replicas.js';
import { measureSessionId } from './scenarios/session-id.js';
import { measureSessions } from './scenarios/sessions.js';
import { measureStorm } from './scenarios/storm.js';
import { measureThroughput } from './scenarios/throughput.js';
import { GATEWAY, GATEWAY_TRACING, startLineup } from './targets.js';

const { values: args } = parseArgs({
    options: {
        quick: { type: 'boolean', default: false },
        gateway: { type: 'string' },
        baseline: { type: 'string' },
        before: { type: 'string' },
        save: { type: 'string' },
        label: { type: 'string' },
        render: { type: 'string' },
        only: { type: 'string' },
        merge: { type: 'string' }
    }
});

/** Sizes of each scenario: the in a full run, small enough for CI in a quick one. */
const SIZES = args.quick
    ? {
          upstreamPrompts: 100,
          latencyRounds: 40,
          throughput: { levels: [1, 8, 32, 128], sliceMs: 100, rounds: 1, idleMs: 100 },
          catalog: { upstreams: 5, promptsEach: 200, pageRounds: 30 },
          sessions: [100, 300],
          storm: { events: 1_000, idleRequests: 30 },
          httpMemory: { parallel: 4, settleMs: 200 },
          overload: { sessions: 10, perSession: 10, slowMs: 1_000, probes: 20 },
          narrowClients: { upstreams: 4, promptsEach: 2_000, pages: 20 },
          metricsCostRounds: 20_000,
          profileMs: 300,
          replicas: { concurrencies: [16], sliceMs: 300, rounds: 1, idleMs: 100, warmUpRequests: 200 },
          sessionId: { iterations: 5_000, rounds: 3, held: 1_000 },
          promptFiles: { files: 200, rounds: 2, changes: 1, oneProcess: true }
      }
    : {
          upstreamPrompts: 100,
          latencyRounds: 1_000,
          throughput: { levels: [1, 8, 32, 128], sliceMs: 1_000, rounds: 3, idleMs: 1_000 },
          catalog: { upstreams: 50, promptsEach: 1_000, pageRounds: 500 },
          sessions: [1_000, 10_000],
          storm: { events: 50_000, idleRequests: 300 },
          httpMemory: { parallel: 8, settleMs: 2_000 },
          overload: { sessions: 20, perSession: 100, slowMs: 3_000, probes: 50 },
          narrowClients: { upstreams: 4, promptsEach: 50_000, pages: 200 },
          metricsCostRounds: 200_000,
          profileMs: 3_000,
          replicas: { concurrencies: [16, 64], sliceMs: 2_000, rounds: 3, idleMs: 1_000, warmUpRequests: 3_000 },
          sessionId: { iterations: 50_000, rounds: 9, held: 10_000 },
          promptFiles: { files: 10_000, rounds: 6, changes: 5 }
      };
const CPU_CONCURRENCY = 32;

const log = (line: string) => process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1)} s] ${line}\n`);
const started = performance.now();

/**
 * The scenarios that each start a gateway of their own: one after another in a full run; at once in a quick one,
 * whose numbers only show that every scenario still runs.
 */
const freshGatewayScenarios = (floorUrl: string, upstreamUrl: string) =>
    measureAll(
        {
            catalog: () => measureCatalog(floorUrl, SIZES.catalog),
            sessions: () => measureSessions(upstreamUrl, SIZES.sessions),
            storm: () => measureStorm(upstreamUrl, SIZES.storm),
            httpMemory: () => measureHttpMemory(SIZES.httpMemory),
            overload: () => measureOverload(upstreamUrl, SIZES.overload)
        },
        args.quick
    );

type Measured<T extends Record<string, () => Promise<unknown>>> = { [name in keyof T]: Awaited<ReturnType<T[name]>> };

/** Runs each scenario (at once, or one after another), logs when each is done, and gives their results by name. */
async function measureAll<T extends Record<string, () => Promise<unknown>>>(scenarios: T, atOnce: boolean): Promise<Measured<T>> {
    const measure = async ([name, run]: [string, () => Promise<unknown>]) => {
        const value = await run();
        log(`${name} done`);
        return [name, value] as const;
    };
    const entries = Object.entries(scenarios);
    const results = [];
    if (atOnce) results.push(...(await Promise.all(entries.map(measure))));
    else for (const entry of entries) results.push(await measure(entry));
    return Object.fromEntries(results) as Measured<T>;
}

/** Measures of the gateway's layers in this process: after the others, whose timing they would disturb. */
const inProcessScenarios = () =>
    measureAll(
        {
            narrowClients: () => measureNarrowClients(SIZES.narrowClients),
            metricsCost: () => Promise.resolve(measureMetricsCost(SIZES.metricsCostRounds)),
            sessionId: () => Promise.resolve(stamped(measureSessionId(SIZES.sessionId)))
        },
        false
    );

/** The scale-out scenario (processes of its own: one after the others); its own message when nginx is missing. */
async function replicasScenario(upstream: Watched & { url: string }): Promise<Stamped<ReplicasResult>> {
    const result = await measureReplicas(upstream, SIZES.upstreamPrompts, SIZES.replicas);
    if ('skipped' in result) log(`replicas skipped: ${result.skipped}`);
    else log('replicas done');
    return stamped(result);
}

async function promptFilesScenario(): Promise<Stamped<PromptFilesResult>> {
    const result = stamped(await measurePromptFiles(SIZES.promptFiles));
    log('promptFiles done');
    return result;
}

/** A result with the commit and time it was measured, which a merged run's other scenarios do not share. */
const stamped = <T extends object>(result: T): Stamped<T> => ({
    ...result,
    measuredOn: { commit: gatewayUnderTest().commit, date: new Date().toISOString(), loadAtStart: os.loadavg() }
});

const readResults = async (file: string) => JSON.parse(await readFile(file, 'utf8')) as BenchResults;

async function writeReport(folder: string, results: BenchResults, resultsFile: string): Promise<string> {
    const before = args.before === undefined ? undefined : await readResults(args.before);
    const report = path.join(folder, 'BENCHMARKS.md');
    await writeFile(report, renderReport(results, { before, resultsFile: path.relative(folder, resultsFile) }));
    return report;
}

/** Scenarios `--only` can run by themselves, under their names in the results. */
const SELECTABLE = { replicas: 'replicas', 'session-id': 'sessionId', 'prompt-files': 'promptFiles' } as const;

/**
 * `--only`: the named scenarios alone; added to the `--merge` results (BENCHMARKS.md rendered again from them,
 * every other figure kept), or in a quick run printed.
 */
async function runSelected(names: string[]): Promise<void> {
    const unknown = names.filter(name => !(name in SELECTABLE));
    if (unknown.length > 0) throw new Error(`--only: unknown scenario ${unknown.join(', ')} (known: ${Object.keys(SELECTABLE).join(', ')})`);
    if (args.merge === undefined && !args.quick) throw new Error('--only needs --merge <results.json> (the run its results are added to), or --quick');
    const measured: Partial<Pick<BenchResults, 'replicas' | 'sessionId' | 'promptFiles'>> = {};
    if (names.includes('replicas')) {
        const upstream = await startBenchServer('upstream', 'upstream.ts', ['--prompts', String(SIZES.upstreamPrompts)]);
        measured.replicas = await replicasScenario(upstream);
        await upstream.stop();
    }
    if (names.includes('session-id')) {
        measured.sessionId = stamped(measureSessionId(SIZES.sessionId));
        log('sessionId done');
    }
    if (names.includes('prompt-files')) measured.promptFiles = await promptFilesScenario();
    if (args.merge === undefined) {
        process.stdout.write(`${JSON.stringify(measured, null, 2)}\n`);
        return;
    }
    const merged = { ...(await readResults(args.merge)), ...measured };
    const save = path.resolve(args.save ?? args.merge);
    await writeFile(save, `${JSON.stringify(merged, null, 2)}\n`);
    log(`wrote ${await writeReport(ROOT, merged, save)} and ${save}`);
}

async function main(): Promise<void> {
    if (args.render !== undefined) {
        process.stdout.write(`wrote ${await writeReport(ROOT, await readResults(args.render), path.resolve(args.render))}\n`);
        return;
    }
    onProcessFailure(error => {
        process.stderr.write(`benchmark failed: ${error.message}\n`);
        process.exit(1);
    });
    if (args.gateway !== undefined) measureGatewayAt(args.gateway);
    if (args.only !== undefined) return runSelected(args.only.split(',').map(name => name.trim()));
    const loadAtStart = os.loadavg();
    const lineup = await startLineup({ prompts: SIZES.upstreamPrompts, variants: !args.quick, baselineRoot: args.baseline });
    log(`line-up: ${lineup.targets.map(target => target.name).join(', ')}`);
    const latency = await measureLatency(lineup.targets, SIZES.latencyRounds);
    log('latency at concurrency 1 done');
    const throughput = await measureThroughput(lineup.targets, SIZES.throughput);
    log('throughput done');
    const gateway = lineup.targets.find(target => target.name === GATEWAY)!;
    const profile = await profileTarget(gateway, lineup.gateway.inspector!, { concurrency: CPU_CONCURRENCY, durationMs: SIZES.profileMs });
    log('profile done');
    const fresh = await freshGatewayScenarios(lineup.floor.url, lineup.upstream.url);
    const replicas = await replicasScenario(lineup.upstream);
    const gatewayWarnings = Object.fromEntries(lineup.gateway.warnings);
    await lineup.stop();
    const tracingExports = lineup.collector.received();
    // A build from before traces (--gateway) ignores the environment: its numbers are tracing off, which the report says.
    if (tracingExports.exports === 0) log(`${GATEWAY_TRACING}: its collector received no export (a build without traces?)`);
    const inProcess = await inProcessScenarios();
    const promptFiles = await promptFilesScenario();

    const results: BenchResults = {
        date: new Date().toISOString(),
        quick: args.quick,
        gateway: { ...gatewayUnderTest(), ...(args.label === undefined ? {} : { commit: args.label }) },
        machine: { node: process.version, cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), loadAtStart },
        durationS: (performance.now() - started) / 1000,
        hops: lineup.targets.filter(target => target.hop).map(target => target.name),
        latency,
        throughput,
        cpuConcurrency: CPU_CONCURRENCY,
        ...fresh,
        profile,
        ...inProcess,
        replicas,
        promptFiles,
        tracingExports,
        gatewayWarnings
    };
    process.stdout.write(`${renderVerdicts(results)}\n`);
    // A quick run's numbers say only that the bench works: its report goes to a temporary folder, not the tree's.
    const folder = args.quick ? await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-quick-')) : ROOT;
    const save = path.resolve(args.save ?? path.join(folder, 'bench/results', `${results.gateway.commit}.json`));
    await mkdir(path.dirname(save), { recursive: true });
    await writeFile(save, `${JSON.stringify(results, null, 2)}\n`);
    log(`wrote ${await writeReport(folder, results, save)} and ${save}`);
}

main().then(
    () => process.exit(0),
    (error: unknown) => {
        process.stderr.write(`benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
        process.exit(1);
    }
);
