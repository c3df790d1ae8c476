/** BENCHMARKS.md's scale-out sections (issue 16): replicas behind nginx, and the cost of a sealed session id. */
import { table } from './lib/markdown.js';
import { count, ratio, us } from './lib/stats.js';
import type { Stamped } from './results.js';
import {
    NGINX_ONE,
    NGINX_THREE,
    NGINX_THREE_REDIS,
    NGINX_UPSTREAM,
    ONE_GATEWAY,
    RAW_HOP_UPSTREAM,
    REDIS_RATE_LIMIT,
    SESSION_ERA,
    STATELESS_ERA,
    UPSTREAM_DIRECT,
    type ReplicaCell,
    type ReplicasResult
} from './scenarios/replicas.js';
import { MAP_LOOKUP, type SessionIdResult } from './scenarios/session-id.js';

/** "measured on <commit> at <date>, load ...": these sections may come from a later run than the rest of the file. */
export function stamp({ measuredOn }: Stamped<object>): string {
    return `Measured on **${measuredOn.commit}**, ${measuredOn.date.slice(0, 16).replace('T', ' ')} UTC, load average at start ${measuredOn.loadAtStart.map(l => l.toFixed(2)).join(' / ')}`;
}

const optionalUs = (micros: number | undefined) => (micros === undefined ? '' : us(micros));

function cellsTable(cells: ReplicaCell[]): string {
    return table(
        ['target', 'client', 'concurrency', 'requests/s', 'p50', 'p99', 'gateway (or hop) CPU per request', 'nginx CPU per request'],
        cells.map(c => [c.target, c.era, String(c.concurrency), count(c.perSecond), us(c.latency.p50), us(c.latency.p99), optionalUs(c.hopCpuUs), optionalUs(c.nginxCpuUs)])
    );
}

/** (b)/(a), (c)/(b) and nginx's own hop, per client era and concurrency. */
function ratiosTable(cells: ReplicaCell[], concurrencies: number[]): string {
    const find = (target: string, era: string, concurrency: number) => cells.find(c => c.target === target && c.era === era && c.concurrency === concurrency);
    const rows: string[][] = [];
    for (const concurrency of concurrencies) {
        for (const era of [SESSION_ERA, STATELESS_ERA]) {
            const [a, b, c, d] = [ONE_GATEWAY, NGINX_ONE, NGINX_THREE, NGINX_THREE_REDIS].map(target => find(target, era, concurrency));
            if (a === undefined || b === undefined || c === undefined) continue;
            const redis = d === undefined ? ['', ''] : [ratio(d.perSecond / c.perSecond), ratio(d.hopCpuUs! / c.hopCpuUs!)];
            rows.push([
                `${era}, concurrency ${concurrency}`,
                ratio(b.perSecond / a.perSecond),
                ratio(c.perSecond / b.perSecond),
                ratio(c.latency.p99 / b.latency.p99),
                ratio(c.hopCpuUs! / b.hopCpuUs!),
                ...redis
            ]);
        }
        const [direct, nginx, raw] = [
            find(UPSTREAM_DIRECT, SESSION_ERA, concurrency),
            find(NGINX_UPSTREAM, SESSION_ERA, concurrency),
            find(RAW_HOP_UPSTREAM, SESSION_ERA, concurrency)
        ];
        if (direct !== undefined && nginx !== undefined && raw !== undefined) {
            rows.push([
                `upstream alone, concurrency ${concurrency}: nginx / direct (raw hop / direct)`,
                `${ratio(nginx.perSecond / direct.perSecond)} (${ratio(raw.perSecond / direct.perSecond)})`,
                '',
                '',
                '',
                '',
                ''
            ]);
        }
    }
    return table(
        ['', 'throughput (b) / (a)', 'throughput (c) / (b)', 'p99 (c) / (b)', 'gateway CPU per request (c) / (b)', 'throughput (d) / (c)', 'gateway CPU per request (d) / (c)'],
        rows
    );
}

function replicasSection(r: Stamped<ReplicasResult>): string {
    if ('skipped' in r) return `## Several replicas behind nginx\n\nNot measured: ${r.skipped}.`;
    const o = r.options;
    return `## Several replicas behind nginx

${stamp(r)}. The same load against **(a)** ${ONE_GATEWAY}, **(b)** ${NGINX_ONE}, **(c)** ${NGINX_THREE},
**(d)** ${NGINX_THREE_REDIS} ((c) with \`cluster.redis\` and a rate limit of ${REDIS_RATE_LIMIT.requestsPerSecond} requests/s that the load
never reaches, so every request takes the shared limit's path: leases from Redis, session quotas, last uses)
(nginx 1 worker, round robin with no affinity, ${r.nginxKeepalive} idle keep-alive connections to its upstreams, the
harness's config otherwise: \`test/cluster-harness.ts\`); and, for nginx's own cost, the bench upstream directly,
behind nginx alone, and behind the raw hop. Each client sends prompts/get back to back on a connection of its own,
every ${r.listEvery}th request a prompts/list walk to the last page (through a gateway: two pages of ${r.prompts}
prompts, the second cursor opened by whichever replica gets it; the upstream answers all in one). Replicas share
\`cursorSecret\` and \`sessions.secrets\`, \`cluster: {}\` (no Redis). A 2025 session is opened on one replica and its
next requests go to the others, each of which opens its sealed id the first time and holds the session after.
Every gateway first serves ${count(o.warmUpRequests)} requests of each era directly (JIT warm-up: behind nginx each of
three replicas sees a third of the load). Slices of ${(o.sliceMs / 1000).toFixed(1)} s, ${o.rounds} round(s), the cells taking turns; CPU from /proc (all
threads, every replica summed; nginx's worker), idle subtracted, per request.

This machine has 2 cores for the bench client, nginx, the upstream and every replica: three replicas cannot
serve more than one here. Read (c) against (b) as what the design costs (sessions brought in on every replica,
three processes' JITs, caches and timers sharing 2 cores), not as scale.

${cellsTable(r.cells)}

${ratiosTable(r.cells, o.concurrencies)}`;
}

function sessionIdSection(r: Stamped<SessionIdResult>): string {
    const base = r.rows.find(row => row.measure === MAP_LOOKUP)!.nsPerOp;
    return `## Opening a sealed session id

${stamp(r)}. In the bench process, ${count(r.iterations)} calls per round after as many to warm up, the
measures taking turns round by round, median of ${r.rounds} rounds; ${count(r.held)} sessions held (and as many UUIDs
in the old design's map). A held session costs its Map lookup and the revocation check: the seal is opened once
per replica, when the session is first seen there (open, then its place in the table and in change delivery).

${table(
    ['measure', 'per call', 'vs a Map lookup'],
    r.rows.map(row => [row.measure, `${row.nsPerOp.toFixed(0)} ns`, ratio(row.nsPerOp / base)])
)}`;
}

/** The scale-out sections this run has, each followed by a blank line. */
export function scaleOutSections(r: { replicas?: Stamped<ReplicasResult>; sessionId?: Stamped<SessionIdResult> }): string {
    const sections = [r.replicas === undefined ? undefined : replicasSection(r.replicas), r.sessionId === undefined ? undefined : sessionIdSection(r.sessionId)];
    return sections
        .filter(section => section !== undefined)
        .map(section => `${section}\n\n`)
        .join('');
}
