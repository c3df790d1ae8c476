/**
 * The gateway's memory while HTTP upstream answers far over its limits arrive: `parallel` prompts/get at once, each
 * answered with a 50 MiB result (default limits: maxResultBytes 4 MiB, maxUpstreamMessageBytes 16 MiB), as JSON
 * bodies and as SSE events. A fresh gateway per framing, in front of the raw fixture over Streamable HTTP
 * (test/fixtures/raw-server.ts --huge-result, which says how many bytes of each answer it could write before the
 * gateway stopped reading); its VmRSS before the answers, and `settleMs` after them its VmHWM (peak) and VmRSS.
 */
import { request } from 'undici';
import { startRawHttp } from '../../test/helpers.js';
import { httpUpstream, startGateway } from '../lib/gateway.js';
import { connect, StreamableChannel } from '../lib/mcp-client.js';
import { statusKiB } from '../lib/processes.js';
import { sleep } from '../lib/stats.js';

export const HUGE_RESULT_BYTES = 50 * 1024 * 1024;

export type Framing = 'JSON' | 'SSE';

export interface HttpMemoryRow {
    framing: Framing;
    parallel: number;
    rssBeforeBytes: number;
    rssPeakBytes: number;
    rssAfterBytes: number;
    /** What the upstream could write of each answer before the gateway closed it, on average. */
    writtenBytes: number;
    /** Answers that failed (all of them should: each is over the limits). */
    failed: number;
}

export interface HttpMemoryOptions {
    parallel: number;
    settleMs: number;
}

async function writtenPerAnswer(fixtureUrl: string): Promise<number> {
    const { body } = await request(new URL('/stats', fixtureUrl));
    const { hugeWritten } = (await body.json()) as { hugeWritten: number[] };
    return hugeWritten.reduce((sum, bytes) => sum + bytes, 0) / Math.max(1, hugeWritten.length);
}

async function measureFraming(framing: Framing, options: HttpMemoryOptions): Promise<HttpMemoryRow> {
    const fixture = await startRawHttp(['--huge-result', String(HUGE_RESULT_BYTES), ...(framing === 'SSE' ? ['--sse-answers'] : [])]);
    try {
        const gateway = await startGateway(`gateway, ${framing} answers over the limits`, { upstreams: [httpUpstream('big', fixture.url, { timeoutMs: 120_000 })] });
        const connections = connect(new URL(gateway.url).origin, options.parallel);
        try {
            const channel = await StreamableChannel.open(gateway.url, { via: connections });
            const rssBeforeBytes = statusKiB(gateway.pid) * 1024;
            const outcomes = await Promise.allSettled(Array.from({ length: options.parallel }, () => channel.call('prompts/get', { name: 'big__ok-0' })));
            await sleep(options.settleMs);
            return {
                framing,
                parallel: options.parallel,
                rssBeforeBytes,
                rssPeakBytes: statusKiB(gateway.pid, 'VmHWM') * 1024,
                rssAfterBytes: statusKiB(gateway.pid) * 1024,
                writtenBytes: await writtenPerAnswer(fixture.url),
                failed: outcomes.filter(outcome => outcome.status === 'rejected').length
            };
        } finally {
            await connections.close();
            await gateway.stop();
        }
    } finally {
        await fixture.close();
    }
}

export async function measureHttpMemory(options: HttpMemoryOptions): Promise<HttpMemoryRow[]> {
    return [await measureFraming('JSON', options), await measureFraming('SSE', options)];
}
