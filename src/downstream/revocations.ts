/**
 * Sessions ended before their seal expired (DELETE, idle expiry): a session id
 * carries its session (session-seal.ts), so ending one means remembering that
 * it ended until the id would stop opening anyway. Asked on every request of
 * a session, so asking is synchronous and local; shared state (cluster/) keeps
 * a local copy in step with the other replicas.
 */
export interface SessionRevocations {
    /** Whether the session (by nonce) was ended. */
    has(nonce: string): boolean;
    /** Ends the session until `expiresAt`; resolves true when this call ended it (false: it was ended already). */
    add(nonce: string, expiresAt: number): Promise<boolean>;
}

/** Far beyond the sessions one process ends within a session lifetime; a bound all the same. */
const MAX_REVOKED = 200_000;
const SWEEP_EVERY = 1024;

/** The revocations of one process: what holds without shared state (see docs/replicas.md). */
export class LocalRevocations implements SessionRevocations {
    /** Nonce -> expiry, in the order they were ended. */
    readonly #ended = new Map<string, number>();
    #added = 0;

    constructor(private readonly now: () => number = Date.now) {}

    get size(): number {
        return this.#ended.size;
    }

    has(nonce: string): boolean {
        return this.#ended.has(nonce);
    }

    add(nonce: string, expiresAt: number): Promise<boolean> {
        return Promise.resolve(this.remember(nonce, expiresAt));
    }

    /** Synchronous add, for a shared store's copy: true when it was not there. */
    remember(nonce: string, expiresAt: number): boolean {
        if (this.#ended.has(nonce) || expiresAt <= this.now()) return false;
        if (++this.#added % SWEEP_EVERY === 0 || this.#ended.size >= MAX_REVOKED) this.#forgetExpired();
        // Still full: the oldest entry goes (the one ended first, the likeliest to have expired or been abandoned).
        if (this.#ended.size >= MAX_REVOKED) this.#ended.delete(this.#ended.keys().next().value!);
        this.#ended.set(nonce, expiresAt);
        return true;
    }

    #forgetExpired(): void {
        const now = this.now();
        for (const [nonce, expiresAt] of this.#ended) if (expiresAt <= now) this.#ended.delete(nonce);
    }
}
