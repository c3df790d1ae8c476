/**
 * Turns a burst of events into one flush: a trailing debounce (`debounceMs` of
 * quiet ends the burst) bounded by `maxDelayMs` from the burst's first event, so
 * a steady stream of changes still produces a flush at least that often.
 * Equal events within a burst count once, so a flood costs no memory beyond
 * the distinct events. Pure apart from the injected timer functions.
 */
export interface Timers {
    setTimeout(callback: () => void, ms: number): unknown;
    clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
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
    #debounce: unknown;
    #deadline: unknown;
    readonly #timers: Timers;

    constructor(private readonly options: CoalescerOptions<T>) {
        this.#timers = options.timers ?? realTimers;
    }

    push(event: T): void {
        this.#pending.add(event);
        if (this.#debounce !== undefined) this.#timers.clearTimeout(this.#debounce);
        this.#debounce = this.#timers.setTimeout(() => this.flushNow(), this.options.debounceMs);
        if (this.#deadline === undefined) {
            this.#deadline = this.#timers.setTimeout(() => this.flushNow(), this.options.maxDelayMs);
        }
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

    #cancelTimers(): void {
        if (this.#debounce !== undefined) this.#timers.clearTimeout(this.#debounce);
        if (this.#deadline !== undefined) this.#timers.clearTimeout(this.#deadline);
        this.#debounce = undefined;
        this.#deadline = undefined;
    }
}
