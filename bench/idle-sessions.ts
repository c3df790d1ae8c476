/**
 * What an idle downstream session costs the gateway: heap after a full GC, per
 * session, over SESSIONS sessions opened (initialize + initialized, then left
 * alone). In process, so the collector can be run: the gateway in front of one
 * stdio fixture, the sessions opened over raw HTTP, every client connection
 * closed before the heap is read, so what is left is the sessions themselves.
 *
 *   node --expose-gc --import tsx bench/idle-sessions.ts [sessions=2000]
 */
import { getHeapStatistics } from 'node:v8';
import { startTestGateway, stdioFixture, upstreamsReady } from '../test/helpers.js';
import { openRawSession } from '../test/raw-http.js';

const SESSIONS = Number(process.argv[2] ?? 2000);
const OPENING_AT_ONCE = 16;

function collect(): number {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc === undefined) throw new Error('run with node --expose-gc');
    for (let round = 0; round < 4; round++) gc();
    return getHeapStatistics().used_heap_size;
}

async function main(): Promise<void> {
    const gateway = await startTestGateway({
        upstreams: [stdioFixture('p', { prompts: 5 })],
        sessions: { max: SESSIONS + 10, idleTimeoutMs: 3_600_000 },
        limits: { rateLimit: { requestsPerSecond: 0, burst: 1 }, maxSessionsPerClient: SESSIONS + 10 }
    });
    try {
        await upstreamsReady(gateway);
        const url = gateway.url!;
        // One session first, so what every session shares (code, caches, the client's connection pool) is in the baseline.
        await openRawSession(url);
        const before = collect();
        for (let opened = 1; opened < SESSIONS; opened += OPENING_AT_ONCE) {
            await Promise.all(Array.from({ length: Math.min(OPENING_AT_ONCE, SESSIONS - opened) }, () => openRawSession(url)));
        }
        const after = collect();
        const perSession = (after - before) / (SESSIONS - 1);
        console.log(
            `${SESSIONS} idle sessions: ${(perSession / 1024).toFixed(2)} KiB heap per session after a full GC (heap ${(before / 2 ** 20).toFixed(1)} -> ${(after / 2 ** 20).toFixed(1)} MiB)`
        );
    } finally {
        await gateway.close();
    }
}

await main();
