/**
 * Benchmarks: what the gateway adds to prompts/list and prompts/get compared
 * with calling the upstream directly, over the same transport, in one run (so
 * ratios compare like with like on a noisy machine), plus the memory cost of an
 * idle downstream session. Writes BENCHMARKS.md.
 *
 *   npm run bench                # full run
 *   BENCH_ITERATIONS=50 npm run bench   # quicker, noisier
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Client } from '@modelcontextprotocol/client';
import { connectHttp, listAllPages, rawStdio, ROOT, startHttpFixture, stdioFixture, stopChild } from '../test/helpers.js';
import { measureFlood, STORM_NOTIFICATIONS, type Percentiles } from './flood.js';
import { httpMemoryRows, measureHttpMemory } from './http-memory.js';
import { measureRecordingCost } from './metrics-cost.js';
import { measureNarrowClients, narrowClientsSection } from './narrow-clients.js';
import { measureOverload } from './overload.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300);
const PROMPTS = 500;
const SESSIONS = 200;

interface Stats {
    p50: number;
    p95: number;
    mean: number;
}

/** Milliseconds one call takes. */
async function timed(run: () => Promise<unknown>): Promise<number> {
    const start = process.hrtime.bigint();
    await run();
    return Number(process.hrtime.bigint() - start) / 1e6;
}

async function measure(iterations: number, run: () => Promise<unknown>): Promise<Stats> {
    for (let i = 0; i < Math.min(30, iterations); i++) await run();
    const samples: number[] = [];
    for (let i = 0; i < iterations; i++) samples.push(await timed(run));
    return statsOf(samples);
}

/** Two calls timed alternately, so drift on a noisy machine hits both alike. */
async function measurePair(iterations: number, a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[Stats, Stats]> {
    for (let i = 0; i < Math.min(30, iterations); i++) await Promise.all([a(), b()]);
    const [first, second]: [number[], number[]] = [[], []];
    for (let i = 0; i < iterations; i++) {
        // Alternating which goes first, so neither always runs right after the other.
        if (i % 2 === 0) {
            first.push(await timed(a));
            second.push(await timed(b));
        } else {
            second.push(await timed(b));
            first.push(await timed(a));
        }
    }
    return [statsOf(first), statsOf(second)];
}

function statsOf(samples: number[]): Stats {
    samples.sort((x, y) => x - y);
    const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
    return { p50: at(0.5), p95: at(0.95), mean: samples.reduce((x, y) => x + y, 0) / samples.length };
}

/** The same prompts/get through a gateway recording metrics (and feeding the dashboard) and one with both off. */
async function measureMetricsCost(upstreamUrl: string): Promise<[Stats, Stats]> {
    const upstreams = [{ id: 'up', transport: 'streamable-http', url: upstreamUrl }];
    const off = await startCliGateway('metrics-off', { metrics: { enabled: false }, dashboard: { enabled: false }, upstreams });
    const on = await startCliGateway('metrics-on', { metrics: { enabled: true }, dashboard: { enabled: true }, upstreams });
    const [viaOff, viaOn] = [await connectHttp(off.url), await connectHttp(on.url)];
    const get = { name: 'up__with-required', arguments: { topic: 'benchmarks' } };
    try {
        return await measurePair(ITERATIONS * 2, () => viaOff.getPrompt(get), () => viaOn.getPrompt(get));
    } finally {
        await Promise.all([viaOff.close(), viaOn.close()]);
        await Promise.all([stopChild(off.child), stopChild(on.child)]);
    }
}

const fmt = (ms: number) => ms.toFixed(2);

/** Resident memory of a process, from /proc (Linux). */
async function rssKiB(pid: number): Promise<number | undefined> {
    try {
        const status = await readFile(`/proc/${pid}/status`, 'utf8');
        return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    } catch {
        return undefined;
    }
}

async function memoryPerSession(gateway: CliGateway): Promise<number | undefined> {
    const before = await rssKiB(gateway.child.pid!);
    const clients: Client[] = [];
    for (let i = 0; i < SESSIONS; i++) clients.push(await connectHttp(gateway.url));
    const after = await rssKiB(gateway.child.pid!);
    await Promise.all(clients.map(client => client.close()));
    return before === undefined || after === undefined ? undefined : (after - before) / SESSIONS;
}

interface CliGateway {
    url: string;
    child: ChildProcess;
}

/** The built gateway in its own process, as users run it. */
async function startCliGateway(name: string, config: unknown): Promise<CliGateway> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-'));
    const file = path.join(dir, `${name}.json`);
    // One bench client drives thousands of requests a second and opens hundreds of sessions: the per-client limits
    // would measure themselves.
    const limits = { rateLimit: { requestsPerSecond: 0 }, maxSessionsPerClient: 10_000 };
    await writeFile(file, JSON.stringify({ limits, ...(config as object) }));
    const child = spawn(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--config', file, '--port', '0'], {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, LOG_LEVEL: 'warn' }
    });
    const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stderr }).on('line', line => {
            const match = /^listening on (\S+)$/.exec(line);
            if (match) resolve(match[1]!);
        });
        child.once('exit', code => reject(new Error(`gateway exited with ${code}`)));
    });
    return { url, child };
}

const POLICY_CLIENTS = 100;

const firstPage = (client: Client) => client.request({ method: 'prompts/list', params: {} });

/** The same calls through an open gateway and through one with API keys and prompt policies at every level. */
async function measurePolicyCost(upstreamUrl: string): Promise<[string, Stats, Stats][]> {
    const upstream = { id: 'up', transport: 'streamable-http', url: upstreamUrl, prompts: { deny: ['fail-*'] } };
    const open = await startCliGateway('open', { pagination: { pageSize: 50 }, upstreams: [{ ...upstream, prompts: {} }] });
    const key = (i: number) => `bench-key-${String(i).padStart(4, '0')}-0123456789abcdef`;
    const clients = Array.from({ length: POLICY_CLIENTS }, (_, i) => ({ id: `client-${i}`, apiKey: key(i), prompts: { allow: ['up__*'], deny: ['*__prompt-49*'] } }));
    clients[1] = { id: 'narrow', apiKey: key(1), prompts: { allow: ['up__prompt-00*'], deny: [] } };
    const guarded = await startCliGateway('guarded', {
        pagination: { pageSize: 50 },
        auth: { mode: 'apiKey' },
        clients,
        prompts: { deny: ['*__all-content'] },
        upstreams: [upstream]
    });
    // The last client in the list: its key is found after every other digest has been compared.
    const viaOpen = await connectHttp(open.url);
    const viaGuarded = await connectHttp(guarded.url, { headers: { authorization: `Bearer ${key(POLICY_CLIENTS - 1)}` } });
    const viaNarrow = await connectHttp(guarded.url, { headers: { authorization: `Bearer ${key(1)}` } });
    const get = { name: 'up__with-required', arguments: { topic: 'benchmarks' } };
    try {
        return [
            ['prompts/get', await measure(ITERATIONS, () => viaOpen.getPrompt(get)), await measure(ITERATIONS, () => viaGuarded.getPrompt(get))],
            ['prompts/list, whole walk in pages of 50', await measure(ITERATIONS, () => listAllPages(viaOpen)), await measure(ITERATIONS, () => listAllPages(viaGuarded))],
            ['prompts/list, first page (narrow client: its only page)', await measure(ITERATIONS, () => firstPage(viaOpen)), await measure(ITERATIONS, () => firstPage(viaNarrow))]
        ];
    } finally {
        await Promise.all([viaOpen.close(), viaGuarded.close(), viaNarrow.close()]);
        await Promise.all([stopChild(open.child), stopChild(guarded.child)]);
    }
}

async function main(): Promise<void> {
    const [single, paginated] = await Promise.all([
        startHttpFixture('streamable-http', { prompts: PROMPTS }),
        startHttpFixture('streamable-http', { prompts: PROMPTS, pageSize: 50 })
    ]);
    const whole = await startCliGateway('whole', { pagination: { pageSize: 1000 }, upstreams: [{ id: 'up', transport: 'streamable-http', url: single.url }] });
    const paged = await startCliGateway('paged', { pagination: { pageSize: 50 }, upstreams: [{ id: 'up', transport: 'streamable-http', url: paginated.url }] });
    const direct = await connectHttp(single.url);
    const directPaged = await connectHttp(paginated.url);
    const viaWhole = await connectHttp(whole.url);
    const viaPaged = await connectHttp(paged.url);
    const args = { name: 'with-required', arguments: { topic: 'benchmarks' } };
    const gatewayArgs = { ...args, name: 'up__with-required' };

    const rows: [string, Stats, Stats][] = [];
    rows.push(['prompts/get', await measure(ITERATIONS, () => direct.getPrompt(args)), await measure(ITERATIONS, () => viaWhole.getPrompt(gatewayArgs))]);
    rows.push([
        `prompts/list, ${PROMPTS + 7} prompts in one page`,
        await measure(ITERATIONS, () => listAllPages(direct)),
        await measure(ITERATIONS, () => listAllPages(viaWhole))
    ]);
    rows.push([
        `prompts/list, ${PROMPTS + 7} prompts in pages of 50 (whole walk)`,
        await measure(ITERATIONS, () => listAllPages(directPaged)),
        await measure(ITERATIONS, () => listAllPages(viaPaged))
    ]);

    const sessionKiB = await memoryPerSession(whole);
    const policyRows = await measurePolicyCost(single.url);
    const [metricsOff, metricsOn] = await measureMetricsCost(single.url);
    const recording = measureRecordingCost();
    const httpMemory = await measureHttpMemory();

    const overloaded = await startCliGateway('overload', {
        upstreams: [stdioFixture('slow', {}, { maxConcurrency: 16, maxQueue: 48, timeoutMs: 60_000 }), stdioFixture('fast')]
    });
    const overload = await measureOverload(overloaded.url, () => rssKiB(overloaded.child.pid!));
    await stopChild(overloaded.child);
    const storming = await startCliGateway('storm', {
        upstreams: [rawStdio('storm', ['--flood', String(STORM_NOTIFICATIONS)], { timeoutMs: 300_000, maxTotalTimeoutMs: 300_000 }), stdioFixture('fast')]
    });
    const storm = await measureFlood(storming.url);
    await stopChild(storming.child);
    const pctl = (p: Percentiles) => `${fmt(p.p50)} / ${fmt(p.p99)}`;
    const narrowClients = await measureNarrowClients();
    const mib = (kib: number | undefined) => (kib === undefined ? 'n/a' : `${(kib / 1024).toFixed(1)} MiB`);

    await Promise.all([direct.close(), directPaged.close(), viaWhole.close(), viaPaged.close()]);
    await Promise.all([stopChild(whole.child), stopChild(paged.child), single.close(), paginated.close()]);

    const table = rows
        .map(([what, d, g]) => `| ${what} | ${fmt(d.p50)} / ${fmt(d.p95)} | ${fmt(g.p50)} / ${fmt(g.p95)} | ${(g.p50 / d.p50).toFixed(2)}x | ${fmt(g.p50 - d.p50)} |`)
        .join('\n');
    const report = `# Benchmarks

Generated by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), ${ITERATIONS} iterations after warm-up.

Each row compares the same call made directly to an upstream fixture server
(its own process, Streamable HTTP on 127.0.0.1) with the call made through the
gateway (the built CLI in its own process, Streamable HTTP downstream, the same
kind of upstream behind it), measured in the same run from an SDK \`Client\` in
the benchmark process. In the paged row the upstream paginates by 50 too, so both
sides make the same number of round trips. Times are milliseconds, p50 / p95. The
machine is shared and noisy: read the ratios, not the absolute numbers.

| call | direct p50 / p95 | via gateway p50 / p95 | ratio (p50) | added (p50, ms) |
| --- | --- | --- | --- | --- |
${table}

A \`prompts/get\` through the gateway is two Streamable HTTP round trips
(client to gateway, gateway to upstream) where the direct call is one, so about
2x is the floor for an HTTP-to-HTTP proxy; the added time is roughly one more hop.

The list rows walk every page. The gateway serves lists from its per-upstream
cache, so after the first call a list does not go upstream at all; what the rows
show is the gateway's own cost per page (view lookup, page cut, cursor sealing and
opening) against an upstream's.

## Cost of authentication and prompt policy

The same upstream (${PROMPTS + 7} prompts, Streamable HTTP) behind two gateways
in one run: one open (\`auth.mode\` none, no policy) and one with
\`auth.mode\` apiKey, ${POLICY_CLIENTS} clients (each request's key is hashed and
compared with every client's digest), a global deny, an upstream-level deny and
the client's own allow and deny globs. Page size 50.

| call | open p50 / p95 | apiKey + policy p50 / p95 | ratio (p50) |
| --- | --- | --- | --- |
${policyRows.map(([what, open, guarded]) => `| ${what} | ${fmt(open.p50)} / ${fmt(open.p95)} | ${fmt(guarded.p50)} / ${fmt(guarded.p95)} | ${(guarded.p50 / open.p50).toFixed(2)}x |`).join('\n')}

The narrow client may see 10 of the ${PROMPTS + 7} prompts, so its only page is
cut after testing the policy against every prompt of the view; the open gateway
cuts its first page after 50.

## Cost of metrics

Recording one \`prompts/get\` updates four series: the gets counter
(upstream, prompt, client, outcome), the duration histogram, the per-prompt
latency summary (sliding 10-minute window) and the upstream request histogram.
Timed in a loop over ${recording.prompts} prompts and ${recording.clients} clients in the benchmark process:

| measure | per request |
| --- | --- |
| metric updates of one \`prompts/get\` | ${(recording.metricsNs / 1000).toFixed(2)} µs |
| its access-log line (JSON, level info) | ${(recording.logLineNs / 1000).toFixed(2)} µs |
| the same line with ${recording.secrets} configured secret values to redact | ${(recording.logLineRedactedNs / 1000).toFixed(2)} µs (the search alone: ${recording.redactNs.toFixed(0)} ns) |
| the whole \`prompts/get\` through the gateway (p50, row above) | ${fmt(rows[0]![2].p50)} ms |

End to end, the same upstream behind two gateways in one run, requests
alternating between them (${ITERATIONS * 2} each; the bench gateways log at warn, so
no access-log lines):

| gateway | prompts/get p50 / p95 |
| --- | --- |
| metrics and dashboard off | ${fmt(metricsOff.p50)} / ${fmt(metricsOff.p95)} |
| metrics and dashboard on | ${fmt(metricsOn.p50)} / ${fmt(metricsOn.p95)} |
| ratio (p50) | ${(metricsOn.p50 / metricsOff.p50).toFixed(3)}x |

Recording happens synchronously when a request ends; the scrape-time gauges
(upstreams, sessions, faults) cost nothing per request.

## Overload

${overload.sent} concurrent \`prompts/get\` from 20 sessions to an upstream whose
prompt takes 3 s, behind \`maxConcurrency: 16\` and \`maxQueue: 48\` (stdio
fixtures, gateway as the built CLI):

| measure | value |
| --- | --- |
| accepted (run or queued) / refused with "upstream busy" | ${overload.accepted} / ${overload.refused} (all answered in ${overload.floodSeconds.toFixed(1)} s) |
| one more request while saturated: time to its refusal, p50 / p95 | ${fmt(overload.refusalP50)} / ${fmt(overload.refusalP95)} ms |
| \`prompts/get\` to a healthy upstream behind the same gateway, p50 idle / under the overload | ${fmt(overload.healthyIdleP50)} / ${fmt(overload.healthyLoadedP50)} ms (${(overload.healthyLoadedP50 / overload.healthyIdleP50).toFixed(2)}x) |
| gateway RSS before / peak during | ${mib(overload.rssBeforeKiB)} / ${mib(overload.rssPeakKiB)} |

The excess is refused without waiting for the slow upstream (a refusal costs
about what a request to a healthy upstream does), so memory is bounded by the
queue, not by the load: the peak RSS above is mostly the ${overload.sent} HTTP
requests in flight at once. The healthy upstream's p50 is measured while the slow
one is saturated and its queue full.

## A storm of list_changed

One upstream (the raw fixture over stdio) sends ${storm.notifications.toLocaleString('en')} \`notifications/prompts/list_changed\`
as fast as the gateway reads them (${storm.stormSeconds.toFixed(2)} s here), while one client alternates
\`GET /healthz\` and a \`prompts/get\` to another upstream, measured idle first in the same run:

| request | idle p50 / p99 (ms) | during the storm p50 / p99 (ms) | samples during the storm |
| --- | --- | --- | --- |
| \`GET /healthz\` | ${pctl(storm.healthz.idle)} | ${pctl(storm.healthz.storm)} | ${storm.healthz.storm.samples} |
| \`prompts/get\` to the other upstream | ${pctl(storm.get.idle)} | ${pctl(storm.get.storm)} | ${storm.get.storm.samples} |

Notifications a watching session received for the storm: ${storm.listChangedReceived} (the list itself did
not change, so there was nothing to announce). Per notification the gateway parses one
short line, notes the time and marks the upstream's list stale; the coalescer arms no
timer per event, and nothing else is allocated until the burst's debounce fires.

Idle downstream session: ${sessionKiB === undefined ? 'not measured (needs /proc)' : `about ${sessionKiB.toFixed(1)} KiB of resident memory each in the gateway process (growth of VmRSS over ${SESSIONS} sessions; RSS is coarse, so take it as an upper bound)`}.

${narrowClientsSection(narrowClients)}
## HTTP answers over the limits

8 \`prompts/get\` at once to a Streamable HTTP upstream whose every answer is a
50 MiB result, behind the default limits (\`maxResultBytes\` 4 MiB,
\`maxUpstreamMessageBytes\` 16 MiB); a fresh gateway (the built CLI) per row.
An answer is read up to \`maxResultBytes\` plus 64 KiB, then its exchange is
aborted: the upstream could write only that much, plus what socket buffers took.

| answers | gateway RSS before / peak / after | written per answer | failed |
| --- | --- | --- | --- |
${httpMemoryRows(httpMemory)}

## Reproduce

\`\`\`sh
npm ci
npm run bench                      # writes BENCHMARKS.md
BENCH_ITERATIONS=1000 npm run bench  # steadier numbers
\`\`\`
`;
    await writeFile(path.join(ROOT, 'BENCHMARKS.md'), report);
    process.stdout.write(report);
}

main().then(
    () => process.exit(0),
    (error: unknown) => {
        process.stderr.write(`benchmark failed: ${String(error)}\n`);
        process.exit(1);
    }
);
