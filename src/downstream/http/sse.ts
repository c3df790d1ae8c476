/**
 * A Server-Sent Events answer: one `message` event per JSON-RPC message, and
 * a comment every KEEP_ALIVE_MS while it stays open, so proxies and clients
 * with idle timeouts do not cut a quiet stream.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import type { Subscriber } from '../delivery.js';

const KEEP_ALIVE_MS = 15_000;

const SSE_HEADERS: OutgoingHttpHeaders = {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no'
};

export class SseStream implements Subscriber {
    readonly #res: ServerResponse;
    readonly #keepAlive: NodeJS.Timeout;

    /** Writes the head at once (200), with `headers` besides the stream's own. */
    constructor(res: ServerResponse, headers: OutgoingHttpHeaders, keepAliveMs = KEEP_ALIVE_MS) {
        this.#res = res;
        res.writeHead(200, { ...headers, ...SSE_HEADERS });
        res.flushHeaders();
        this.#keepAlive = setInterval(() => res.write(': keepalive\n\n'), keepAliveMs).unref();
        res.once('close', () => clearInterval(this.#keepAlive));
    }

    send(message: JSONRPCMessage): void {
        if (!this.#res.writableEnded) this.#res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    }

    deliver(message: JSONRPCMessage): void {
        this.send(message);
    }

    close(): void {
        clearInterval(this.#keepAlive);
        this.#res.end();
    }
}
