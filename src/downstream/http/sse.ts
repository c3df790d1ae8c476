/**
 * A Server-Sent Events answer: one `message` event per JSON-RPC message, and
 * a comment every KEEP_ALIVE_MS while it stays open, so proxies and clients
 * with idle timeouts do not cut a quiet stream.
 *
 * What a client does not read waits first in the kernel's socket buffers, then
 * in this process. That backlog is bounded: a write that finds more than
 * `maxBacklogBytes` still queued since an earlier turn of the event loop cuts
 * the stream (the connection is destroyed, as ending it would wait for the
 * client to read), and `onStalled` says so. What one turn writes (a batch of
 * large answers, a message larger than the bound) counts only from the next
 * turn on: Node counts a write as queued until its callback, even when the
 * kernel took it at once.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import type { Subscriber } from '../delivery.js';

const KEEP_ALIVE_MS = 15_000;
/** Far more than a client that reads at all leaves behind (list_changed events are a few hundred bytes). */
const MAX_STREAM_BACKLOG_BYTES = 1_048_576;

const SSE_HEADERS: OutgoingHttpHeaders = {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no'
};

export interface SseOptions {
    keepAliveMs?: number;
    maxBacklogBytes?: number;
    /** The stream was cut because its client stopped reading; `backlogBytes` were queued here. Called once. */
    onStalled?: (backlogBytes: number) => void;
}

export class SseStream implements Subscriber {
    readonly #res: ServerResponse;
    readonly #keepAlive: NodeJS.Timeout;
    readonly #maxBacklogBytes: number;
    readonly #onStalled: ((backlogBytes: number) => void) | undefined;
    /** The backlog the current turn of the event loop began with; undefined until this turn writes. */
    #carried: number | undefined;

    /** Writes the head at once (200), with `headers` besides the stream's own. */
    constructor(res: ServerResponse, headers: OutgoingHttpHeaders, options: SseOptions = {}) {
        this.#res = res;
        this.#maxBacklogBytes = options.maxBacklogBytes ?? MAX_STREAM_BACKLOG_BYTES;
        this.#onStalled = options.onStalled;
        res.writeHead(200, { ...headers, ...SSE_HEADERS });
        res.flushHeaders();
        this.#keepAlive = setInterval(() => this.#write(': keepalive\n\n'), options.keepAliveMs ?? KEEP_ALIVE_MS).unref();
        res.once('close', () => clearInterval(this.#keepAlive));
    }

    send(message: JSONRPCMessage): void {
        this.#write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    }

    deliver(message: JSONRPCMessage): void {
        this.send(message);
    }

    close(): void {
        clearInterval(this.#keepAlive);
        this.#res.end();
    }

    #write(text: string): void {
        const res = this.#res;
        if (res.writableEnded || res.destroyed) return;
        if (this.#carried === undefined) {
            this.#carried = res.writableLength;
            setImmediate(() => (this.#carried = undefined));
        }
        if (this.#carried <= this.#maxBacklogBytes) {
            res.write(text);
            return;
        }
        clearInterval(this.#keepAlive);
        res.destroy();
        this.#onStalled?.(this.#carried);
    }
}
