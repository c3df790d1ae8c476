/**
 * JSON-RPC batches by protocol revision. 2025-03-26 added them (its schema has
 * JSONRPCBatchRequest) and 2025-06-18 removed them. 2024-11-05 never had them:
 * its schema has no batch type. Streamable HTTP, which came with 2025-03-26,
 * takes an array body, but a 2024-11-05 session speaks 2024-11-05 messages, so
 * it gets no batches either: only the revision that defines them does. Revisions
 * newer than the gateway knows get none (every later one has dropped them).
 *
 * Where allowed, a batch costs one rate-limit token per message, so batching is
 * no way around the limit, and holds at most MAX_BATCH_MESSAGES messages (and
 * never more than the client's burst, which could never pay for it).
 */
import { revisionOf } from '../protocol/revisions.js';

/** The SDK transport's own bound, kept so both refuse the same batches. */
export const MAX_BATCH_MESSAGES = 100;

export function batchesAllowed(revision: string | undefined): boolean {
    return revision !== undefined && revisionOf(revision)?.batches === true;
}

export type BatchVerdict = { ok: true; messages: number } | { ok: false; message: string };

/** Whether a session that negotiated `revision` takes `body`, and how many messages (rate-limit tokens) it holds. */
export function judgeBatch(body: unknown, revision: string | undefined, maxMessages: number): BatchVerdict {
    if (!Array.isArray(body)) return { ok: true, messages: 1 };
    if (!batchesAllowed(revision)) {
        return { ok: false, message: `Invalid Request: JSON-RPC batches are not part of MCP ${revision ?? 'this revision'}; send one message per request` };
    }
    if (body.length === 0) return { ok: false, message: 'Invalid Request: empty batch' };
    if (body.length > maxMessages) return { ok: false, message: `Invalid Request: a batch may hold at most ${maxMessages} messages` };
    return { ok: true, messages: body.length };
}

/** The largest batch a client can send: the bound, or its burst when it is rate limited. */
export function batchLimit(rateLimit: { requestsPerSecond: number; burst: number }): number {
    return rateLimit.requestsPerSecond === 0 ? MAX_BATCH_MESSAGES : Math.min(MAX_BATCH_MESSAGES, rateLimit.burst);
}
