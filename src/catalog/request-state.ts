/**
 * The `requestState` of an upstream's `input_required` answer (2026-07-28
 * multi round-trip requests), sealed by the gateway before the client sees it
 * and opened when the client retries. Upstreams see every client as the one
 * gateway, so they cannot bind a state to its principal themselves, as the
 * revision asks: the seal binds it to the caller (its scope), the prompt (the
 * exposed name) and the upstream, with an expiry. A state presented by another
 * client, for another prompt, altered or too old is refused (-32602) and never
 * reaches an upstream. The upstream's own state inside stays opaque.
 */
import { Sealer } from '../lib/sealed.js';

const PURPOSE = 'mcp-prompt-gateway request-state v1';
const FORMAT = 1;
/** How long a client may take to answer what an upstream asked. */
const LIFETIME_MS = 10 * 60_000;
/** The largest upstream state taken (larger: the answer is an upstream fault), and so the largest sealed one. */
export const MAX_REQUEST_STATE_BYTES = 64 * 1024;
const MAX_SEALED_LENGTH = Math.ceil(((MAX_REQUEST_STATE_BYTES + 2048) * 4) / 3);

export interface StateBinding {
    scope: string;
    /** The exposed prompt name the state was given for. */
    name: string;
}

export class RequestStates {
    readonly #sealer: Sealer;

    constructor(secret: string) {
        this.#sealer = new Sealer(secret, PURPOSE);
    }

    seal(state: string, upstreamId: string, binding: StateBinding, now = Date.now()): string {
        return this.#sealer.seal(Buffer.from(JSON.stringify([FORMAT, binding.scope, binding.name, upstreamId, now + LIFETIME_MS, state]), 'utf8'));
    }

    /** The upstream's own state and which upstream gave it; undefined unless sealed here for this caller and prompt, in time. */
    open(sealed: string, binding: StateBinding, now = Date.now()): { upstreamId: string; state: string } | undefined {
        const fields = this.#sealer.openJson(sealed, MAX_SEALED_LENGTH);
        if (!Array.isArray(fields) || fields.length !== 6) return undefined;
        const [format, scope, name, upstreamId, expiresAt, state] = fields as unknown[];
        if (format !== FORMAT || scope !== binding.scope || name !== binding.name || typeof upstreamId !== 'string' || typeof state !== 'string') return undefined;
        if (typeof expiresAt !== 'number' || expiresAt < now) return undefined;
        return { upstreamId, state };
    }
}
