/**
 * The gateway's own bound on batches (which revisions have them is the
 * protocol's: src/protocol/batches.ts). Where allowed, a batch costs one
 * rate-limit token per message, so batching is no way around the limit, and
 * holds at most MAX_BATCH_MESSAGES messages (and never more than the client's
 * burst, which could never pay for it).
 */

/** The SDK transport's own bound, kept so both refuse the same batches. */
export const MAX_BATCH_MESSAGES = 100;

/** The largest batch a client can send: the bound, or its burst when it is rate limited. */
export function batchLimit(rateLimit: { requestsPerSecond: number; burst: number }): number {
    return rateLimit.requestsPerSecond === 0 ? MAX_BATCH_MESSAGES : Math.min(MAX_BATCH_MESSAGES, rateLimit.burst);
}
