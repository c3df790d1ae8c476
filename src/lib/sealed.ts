/**
 * Small values the gateway hands out and takes back unchanged (pagination
 * cursors, `requestState`), encrypted and authenticated so that a client can
 * neither read nor forge them: AES-256-GCM under a key derived with
 * HKDF-SHA256 from a secret and a purpose, so one secret gives each purpose a
 * key of its own. An empty secret means a random key for this process only.
 *
 * Wire form: base64url(iv || ciphertext || tag), no padding; iv is 12 random
 * bytes, tag the 16-byte GCM tag.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class Sealer {
    readonly #key: Buffer;
    /** Names the key among others (8 hex digits of its SHA-256): tells nothing of the key, which is random-looking. */
    readonly keyId: string;

    constructor(secret: string, purpose: string) {
        const ikm = secret === '' ? randomBytes(32) : Buffer.from(secret, 'utf8');
        this.#key = Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), purpose, 32));
        this.keyId = createHash('sha256').update(this.#key).digest('hex').slice(0, 8);
    }

    seal(plaintext: Buffer): string {
        const iv = randomBytes(IV_BYTES);
        const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
        const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
        return Buffer.concat([iv, ciphertext, cipher.getAuthTag()]).toString('base64url');
    }

    /** The JSON value sealed; undefined for anything longer than `maxLength`, not sealed with this key, or not JSON. */
    openJson(sealed: string, maxLength: number): unknown {
        const plaintext = this.#open(sealed, maxLength);
        if (plaintext === undefined) return undefined;
        try {
            return JSON.parse(plaintext) as unknown;
        } catch {
            return undefined;
        }
    }

    #open(sealed: string, maxLength: number): string | undefined {
        if (sealed.length > maxLength) return undefined;
        const bytes = Buffer.from(sealed, 'base64url');
        // Base64url decoding skips stray characters and padding: accept only the canonical text.
        if (bytes.toString('base64url') !== sealed) return undefined;
        if (bytes.length < IV_BYTES + TAG_BYTES + 1) return undefined;
        try {
            const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
            decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
            const plaintext = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
            return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(plaintext);
        } catch {
            return undefined;
        }
    }
}
