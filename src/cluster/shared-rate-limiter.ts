/**
 * Per-client rate limits counted across replicas: one token bucket per quota
 * key in Redis (refilled by Redis's own clock, so replicas' clocks do not
 * matter), from which each replica leases a few tokens at a time. A request
 * is taken from the local lease without asking Redis; a lease runs out after
 * about a twentieth of a second's worth of requests, and is asked for again in
 * one round trip. Tokens leased are taken from the shared bucket, so the
 * replicas together never pass more than the limit; a lease unused for a
 * second is dropped (a little under the limit, never over). Redis away, or
 * refusing writes (so no bucket can be taken from), or not answering in time:
 * each replica limits on its own (the limit per replica, not in all), as the
 * link reports (docs/replicas.md says why not less).
 */
import type { ClientProfile } from '../policy/clients.js';
import { ClientRateLimiter, type RateLimiter } from '../policy/rate-limiter.js';
import type { RateDecision } from '../policy/token-bucket.js';
import type { RedisLink } from './redis-link.js';

/** How long leased tokens may wait for a request: after that they are dropped. */
const LEASE_MS = 1000;
/** A lease is this much of a second's refill (and at least what the request needs). */
const LEASE_FRACTION = 1 / 20;
const SWEEP_EVERY = 1024;

/**
 * KEYS[1]: the bucket. ARGV: tokens per second, burst, tokens wanted, tokens needed (fewer: none granted).
 * Returns { granted, retry after ms }.
 */
const TAKE_SCRIPT = `
local rate, burst, want, need = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens = tonumber(state[1]) or burst
local updated = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - updated) * rate / 1000)
local granted = 0
if tokens >= need then granted = math.min(want, math.floor(tokens)) end
tokens = tokens - granted
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'u', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
if granted > 0 then return { granted, 0 } end
return { 0, math.ceil((need - tokens) * 1000 / rate) }
`;

interface Lease {
    tokens: number;
    expiresAt: number;
}

/** What one fetch of a lease came to: tokens added to the lease, a refusal, or no answer from Redis. */
type Fetched = 'leased' | 'unavailable' | { retryAfterMs: number };

/** Waiters that find the lease used up again by the others ask once more, then are refused like the others. */
const MAX_FETCHES_PER_TAKE = 3;

export class SharedRateLimiter implements RateLimiter {
    readonly #leases = new Map<string, Lease>();
    /** The fetch in flight per key: requests that find the lease used up together wait for one fetch. */
    readonly #fetching = new Map<string, Promise<Fetched>>();
    /** What limits while Redis is away. */
    readonly #local: ClientRateLimiter;
    #calls = 0;

    constructor(
        private readonly link: RedisLink,
        private readonly now: () => number = Date.now
    ) {
        this.#local = new ClientRateLimiter(now);
        link.commands.defineCommand('gatewayTakeTokens', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    }

    take(client: ClientProfile, key: string = client.id, count = 1): RateDecision | Promise<RateDecision> {
        if (client.rateLimit.requestsPerSecond === 0) return { allowed: true };
        if (!this.link.up) return this.#local.take(client, key, count);
        if (++this.#calls % SWEEP_EVERY === 0) this.#sweep(this.now());
        return this.#takeLeased(key, count) ? { allowed: true } : this.#leaseAndTake(client, key, count);
    }

    /**
     * Waits for a lease, fetched once for every request that found the lease used up (each fetching its own would
     * drain the shared bucket into leases that expire unused), then takes from it.
     */
    async #leaseAndTake(client: ClientProfile, key: string, count: number): Promise<RateDecision> {
        for (let fetch = 0; fetch < MAX_FETCHES_PER_TAKE; fetch++) {
            let pending = this.#fetching.get(key);
            if (pending === undefined) {
                pending = this.#fetch(client, key, count).finally(() => this.#fetching.delete(key));
                this.#fetching.set(key, pending);
            }
            const fetched = await pending;
            if (fetched === 'unavailable') return this.#local.take(client, key, count);
            if (this.#takeLeased(key, count)) return { allowed: true };
            if (fetched !== 'leased') return { allowed: false, retryAfterMs: Math.max(1, fetched.retryAfterMs) };
        }
        return { allowed: false, retryAfterMs: 1 };
    }

    /** Takes from the key's lease, if it holds enough. */
    #takeLeased(key: string, count: number): boolean {
        const lease = this.#leases.get(key);
        if (lease === undefined || lease.expiresAt <= this.now() || lease.tokens < count) return false;
        lease.tokens -= count;
        return true;
    }

    async #fetch(client: ClientProfile, key: string, count: number): Promise<Fetched> {
        const { requestsPerSecond, burst } = client.rateLimit;
        const want = Math.min(burst, Math.max(count, Math.ceil(requestsPerSecond * LEASE_FRACTION)));
        let answer: [number, number];
        try {
            // defineCommand adds the method at run time; ioredis types such commands only through module augmentation.
            const command = this.link.commands as unknown as { gatewayTakeTokens(key: string, ...args: number[]): Promise<[number, number]> };
            answer = await command.gatewayTakeTokens(`${this.link.keyPrefix}rate:${key}`, requestsPerSecond, burst, want, count);
        } catch (error) {
            this.link.failed(error);
            return 'unavailable';
        }
        const [granted, retryAfterMs] = answer;
        if (granted < count) return { retryAfterMs };
        const now = this.now();
        const lease = this.#leases.get(key);
        const kept = lease !== undefined && lease.expiresAt > now ? lease.tokens : 0;
        this.#leases.set(key, { tokens: kept + granted, expiresAt: now + LEASE_MS });
        return 'leased';
    }

    #sweep(now: number): void {
        for (const [key, lease] of this.#leases) if (lease.expiresAt <= now) this.#leases.delete(key);
    }
}
