/**
 * Tells when events come faster than a limit: counts them in fixed windows and
 * says so once per window, on the first event over the limit. Pure (the caller
 * passes the time), so the window logic is tested without timers.
 */
export class FloodDetector {
    #windowStart = Number.NEGATIVE_INFINITY;
    #count = 0;

    constructor(
        private readonly limit: number,
        private readonly windowMs: number
    ) {}

    /** Counts one event at `now`; true only for the first event over the limit in its window. */
    hit(now: number): boolean {
        if (now - this.#windowStart >= this.windowMs) {
            this.#windowStart = now;
            this.#count = 0;
        }
        return ++this.#count === this.limit + 1;
    }
}
