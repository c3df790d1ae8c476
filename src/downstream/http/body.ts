/**
 * A request body, read whole up to `maxBytes` (limits.maxBodyBytes). Past the
 * limit nothing more is kept, but the rest is read off and dropped before the
 * answer goes out, so the client (still sending) reads a 413 rather than a
 * reset connection; the server's requestTimeout bounds how long that may take.
 */
import type { IncomingMessage } from 'node:http';

/** `text` is the body as UTF-8 (without a byte order mark); `gone` when the client went away before its end. */
export type Body = { kind: 'read'; text: string } | { kind: 'too_large' } | { kind: 'gone' };

export function readBody(req: IncomingMessage, maxBytes: number): Promise<Body> {
    return new Promise(resolve => {
        const declared = Number(req.headers['content-length']);
        let tooLarge = declared > maxBytes;
        const chunks: Buffer[] = [];
        let bytes = 0;
        req.on('data', (chunk: Buffer) => {
            if (tooLarge) return;
            bytes += chunk.length;
            if (bytes > maxBytes) {
                tooLarge = true;
                chunks.length = 0;
            } else chunks.push(chunk);
        });
        req.once('end', () => {
            if (tooLarge) return resolve({ kind: 'too_large' });
            const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
            resolve({ kind: 'read', text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text });
        });
        // Resolving again after 'end' is a no-op; without 'end' first, the client is gone.
        req.once('close', () => resolve({ kind: 'gone' }));
    });
}
