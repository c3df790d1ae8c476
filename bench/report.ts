/** BENCHMARKS.md from a run's results (and, optionally, an earlier run's beside them). */
import { addedP50, cpuPerGet, throughputRatio, verdicts, type BenchResults, type Verdict } from './results.js';
import { table } from './lib/markdown.js';
import { count, kib, mib, ms, ratio, us } from './lib/stats.js';
import { promptFilesSection } from './report-prompt-files.js';
import { scaleOutSections } from './report-scale-out.js';
import { scenarioSections } from './report-scenarios.js';
import { DIRECT, FLOOR, GATEWAY, GATEWAY_METRICS_OFF, GATEWAY_STATELESS, GATEWAY_TRACING, RAW_HOP } from './targets.js';

const mark = (verdict: Verdict) => `${verdict.met ? 'met' : '**missed**'} (${verdict.margin.replace(/^(met|missed) by /, '')})`;

/** The issue's targets, judged: measure, target, value (and the earlier run's), met or missed by how much. */
export function renderVerdicts(results: BenchResults, before?: BenchResults): string {
    const now = verdicts(results);
    const then = before === undefined ? undefined : verdicts(before);
    const head = ['measure', 'target', ...(then ? [`before (${before!.gateway.commit})`] : []), `gateway ${results.gateway.commit}`, 'verdict'];
    return table(
        head,
        now.map((verdict, i) => [verdict.measure, verdict.target, ...(then ? [`${then[i]!.value} (${then[i]!.met ? 'met' : 'missed'})`] : []), verdict.value, mark(verdict)])
    );
}

function latencySection(r: BenchResults): string {
    const raw = addedP50(r, RAW_HOP);
    const rows = r.latency.map(row => {
        const hop = r.hops.includes(row.name);
        return [row.name, us(row.latency.p50), us(row.latency.p99), hop ? us(addedP50(r, row.name)) : '', hop ? ratio(addedP50(r, row.name) / raw) : ''];
    });
    return table(['target', 'p50', 'p99', `added p50 (vs ${DIRECT})`, 'added, vs raw hop'], rows);
}

/** The two eras' paths through the same gateway process, from this run's latency and CPU rows. */
function erasParagraph(r: BenchResults): string {
    const p50 = (name: string) => r.latency.find(row => row.name === name)?.latency.p50;
    const [legacy, stateless] = [p50(GATEWAY), p50(GATEWAY_STATELESS)];
    const cpu = optionalCpuPerGet(r, GATEWAY_STATELESS);
    if (legacy === undefined || stateless === undefined || cpu === undefined) return '';
    return `**The 2026-07-28 path against the 2025 path** (one gateway process, asked by a stateless 2026-07-28 client and by a
2025-06-18 session, interleaved): p50 ${us(stateless)} vs ${us(legacy)} (${ratio(stateless / legacy)}), added p50 ${ratio(addedP50(r, GATEWAY_STATELESS) / addedP50(r, GATEWAY))},
CPU per get ${us(cpu)} vs ${us(cpuPerGet(r, GATEWAY))} (${ratio(cpu / cpuPerGet(r, GATEWAY))}). A stateless request carries its
revision, client info and capabilities in \`_meta\` and mirrors its method and prompt name in headers, which the gateway checks
against the body; a 2025 request names its session instead.`;
}

/** What traces cost per get: the tracing-on gateway against the same build with tracing off, as ratios to the raw hop. */
function tracingParagraph(r: BenchResults): string {
    const cpu = optionalCpuPerGet(r, GATEWAY_TRACING);
    if (cpu === undefined || !r.latency.some(row => row.name === GATEWAY_TRACING)) return '';
    const [rawCpu, rawAdded] = [cpuPerGet(r, RAW_HOP), addedP50(r, RAW_HOP)];
    const [offCpu, offAdded, onAdded] = [cpuPerGet(r, GATEWAY), addedP50(r, GATEWAY), addedP50(r, GATEWAY_TRACING)];
    const exported = r.tracingExports === undefined ? '' : collectorReceived(r.tracingExports);
    return `**Tracing on** (\`${GATEWAY_TRACING}\`: the standard environment, \`OTEL_EXPORTER_OTLP_ENDPOINT\` and
\`OTEL_TRACES_SAMPLER=always_on\`, every get making a SERVER and a CLIENT span, exported over OTLP/HTTP protobuf to a
collector in the bench process that answers at once): CPU per get at concurrency ${r.cpuConcurrency} ${us(cpu)} against ${us(offCpu)} with tracing off
(${ratio(cpu / rawCpu)} against ${ratio(offCpu / rawCpu)} the raw hop's: traces add ${us(cpu - offCpu)}, ${ratio((cpu - offCpu) / rawCpu)} of a raw hop), added p50
${us(onAdded)} against ${us(offAdded)} (${ratio(onAdded / rawAdded)} against ${ratio(offAdded / rawAdded)} the raw hop's).${exported} Tracing off, the gateway builds
no span and no attribute (a no-op tracer); the client's \`traceparent\` is still passed to the upstream.`;
}

function collectorReceived({ exports, bytes }: NonNullable<BenchResults['tracingExports']>): string {
    if (exports === 0) return ' **Its collector received no span: this build does not trace, and the row measures it with tracing off.**';
    return ` Its collector received ${count(exports)} exports (${bytes < 2 ** 20 ? kib(bytes) : mib(bytes)} in all) over the run.`;
}

function throughputSection(r: BenchResults): string {
    const levels = [...new Set(r.throughput.map(c => c.concurrency))];
    const names = [...new Set(r.throughput.map(c => c.name))];
    const rows = names.map(name => [
        name,
        ...levels.map(level => {
            const c = r.throughput.find(t => t.name === name && t.concurrency === level)!;
            return `${count(c.perSecond)}/s (${ratio(throughputRatio(r, name, level))})`;
        })
    ]);
    return table(['target', ...levels.map(level => `concurrency ${level} (vs direct)`)], rows);
}

function cpuSection(r: BenchResults): string {
    const levels = [...new Set(r.throughput.map(c => c.concurrency))];
    const raw = cpuPerGet(r, RAW_HOP);
    const rows = [DIRECT, ...r.hops].map(name => [
        name,
        ...levels.map(level => us(r.throughput.find(t => t.name === name && t.concurrency === level)!.cpuUsPerGet)),
        ratio(cpuPerGet(r, name) / raw),
        mib(r.throughput.filter(t => t.name === name).at(-1)!.rssBytes)
    ]);
    return table(['process', ...levels.map(level => `concurrency ${level}`), `vs raw hop (concurrency ${r.cpuConcurrency})`, 'RSS after'], rows);
}

function profileSection(r: BenchResults): string {
    const total = r.profile.reduce((sum, row) => sum + row.usPerGet, 0);
    const rows = r.profile.filter(row => row.usPerGet >= 5).map(row => [row.owner, us(row.usPerGet), `${((row.usPerGet / total) * 100).toFixed(0)}%`]);
    return table(['charged to', 'main-thread CPU per get', 'share'], [...rows, ['total (main thread, sampled)', us(total), '100%']]);
}

/** The largest rows of the profile, as prose: "@hono/node-server 532 us, ...". */
function largestCosts(r: BenchResults, rows = 5): string {
    return r.profile
        .slice(0, rows)
        .map(row => `${row.owner} ${us(row.usPerGet)}`)
        .join(', ');
}

/** CPU per get of a target, if the run had it (a quick run has no variants). */
function optionalCpuPerGet(r: BenchResults, name: string): number | undefined {
    return r.throughput.some(cell => cell.name === name) ? cpuPerGet(r, name) : undefined;
}

/**
 * What the gateway does per request that the raw hop does not, from the run's own numbers: the gateway's own
 * code is small next to Node's HTTP and socket work, which the hop does too; what is left are its features.
 */
function whatRemains(r: BenchResults): string {
    const metricsOff = optionalCpuPerGet(r, GATEWAY_METRICS_OFF);
    const withoutMetrics =
        metricsOff === undefined
            ? ''
            : ` With metrics and the dashboard off the gateway costs ${us(metricsOff)} per get, ${ratio(metricsOff / cpuPerGet(r, RAW_HOP))} the raw hop's.`;
    return (
        'Most of those rows are HTTP and socket work on both sides (undici to the upstream; the HTTP server, its parser and the ' +
        "socket writes, charged to Node core and to the gateway's http folder), which the raw hop does too; " +
        'the rest is what the gateway does that a hop does not: the access-log line (pino; sonic-boom writes the lines in batches), ' +
        'three metric updates (prom-client: a counter and two histograms), the request id carried through the request, the client check, ' +
        `argument validation and the bounds check of the result.${withoutMetrics}`
    );
}

/** Whether the gateway itself paused during the storm, or the machine's other processes held the probe up. */
function stormExplanation(r: BenchResults): string {
    const sampled = `The p99 of ${count(r.storm.storm.samples)} requests timed during a ${ms(r.storm.stormMs, 0)} storm is close to its slowest one.`;
    const delay = r.storm.loopDelayMaxMs;
    if (delay === undefined) return `${sampled} The storm is read and coalesced on the event loop that serves the other requests.`;
    return `${sampled} The gateway's own event loop was held at most ${ms(delay, 1)} during the storm (its nodejs_eventloop_lag_max_seconds, 10 ms resolution: a loop that never waits reads about 10 ms), so the slowest requests waited for a core, not for the gateway: on 2 cores the stdio upstream writing the storm, the gateway reading it, the bench client and the HTTP upstream take turns. A machine with a core for each would show it; here the gateway's part is the loop delay.`;
}

/** Why a missed target is missed and what would close it: the run's own numbers, read against the rebuilt engine. */
function whyMissed(r: BenchResults, index: number): string {
    const hot = `The profile's largest rows per get: ${largestCosts(r)}.`;
    switch (index) {
        case 0:
            return `What the gateway adds beyond the raw hop is its own work per request. ${hot} ${whatRemains(r)}`;
        case 1:
            return `On 2 cores shared by the bench client, the upstream, the hop and whoever else uses the machine, throughput at 32 is bound by the CPU per request of every process on the path (the gateway's ${us(cpuPerGet(r, GATEWAY))} against the raw hop's ${us(cpuPerGet(r, RAW_HOP))}). Even the raw hop reaches ${ratio(throughputRatio(r, RAW_HOP, 32))} of direct in this run, ${ratio(throughputRatio(r, GATEWAY, 32) / throughputRatio(r, RAW_HOP, 32))} of which the gateway reaches: the gateway's part of the gap closes with CPU per get; the rest is the hop itself on this machine.`;
        case 2:
            return `${hot} ${whatRemains(r)}`;
        case 3:
            return 'A session is its record (client id, revision, capabilities, times) and its live state (requests in flight, open responses, its place in change delivery); more than that per session means something per-session was added.';
        case 4:
            return 'Sessions that did not answer a ping had been dropped (cap, quota or sweep).';
        case 5:
            return `The gateway lists and indexes every upstream after it starts (/readyz at ${ms(r.catalog.readyzMs, 0)}, every prompt seen at ${ms(r.catalog.completeMs, 0)}); with ${r.catalog.upstreams} upstreams on 2 cores that is connect, initialize and one list per upstream, and the catalog built from them.`;
        case 6:
            return 'A warm page goes through the same request path as a get (see the profile), then its slice of the cached visible list is serialized (50 prompts with their arguments) and a fresh cursor sealed; the floor writes a canned page. What would close it: keeping the serialized page per list version, visible slice and position, so a warm page is a lookup and one write.';
        case 7:
            return 'Memory grows with the catalog: per-prompt records, the name table and the cached views.';
        default:
            return stormExplanation(r);
    }
}

function missedSection(r: BenchResults): string {
    const missed = verdicts(r)
        .map((verdict, i) => ({ verdict, i }))
        .filter(({ verdict }) => !verdict.met);
    if (missed.length === 0) return 'Every target is met.';
    return missed.map(({ verdict, i }) => `- **${verdict.measure}**: ${verdict.value}, target ${verdict.target}, ${verdict.margin}. ${whyMissed(r, i)}`).join('\n');
}

export function renderReport(r: BenchResults, options: { before?: BenchResults; resultsFile: string }): string {
    const m = r.machine;
    const c = r.catalog;
    const s = r.storm;
    const warnings = Object.entries(r.gatewayWarnings);
    return `# Benchmarks

Generated by \`npm run bench\` on ${r.date.slice(0, 16).replace('T', ' ')} UTC in ${r.durationS.toFixed(0)} s, gateway
**${r.gateway.commit}**; raw results in \`${options.resultsFile}\`. Machine: Node ${m.node}, ${m.cores} cores
(${m.cpu}), ${m.memoryGiB} GiB, load average at start ${m.loadAtStart.map(l => l.toFixed(2)).join(' / ')} (the
machine is shared: read the ratios, which compare targets measured in the same run, interleaved, not the absolute
numbers).

## The issue's targets

${renderVerdicts(r, options.before)}

${missedSection(r)}

## How it is measured

Every target runs in a process of its own on 127.0.0.1, in front of (or being) the same upstream, and is timed
from the bench process by a lean MCP client (raw JSON-RPC over undici keep-alive connections: one serialization,
one POST and one parse per request, so the client costs less than any target):

- **${FLOOR}**: node:http answering a canned result: the least a round trip from this client costs;
- **${DIRECT}**: the bench upstream itself (\`bench/servers/upstream.ts\`, Streamable HTTP in plain node:http);
- **${RAW_HOP}**: ~70 lines of plain node:http that parse the JSON-RPC message, rename the prompt and forward it
  over a keep-alive agent (\`bench/servers/raw-hop.ts\`): the cost of one hop, the reference;
- **naive SDK proxy**: ~50 lines on the official SDK, one SDK server and transport per session
  (\`bench/servers/sdk-proxy.ts\`), and **mcp-hub** from the npm registry (legacy HTTP+SSE endpoint): peers;
- **${GATEWAY}**: the built CLI (\`dist/cli.js\`) with one Streamable HTTP upstream and the default config but
  per-client quotas lifted (they would measure themselves), asked by a 2025-06-18 session; **${GATEWAY_STATELESS}**
  is the same process asked by a stateless 2026-07-28 client; **${GATEWAY_TRACING}** is another process of the
  same build with tracing on by the standard OpenTelemetry environment (see below); in a full run also with metrics
  and dashboard off, and with API keys for 100 clients and prompt policy at every level.

Every request is a \`prompts/get\` whose answer is checked. Latency is timed one request at a time, the targets
taking turns request by request (each round starting at another); throughput runs each target for a slice with
N sessions sending back to back, the targets taking turns slice by slice for several rounds. CPU per get is the
CPU time of the hop's process, all threads (\`/proc/<pid>/task/*/schedstat\`), over the slices, less its idle CPU
over as long, per request. The big catalog, the idle sessions, the storm, the answers over the limits and the
overload each run on a fresh gateway after the line-up's scenarios; narrow clients and the cost of metrics are
measured last, in the bench process.

## Latency at concurrency 1

${latencySection(r)}

${erasParagraph(r)}

${tracingParagraph(r)}

## Throughput

${throughputSection(r)}

## CPU per get (all threads of the process)

The first row is the upstream itself (what every request costs it, behind any hop). On 2 cores the bench client,
the upstream and the hop share, throughput is bound by the sum of their CPU per request: a hop that costs
three times what the upstream does cannot reach 0.7x direct here, whatever its latency.

${cpuSection(r)}

## Where the gateway's CPU goes

A V8 CPU profile of the gateway's main thread (over the inspector) at concurrency ${r.cpuConcurrency}, each sample
charged to the nearest package on its stack (the gateway's own code by folder; Node's bundled undici behind
\`fetch\` as a package), per request (rows under 5 us left out):

${profileSection(r)}

${warnings.length === 0 ? 'The gateway printed no process warnings under load.' : `Under load the gateway printed ${warnings.map(([name, n]) => `${count(n)} ${name}`).join(', ')}.`}

## A ${count(c.prompts)}-prompt catalog

${c.upstreams} upstreams of ${count(c.prompts / c.upstreams)} prompts (one bench upstream process serving each on a
path of its own) behind a fresh gateway, default page size:

${table(
    ['measure', 'value'],
    [
        ['spawn to `/readyz` 200', ms(c.readyzMs, 0)],
        [`spawn to the end of the first walk seeing all ${count(c.prompts)} prompts`, `${ms(c.completeMs, 0)} (that walk: ${count(c.pages)} pages, ${ms(c.walkMs, 0)})`],
        ['catalog complete when /readyz turned 200', c.completeAtReadyz ? 'yes (ready = /readyz time)' : 'no (ready = first complete walk)'],
        ['warm page (mid-list cursor) p50 / p99', `${us(c.page.p50)} / ${us(c.page.p99)}`],
        ['floor, canned page of the same size, p50 / p99', `${us(c.floorPage.p50)} / ${us(c.floorPage.p99)}`],
        ['gateway RSS after / peak', `${mib(c.rssBytes)} / ${mib(c.peakRssBytes)}`]
    ]
)}

## Idle sessions

A fresh gateway started with the inspector; sessions opened (initialize + initialized) over 16 shared
connections and left idle. Memory is the gateway's heap used plus external memory after a full GC (forced over
the inspector, twice), less the same before the first session; held sessions are those that answer a ping after.

${table(
    ['sessions', 'per session after a full GC', 'held', 'opened in', 'RSS'],
    r.sessions.map(step => [count(step.sessions), kib(step.bytesPerSession), count(step.held), ms(step.openMs, 0), mib(step.rssBytes)])
)}

## A storm of list_changed

A gateway with a stdio upstream that sends ${count(s.events)} \`notifications/prompts/list_changed\` as fast as the
gateway reads them, and the bench upstream over HTTP; \`prompts/get\` of the latter timed one at a time, idle and
during the storm (${ms(s.stormMs, 0)}, ${count(s.storm.samples)} requests${s.loopDelayMaxMs === undefined ? '' : `; the gateway's event loop held at most ${ms(s.loopDelayMaxMs, 1)}, by its own nodejs_eventloop_lag_max_seconds at 10 ms resolution`}). A session with a GET stream got
${count(s.listChangedReceived)} list_changed for the whole storm (the fixture's list stays the same, so a gateway
that notifies only clients whose visible list changed sends none).

${table(
    ['', 'p50', 'p99'],
    [
        ['idle', us(s.idle.p50), us(s.idle.p99)],
        ['during the storm', us(s.storm.p50), us(s.storm.p99)]
    ]
)}

${scenarioSections(r)}${scaleOutSections(r)}${promptFilesSection(r)}## Reproduce

\`\`\`sh
npm ci
npm run bench                                        # this tree's gateway: BENCHMARKS.md + bench/results/<commit>.json
npm run bench -- --gateway ../other-checkout         # another build of the gateway (npm run build there first)
npm run bench -- --before bench/results/before-da4130c.json   # with an earlier run's values beside
npm run bench -- --quick                             # every scenario small, in under a minute; writes nothing
npm run bench -- --only replicas,session-id --merge bench/results/<run>.json   # those two again, added to that run
npm run bench -- --only prompt-files --merge bench/results/<run>.json   # the prompt-files scenario again, added to that run
# the replicas scenario needs nginx (Debian: apt-get install -y redis-server nginx-light); without it, it is skipped
\`\`\`
`;
}
