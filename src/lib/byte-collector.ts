/**
 * The bytes of one message from the network (an upstream's HTTP body, the data
 * of one SSE event, a fetched key set), held up to a limit. Past the limit only
 * its first and last OVERSIZED_EDGE_BYTES are kept, enough to find the request
 * an upstream's message answers (see ../upstream/oversized.ts), so memory stays bounded
 * by the limit whatever the other side sends.
 */
import type { Readable } from 'node:stream';
import { firstBytes, lastBytes } from './bytes.js';

/** How much of each end of an oversized message is kept (to find the id of the request it answers). */
export const OVERSIZED_EDGE_BYTES = 1024;

export type Collected = { kind: 'whole'; bytes: Buffer } | { kind: 'oversized'; head: string; tail: string; size: number };

const EMPTY = Buffer.alloc(0);

export class ByteCollector {
    #chunks: Buffer[] = [];
    #size = 0;
    /** Set once the limit is passed; from then on only `#tail` grows (and is cut). */
    #head: Buffer | undefined;
    #tail: Buffer = EMPTY;

    constructor(readonly limit: number) {}

    get size(): number {
        return this.#size;
    }

    get oversized(): boolean {
        return this.#head !== undefined;
    }

    /** The first bytes, as text, once the limit is passed (undefined before). */
    get head(): string | undefined {
        return this.#head?.toString('utf8');
    }

    push(chunk: Buffer): void {
        if (chunk.length === 0) return;
        this.#size += chunk.length;
        if (this.#head === undefined) {
            // A copy: a slice would keep alive the whole buffer it was cut from, which the limit does not count.
            if (this.#size <= this.limit) {
                this.#chunks.push(Buffer.from(chunk));
                return;
            }
            this.#chunks.push(chunk);
            this.#head = edge(this.#chunks, 'first');
            this.#tail = edge(this.#chunks, 'last');
            this.#chunks = [];
            return;
        }
        // (A limit under the edge size leaves the head short when passed: it fills up from what follows.)
        if (this.#head.length < OVERSIZED_EDGE_BYTES) this.#head = edge([this.#head, chunk], 'first');
        this.#tail = edge([this.#tail, chunk], 'last');
    }

    take(): Collected {
        if (this.#head !== undefined) return { kind: 'oversized', head: this.#head.toString('utf8'), tail: this.#tail.toString('utf8'), size: this.#size };
        const bytes = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#size);
        return { kind: 'whole', bytes };
    }
}

/**
 * A body, read up to `limit` bytes and no further: past it (or when `declaredLength`, its Content-Length, says it
 * will pass it) the reading stops, and the caller must abort the exchange, which closes the connection.
 */
export async function readBoundedBody(body: AsyncIterable<Uint8Array>, declaredLength: number, limit: number): Promise<Collected> {
    if (declaredOversized(declaredLength, limit)) return { kind: 'oversized', head: '', tail: '', size: declaredLength };
    const collector = new ByteCollector(limit);
    for await (const chunk of body) {
        collector.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if (collector.oversized) break;
    }
    return collector.take();
}

/**
 * As readBoundedBody, for a Node stream, read through its events (an async iterator costs several promises and
 * listeners per body, most of an upstream answer's reading). Past the limit the stream is destroyed, as breaking out
 * of its iterator would; one destroyed before its end fails the read (with its error, if it has one).
 */
export function readBoundedStream(body: Readable, declaredLength: number, limit: number): Promise<Collected> {
    if (declaredOversized(declaredLength, limit)) return Promise.resolve({ kind: 'oversized', head: '', tail: '', size: declaredLength });
    if (body.errored !== null) return Promise.reject(body.errored);
    if (body.destroyed) return Promise.reject(prematureClose());
    const collector = new ByteCollector(limit);
    return new Promise((resolve, reject) => {
        const onData = (chunk: Buffer) => {
            collector.push(chunk);
            if (!collector.oversized) return;
            stop();
            // Destroyed without a reason, a body may still say why (undici's: "aborted"): nobody is listening any more.
            body.on('error', ignore).destroy();
            resolve(collector.take());
        };
        const onEnd = () => {
            stop();
            resolve(collector.take());
        };
        const onError = (error: Error) => {
            stop();
            reject(error);
        };
        const onClose = () => onError(prematureClose());
        const stop = () => {
            body.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
        };
        body.on('error', onError).on('close', onClose).on('end', onEnd).on('data', onData);
    });
}

/** An error listener for a stream whose errors nobody waits for any more (it would throw unheard otherwise). */
export function ignore(): void {}

function declaredOversized(declaredLength: number, limit: number): boolean {
    return Number.isFinite(declaredLength) && declaredLength > limit;
}

/** What Node's own stream helpers fail with for a stream closed before its end. */
function prematureClose(): Error {
    return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/** The first or last OVERSIZED_EDGE_BYTES of `chunks`, copied. */
function edge(chunks: readonly Buffer[], end: 'first' | 'last'): Buffer {
    return end === 'first' ? firstBytes(chunks, OVERSIZED_EDGE_BYTES) : lastBytes(chunks, OVERSIZED_EDGE_BYTES);
}
