/**
 * Writes the other replicas must see, kept until Redis has them: sessions
 * ended, sessions that stopped counting against their quota, last uses. A
 * write is tried soon after it is made (while the link is up); one that fails,
 * whatever the reason, is kept and tried again until Redis stores it or it is
 * of no use any more (the session it is about has expired). When the failure
 * took the link down (connection lost, timeout, Redis full or read-only), the
 * link checks Redis with its own backoff and the writes go at once when it
 * comes up: one loop asks a Redis that refuses, not two. A command Redis
 * rejects for itself (WRONGTYPE) leaves the link up: that write is tried again
 * with capped exponential backoff and jitter. Pending writes go in one
 * transaction per attempt, so a retry costs one round trip, however many wait.
 *
 * Kept: one entry per key (a later write of the same key replaces the one
 * waiting), each a nonce, a number or two and a closure (a few hundred bytes),
 * at most MAX_PENDING of them: past that the oldest is dropped, and the log
 * says so once.
 */
import type { ChainableCommander } from 'ioredis';
import type { Logger } from '../diagnostics/logger.js';
import { backoffDelay } from '../lib/backoff.js';
import { REDIS_RETRY_BACKOFF, type RedisLink } from './redis-link.js';

export interface SharedWrite {
    /** Adds the write's commands to a transaction: they are stored all together or not at all. */
    addTo(transaction: ChainableCommander): void;
    /** After this (epoch ms) the write is of no use: it is dropped unwritten. */
    usefulUntil: number;
}

/** Far beyond what one replica ends or uses between two retries; a bound on memory all the same (tens of MB). */
const MAX_PENDING = 100_000;
/** Writes per transaction: a bound on one command's size after a long outage. */
const MAX_PER_ATTEMPT = 512;

export class SharedWrites {
    /** Key -> write, oldest first. */
    readonly #pending = new Map<string, SharedWrite>();
    #inFlight: Promise<void> | undefined;
    #next: Promise<void> | undefined;
    #soon: NodeJS.Immediate | undefined;
    #retryTimer: NodeJS.Timeout | undefined;
    #failures = 0;
    #dropped = 0;
    #closed = false;

    constructor(
        private readonly link: RedisLink,
        private readonly logger: Logger,
        private readonly now: () => number = Date.now
    ) {
        link.onUp(() => this.#retryNow());
    }

    /** Writes waiting for Redis (a metric: a number that grows says the other replicas are not told). */
    get pending(): number {
        return this.#pending.size;
    }

    /** Keeps the write (replacing one of the same key) and tries it soon, or with the next retry or the link's coming up. */
    put(key: string, write: SharedWrite): void {
        this.#pending.delete(key);
        if (this.#pending.size >= MAX_PENDING) this.#dropOldest();
        this.#pending.set(key, write);
        // While the link is down, its up event sends what waits.
        if (this.#retryTimer === undefined && this.link.up && !this.#closed) {
            this.#soon ??= setImmediate(() => {
                this.#soon = undefined;
                void this.flush();
            });
        }
    }

    /** Drops the write of that key, if it waits. */
    forget(key: string): void {
        this.#pending.delete(key);
    }

    /** Tries what is pending now; resolves once that attempt is over (stored, or kept for a retry). Never rejects. */
    flush(): Promise<void> {
        if (this.#inFlight === undefined) {
            // This attempt takes every write put so far: the one put() scheduled for them would find nothing left.
            this.#cancelSoon();
            // One attempt carries every request's writes, and its retries are timed from it.
            this.#inFlight = this.#attempt().finally(() => (this.#inFlight = undefined));
            return this.#inFlight;
        }
        // The attempt in flight took its writes already: one more after it, for every write put since.
        this.#next ??= this.#inFlight.then(() => {
            this.#next = undefined;
            return this.flush();
        });
        return this.#next;
    }

    close(): void {
        this.#closed = true;
        clearTimeout(this.#retryTimer);
        this.#cancelSoon();
    }

    #cancelSoon(): void {
        if (this.#soon !== undefined) clearImmediate(this.#soon);
        this.#soon = undefined;
    }

    async #attempt(): Promise<void> {
        clearTimeout(this.#retryTimer);
        this.#retryTimer = undefined;
        // An attempt queued behind one that took the link down: the link's up event sends what waits.
        if (!this.link.up) return;
        const batch = this.#batch();
        if (batch.length === 0) return;
        const transaction = this.link.commands.multi();
        // Replies are numbered from the first command added (MULTI itself has none).
        const base = transaction.length;
        const spans = batch.map(([key, write]) => {
            const from = transaction.length - base;
            write.addTo(transaction);
            return { key, write, from, to: transaction.length - base };
        });
        let replies: [Error | null, unknown][] | null;
        try {
            replies = await transaction.exec();
        } catch (error) {
            this.link.failed(error);
            return this.#retryLater();
        }
        let refused = false;
        for (const { key, write, from, to } of spans) {
            const error = replies === null ? new Error('transaction discarded') : replies.slice(from, to).find(([failure]) => failure !== null)?.[0];
            if (error) {
                refused = true;
                this.link.failed(error);
            } else if (this.#pending.get(key) === write) {
                this.#pending.delete(key);
            }
        }
        if (refused) return this.#retryLater();
        this.#failures = 0;
        if (this.#pending.size === 0) this.#dropped = 0;
        else if (this.link.up) void this.flush();
    }

    /** The oldest writes still of use, up to a transaction's worth; those of no use any more are dropped on the way. */
    #batch(): [string, SharedWrite][] {
        const now = this.now();
        const batch: [string, SharedWrite][] = [];
        for (const [key, write] of this.#pending) {
            if (write.usefulUntil <= now) this.#pending.delete(key);
            else if (batch.push([key, write]) === MAX_PER_ATTEMPT) break;
        }
        return batch;
    }

    /** Again once the link is up, if the failure took it down; else (a rejected command) after a backoff of its own. */
    #retryLater(): void {
        if (this.#closed) return;
        this.#cancelSoon();
        if (!this.link.up) return;
        const delay = backoffDelay(this.#failures++, REDIS_RETRY_BACKOFF);
        this.#retryTimer = setTimeout(() => void this.flush(), delay).unref();
    }

    /** The link is up again: what waits goes at once, and the backoff starts over. */
    #retryNow(): void {
        this.#failures = 0;
        if (this.#pending.size > 0 && !this.#closed) void this.flush();
    }

    #dropOldest(): void {
        const oldest = this.#pending.keys().next();
        if (!oldest.done) this.#pending.delete(oldest.value);
        if (this.#dropped++ === 0) {
            this.logger.warn(`shared state: ${MAX_PENDING} writes wait for Redis; the oldest are dropped, and the other replicas will not learn of them`);
        }
    }
}
