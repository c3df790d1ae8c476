/**
 * A request body, read whole up to `maxBytes` (limits.maxBodyBytes). Past the
 * limit nothing more is kept, but the rest is read off and dropped before the
 * answer goes out, so the client (still sending) reads a 413 rather than a
 * reset connection; the server's requestTimeout bounds how long that may take.
 *
 * A gzip or deflate body (Content-Encoding) is inflated as it arrives, and the
 * limit holds for both its size on the wire and its inflated size, so a small
 * compressed body that inflates past it (a zip bomb) is a 413 once the limit is
 * passed, never inflated further. Any other encoding is refused before reading.
 */
import type { IncomingMessage } from 'node:http';
import { createGunzip, createInflate, type Gunzip, type Inflate } from 'node:zlib';

/** `text` is the body as UTF-8 (a byte order mark is readJson's to skip); `gone` when the client went away before its end. */
export type Body = { kind: 'read'; text: string } | { kind: 'too_large' } | { kind: 'gone' } | { kind: 'unsupported_encoding' } | { kind: 'undecodable' };

const DECODERS: Record<string, (() => Gunzip | Inflate) | null> = { identity: null, gzip: createGunzip, 'x-gzip': createGunzip, deflate: createInflate };

export function readBody(req: IncomingMessage, maxBytes: number): Promise<Body> {
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    const decoder = Object.hasOwn(DECODERS, encoding) ? DECODERS[encoding] : undefined;
    if (decoder === undefined) return Promise.resolve({ kind: 'unsupported_encoding' });
    return new Promise(resolve => {
        const wire = new Limited(maxBytes, Number(req.headers['content-length']));
        const inflate = decoder?.();
        const body = inflate === undefined ? wire : new Limited(maxBytes, NaN);
        let ended = false;
        const finish = (): void => {
            if (wire.tooLarge || body.tooLarge) {
                inflate?.destroy();
                return resolve({ kind: 'too_large' });
            }
            resolve({ kind: 'read', text: body.bytes().toString('utf8') });
        };
        if (inflate !== undefined) {
            inflate.on('data', (chunk: Buffer) => {
                // Past the limit nothing more is inflated; the wire is still read off (and counted) to its end,
                // and if it has ended already (the inflater lags the socket), the answer is due now.
                if (body.add(chunk)) return;
                inflate.destroy();
                if (ended) finish();
            });
            inflate.once('end', finish);
            inflate.once('error', () => resolve({ kind: 'undecodable' }));
        }
        req.on('data', (chunk: Buffer) => {
            if (wire.add(chunk) && inflate?.destroyed === false) inflate.write(chunk);
        });
        req.once('end', () => {
            ended = true;
            if (inflate === undefined || wire.tooLarge || body.tooLarge) return finish();
            if (!inflate.destroyed) inflate.end();
        });
        req.once('close', () => {
            if (!ended) resolve({ kind: 'gone' });
        });
    });
}

/** Bytes kept up to a limit; past it, none. */
class Limited {
    readonly #chunks: Buffer[] = [];
    #size = 0;
    tooLarge: boolean;

    constructor(
        private readonly maxBytes: number,
        declared: number
    ) {
        this.tooLarge = declared > maxBytes;
    }

    /** Whether the chunk was kept (false once the limit is passed). */
    add(chunk: Buffer): boolean {
        if (this.tooLarge) return false;
        this.#size += chunk.length;
        if (this.#size > this.maxBytes) {
            this.tooLarge = true;
            this.#chunks.length = 0;
            return false;
        }
        this.#chunks.push(chunk);
        return true;
    }

    bytes(): Buffer {
        return this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
    }
}
