/**
 * Overload: many more concurrent requests to a slow upstream than its bulkhead
 * takes (maxConcurrency 16 + maxQueue 48). What is measured: how fast the
 * excess is refused, how the gateway's memory grows, and whether a healthy
 * upstream behind the same gateway slows down meanwhile (ratio to idle, same run).
 */
import type { Client } from '@modelcontextprotocol/client';
import { connectHttp } from '../test/helpers.js';

export interface OverloadResult {
    sent: number;
    accepted: number;
    refused: number;
    /** Wall time until all of the flood was answered (accepted ones included). */
    floodSeconds: number;
    /** A single request arriving while the upstream is saturated: how long until it is refused. */
    refusalP50: number;
    refusalP95: number;
    healthyIdleP50: number;
    healthyLoadedP50: number;
    rssBeforeKiB: number | undefined;
    rssPeakKiB: number | undefined;
}

const CLIENTS = 20;
const PER_CLIENT = 100;

function percentile(sorted: number[], q: number): number {
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function timings(runs: number, run: () => Promise<unknown>): Promise<number[]> {
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
        const start = performance.now();
        await run().catch(() => {});
        samples.push(performance.now() - start);
    }
    return samples.sort((a, b) => a - b);
}

/** `url`: a gateway with upstream `slow` (maxConcurrency 16, maxQueue 48) and upstream `fast`. */
export async function measureOverload(url: string, rss: () => Promise<number | undefined>): Promise<OverloadResult> {
    const clients: Client[] = await Promise.all(Array.from({ length: CLIENTS }, () => connectHttp(url)));
    const probe = clients[0]!;
    const healthy = () => probe.getPrompt({ name: 'fast__with-required', arguments: { topic: 'probe' } });
    const slow = (client: Client) => client.getPrompt({ name: 'slow__slow', arguments: { ms: '3000' } }, { timeout: 60_000 });
    await timings(30, healthy); // warm-up: the first calls pay for JIT compilation and connection set-up
    const healthyIdleP50 = percentile(await timings(50, healthy), 0.5);
    const rssBeforeKiB = await rss();
    let rssPeakKiB = rssBeforeKiB;
    const sampler = setInterval(() => {
        void rss().then(value => {
            if (value !== undefined && (rssPeakKiB === undefined || value > rssPeakKiB)) rssPeakKiB = value;
        });
    }, 50);

    let accepted = 0;
    let refused = 0;
    const floodStart = performance.now();
    const flood = clients.flatMap(client =>
        Array.from({ length: PER_CLIENT }, () => slow(client).then(() => accepted++, () => refused++))
    );
    // Measured once the flood has been refused and the upstream is saturated with a full queue.
    const giveUp = Date.now() + 30_000;
    while (accepted + refused < CLIENTS * PER_CLIENT - (16 + 48) && Date.now() < giveUp) await new Promise(resolve => setTimeout(resolve, 10));
    const refusals = await timings(50, () => slow(probe));
    const healthyLoadedP50 = percentile(await timings(50, healthy), 0.5);
    await Promise.all(flood);
    const floodSeconds = (performance.now() - floodStart) / 1000;
    clearInterval(sampler);
    await Promise.all(clients.map(client => client.close()));
    return {
        sent: CLIENTS * PER_CLIENT,
        accepted,
        refused,
        floodSeconds,
        refusalP50: percentile(refusals, 0.5),
        refusalP95: percentile(refusals, 0.95),
        healthyIdleP50,
        healthyLoadedP50,
        rssBeforeKiB,
        rssPeakKiB
    };
}
