/** Writing whole answers on node:http: JSON with its length, or nothing. */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
    sendText(res, status, JSON.stringify(body), 'application/json', headers);
}

export function sendText(res: ServerResponse, status: number, text: string, contentType: string, headers: OutgoingHttpHeaders = {}): void {
    if (res.headersSent) {
        res.end();
        return;
    }
    res.writeHead(status, { ...headers, 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
    res.end(text);
}

/** An answer without a body (202, a DELETE's 200, a preflight's 204). */
export function sendEmpty(res: ServerResponse, status: number, headers: OutgoingHttpHeaders = {}): void {
    res.writeHead(status, { ...headers, 'content-length': 0 });
    res.end();
}
