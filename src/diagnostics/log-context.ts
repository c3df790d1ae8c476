/**
 * The id of a client request, on every log line written on its behalf (upstream lines included) and sent on as its
 * upstream calls' `X-Request-Id`. It is a parameter of what serves the request: the HTTP answer's header (set first,
 * see requestIdOf), a call's Forwarded (catalog/upstream-port.ts), a usage event. No ambient context carries it (on
 * Node 20 AsyncLocalStorage costs every promise of every request): work shared by many requests, or by none
 * (connections, reconnects, list reads, announcements), is handed no id, so its lines name none, and deferred work
 * names only the request it was handed.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

export const REQUEST_ID_HEADER = 'x-request-id';

/** An id a caller sent is kept when it is short and plain, so it cannot forge log lines or headers; else a new one. */
const PLAIN_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFrom(incoming: unknown): string {
    return typeof incoming === 'string' && PLAIN_ID.test(incoming) ? incoming : randomUUID();
}

/** The id of the HTTP request `res` answers: set on it before anything else is done (downstream/http/endpoint.ts). */
export function requestIdOf(res: Pick<ServerResponse, 'getHeader'>): string | undefined {
    const id = res.getHeader(REQUEST_ID_HEADER);
    return typeof id === 'string' ? id : undefined;
}
