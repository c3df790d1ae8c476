/**
 * What an upstream flooding its SSE stream with tiny lines costs the gateway (issue 24, item 8): the gateway in
 * process, in front of `flood` (the raw fixture over Streamable HTTP, its standalone GET stream flooded with one kind
 * of tiny line as fast as the gateway reads: `data: {}` events, `:` comments or `retry: 0` lines) and `calm` (a
 * stdio fixture). Printed per kind: the CPU the process used for SECONDS with no client (the flood's cost), then, for
 * SECONDS more, how many prompts of `calm` a client got one at a time and the slowest of those gets.
 *
 *   node --import tsx bench/sse-flood.ts [seconds=10]
 */
import { performance } from 'node:perf_hooks';
import { connectHttp, rawStdio, sleep, startRawHttp, startTestGateway, stdioFixture, upstreamsReady } from '../test/helpers.js';

const SECONDS = Number(process.argv[2] ?? 10);
/** `none`: the same upstream without a GET stream, for comparison; `stdout`: a stdio upstream flooding its stdout with `{}` lines. */
const KINDS = ['none', 'events', 'comments', 'retry', 'stdout'];

/** CPU-seconds this process uses while `run` runs. */
async function cpuSecondsOf(run: () => Promise<unknown>): Promise<number> {
    const before = process.cpuUsage();
    await run();
    const cpu = process.cpuUsage(before);
    return (cpu.user + cpu.system) / 1e6;
}

async function measure(kind: string): Promise<string> {
    const flood = await startRawHttp(kind === 'none' || kind === 'stdout' ? [] : ['--flood-stream', kind]);
    const flooder =
        kind === 'stdout' ? rawStdio('flood', ['--flood-stdout'], { pingIntervalMs: 0 }) : { id: 'flood', transport: 'streamable-http', url: flood.url, pingIntervalMs: 0 };
    // No rate limit: the one client gets as fast as it can.
    const gateway = await startTestGateway({ upstreams: [flooder, stdioFixture('calm')], limits: { rateLimit: { requestsPerSecond: 0 } } });
    try {
        await upstreamsReady(gateway);
        const client = await connectHttp(gateway.url!);
        const idleCpuS = await cpuSecondsOf(() => sleep(SECONDS * 1000));
        let gets = 0;
        let slowestMs = 0;
        const started = performance.now();
        const busyCpuS = await cpuSecondsOf(async () => {
            while (performance.now() - started < SECONDS * 1000) {
                const at = performance.now();
                await client.getPrompt({ name: 'calm__prompt-000' });
                slowestMs = Math.max(slowestMs, performance.now() - at);
                gets++;
            }
        });
        await client.close();
        const faults = gateway.faults.of('flood').stream_flood ?? 0;
        return `${kind}: ${idleCpuS.toFixed(2)} CPU-s per ${SECONDS} s with no client; then ${gets} gets of another upstream one at a time (${busyCpuS.toFixed(2)} CPU-s), slowest ${slowestMs.toFixed(0)} ms; stream_flood faults ${faults}`;
    } finally {
        await gateway.close();
        await flood.close();
    }
}

for (const kind of KINDS) console.log(await measure(kind));
