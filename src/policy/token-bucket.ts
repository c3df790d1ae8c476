/**
 * Per-client request rate limiting: one token bucket per client. Pure (time is
 * passed in). Hand-written because the limiters on npm are fixed or sliding
 * windows (rate-limiter-flexible, express-rate-limit), not a token bucket with
 * a burst, and this is a dozen lines.
 */
export interface RateLimit {
    /** Refill rate; 0 means unlimited. */
    requestsPerSecond: number;
    burst: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

export class TokenBucket {
    #tokens: number;
    #updatedAt: number;

    constructor(
        private limit: RateLimit,
        now: number
    ) {
        this.#tokens = limit.burst;
        this.#updatedAt = now;
    }

    /** A reload's new limit; the tokens already earned stay, capped at the new burst. */
    setLimit(limit: RateLimit): void {
        this.limit = limit;
        this.#tokens = Math.min(this.#tokens, limit.burst);
    }

    /** `count` tokens (one per message of a batch), all or none. */
    take(now: number, count = 1): RateDecision {
        const { requestsPerSecond, burst } = this.limit;
        if (requestsPerSecond === 0) return { allowed: true };
        const elapsed = Math.max(0, now - this.#updatedAt);
        this.#tokens = Math.min(burst, this.#tokens + (elapsed * requestsPerSecond) / 1000);
        this.#updatedAt = now;
        if (this.#tokens >= count) {
            this.#tokens -= count;
            return { allowed: true };
        }
        return { allowed: false, retryAfterMs: Math.ceil(((count - this.#tokens) * 1000) / requestsPerSecond) };
    }

    /** Whether the bucket is full again, so forgetting it changes nothing. */
    isFull(now: number): boolean {
        const { requestsPerSecond, burst } = this.limit;
        return requestsPerSecond === 0 || this.#tokens + ((now - this.#updatedAt) * requestsPerSecond) / 1000 >= burst;
    }
}
