/**
 * Scale-out on one machine: the same load against one gateway directly, one gateway behind nginx, and three
 * replicas behind nginx round robin (no affinity: a 2025 session's consecutive requests land on different
 * replicas, each opening its sealed id the first time and holding it after). Beside them, the upstream directly,
 * nginx alone in front of it and the raw hop: what nginx's hop costs whatever is behind it.
 *
 * Load: `concurrency` clients, each on a connection of its own, sending back to back: prompts/get, and every
 * LIST_EVERY-th request a prompts/list walk to its last page (the gateway's default page of 50: two pages of the
 * upstream's 100 prompts; the upstream answers all in one). 2025-06-18 sessions everywhere, and stateless
 * 2026-07-28 clients where a gateway is behind. The cells take turns slice by slice for several rounds, as the
 * throughput scenario's targets do; CPU is every gateway's (or the hop's) and nginx's workers', from /proc, less
 * their idle CPU over as long, per request.
 *
 * Replicas share `cursorSecret` and `sessions.secrets`. (c) sets `cluster: {}` (no Redis): what is measured is the
 * sealed session and cursor. (d) is (c) with `cluster.redis` (a redis-server of its own) and a rate limit the load
 * never reaches: what shared limits, session quotas and last uses cost on top.
 */
import { CLUSTER_INSTALL_COMMAND, nginxAvailable, nginxWorkers, redisAvailable, startNginx, startRedis, type RunningNginx } from '../../test/cluster-harness.js';
import { closeAfter, type TeardownScope } from '../../test/helpers.js';
import { httpUpstream, startGateway } from '../lib/gateway.js';
import { StreamableChannel, type Channel } from '../lib/mcp-client.js';
import { cpuNs, startBenchServer } from '../lib/processes.js';
import { percentiles, rotated, sleep, type Percentiles } from '../lib/stats.js';
import { getAndCheck, UPSTREAM_PROMPT } from '../targets.js';

export const UPSTREAM_DIRECT = 'upstream, directly';
export const NGINX_UPSTREAM = 'nginx -> upstream';
export const RAW_HOP_UPSTREAM = 'raw hop -> upstream';
export const ONE_GATEWAY = 'one gateway, directly';
export const NGINX_ONE = 'nginx -> one gateway';
export const NGINX_THREE = 'nginx -> three gateways';
export const NGINX_THREE_REDIS = 'nginx -> three gateways, limits in Redis';
/** (d)'s rate limit: never reached by the bench, so every request takes the shared limit's path (leases of 500). */
export const REDIS_RATE_LIMIT = { requestsPerSecond: 10_000, burst: 20_000 };

export const SESSION_ERA = '2025-06-18 session';
export const STATELESS_ERA = '2026-07-28 stateless';
type Era = typeof SESSION_ERA | typeof STATELESS_ERA;

/** One prompts/list walk every this many requests. */
const LIST_EVERY = 4;
/** Idle connections nginx keeps to its upstreams, as a production proxy would (see the harness). */
const NGINX_KEEPALIVE = 64;
const WARM_UP_CONCURRENCY = 16;
const CURSOR_SECRET = 'bench-replicas-cursor-secret-032';
const SESSION_SECRET = 'bench-replicas-session-secret-32';

export interface ReplicasOptions {
    concurrencies: number[];
    sliceMs: number;
    rounds: number;
    idleMs: number;
    /** Requests of each era every gateway serves directly before the measures. */
    warmUpRequests: number;
}

export interface ReplicaCell {
    target: string;
    era: Era;
    concurrency: number;
    requests: number;
    perSecond: number;
    latency: Percentiles;
    /** CPU of the gateways (summed over replicas) or the hop per request, idle subtracted, microseconds; none for the upstream alone. */
    hopCpuUs: number | undefined;
    /** CPU of nginx's worker per request, when nginx is in front. */
    nginxCpuUs: number | undefined;
}

export type ReplicasResult = { skipped: string } | { cells: ReplicaCell[]; options: ReplicasOptions; listEvery: number; prompts: number; nginxKeepalive: number };

interface LoadTarget {
    name: string;
    url: string;
    /** The name the upstream's prompt has here. */
    prompt: string;
    eras: Era[];
    hopPids: number[];
    nginx: RunningNginx | undefined;
}

/** The harness's processes (nginx) stopped when the scenario ends; nginx's group killed if the bench exits first. */
class Scope implements TeardownScope {
    readonly #hooks: (() => unknown)[] = [];
    after(fn: () => unknown): void {
        this.#hooks.push(fn);
    }
    async close(): Promise<void> {
        for (const hook of this.#hooks.reverse()) await hook();
    }
}

async function startNginxFor(scope: Scope, ports: number[]): Promise<RunningNginx> {
    const nginx = await startNginx(scope, ports, { keepalive: NGINX_KEEPALIVE });
    // Detached in a group of its own (its workers outlive a killed master): gone with the bench, however it exits.
    const killGroup = () => {
        try {
            process.kill(-nginx.pid, 'SIGKILL');
        } catch {
            // Stopped already.
        }
    };
    process.on('exit', killGroup);
    closeAfter(scope, () => process.off('exit', killGroup));
    return nginx;
}

const portOf = (url: string) => Number(new URL(url).port);
const withPath = (origin: string, of: string) => `${origin}${new URL(of).pathname}`;

/** Every page of prompts/list, following nextCursor; rejects unless all `expected` prompts came. */
async function walk(channel: Channel, expected: number, sample: (us: number) => void): Promise<number> {
    let cursor: string | undefined;
    let seen = 0;
    let pages = 0;
    do {
        const start = performance.now();
        const page = (await channel.call('prompts/list', cursor === undefined ? {} : { cursor })) as { prompts?: unknown[]; nextCursor?: string };
        sample((performance.now() - start) * 1000);
        seen += page.prompts?.length ?? 0;
        pages++;
        cursor = page.nextCursor;
    } while (cursor !== undefined);
    if (seen !== expected) throw new Error(`prompts/list walk saw ${seen} prompts, not ${expected}`);
    return pages;
}

interface SliceTotals {
    requests: number;
    ms: number;
    hopNs: number;
    nginxNs: number;
    samples: number[];
}

const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuNs(pid), 0);
const nginxPids = (target: LoadTarget) => (target.nginx === undefined ? [] : nginxWorkers(target.nginx.pid));

/**
 * `channels` send the mix back to back for `durationMs` (or until `totals` has `maxRequests`); adds requests, time,
 * CPU and latencies to `totals`.
 */
async function slice(target: LoadTarget, channels: Channel[], durationMs: number, prompts: number, totals: SliceTotals, maxRequests = Infinity): Promise<void> {
    const workers = nginxPids(target);
    const [hopBefore, nginxBefore] = [cpuOf(target.hopPids), cpuOf(workers)];
    const start = performance.now();
    const end = start + durationMs;
    await Promise.all(
        channels.map(async (channel, c) => {
            for (let i = c; performance.now() < end && totals.requests < maxRequests; i++) {
                if (i % LIST_EVERY === 0) {
                    totals.requests += await walk(channel, prompts, us => totals.samples.push(us));
                    continue;
                }
                const sent = performance.now();
                await getAndCheck(channel, target.prompt);
                totals.samples.push((performance.now() - sent) * 1000);
                totals.requests++;
            }
        })
    );
    totals.ms += performance.now() - start;
    totals.hopNs += cpuOf(target.hopPids) - hopBefore;
    totals.nginxNs += cpuOf(workers) - nginxBefore;
}

const emptyTotals = (): SliceTotals => ({ requests: 0, ms: 0, hopNs: 0, nginxNs: 0, samples: [] });

/**
 * Every gateway, directly, serves `requests` of each era before anything is measured: behind nginx each of three
 * replicas gets a third of the requests, and would otherwise be measured while its JIT still compiles (on threads
 * whose CPU counts) what the single gateway compiled long before.
 */
async function warmUp(gateways: LoadTarget[], requests: number, prompts: number): Promise<void> {
    for (const gateway of gateways) {
        for (const era of gateway.eras) {
            const channels = await openChannels(gateway, era, WARM_UP_CONCURRENCY);
            try {
                await slice(gateway, channels, Infinity, prompts, emptyTotals(), requests);
            } finally {
                await Promise.all(channels.map(channel => channel.close()));
            }
        }
    }
}

const openChannels = (target: LoadTarget, era: Era, count: number) =>
    Promise.all(Array.from({ length: count }, () => StreamableChannel.open(target.url, era === STATELESS_ERA ? { stateless: '2026-07-28' } : {})));

interface Cell {
    target: LoadTarget;
    era: Era;
    channels: Channel[];
}

/** CPU ns per ms of the cell's processes doing nothing, hop and nginx. */
async function idleRates(cells: Cell[], idleMs: number): Promise<{ hop: number; nginx: number }[]> {
    const before = cells.map(cell => [cpuOf(cell.target.hopPids), cpuOf(nginxPids(cell.target))] as const);
    await sleep(idleMs);
    return cells.map((cell, i) => ({
        hop: Math.max(0, (cpuOf(cell.target.hopPids) - before[i]![0]) / idleMs),
        nginx: Math.max(0, (cpuOf(nginxPids(cell.target)) - before[i]![1]) / idleMs)
    }));
}

async function measureCells(cells: Cell[], options: ReplicasOptions, prompts: number): Promise<ReplicaCell[]> {
    const idle = await idleRates(cells, options.idleMs);
    const results: ReplicaCell[] = [];
    for (const concurrency of options.concurrencies) {
        const totals = cells.map(emptyTotals);
        for (const cell of cells) await slice(cell.target, cell.channels.slice(0, concurrency), options.sliceMs / 2, prompts, emptyTotals());
        const indices = cells.map((_, i) => i);
        for (let round = 0; round < options.rounds; round++) {
            for (const i of rotated(indices, round)) await slice(cells[i]!.target, cells[i]!.channels.slice(0, concurrency), options.sliceMs, prompts, totals[i]!);
        }
        cells.forEach(({ target, era }, i) => {
            const { requests, ms, hopNs, nginxNs, samples } = totals[i]!;
            const perRequest = (ns: number, idleRate: number) => (ns - idleRate * ms) / requests / 1000;
            results.push({
                target: target.name,
                era,
                concurrency,
                requests,
                perSecond: (requests / ms) * 1000,
                latency: percentiles(samples),
                hopCpuUs: target.hopPids.length === 0 ? undefined : perRequest(hopNs, idle[i]!.hop),
                nginxCpuUs: target.nginx === undefined ? undefined : perRequest(nginxNs, idle[i]!.nginx)
            });
        });
    }
    return results;
}

/** The targets measured, and each gateway by itself (to warm it up). */
async function startTargets(scope: Scope, upstream: { url: string; pid: number }): Promise<{ targets: LoadTarget[]; gateways: LoadTarget[] }> {
    const config = { cursorSecret: CURSOR_SECRET, cluster: {}, sessions: { secrets: [SESSION_SECRET] }, upstreams: [httpUpstream('up', upstream.url)] };
    const redis = await startRedis(scope);
    const shared = { ...config, cluster: { redis: { url: redis.url } }, limits: { rateLimit: REDIS_RATE_LIMIT } };
    const [rawHop, one, ...gateways] = await Promise.all([
        startBenchServer('raw hop, replicas', 'raw-hop.ts', ['--upstream', upstream.url]),
        ...[0, 1, 2, 3].map(i => startGateway(`replica ${i}`, config))
    ]);
    const sharing = await Promise.all([4, 5, 6].map(i => startGateway(`replica ${i}`, shared)));
    closeAfter(scope, () => Promise.all([rawHop, one, ...gateways, ...sharing].map(p => p!.stop())));
    const [nginxUpstream, nginxOne, nginxThree, nginxShared] = await Promise.all([
        startNginxFor(scope, [portOf(upstream.url)]),
        startNginxFor(scope, [portOf(one!.url)]),
        startNginxFor(
            scope,
            gateways.map(g => portOf(g.url))
        ),
        startNginxFor(
            scope,
            sharing.map(g => portOf(g.url))
        )
    ]);
    const gatewayPrompt = `up__${UPSTREAM_PROMPT}`;
    const both: Era[] = [SESSION_ERA, STATELESS_ERA];
    const targets: LoadTarget[] = [
        { name: UPSTREAM_DIRECT, url: upstream.url, prompt: UPSTREAM_PROMPT, eras: [SESSION_ERA], hopPids: [], nginx: undefined },
        { name: NGINX_UPSTREAM, url: withPath(nginxUpstream.url, upstream.url), prompt: UPSTREAM_PROMPT, eras: [SESSION_ERA], hopPids: [], nginx: nginxUpstream },
        { name: RAW_HOP_UPSTREAM, url: rawHop.url, prompt: gatewayPrompt, eras: [SESSION_ERA], hopPids: [rawHop.pid], nginx: undefined },
        { name: ONE_GATEWAY, url: one!.url, prompt: gatewayPrompt, eras: both, hopPids: [one!.pid], nginx: undefined },
        { name: NGINX_ONE, url: withPath(nginxOne.url, one!.url), prompt: gatewayPrompt, eras: both, hopPids: [one!.pid], nginx: nginxOne },
        { name: NGINX_THREE, url: withPath(nginxThree.url, gateways[0]!.url), prompt: gatewayPrompt, eras: both, hopPids: gateways.map(g => g.pid), nginx: nginxThree },
        { name: NGINX_THREE_REDIS, url: withPath(nginxShared.url, sharing[0]!.url), prompt: gatewayPrompt, eras: both, hopPids: sharing.map(g => g.pid), nginx: nginxShared }
    ];
    const direct = (name: string, gateway: { url: string; pid: number }): LoadTarget => ({
        name,
        url: gateway.url,
        prompt: gatewayPrompt,
        eras: both,
        hopPids: [gateway.pid],
        nginx: undefined
    });
    return { targets, gateways: [one!, ...gateways, ...sharing].map((gateway, i) => direct(`replica ${i}`, gateway)) };
}

export async function measureReplicas(upstream: { url: string; pid: number }, prompts: number, options: ReplicasOptions): Promise<ReplicasResult> {
    if (!nginxAvailable() || !redisAvailable()) return { skipped: `nginx or redis-server is not installed (Debian: ${CLUSTER_INSTALL_COMMAND})` };
    const scope = new Scope();
    const channels: Channel[] = [];
    try {
        const { targets, gateways } = await startTargets(scope, upstream);
        await warmUp(gateways, options.warmUpRequests, prompts);
        const most = Math.max(...options.concurrencies);
        const cells: Cell[] = [];
        for (const target of targets) {
            for (const era of target.eras) {
                const opened = await openChannels(target, era, most);
                channels.push(...opened);
                cells.push({ target, era, channels: opened });
            }
        }
        const measured = await measureCells(cells, options, prompts);
        return { cells: measured, options, listEvery: LIST_EVERY, prompts, nginxKeepalive: NGINX_KEEPALIVE };
    } finally {
        await Promise.all(channels.map(channel => channel.close()));
        await scope.close();
    }
}
