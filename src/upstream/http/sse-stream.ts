/** Reading SSE response bodies, and when to reconnect one that ended. */
import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import { LINES_PER_SLICE, type StreamPace } from '../flood.js';
import type { SseParser } from './sse-parser.js';

/**
 * Never reconnect faster than this, whatever `retry` says (`retry: 0` included): a server that closes every stream at
 * once would make the gateway open one after another. A second is still prompt for list changes.
 */
export const MIN_RECONNECT_MS = 1000;
const INITIAL_RECONNECT_MS = 1000;
const MAX_RECONNECT_MS = 30_000;
/** Attempts in a row that fail to open a stream before it is given up (and the failure reported). */
export const MAX_STREAM_FAILURES = 2;

/**
 * Reads an SSE body to its end through `parser`, LINES_PER_SLICE lines at a time with a yield to the event loop
 * between, and no faster than `pace` allows: past it, the body is not read (the upstream is held back by its socket)
 * until the window ends. Throws if the body is cut off or `signal` aborts.
 */
export async function readEvents(body: AsyncIterable<unknown>, parser: SseParser, pace: StreamPace, signal: AbortSignal): Promise<void> {
    let sinceYield = 0;
    for await (const chunk of body) {
        for (let rest = chunk as Buffer; rest.length > 0; ) {
            const before = parser.lines;
            rest = rest.subarray(parser.push(rest, LINES_PER_SLICE - sinceYield));
            const lines = parser.lines - before;
            sinceYield += lines;
            const now = Date.now();
            const spent = pace.budget.spend(now, lines);
            if (spent !== 'ok') {
                if (spent === 'flood') pace.onFlood();
                await sleep(pace.budget.resumeAt - now, undefined, { signal });
                sinceYield = 0;
            } else if (sinceYield >= LINES_PER_SLICE) {
                await setImmediate(undefined, { signal });
                sinceYield = 0;
            }
        }
    }
    parser.end();
}

/** The wait before reconnecting: what the server last asked for with `retry`, else a delay growing with failures. */
export function reconnectDelay(serverRetryMs: number | undefined, failures: number): number {
    if (serverRetryMs !== undefined) return Math.max(serverRetryMs, MIN_RECONNECT_MS);
    return Math.min(INITIAL_RECONNECT_MS * 1.5 ** failures, MAX_RECONNECT_MS);
}
