/**
 * JSON-RPC batches by protocol revision. 2025-03-26 added them (its schema has
 * JSONRPCBatchRequest) and 2025-06-18 removed them. 2024-11-05 never had them:
 * its schema has no batch type. Streamable HTTP, which came with 2025-03-26,
 * takes an array body, but a 2024-11-05 session speaks 2024-11-05 messages, so
 * it gets no batches either: only the revision that defines them does. Revisions
 * newer than the gateway knows get none (every later one has dropped them).
 * How many messages a batch may hold is the gateway's limit, the caller's to give.
 */
import { revisionOf } from './revisions.js';

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
