/**
 * Bounds the work sent to one upstream: at most `maxConcurrency` requests in
 * flight (p-limit) and at most `maxQueue` waiting. A request beyond that is
 * refused at once instead of joining an ever longer queue, so a slow upstream
 * costs bounded memory and callers learn quickly that it is saturated.
 */
import pLimit, { type LimitFunction } from 'p-limit';

export class BulkheadFullError extends Error {
    override readonly name = 'BulkheadFullError';
}

export interface BulkheadLimits {
    maxConcurrency: number;
    maxQueue: number;
}

export class Bulkhead {
    readonly #limit: LimitFunction;

    constructor(private readonly limits: BulkheadLimits) {
        this.#limit = pLimit(limits.maxConcurrency);
    }

    get active(): number {
        return this.#limit.activeCount;
    }

    get queued(): number {
        return this.#limit.pendingCount;
    }

    /** Runs `task` when a slot is free. A request cancelled while it waits never starts. */
    run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
        if (this.#limit.activeCount + this.#limit.pendingCount >= this.limits.maxConcurrency + this.limits.maxQueue) {
            return Promise.reject(new BulkheadFullError(`${this.#limit.activeCount} requests in flight and ${this.#limit.pendingCount} queued`));
        }
        return this.#limit(() => {
            signal?.throwIfAborted();
            return task();
        });
    }
}
