/**
 * BENCHMARKS.md's sections of the scenarios beside the issue's targets: narrow clients, the cost of metrics, HTTP
 * answers over the limits and overload. Each is left out for results saved before it was measured.
 */
import { table } from './lib/markdown.js';
import { count, mib, ms, us, type Percentiles } from './lib/stats.js';
import type { BenchResults } from './results.js';
import { HUGE_RESULT_BYTES } from './scenarios/http-memory.js';
import { GATEWAY, GATEWAY_METRICS_OFF } from './targets.js';

const p50p95 = (p: Percentiles) => `${us(p.p50)} / ${us(p.p95)}`;
const fineUs = (ns: number) => `${(ns / 1000).toFixed(2)} us`;

function narrowClientsSection(r: BenchResults): string | undefined {
    const n = r.narrowClients;
    if (n === undefined) return undefined;
    return `## Narrow clients over a huge catalog

${count(n.prompts)} prompts from ${n.upstreams} upstreams, the gateway's own catalog, policy and \`PromptService\`
called in the bench process (no HTTP; the upstreams are in-memory lists behind the catalog's port), pages of
${n.pageSize}: a narrow client allowed 1 prompt, a wide client allowed everything. "Cut per page" is the same
service with the client's visible slice cut again for every page, as every page cost before slices were cached per
view and client. Each time runs from the request's arrival (a \`setImmediate\`, as a request from the network waits
for the event loop); p50 / p95:

${table(
    ['page', 'cut per page', 'cached slice'],
    [
        ['narrow client (its only page: 1 prompt)', p50p95(n.narrowCut), p50p95(n.narrowCached)],
        ['wide client, a page from the middle', '', p50p95(n.wideCached)],
        [`wide client, a page from the middle, while ${n.walkers} narrow clients list in a loop`, p50p95(n.wideUnderCut), p50p95(n.wideUnderCached)]
    ]
)}

A client's slice is cut once per view (any upstream's list change makes a new view) and client, at about the cost
of a "cut per page" page. It holds 4 bytes per prompt the client sees in an upstream it sees in part; upstreams seen
whole or not at all share arrays: a client seeing every other prompt holds ${(n.halfSliceBytes / 1024).toFixed(0)} KiB, the narrow and the wide
client next to nothing.`;
}

/** The line-up's gateway against the same build with metrics and dashboard off (full runs only), at concurrency 1. */
function metricsEndToEnd(r: BenchResults): string {
    const p50 = (name: string) => r.latency.find(row => row.name === name)?.latency.p50;
    const [on, off] = [p50(GATEWAY), p50(GATEWAY_METRICS_OFF)];
    if (on === undefined || off === undefined) return '';
    return `\n\nEnd to end, in the line-up above: a prompts/get through the gateway at concurrency 1 took ${us(on)} (p50) with
metrics and dashboard on, ${us(off)} with both off (${(on / off).toFixed(3)}x); see also the CPU per get of the two.`;
}

function metricsCostSection(r: BenchResults): string | undefined {
    const m = r.metricsCost;
    if (m === undefined) return undefined;
    return `## Cost of metrics

Recording one \`prompts/get\` updates three series: the gets counter (upstream, prompt, client, outcome),
\`mcp_server_operation_duration_seconds\` (method, upstream, outcome, prompt) and, for its upstream call,
\`mcp_client_operation_duration_seconds\` (method, upstream, outcome).
Timed in a loop (${count(m.rounds)} rounds) over ${m.prompts} prompts and ${m.clients} clients in the bench process, as is the access-log
line the gateway's logger writes for it (JSON, to a sink that drops it):

${table(
    ['measure', 'per request'],
    [
        ['metric updates of one `prompts/get`', fineUs(m.metricsNs)],
        ['its access-log line (JSON, level info)', fineUs(m.logLineNs)],
        [`the same line with ${m.secrets} configured secret values to redact`, `${fineUs(m.logLineRedactedNs)} (the search alone: ${m.redactNs.toFixed(0)} ns)`]
    ]
)}

Recording happens synchronously when a request ends; the scrape-time gauges (upstreams, sessions, faults) cost
nothing per request.${metricsEndToEnd(r)}`;
}

function httpMemorySection(r: BenchResults): string | undefined {
    const rows = r.httpMemory;
    if (rows === undefined) return undefined;
    return `## HTTP answers over the limits

${rows[0]?.parallel ?? 0} \`prompts/get\` at once to a Streamable HTTP upstream (the raw fixture) whose every answer is a
${mib(HUGE_RESULT_BYTES)} result, behind the default limits (\`maxResultBytes\` 4 MiB, \`maxUpstreamMessageBytes\` 16 MiB);
a fresh gateway (the built CLI) per row. An answer is read up to \`maxResultBytes\` plus 64 KiB, then its exchange
is aborted: the upstream could write only that much, plus what socket buffers took.

${table(
    ['answers', 'gateway RSS before / peak / after', 'written per answer', 'failed'],
    rows.map(row => [
        row.framing,
        `${mib(row.rssBeforeBytes)} / ${mib(row.rssPeakBytes)} / ${mib(row.rssAfterBytes)}`,
        `${(row.writtenBytes / 2 ** 20).toFixed(1)} MiB`,
        `${row.failed} of ${row.parallel}`
    ])
)}`;
}

function overloadSection(r: BenchResults): string | undefined {
    const o = r.overload;
    if (o === undefined) return undefined;
    return `## Overload

${count(o.sent)} concurrent \`prompts/get\` (each on a connection of its own) to an upstream whose prompt takes
${ms(o.slowMs, 0)}, behind \`maxConcurrency: ${o.bulkhead.maxConcurrency}\` and \`maxQueue: ${o.bulkhead.maxQueue}\` (the prompt fixture over stdio), and a
healthy upstream (the bench upstream over HTTP) behind the same gateway:

${table(
    ['measure', 'value'],
    [
        ['accepted (run or queued) / refused with "upstream busy"', `${count(o.accepted)} / ${count(o.refused)} (all answered in ${(o.floodMs / 1000).toFixed(1)} s)`],
        ['one more request while saturated: time to its refusal, p50 / p95', `${p50p95(o.refusal)} (${o.probesRefused} of ${o.refusal.samples} refused)`],
        [
            '`prompts/get` to the healthy upstream, p50 idle / under the overload',
            `${us(o.healthyIdle.p50)} / ${us(o.healthyLoaded.p50)} (${(o.healthyLoaded.p50 / o.healthyIdle.p50).toFixed(2)}x)`
        ],
        ['gateway RSS before / peak', `${mib(o.rssBeforeBytes)} / ${mib(o.rssPeakBytes)}`]
    ]
)}

The excess is refused without waiting for the slow upstream, so memory is bounded by the queue, not by the load:
the peak RSS is mostly the requests in flight at once. The healthy upstream's p50 is measured while the slow one is
saturated and its queue full.`;
}

/** The sections this run has, in order, each followed by a blank line. */
export function scenarioSections(r: BenchResults): string {
    const sections = [narrowClientsSection(r), metricsCostSection(r), httpMemorySection(r), overloadSection(r)];
    return sections
        .filter(section => section !== undefined)
        .map(section => `${section}\n\n`)
        .join('');
}
