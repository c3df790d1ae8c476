/**
 * The `requestState` the gateway hands a 2026-07-28 client with an `input_required` answer, sealed before the client
 * sees it and opened when the client retries. Two kinds, one sealer:
 * - `u`: a 2026-07-28 upstream's own state (multi round-trip requests passed on), opaque inside;
 * - `h`: names a 2025 upstream's request held open on this gateway instance for the client to answer
 *   (catalog/held-interactions.ts HeldInteractions).
 * Upstreams see every client as the one gateway, so they cannot bind a state to its principal themselves, as the
 * revision asks: the seal binds it to the caller (its scope, and for the anonymous client its address: `holder`),
 * the prompt (the exposed name), a digest of the arguments (the MRTR page: "a digest of its salient parameters") and
 * the round, with an expiry. A state presented by another client, for another prompt or other arguments, altered or
 * too old is refused (-32602) and never reaches an upstream. FORMAT 1 states (before input requests crossed eras)
 * no longer open: a client mid-interaction during an upgrade gets the prompt again.
 */
import { createHash } from 'node:crypto';
import { Sealer } from '../lib/sealed.js';

const PURPOSE = 'mcp-prompt-gateway request-state v1';
const FORMAT = 2;
/** How long a client may take to answer what a 2026-07-28 upstream asked. */
const LIFETIME_MS = 10 * 60_000;
/** The largest upstream state taken (larger: the answer is an upstream fault), and so the largest sealed one. */
export const MAX_REQUEST_STATE_BYTES = 64 * 1024;
const MAX_SEALED_LENGTH = Math.ceil(((MAX_REQUEST_STATE_BYTES + 2048) * 4) / 3);
/** Bytes of the arguments' SHA-256 kept: a collision needs 2^64 tries, each a sealed state the gateway made. */
const DIGEST_BYTES = 16;

/** What a state is bound to besides its kind's own fields. */
export interface StateBinding {
    readonly scope: string;
    /** The anonymous client's address over HTTP; '' for everyone else (their scope names them). */
    readonly holder: string;
    /** The exposed prompt name the state was given for. */
    readonly name: string;
    /** The arguments as sent upstream (after defaults); digested, never stored. */
    readonly args: Readonly<Record<string, string>> | undefined;
}

/** An opened state: the upstream's own (its state absent when it gave none), or a held interaction's name. */
export type OpenedState =
    | { readonly kind: 'u'; readonly upstreamId: string; readonly state: string | undefined; readonly round: number }
    | { readonly kind: 'h'; readonly heldId: string; readonly round: number };

/** Why a state did not open: `elsewhere` only for a held interaction another gateway instance holds. */
export type StateRefusal = 'invalid' | 'expired' | 'elsewhere';

export class RequestStates {
    readonly #sealer: Sealer;

    constructor(secret: string) {
        this.#sealer = new Sealer(secret, PURPOSE);
    }

    /** A 2026-07-28 upstream's state (or none: the gateway still counts the round), for the client's retry. */
    sealUpstream(state: string | undefined, upstreamId: string, round: number, binding: StateBinding, now = Date.now()): string {
        return this.#seal(['u', ...bound(binding), round, upstreamId, now + LIFETIME_MS, state ?? null]);
    }

    /** A held interaction on gateway instance `instance`, its question open until `expiresAt`. */
    sealHeld(instance: string, heldId: string, round: number, binding: StateBinding, expiresAt: number): string {
        return this.#seal(['h', ...bound(binding), round, instance, heldId, expiresAt]);
    }

    /**
     * The state, when sealed here for this binding and in time; `instance` is this gateway's, so that a held
     * interaction of another is told apart (`elsewhere`) from a forged one.
     */
    open(sealed: string, binding: StateBinding, instance: string, now = Date.now()): OpenedState | StateRefusal {
        const fields = this.#sealer.openJson(sealed, MAX_SEALED_LENGTH);
        if (!Array.isArray(fields) || fields[0] !== FORMAT) return 'invalid';
        const [, kind, scope, holder, name, digest, round, ...rest] = fields as unknown[];
        if (scope !== binding.scope || holder !== binding.holder || name !== binding.name || digest !== argsDigest(binding.args)) return 'invalid';
        if (!Number.isSafeInteger(round) || (round as number) < 1) return 'invalid';
        if (kind === 'u' && rest.length === 3) return openedUpstream(round as number, rest, now);
        if (kind === 'h' && rest.length === 3) return openedHeld(round as number, rest, instance, now);
        return 'invalid';
    }

    #seal(fields: unknown[]): string {
        return this.#sealer.seal(Buffer.from(JSON.stringify([FORMAT, ...fields]), 'utf8'));
    }
}

function bound(binding: StateBinding): [string, string, string, string] {
    return [binding.scope, binding.holder, binding.name, argsDigest(binding.args)];
}

function openedUpstream(round: number, [upstreamId, expiresAt, state]: unknown[], now: number): OpenedState | StateRefusal {
    if (typeof upstreamId !== 'string' || typeof expiresAt !== 'number' || (state !== null && typeof state !== 'string')) return 'invalid';
    if (expiresAt < now) return 'expired';
    return { kind: 'u', upstreamId, state: state ?? undefined, round };
}

function openedHeld(round: number, [holderInstance, heldId, expiresAt]: unknown[], instance: string, now: number): OpenedState | StateRefusal {
    if (typeof holderInstance !== 'string' || typeof heldId !== 'string' || typeof expiresAt !== 'number') return 'invalid';
    if (expiresAt < now) return 'expired';
    if (holderInstance !== instance) return 'elsewhere';
    return { kind: 'h', heldId, round };
}

/** The arguments as canonical JSON (keys sorted; none is `{}`), SHA-256, cut: the same arguments in any order match. */
function argsDigest(args: Readonly<Record<string, string>> | undefined): string {
    const sorted =
        args === undefined
            ? []
            : Object.keys(args)
                  .sort()
                  .map(key => [key, args[key]]);
    return createHash('sha256').update(JSON.stringify(sorted)).digest().subarray(0, DIGEST_BYTES).toString('base64url');
}
