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
    refusedP50: number;
    refusedP95: number;
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

async function p50Of(runs: number, run: () => Promise<unknown>): Promise<number> {
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
        const start = performance.now();
        await run();
        samples.push(performance.now() - start);
    }
    return percentile(samples.sort((a, b) => a - b), 0.5);
}

/** `url`: a gateway with upstream `slow` (maxConcurrency 16, maxQueue 48) and upstream `fast`. */
export async function measureOverload(url: string, rss: () => Promise<number | undefined>): Promise<OverloadResult> {
    const clients: Client[] = await Promise.all(Array.from({ length: CLIENTS }, () => connectHttp(url)));
    const probe = clients[0]!;
    const healthy = () => probe.getPrompt({ name: 'fast__with-required', arguments: { topic: 'probe' } });
    const healthyIdleP50 = await p50Of(50, healthy);
    const rssBeforeKiB = await rss();
    let rssPeakKiB = rssBeforeKiB;
    const sampler = setInterval(() => {
        void rss().then(value => {
            if (value !== undefined && (rssPeakKiB === undefined || value > rssPeakKiB)) rssPeakKiB = value;
        });
    }, 50);

    const refusedTimes: number[] = [];
    let accepted = 0;
    const flood = clients.flatMap(client =>
        Array.from({ length: PER_CLIENT }, async () => {
            const start = performance.now();
            try {
                await client.getPrompt({ name: 'slow__slow', arguments: { ms: '3000' } }, { timeout: 60_000 });
                accepted++;
            } catch {
                refusedTimes.push(performance.now() - start);
            }
        })
    );
    // Measured while the slow upstream is saturated and its queue is full.
    await new Promise(resolve => setTimeout(resolve, 500));
    const healthyLoadedP50 = await p50Of(50, healthy);
    await Promise.all(flood);
    clearInterval(sampler);
    await Promise.all(clients.map(client => client.close()));
    refusedTimes.sort((a, b) => a - b);
    return {
        sent: CLIENTS * PER_CLIENT,
        accepted,
        refused: refusedTimes.length,
        refusedP50: percentile(refusedTimes, 0.5),
        refusedP95: percentile(refusedTimes, 0.95),
        healthyIdleP50,
        healthyLoadedP50,
        rssBeforeKiB,
        rssPeakKiB
    };
}
