/**
 * Bounds the work sent to one upstream: at most `maxConcurrency` requests in
 * flight and at most `maxQueue` waiting for a slot. A request beyond that is
 * refused at once instead of joining an ever longer queue, so a slow upstream
 * costs bounded memory and callers learn quickly that it is saturated.
 *
 * The queue is our own rather than p-limit's: a request that is cancelled, or
 * whose deadline passes, while it waits must leave the queue at once and free
 * its place, and p-limit can only clear its whole queue.
 *
 * A queued request is started by the one that finishes before it: it runs in
 * its own caller's async context (bound when it joined the queue), never in
 * that other request's: deferred work never runs in another request's context,
 * whatever a future async-context user (a tracer's context manager) keeps there.
 */
import { AsyncResource } from 'node:async_hooks';
import type { CancelSignal } from '../lib/cancel-signal.js';

export class BulkheadFullError extends Error {
    override readonly name = 'BulkheadFullError';
}

/** The deadline passed while the request was waiting for a slot. */
export class BulkheadTimeoutError extends Error {
    override readonly name = 'BulkheadTimeoutError';
}

export interface BulkheadLimits {
    maxConcurrency: number;
    maxQueue: number;
}

export interface RunOptions {
    /** Milliseconds since the epoch; a request still waiting then fails with BulkheadTimeoutError. */
    deadline: number;
    signal?: CancelSignal | undefined;
}

interface Waiter {
    start(): void;
}

export class Bulkhead {
    #active = 0;
    /** Insertion-ordered, with O(1) removal of a waiter that gives up. */
    readonly #queue = new Set<Waiter>();

    constructor(private readonly limits: BulkheadLimits) {}

    get active(): number {
        return this.#active;
    }

    get queued(): number {
        return this.#queue.size;
    }

    run<T>(task: () => Promise<T>, { deadline, signal }: RunOptions): Promise<T> {
        if (signal?.aborted) return Promise.reject(signal.reason as Error);
        if (this.#active < this.limits.maxConcurrency) return this.#start(task);
        if (this.#queue.size >= this.limits.maxQueue) {
            return Promise.reject(new BulkheadFullError(`${this.#active} requests in flight and ${this.#queue.size} queued`));
        }
        return new Promise<T>((resolve, reject) => {
            const leave = (error: Error) => {
                this.#queue.delete(waiter);
                clearTimeout(timer);
                signal?.removeEventListener('abort', onAbort);
                reject(error);
            };
            const onAbort = () => leave(signal!.reason as Error);
            const timer = setTimeout(() => leave(new BulkheadTimeoutError('no free slot before the deadline')), Math.max(0, deadline - Date.now()));
            // Its caller's context, to start in (a resource of its own costs about a microsecond; AsyncResource.bind, ~90).
            const context = new AsyncResource('BulkheadWaiter');
            const waiter: Waiter = {
                start: () =>
                    context.runInAsyncScope(() => {
                        clearTimeout(timer);
                        signal?.removeEventListener('abort', onAbort);
                        this.#start(task).then(resolve, reject);
                    })
            };
            signal?.addEventListener('abort', onAbort, { once: true });
            this.#queue.add(waiter);
        });
    }

    /** Holds a slot until the task settles (a plain then: no async layer of its own on every request). */
    #start<T>(task: () => Promise<T>): Promise<T> {
        this.#active++;
        let running: Promise<T>;
        try {
            running = task();
        } catch (error) {
            running = Promise.reject(error instanceof Error ? error : new Error(String(error)));
        }
        return running.then(
            result => {
                this.#release();
                return result;
            },
            (error: unknown) => {
                this.#release();
                throw error;
            }
        );
    }

    #release(): void {
        this.#active--;
        const next = this.#queue.values().next();
        if (!next.done) {
            this.#queue.delete(next.value);
            next.value.start();
        }
    }
}
