/**
 * Session ids that carry their session. A 2025-era session is a small record
 * (whose it is, what initialize settled, when it ends); sealed into the
 * `Mcp-Session-Id` with AES-256-GCM, it can be served by any replica that
 * holds the key ring, with nothing to look up. What a seal cannot say, that
 * the session was ended before it expired, is the revocation set's
 * (revocations.ts).
 *
 * Key ring: the secrets of `sessions.secrets`, newest first (or `cursorSecret`
 * under a label of its own): a new session is sealed with the newest key, an
 * id sealed with any key of the ring is opened until it expires, so a secret
 * can be rotated without ending sessions.
 *
 * Wire form: `<keyId>.<sealed>`, visible ASCII as the transport asks, where
 * keyId names the key (lib/sealed.ts) and sealed is base64url(iv || ciphertext
 * || tag) of the UTF-8 JSON [SESSION_FORMAT, nonce, clientId, quotaKey,
 * protocolVersion, completions (0|1), input, createdAt, expiresAt], where
 * input is what the client can be asked (protocol/input-requests.ts
 * capabilityBits). Ids of FORMAT 1, sealed before input was (the same array
 * without it), still open, as a client that declared nothing.
 */
import { randomBytes } from 'node:crypto';
import { Sealer } from '../lib/sealed.js';

const SESSION_FORMAT = 2;
/** Before the client's input capabilities were sealed: opens as `input: 0`. */
const SESSION_FORMAT_1 = 1;
const SESSION_KEY_PURPOSE = 'mcp-prompt-gateway session v1';
/** Far above any id the gateway seals (client ids and quota keys are bounded), far below a header's limits. */
const MAX_SESSION_ID_LENGTH = 1024;

/** What a session id carries. */
export interface SealedSession {
    /** Names the session in the revocation set: random, 16 bytes. */
    readonly nonce: string;
    /** Only requests proving this client may use the session. */
    readonly clientId: string;
    /** Whose session quota it counts against: the client, or for the anonymous client the address that opened it. */
    readonly quotaKey: string;
    readonly protocolVersion: string;
    /** Whether the gateway declared `completions` at initialize: completion/complete is served only then. */
    readonly completions: boolean;
    /**
     * What the client declared it can be asked (elicitation, sampling, roots), as capabilityBits: the gateway asks it
     * nothing else. Absent (a record not sealed from an initialize): nothing.
     */
    readonly input?: number | undefined;
    readonly createdAt: number;
    /** Epoch ms after which the id opens nowhere. */
    readonly expiresAt: number;
}

export class SessionSeal {
    readonly #newest: Sealer;
    readonly #byKeyId: Map<string, Sealer>;

    /** `secrets` newest first; none: keys derived from `fallbackSecret` (empty: a random key for this process). */
    constructor(secrets: readonly string[], fallbackSecret: string) {
        const ring = (secrets.length > 0 ? secrets : [fallbackSecret]).map(secret => new Sealer(secret, SESSION_KEY_PURPOSE));
        this.#newest = ring[0]!;
        this.#byKeyId = new Map(ring.map(sealer => [sealer.keyId, sealer]));
    }

    /** A new session's id, and what it carries. */
    seal(session: Omit<SealedSession, 'nonce'>): { id: string; sealed: SealedSession } {
        const sealed = { nonce: randomBytes(16).toString('base64url'), ...session, input: session.input ?? 0 };
        const { nonce, clientId, quotaKey, protocolVersion, completions, input = 0, createdAt, expiresAt } = sealed;
        const plaintext = JSON.stringify([SESSION_FORMAT, nonce, clientId, quotaKey, protocolVersion, completions ? 1 : 0, input, createdAt, expiresAt]);
        return { id: `${this.#newest.keyId}.${this.#newest.seal(Buffer.from(plaintext, 'utf8'))}`, sealed };
    }

    /** What the id carries; undefined for an id not sealed by this ring, malformed, or expired at `now`. */
    open(id: string, now: number): SealedSession | undefined {
        if (id.length > MAX_SESSION_ID_LENGTH) return undefined;
        const dot = id.indexOf('.');
        const sealer = dot === -1 ? undefined : this.#byKeyId.get(id.slice(0, dot));
        if (sealer === undefined) return undefined;
        const session = sessionOf(sealer.openJson(id.slice(dot + 1), MAX_SESSION_ID_LENGTH));
        return session !== undefined && session.expiresAt > now ? session : undefined;
    }
}

function sessionOf(value: unknown): SealedSession | undefined {
    if (!Array.isArray(value)) return undefined;
    const array = value as unknown[];
    // FORMAT 1 is FORMAT 2 without `input`: read as a client that declared nothing.
    const fields = array.length === 8 && array[0] === SESSION_FORMAT_1 ? [...array.slice(0, 6), 0, ...array.slice(6)] : array;
    if (fields.length !== 9 || fields[0] !== (fields === array ? SESSION_FORMAT : SESSION_FORMAT_1)) return undefined;
    const [, nonce, clientId, quotaKey, protocolVersion, completions, input, createdAt, expiresAt] = fields;
    if (typeof nonce !== 'string' || typeof clientId !== 'string' || typeof quotaKey !== 'string' || typeof protocolVersion !== 'string') return undefined;
    if ((completions !== 0 && completions !== 1) || !isBits(input) || !Number.isSafeInteger(createdAt) || !Number.isSafeInteger(expiresAt)) return undefined;
    return { nonce, clientId, quotaKey, protocolVersion, completions: completions === 1, input, createdAt: createdAt as number, expiresAt: expiresAt as number };
}

/** capabilityBits' range: a small non-negative integer (unknown bits are ignored where they are read). */
function isBits(value: unknown): value is number {
    return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) < 2 ** 16;
}
