/**
 * A big catalog: `upstreams` upstreams of `promptsEach` prompts each (one bench upstream process serving them all
 * on paths of their own) behind a fresh gateway with the default page size. Measured:
 *
 * - ready: from the gateway's spawn until GET /readyz answers 200 (polled every 10 ms), provided a walk of the whole
 *   list started right then sees every prompt; otherwise until the end of the first walk that does (walks repeat);
 * - a warm page: prompts/list of a page in the middle of the list (its cursor from the walk), p50 and p99, timed
 *   request by request alternately with the floor answering a canned page of the same size;
 * - the gateway's resident memory (VmRSS) afterwards, and its peak (VmHWM).
 */
import { request } from 'undici';
import { startGateway, httpUpstream } from '../lib/gateway.js';
import { StreamableChannel, type Channel } from '../lib/mcp-client.js';
import { startBenchServer, statusKiB } from '../lib/processes.js';
import { percentiles, sleep, timedUs, type Percentiles } from '../lib/stats.js';

export interface CatalogResult {
    upstreams: number;
    prompts: number;
    readyzMs: number;
    /** Spawn until the end of the first walk that saw every prompt. */
    completeMs: number;
    /** Whether the walk started when /readyz turned 200 saw every prompt. */
    completeAtReadyz: boolean;
    /** What the target counts: readyzMs when the catalog was complete then, else completeMs. */
    readyMs: number;
    walkMs: number;
    pages: number;
    /** Microseconds. */
    page: Percentiles;
    floorPage: Percentiles;
    rssBytes: number;
    peakRssBytes: number;
}

export interface CatalogOptions {
    upstreams: number;
    promptsEach: number;
    pageRounds: number;
}

const upstreamId = (i: number) => `u${String(i).padStart(2, '0')}`;

async function walk(channel: Channel): Promise<{ prompts: number; cursors: string[] }> {
    const cursors: string[] = [];
    let prompts = 0;
    let cursor: string | undefined;
    do {
        const page = (await channel.call('prompts/list', cursor === undefined ? {} : { cursor })) as { prompts: unknown[]; nextCursor?: string };
        prompts += page.prompts.length;
        cursor = page.nextCursor;
        if (cursor !== undefined) cursors.push(cursor);
    } while (cursor !== undefined);
    return { prompts, cursors };
}

async function readyz(url: string): Promise<boolean> {
    const { statusCode, body } = await request(new URL('/readyz', url));
    await body.dump();
    return statusCode === 200;
}

export async function measureCatalog(floorUrl: string, options: CatalogOptions): Promise<CatalogResult> {
    const total = options.upstreams * options.promptsEach;
    const upstream = await startBenchServer('catalog upstream', 'upstream.ts', ['--prompts', String(options.promptsEach)]);
    const upstreams = Array.from({ length: options.upstreams }, (_, i) => httpUpstream(upstreamId(i), `${upstream.url}/${upstreamId(i)}`));
    const gateway = await startGateway('gateway, big catalog', { upstreams });
    const channels: Channel[] = [];
    try {
        while (!(await readyz(gateway.url))) await sleep(10);
        const readyzMs = performance.now() - gateway.spawnedAt;
        const channel = await StreamableChannel.open(gateway.url);
        channels.push(channel);
        let walkStart = performance.now();
        let seen = await walk(channel);
        const completeAtReadyz = seen.prompts === total;
        while (seen.prompts < total) {
            if (performance.now() - gateway.spawnedAt > 120_000) throw new Error(`the gateway lists ${seen.prompts} of ${total} prompts 2 minutes after start`);
            walkStart = performance.now();
            seen = await walk(channel);
        }
        const completeMs = performance.now() - gateway.spawnedAt;
        const walkMs = performance.now() - walkStart;
        const floor = await StreamableChannel.open(floorUrl, { session: false });
        channels.push(floor);
        const middle = { cursor: seen.cursors[Math.floor(seen.cursors.length / 2)]! };
        const [page, floorPage] = [[] as number[], [] as number[]];
        for (let round = 0; round < options.pageRounds + 20; round++) {
            const pair = [() => channel.call('prompts/list', middle), () => floor.call('prompts/list')];
            const [a, b] = round % 2 === 0 ? [0, 1] : [1, 0];
            const times = [0, 0];
            times[a] = await timedUs(pair[a]!);
            times[b] = await timedUs(pair[b]!);
            if (round < 20) continue; // warm-up
            page.push(times[0]!);
            floorPage.push(times[1]!);
        }
        return {
            upstreams: options.upstreams,
            prompts: total,
            readyzMs,
            completeMs,
            completeAtReadyz,
            readyMs: completeAtReadyz ? readyzMs : completeMs,
            walkMs,
            pages: seen.cursors.length + 1,
            page: percentiles(page),
            floorPage: percentiles(floorPage),
            rssBytes: statusKiB(gateway.pid) * 1024,
            peakRssBytes: statusKiB(gateway.pid, 'VmHWM') * 1024
        };
    } finally {
        await Promise.all(channels.map(channel => channel.close()));
        await gateway.stop();
        await upstream.stop();
    }
}
