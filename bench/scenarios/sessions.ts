/**
 * Idle sessions: a fresh gateway (with the inspector, to force full GCs) takes `counts` sessions in steps (1,000,
 * then up to 10,000), each an initialize and notifications/initialized over a shared pool of connections, then left
 * idle. After each step: the gateway's heap and external memory after a full GC (over the inspector: nothing added
 * to its code), less the same before the first session, per session; then a ping on every session, to count those
 * the gateway still holds.
 */
import { Pool } from 'undici';
import { httpUpstream, startGateway } from '../lib/gateway.js';
import { Inspector } from '../lib/inspector.js';
import { StreamableChannel } from '../lib/mcp-client.js';
import { statusKiB } from '../lib/processes.js';

export interface SessionStep {
    sessions: number;
    /** Heap used + external after a full GC, less the same before the first session, per session. */
    bytesPerSession: number;
    /** Sessions that answered a ping afterwards. */
    held: number;
    openMs: number;
    rssBytes: number;
}

const CONNECTIONS = 16;

/** Runs `work(i)` for i in [from, to) with `parallel` at a time. */
async function inParallel(from: number, to: number, parallel: number, work: (i: number) => Promise<void>): Promise<void> {
    let next = from;
    await Promise.all(
        Array.from({ length: parallel }, async () => {
            while (next < to) await work(next++);
        })
    );
}

const heldMemory = (usage: NodeJS.MemoryUsage) => usage.heapUsed + usage.external;

export async function measureSessions(upstreamUrl: string, counts: number[]): Promise<SessionStep[]> {
    const gateway = await startGateway('gateway, idle sessions', { upstreams: [httpUpstream('up', upstreamUrl)] }, { inspect: true });
    const inspector = await Inspector.attach(gateway.inspector!);
    const pool = new Pool(new URL(gateway.url).origin, { connections: CONNECTIONS, keepAliveTimeout: 60_000 });
    try {
        const baseline = heldMemory(await inspector.memoryAfterGc());
        const sessions: StreamableChannel[] = [];
        const steps: SessionStep[] = [];
        for (const count of counts) {
            const start = performance.now();
            await inParallel(sessions.length, count, CONNECTIONS, async i => void (sessions[i] = await StreamableChannel.open(gateway.url, { via: pool })));
            const openMs = performance.now() - start;
            const memory = heldMemory(await inspector.memoryAfterGc());
            let held = 0;
            await inParallel(0, count, CONNECTIONS, async i => {
                await sessions[i]!.call('ping').then(
                    () => held++,
                    () => {}
                );
            });
            steps.push({ sessions: count, bytesPerSession: (memory - baseline) / count, held, openMs, rssBytes: statusKiB(gateway.pid) * 1024 });
        }
        return steps;
    } finally {
        inspector.close();
        await pool.close();
        await gateway.stop();
    }
}
