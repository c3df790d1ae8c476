/** Reading SSE response bodies, and when to reconnect one that ended. */
import type { SseParser } from './sse-parser.js';
import type { HttpResponse } from './upstream-http.js';

/** Never reconnect faster than this, whatever `retry` says: a server that closes every stream at once would spin. */
const MIN_RECONNECT_MS = 250;
const INITIAL_RECONNECT_MS = 1000;
const MAX_RECONNECT_MS = 30_000;
/** Attempts in a row that fail to open a stream before it is given up (and the failure reported). */
export const MAX_STREAM_FAILURES = 2;

/** Reads an SSE body to its end through `parser`; throws if it is cut off or its exchange aborted. */
export async function readEvents(response: HttpResponse, parser: SseParser): Promise<void> {
    for await (const chunk of response.body) parser.push(chunk as Buffer);
    parser.end();
}

/** The wait before reconnecting: what the server last asked for with `retry`, else a delay growing with failures. */
export function reconnectDelay(serverRetryMs: number | undefined, failures: number): number {
    if (serverRetryMs !== undefined) return Math.max(serverRetryMs, MIN_RECONNECT_MS);
    return Math.min(INITIAL_RECONNECT_MS * 1.5 ** failures, MAX_RECONNECT_MS);
}
