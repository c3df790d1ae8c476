/**
 * A storm of upstream list changes while other traffic runs: a gateway with two upstreams, `storm` (the raw
 * fixture over stdio: a prompts/get of its `flood` prompt first sends `events` notifications/prompts/list_changed
 * as fast as the gateway reads them) and `up` (the bench upstream over HTTP). A session times prompts/get of `up`,
 * one at a time, idle and then for as long as the storm lasts; another session holds a GET stream and counts the
 * list_changed notifications it gets (the storm coalesces into one per client whose visible list changed: the
 * fixture's list stays the same, so none is expected).
 */
import { rawStdio } from '../../test/helpers.js';
import { httpUpstream, startGateway } from '../lib/gateway.js';
import { StreamableChannel } from '../lib/mcp-client.js';
import { percentiles, sleep, timedUs, type Percentiles } from '../lib/stats.js';
import { getAndCheck, UPSTREAM_PROMPT } from '../targets.js';

export interface StormResult {
    events: number;
    stormMs: number;
    /** Microseconds. */
    idle: Percentiles;
    storm: Percentiles;
    listChangedReceived: number;
    /**
     * The longest the gateway's event loop was held during the storm, by its own `nodejs_eventloop_lag_max_seconds`
     * (prom-client's monitorEventLoopDelay, 10 ms resolution, reset at each scrape). Absent in older results.
     */
    loopDelayMaxMs?: number;
}

/** Scrapes the gateway's event-loop delay (and so resets it: prom-client reports it since the last scrape). */
async function loopDelayMaxMs(gatewayUrl: string): Promise<number> {
    const text = await (await fetch(new URL('/metrics', gatewayUrl))).text();
    const line = text.split('\n').find(candidate => candidate.startsWith('nodejs_eventloop_lag_max_seconds '));
    if (line === undefined) throw new Error('the gateway reported no nodejs_eventloop_lag_max_seconds');
    return Number(line.split(' ')[1]) * 1000;
}

const STORM_TIMEOUT_MS = 300_000;
/** The default notifications.maxDelayMs (2 s), and a margin. */
const SETTLE_MS = 2_500;

export async function measureStorm(upstreamUrl: string, options: { events: number; idleRequests: number }): Promise<StormResult> {
    const storm = rawStdio('storm', ['--flood', String(options.events)], { timeoutMs: STORM_TIMEOUT_MS, maxTotalTimeoutMs: STORM_TIMEOUT_MS });
    const gateway = await startGateway('gateway, list_changed storm', { upstreams: [storm, httpUpstream('up', upstreamUrl)] });
    const [probe, trigger, watcher] = await Promise.all([0, 1, 2].map(() => StreamableChannel.open(gateway.url)));
    let listChangedReceived = 0;
    const stopListening = await watcher!.listen(message => {
        if (message.method === 'notifications/prompts/list_changed') listChangedReceived++;
    });
    const get = () => getAndCheck(probe!, `up__${UPSTREAM_PROMPT}`);
    try {
        for (let i = 0; i < 50; i++) await get();
        const idle: number[] = [];
        for (let i = 0; i < options.idleRequests; i++) idle.push(await timedUs(get));
        listChangedReceived = 0;
        await loopDelayMaxMs(gateway.url);
        const during: number[] = [];
        let done = false;
        const started = performance.now();
        const flood = trigger!.call('prompts/get', { name: 'storm__flood' }).finally(() => (done = true));
        while (!done) during.push(await timedUs(get));
        await flood;
        const stormMs = performance.now() - started;
        const loopDelay = await loopDelayMaxMs(gateway.url);
        // A coalesced notification (only if a client's visible list changed: the fixture's list stays the same, so
        // none is the right count) comes at most the default notifications.maxDelayMs after the burst began.
        await sleep(SETTLE_MS);
        return { events: options.events, stormMs, idle: percentiles(idle), storm: percentiles(during), listChangedReceived, loopDelayMaxMs: loopDelay };
    } finally {
        await stopListening();
        await Promise.all([probe, trigger, watcher].map(channel => channel!.close()));
        await gateway.stop();
    }
}
