/**
 * A storm of upstream list_changed notifications: one upstream sends 50,000 of
 * them as fast as the gateway reads, while other traffic runs. What is measured:
 * the p99 of `/healthz` and of a `prompts/get` to another upstream during the
 * storm, against the same measured idle in the same run, and how many
 * notifications clients got for it (the storm must coalesce into a few).
 */
import type { Client } from '@modelcontextprotocol/client';
import { connectHttp } from '../test/helpers.js';

export const STORM_NOTIFICATIONS = 50_000;

export interface FloodResult {
    notifications: number;
    stormSeconds: number;
    healthz: { idle: Percentiles; storm: Percentiles };
    get: { idle: Percentiles; storm: Percentiles };
    /** list_changed notifications one session received because of the storm. */
    listChangedReceived: number;
}

export interface Percentiles {
    p50: number;
    p99: number;
    samples: number;
}

function percentiles(samples: number[]): Percentiles {
    const sorted = [...samples].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
    return { p50: at(0.5), p99: at(0.99), samples: sorted.length };
}

async function timed(run: () => Promise<unknown>): Promise<number> {
    const start = performance.now();
    await run();
    return performance.now() - start;
}

/** `url`: a gateway with upstream `storm` (raw-server --flood) and upstream `fast` (the prompt fixture). */
export async function measureFlood(url: string, notifications = STORM_NOTIFICATIONS): Promise<FloodResult> {
    const healthzUrl = new URL('/healthz', url).href;
    const healthz = async () => {
        const response = await fetch(healthzUrl);
        await response.arrayBuffer();
    };
    const client: Client = await connectHttp(url);
    const watcher: Client = await connectHttp(url);
    let listChangedReceived = 0;
    watcher.setNotificationHandler('notifications/prompts/list_changed', () => void listChangedReceived++);
    const get = () => client.getPrompt({ name: 'fast__with-required', arguments: { topic: 'probe' } });
    try {
        for (let i = 0; i < 50; i++) await Promise.all([healthz(), get()]);
        const idle = { healthz: [] as number[], get: [] as number[] };
        for (let i = 0; i < 300; i++) {
            idle.healthz.push(await timed(healthz));
            idle.get.push(await timed(get));
        }
        // The notifications the warm-up caused (none expected) are not the storm's.
        listChangedReceived = 0;
        const storm = { healthz: [] as number[], get: [] as number[] };
        const started = performance.now();
        let done = false;
        const flood = client.getPrompt({ name: 'storm__flood' }, { timeout: 300_000 }).finally(() => (done = true));
        while (!done) {
            storm.healthz.push(await timed(healthz));
            storm.get.push(await timed(get));
        }
        await flood;
        const stormSeconds = (performance.now() - started) / 1000;
        // The coalesced notification arrives after the storm's debounce.
        await new Promise(resolve => setTimeout(resolve, 3000));
        return {
            notifications,
            stormSeconds,
            healthz: { idle: percentiles(idle.healthz), storm: percentiles(storm.healthz) },
            get: { idle: percentiles(idle.get), storm: percentiles(storm.get) },
            listChangedReceived
        };
    } finally {
        await Promise.all([client.close(), watcher.close()]);
    }
}
