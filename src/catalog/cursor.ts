/**
 * Composite pagination cursors: an opaque, encrypted and authenticated,
 * versioned position in the merged prompt view. Everything needed to resume a
 * walk is in the cursor itself, so any replica sharing `cursorSecret` can
 * decode it and serve the next page.
 *
 * Opaque, not just signed: a position is an offset into an upstream's FULL
 * name list, with a digest of that list, and may even name an upstream the
 * caller cannot see. Readable, it would tell a client how many hidden prompts
 * precede it, when hidden prompts change, and let it test guesses of the full
 * list against the digest. Encrypted, and padded so that its length does not
 * depend on the position, a cursor leaves no trace of hidden prompts: they stay
 * indistinguishable from nonexistent ones.
 *
 * Wire form: base64url(iv || ciphertext || tag), one part, no padding, where
 *   key        = HKDF-SHA256(ikm = `cursorSecret` as UTF-8 (or a random 32-byte key
 *                when it is empty), salt = empty, info = CURSOR_KEY_INFO, 32 bytes)
 *   iv         = 12 random bytes, tag = the 16-byte AES-256-GCM tag
 *   plaintext  = UTF-8 JSON [CURSOR_FORMAT_VERSION, scope, upstreamIndex,
 *                upstreamId, version, offset, anchor], followed by spaces up to
 *                the scope's JSON length plus a multiple of CURSOR_PAD_BLOCK bytes
 *                (the caller knows its own scope; every other field fits in one
 *                block for config-valid ids). Decoding does not require the padding.
 * The random IV makes encodings of one position differ: pages stay stable
 * because of what a cursor holds, not because of its bytes.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export const CURSOR_FORMAT_VERSION = 2;
const CURSOR_KEY_INFO = 'mcp-prompt-gateway cursor v2';
const CURSOR_PAD_BLOCK = 256;
const MAX_CURSOR_LENGTH = 4096;
const IV_BYTES = 12;
const TAG_BYTES = 16;

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
        const ikm = secret === '' ? randomBytes(32) : Buffer.from(secret, 'utf8');
        this.#key = Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), CURSOR_KEY_INFO, 32));
    }

    encode(position: CursorPosition): string {
        const json = JSON.stringify([
            CURSOR_FORMAT_VERSION,
            position.scope,
            position.upstreamIndex,
            position.upstreamId,
            position.version,
            position.offset,
            position.anchor
        ]);
        const length = Buffer.byteLength(json, 'utf8');
        const own = Buffer.byteLength(JSON.stringify(position.scope), 'utf8');
        const padded = own + Math.ceil((length - own) / CURSOR_PAD_BLOCK) * CURSOR_PAD_BLOCK;
        const plaintext = Buffer.from(json + ' '.repeat(padded - length), 'utf8');
        const iv = randomBytes(IV_BYTES);
        const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
        const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
        return Buffer.concat([iv, ciphertext, cipher.getAuthTag()]).toString('base64url');
    }

    /** The position, or undefined for anything that is not a cursor sealed with this key. */
    decode(cursor: string): CursorPosition | undefined {
        if (cursor.length > MAX_CURSOR_LENGTH) return undefined;
        const sealed = Buffer.from(cursor, 'base64url');
        // Base64url decoding skips stray characters and padding: accept only the canonical text.
        if (sealed.toString('base64url') !== cursor) return undefined;
        if (sealed.length < IV_BYTES + TAG_BYTES + 1) return undefined;
        let plaintext: string;
        try {
            const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
            decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
            const bytes = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
            plaintext = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
        } catch {
            return undefined;
        }
        let fields: unknown;
        try {
            fields = JSON.parse(plaintext);
        } catch {
            return undefined;
        }
        return toPosition(fields);
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
