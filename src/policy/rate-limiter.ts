/**
 * One token bucket per quota key (a client's id, or an anonymous caller's address: see quota.ts), with that
 * client's limit; created on first use and forgotten once full again (so idle callers cost nothing).
 */
import type { ClientProfile } from './clients.js';
import { TokenBucket, type RateDecision } from './token-bucket.js';

const SWEEP_EVERY = 1024;

/** Takes `count` tokens of a quota key, all or none: at once in one process, or asking shared state (cluster/). */
export interface RateLimiter {
    take(client: ClientProfile, key?: string, count?: number): RateDecision | Promise<RateDecision>;
}

export class ClientRateLimiter implements RateLimiter {
    readonly #buckets = new Map<string, TokenBucket>();
    #calls = 0;

    constructor(private readonly now: () => number = Date.now) {}

    /** `count` tokens from the bucket of `key`, all or none. */
    take(client: ClientProfile, key: string = client.id, count = 1): RateDecision {
        if (client.rateLimit.requestsPerSecond === 0) return { allowed: true };
        const now = this.now();
        if (++this.#calls % SWEEP_EVERY === 0) this.#sweep(now);
        let bucket = this.#buckets.get(key);
        if (bucket === undefined) this.#buckets.set(key, (bucket = new TokenBucket(client.rateLimit, now)));
        else bucket.setLimit(client.rateLimit);
        return bucket.take(now, count);
    }

    #sweep(now: number): void {
        for (const [id, bucket] of this.#buckets) if (bucket.isFull(now)) this.#buckets.delete(id);
    }
}
