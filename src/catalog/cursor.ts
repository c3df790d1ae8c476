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
 *   plaintext  = UTF-8 JSON [CURSOR_FORMAT_VERSION, scope, upstreamId, version,
 *                offset, anchor, order, positional, pending], followed by spaces up
 *                to the scope's JSON length plus a multiple of CURSOR_PAD_BLOCK bytes
 *                (the caller knows its own scope; every other field fits in one
 *                block for config-valid ids). Decoding does not require the padding.
 *                `pending` is the upstream filter (upstream-filter.ts) as base64url.
 * The random IV makes encodings of one position differ: pages stay stable
 * because of what a cursor holds, not because of its bytes.
 */
import { Sealer } from '../lib/sealed.js';
import { UPSTREAM_FILTER_BYTES } from './upstream-filter.js';

/**
 * 3: upstreams located by id, with the order digest and the filter of pending upstreams (2 located them by config index).
 * @internal exported for its tests
 */
export const CURSOR_FORMAT_VERSION = 3;
/** Names the key derivation, unchanged since format 2; the format version inside tells formats apart. */
const CURSOR_KEY_INFO = 'mcp-prompt-gateway cursor v2';
const CURSOR_PAD_BLOCK = 256;
const MAX_CURSOR_LENGTH = 4096;

export interface CursorPosition {
    /** Whose view the cursor belongs to (a client id); a cursor is valid only in the same scope. */
    scope: string;
    /** The upstream the walk is in. */
    upstreamId: string;
    /** Digest of that upstream's name list when the page was cut. */
    version: string;
    /** Index, in that list version, of the next prompt to consider. */
    offset: number;
    /** `anchorOf` the last prompt consumed from that upstream ('' at the start): short whatever the name's length. */
    anchor: string;
    /** Digest of the order of every upstream (hidden ones too) when the page was cut. */
    order: string;
    /** Whether `pending` is exactly the upstreams after this one in that order (see paginate.ts). */
    positional: boolean;
    /** The upstreams still to list after this one, as an upstream filter of UPSTREAM_FILTER_BYTES. */
    pending: Uint8Array;
}

export class CursorCodec {
    readonly #sealer: Sealer;

    /** An empty secret means a random key for this process only. */
    constructor(secret: string) {
        this.#sealer = new Sealer(secret, CURSOR_KEY_INFO);
    }

    encode(position: CursorPosition): string {
        const json = JSON.stringify([
            CURSOR_FORMAT_VERSION,
            position.scope,
            position.upstreamId,
            position.version,
            position.offset,
            position.anchor,
            position.order,
            position.positional,
            Buffer.from(position.pending).toString('base64url')
        ]);
        const length = Buffer.byteLength(json, 'utf8');
        const own = Buffer.byteLength(JSON.stringify(position.scope), 'utf8');
        const padded = own + Math.ceil((length - own) / CURSOR_PAD_BLOCK) * CURSOR_PAD_BLOCK;
        return this.#sealer.seal(Buffer.from(json + ' '.repeat(padded - length), 'utf8'));
    }

    /** The position, or undefined for anything that is not a cursor sealed with this key. */
    decode(cursor: string): CursorPosition | undefined {
        return toPosition(this.#sealer.openJson(cursor, MAX_CURSOR_LENGTH));
    }
}

function toPosition(fields: unknown): CursorPosition | undefined {
    if (!Array.isArray(fields) || fields.length !== 9) return undefined;
    const [format, scope, upstreamId, version, offset, anchor, order, positional, pending] = fields as unknown[];
    if (format !== CURSOR_FORMAT_VERSION) return undefined;
    if (!isString(scope) || !isString(upstreamId) || !isString(version) || !isString(anchor) || !isString(order)) return undefined;
    if (!isIndex(offset) || typeof positional !== 'boolean' || !isString(pending)) return undefined;
    const filter = Buffer.from(pending, 'base64url');
    if (filter.length !== UPSTREAM_FILTER_BYTES || filter.toString('base64url') !== pending) return undefined;
    return { scope, upstreamId, version, offset, anchor, order, positional, pending: new Uint8Array(filter) };
}

function isString(value: unknown): value is string {
    return typeof value === 'string';
}

function isIndex(value: unknown): value is number {
    return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
