/** When to reconnect an SSE stream that ended (its body is read by readPaced, in ../paced-read.ts). */

/**
 * Never reconnect faster than this, whatever `retry` says (`retry: 0` included): a server that closes every stream at
 * once would make the gateway open one after another. A second is still prompt for list changes.
 */
export const MIN_RECONNECT_MS = 1000;
const INITIAL_RECONNECT_MS = 1000;
const MAX_RECONNECT_MS = 30_000;
/** Attempts in a row that fail to open a stream before it is given up (and the failure reported). */
export const MAX_STREAM_FAILURES = 2;

/** The wait before reconnecting: what the server last asked for with `retry`, else a delay growing with failures. */
export function reconnectDelay(serverRetryMs: number | undefined, failures: number): number {
    if (serverRetryMs !== undefined) return Math.max(serverRetryMs, MIN_RECONNECT_MS);
    return Math.min(INITIAL_RECONNECT_MS * 1.5 ** failures, MAX_RECONNECT_MS);
}
