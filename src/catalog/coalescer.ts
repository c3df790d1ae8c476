/**
 * Turns a burst of events into one flush: a trailing debounce (`debounceMs` of
 * quiet ends the burst) bounded by `maxDelayMs` from the burst's first event, so
 * a steady stream of changes still produces a flush at least that often.
 * Equal events within a burst count once, so a flood costs no memory beyond
 * the distinct events. A push within a burst only notes the time and adds to a
 * set: an upstream sending tens of thousands of events a second costs no timer
 * and no allocation per event (the debounce timer, when it fires early, re-arms
 * itself for the rest of the quiet time). Pure apart from the injected timers.
 */
export interface Timers {
    now(): number;
    setTimeout(callback: () => void, ms: number): unknown;
    clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
    now: () => performance.now(),
    setTimeout: (callback, ms) => {
        const handle = setTimeout(callback, ms);
        handle.unref();
        return handle;
    },
    clearTimeout: handle => clearTimeout(handle as NodeJS.Timeout)
};

export interface CoalescerOptions<T> {
    debounceMs: number;
    maxDelayMs: number;
    /** Receives the burst's distinct events, in order of first occurrence. */
    flush: (events: T[]) => void;
    timers?: Timers;
}

export class Coalescer<T> {
    #pending = new Set<T>();
    #lastPushAt = 0;
    #debounce: unknown;
    #deadline: unknown;
    readonly #timers: Timers;

    constructor(private readonly options: CoalescerOptions<T>) {
        this.#timers = options.timers ?? realTimers;
    }

    push(event: T): void {
        this.#pending.add(event);
        this.#lastPushAt = this.#timers.now();
        if (this.#debounce === undefined) this.#armDebounce(this.options.debounceMs);
        if (this.#deadline === undefined) {
            this.#deadline = this.#timers.setTimeout(() => this.flushNow(), this.options.maxDelayMs);
        }
    }

    /** Whether events wait for their burst to end. */
    get pending(): boolean {
        return this.#pending.size > 0;
    }

    flushNow(): void {
        this.#cancelTimers();
        const events = [...this.#pending];
        this.#pending.clear();
        if (events.length > 0) this.options.flush(events);
    }

    /** Drops pending events and timers: nothing is flushed. */
    discard(): void {
        this.#cancelTimers();
        this.#pending.clear();
    }

    #armDebounce(ms: number): void {
        this.#debounce = this.#timers.setTimeout(() => {
            this.#debounce = undefined;
            const quietFor = this.#timers.now() - this.#lastPushAt;
            if (quietFor >= this.options.debounceMs) this.flushNow();
            else this.#armDebounce(this.options.debounceMs - quietFor);
        }, ms);
    }

    #cancelTimers(): void {
        if (this.#debounce !== undefined) this.#timers.clearTimeout(this.#debounce);
        if (this.#deadline !== undefined) this.#timers.clearTimeout(this.#deadline);
        this.#debounce = undefined;
        this.#deadline = undefined;
    }
}
