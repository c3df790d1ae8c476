/** Writing whole answers on node:http: JSON with its length, or nothing. */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** The headers of an answer that adds none of its own. */
export const NO_HEADERS: OutgoingHttpHeaders = Object.freeze({});

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = NO_HEADERS): void {
    sendText(res, status, JSON.stringify(body), 'application/json', headers);
}

export function sendText(res: ServerResponse, status: number, text: string, contentType: string, headers: OutgoingHttpHeaders = NO_HEADERS): void {
    if (res.headersSent) {
        res.end();
        return;
    }
    setHeaders(res, headers);
    res.setHeader('content-type', contentType);
    res.setHeader('content-length', Buffer.byteLength(text));
    res.writeHead(status);
    res.end(text);
}

/** An answer without a body (202, a DELETE's 200, a preflight's 204). */
export function sendEmpty(res: ServerResponse, status: number, headers: OutgoingHttpHeaders = NO_HEADERS): void {
    setHeaders(res, headers);
    res.setHeader('content-length', 0);
    res.writeHead(status);
    res.end();
}

/**
 * Set one by one, as writeHead would set them on a response that has any already (each has its request id): no
 * merged copy of them is built for it.
 */
function setHeaders(res: ServerResponse, headers: OutgoingHttpHeaders): void {
    for (const name in headers) res.setHeader(name, headers[name]!);
}
