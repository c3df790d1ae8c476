/**
 * Overload: many more concurrent requests to a slow upstream than its bulkhead takes (maxConcurrency 16 +
 * maxQueue 48). A fresh gateway with two upstreams: `slow` (the prompt fixture over stdio, whose `slow` prompt
 * answers after `slowMs`) and `fast` (the bench upstream over HTTP). `sessions` sessions send `perSession`
 * prompts/get of `slow` at once, each request on a connection of its own (HTTP/1.1 has one request in flight per
 * connection). Measured: how many are refused, how fast one more request is refused once the upstream is saturated
 * and its queue full, a `fast` prompts/get's latency idle and meanwhile, and the gateway's memory.
 */
import { stdioFixture } from '../../test/helpers.js';
import { httpUpstream, startGateway } from '../lib/gateway.js';
import { connect, StreamableChannel, type Channel } from '../lib/mcp-client.js';
import { statusKiB } from '../lib/processes.js';
import { percentiles, sleep, timedUs, type Percentiles } from '../lib/stats.js';
import { getAndCheck, UPSTREAM_PROMPT } from '../targets.js';

const BULKHEAD = { maxConcurrency: 16, maxQueue: 48 };
const SATURATION_TIMEOUT_MS = 30_000;

export interface OverloadOptions {
    sessions: number;
    perSession: number;
    slowMs: number;
    probes: number;
}

export interface OverloadResult {
    sent: number;
    slowMs: number;
    bulkhead: typeof BULKHEAD;
    accepted: number;
    refused: number;
    /** Wall time until all of the flood was answered (accepted ones included). */
    floodMs: number;
    /** One more request while the upstream is saturated and its queue full: microseconds until it is refused. */
    refusal: Percentiles;
    /** Of those, how many were refused (the others found room in the queue: a slot freed meanwhile). */
    probesRefused: number;
    /** prompts/get of the healthy upstream, microseconds. */
    healthyIdle: Percentiles;
    healthyLoaded: Percentiles;
    rssBeforeBytes: number;
    rssPeakBytes: number;
}

async function timings(runs: number, run: () => Promise<unknown>): Promise<Percentiles> {
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) samples.push(await timedUs(run));
    return percentiles(samples);
}

export async function measureOverload(upstreamUrl: string, options: OverloadOptions): Promise<OverloadResult> {
    const slowUpstream = stdioFixture('slow', {}, { ...BULKHEAD, timeoutMs: 60_000 });
    const gateway = await startGateway('gateway, overload', { upstreams: [slowUpstream, httpUpstream('fast', upstreamUrl)] });
    const sent = options.sessions * options.perSession;
    const connections = connect(new URL(gateway.url).origin, sent);
    const channels: Channel[] = [];
    try {
        const probe = await StreamableChannel.open(gateway.url);
        channels.push(probe);
        const flooders = await Promise.all(Array.from({ length: options.sessions }, () => StreamableChannel.open(gateway.url, { via: connections })));
        channels.push(...flooders);
        const healthy = () => getAndCheck(probe, `fast__${UPSTREAM_PROMPT}`);
        const slow = (channel: Channel) => channel.call('prompts/get', { name: 'slow__slow', arguments: { ms: String(options.slowMs) } });
        await timings(30, healthy); // warm-up
        const healthyIdle = await timings(options.probes, healthy);
        const rssBeforeBytes = statusKiB(gateway.pid) * 1024;

        let [accepted, refused] = [0, 0];
        const started = performance.now();
        const flood = flooders.flatMap(channel =>
            Array.from({ length: options.perSession }, () =>
                slow(channel).then(
                    () => accepted++,
                    () => refused++
                )
            )
        );
        // Measured once the excess has been refused: the upstream saturated, its queue full.
        const excess = sent - BULKHEAD.maxConcurrency - BULKHEAD.maxQueue;
        while (refused < excess && performance.now() - started < SATURATION_TIMEOUT_MS) await sleep(10);
        let probesRefused = 0;
        const refusal = await timings(options.probes, () => slow(probe).catch(() => probesRefused++));
        const healthyLoaded = await timings(options.probes, healthy);
        await Promise.all(flood);
        return {
            sent,
            slowMs: options.slowMs,
            bulkhead: BULKHEAD,
            accepted,
            refused,
            floodMs: performance.now() - started,
            refusal,
            probesRefused,
            healthyIdle,
            healthyLoaded,
            rssBeforeBytes,
            rssPeakBytes: statusKiB(gateway.pid, 'VmHWM') * 1024
        };
    } finally {
        await Promise.all(channels.map(channel => channel.close()));
        await connections.close();
        await gateway.stop();
    }
}
