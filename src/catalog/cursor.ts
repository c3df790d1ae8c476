/**
 * Composite pagination cursors: an opaque, HMAC-SHA256-signed, versioned
 * position in the merged prompt view. Everything needed to resume a walk is in
 * the cursor itself, so any replica sharing `cursorSecret` can serve the next page.
 *
 * Wire form: base64url(JSON payload) "." base64url(first 16 bytes of HMAC).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const CURSOR_FORMAT_VERSION = 1;
const MAX_CURSOR_LENGTH = 4096;
const MAC_BYTES = 16;

export interface CursorPosition {
    /** Whose view the cursor belongs to (a client id); a cursor is valid only in the same scope. */
    scope: string;
    /** Config position of the upstream the walk is in, used when that upstream is gone. */
    upstreamIndex: number;
    upstreamId: string;
    /** Digest of that upstream's name list when the page was cut. */
    version: string;
    /** Index, in that list version, of the next prompt to consider. */
    offset: number;
    /** `anchorOf` the last prompt consumed from that upstream ('' at the start): short whatever the name's length. */
    anchor: string;
}

export class CursorCodec {
    readonly #key: Buffer;

    /** An empty secret means a random key for this process only. */
    constructor(secret: string) {
        this.#key = secret === '' ? randomBytes(32) : Buffer.from(secret, 'utf8');
    }

    encode(position: CursorPosition): string {
        const payload = Buffer.from(
            JSON.stringify([
                CURSOR_FORMAT_VERSION,
                position.scope,
                position.upstreamIndex,
                position.upstreamId,
                position.version,
                position.offset,
                position.anchor
            ]),
            'utf8'
        ).toString('base64url');
        return `${payload}.${this.#mac(payload).toString('base64url')}`;
    }

    /** The position, or undefined for anything that is not a cursor this key signed. */
    decode(cursor: string): CursorPosition | undefined {
        if (cursor.length > MAX_CURSOR_LENGTH) return undefined;
        const dot = cursor.indexOf('.');
        if (dot <= 0 || dot !== cursor.lastIndexOf('.')) return undefined;
        const payload = cursor.slice(0, dot);
        // Compare the text, not decoded bytes: base64url decoding ignores stray characters and padding.
        const mac = Buffer.from(cursor.slice(dot + 1), 'latin1');
        const expected = Buffer.from(this.#mac(payload).toString('base64url'), 'latin1');
        if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return undefined;
        let fields: unknown;
        try {
            fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
        } catch {
            return undefined;
        }
        return toPosition(fields);
    }

    #mac(payload: string): Buffer {
        return createHmac('sha256', this.#key).update(payload).digest().subarray(0, MAC_BYTES);
    }
}

function toPosition(fields: unknown): CursorPosition | undefined {
    if (!Array.isArray(fields) || fields.length !== 7) return undefined;
    const [version, scope, upstreamIndex, upstreamId, listVersion, offset, anchor] = fields as unknown[];
    if (version !== CURSOR_FORMAT_VERSION) return undefined;
    if (typeof scope !== 'string' || typeof upstreamId !== 'string' || typeof listVersion !== 'string') return undefined;
    if (typeof anchor !== 'string' || !isIndex(upstreamIndex) || !isIndex(offset)) return undefined;
    return { scope, upstreamIndex, upstreamId, version: listVersion, offset, anchor };
}

function isIndex(value: unknown): value is number {
    return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
