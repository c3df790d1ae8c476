/**
 * Throughput and CPU per request: at each concurrency, `concurrency` sessions (each on a connection of its own)
 * send prompts/get back to back for a slice of time, one target at a time, the targets taking turns for several
 * rounds. Meanwhile the CPU time of the target's process (all threads) is read from /proc, less what the same
 * process spends idle over as long (timers, pings), measured first: CPU per request is that over the requests.
 */
import { cpuNs, statusKiB } from '../lib/processes.js';
import type { Channel } from '../lib/mcp-client.js';
import { rotated, sleep } from '../lib/stats.js';
import type { Target } from '../targets.js';

export interface ThroughputCell {
    name: string;
    concurrency: number;
    requests: number;
    perSecond: number;
    /** CPU of the target's process per request, idle subtracted, microseconds. */
    cpuUsPerGet: number;
    /** Resident memory of the target's process at the end of its last slice, bytes. */
    rssBytes: number;
}

export interface ThroughputOptions {
    levels: number[];
    sliceMs: number;
    rounds: number;
    idleMs: number;
}

/** CPU nanoseconds per millisecond each process spends with nothing to do. */
async function idleRates(targets: Target[], idleMs: number): Promise<number[]> {
    const before = targets.map(target => cpuNs(target.process.pid));
    await sleep(idleMs);
    return targets.map((target, i) => Math.max(0, (cpuNs(target.process.pid) - before[i]!) / idleMs));
}

/** `channels` send prompts/get back to back for `durationMs`; the requests done and the process's CPU meanwhile. */
export async function slice(target: Target, channels: Channel[], durationMs: number): Promise<{ requests: number; ms: number; cpuNs: number }> {
    const cpuBefore = cpuNs(target.process.pid);
    const start = performance.now();
    const end = start + durationMs;
    let requests = 0;
    await Promise.all(
        channels.map(async channel => {
            while (performance.now() < end) {
                await target.get(channel);
                requests++;
            }
        })
    );
    return { requests, ms: performance.now() - start, cpuNs: cpuNs(target.process.pid) - cpuBefore };
}

export async function measureThroughput(targets: Target[], options: ThroughputOptions): Promise<ThroughputCell[]> {
    const most = Math.max(...options.levels);
    const opening = targets.map(target => Promise.all(Array.from({ length: most }, () => target.open())));
    const channels: Channel[][] = [];
    try {
        for (const target of opening) channels.push(await target);
        const idle = await idleRates(targets, options.idleMs);
        const cells: ThroughputCell[] = [];
        for (const concurrency of options.levels) {
            const totals = targets.map(() => ({ requests: 0, ms: 0, cpuNs: 0 }));
            const indices = targets.map((_, i) => i);
            for (const i of indices) await slice(targets[i]!, channels[i]!.slice(0, concurrency), options.sliceMs / 2); // warm-up
            for (let round = 0; round < options.rounds; round++) {
                for (const i of rotated(indices, round)) {
                    const run = await slice(targets[i]!, channels[i]!.slice(0, concurrency), options.sliceMs);
                    totals[i]!.requests += run.requests;
                    totals[i]!.ms += run.ms;
                    totals[i]!.cpuNs += run.cpuNs;
                }
            }
            targets.forEach((target, i) => {
                const { requests, ms, cpuNs: busy } = totals[i]!;
                cells.push({
                    name: target.name,
                    concurrency,
                    requests,
                    perSecond: (requests / ms) * 1000,
                    cpuUsPerGet: (busy - idle[i]! * ms) / requests / 1000,
                    rssBytes: statusKiB(target.process.pid) * 1024
                });
            });
        }
        return cells;
    } finally {
        await Promise.all(channels.flat().map(channel => channel.close()));
    }
}
