/**
 * The id of the client request being served, carried through async calls, so
 * every log line written on its behalf (upstream lines included) names it, and
 * HTTP upstreams receive it as `X-Request-Id`; with it, the `Mcp-Param-*`
 * headers of a 2026-07-28 request, which an intermediary forwards as they are.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'x-request-id';

interface RequestContext {
    requestId: string;
    forwardHeaders?: Record<string, string>;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** An id a caller sent is kept when it is short and plain, so it cannot forge log lines or headers; else a new one. */
const PLAIN_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFrom(incoming: unknown): string {
    return typeof incoming === 'string' && PLAIN_ID.test(incoming) ? incoming : randomUUID();
}

export function currentRequestId(): string | undefined {
    return storage.getStore()?.requestId;
}

/** Headers of the client request to pass on to the upstream that serves it (set once it is known to have some). */
export function setForwardHeaders(headers: Record<string, string>): void {
    const context = storage.getStore();
    if (context !== undefined) context.forwardHeaders = headers;
}

export function currentForwardHeaders(): Record<string, string> | undefined {
    return storage.getStore()?.forwardHeaders;
}

/** Runs `work` as part of request `requestId`. */
export function inRequest<T>(requestId: string, work: () => T): T {
    return storage.run({ requestId }, work);
}

/** Runs `work` in the current request, or in a new one where there is none (stdio messages arrive outside any). */
export function inSomeRequest<T>(work: () => T): T {
    return storage.getStore() === undefined ? storage.run({ requestId: randomUUID() }, work) : work();
}

/**
 * Runs `work` outside any request, with what it starts (timers, promises): for deferred work that a request happens
 * to set going but that serves no one request, so it carries neither that request's id nor its headers.
 */
export function outsideRequests<T>(work: () => T): T {
    return storage.exit(work);
}
