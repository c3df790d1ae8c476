/**
 * The id of the client request being served, carried through async calls for
 * the log only: every line written on its behalf (upstream lines included)
 * names it. What an upstream request carries (its `X-Request-Id`, a client's
 * `Mcp-Param-*` headers) is a parameter of the call (see upstream/transports.ts
 * Forwarded), never read from here: work can be deferred to another context.
 * Work shared by many requests, or by none (connections, reconnects, list
 * reads, announcements), runs outside every request, so its lines name none.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'x-request-id';

const storage = new AsyncLocalStorage<string | undefined>();

/** An id a caller sent is kept when it is short and plain, so it cannot forge log lines or headers; else a new one. */
const PLAIN_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFrom(incoming: unknown): string {
    return typeof incoming === 'string' && PLAIN_ID.test(incoming) ? incoming : randomUUID();
}

/** For the logger only. */
export function currentRequestId(): string | undefined {
    return storage.getStore();
}

/** Runs `work` as part of request `requestId`. */
export function inRequest<T>(requestId: string, work: () => T): T {
    return storage.run(requestId, work);
}

/** Runs `work` as part of no request: what it starts (timers, streams, reads shared with later callers) is nobody's. */
export function outsideRequests<T>(work: () => T): T {
    return storage.run(undefined, work);
}
