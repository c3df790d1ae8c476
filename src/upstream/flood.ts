/**
 * Counting an upstream's events in fixed windows, to tell (FloodDetector) and
 * to bound (WorkBudget) how fast they come. Pure: the caller passes the time,
 * so the window logic is tested without timers. A window starts at the first
 * event after the last one ended, not on a fixed grid.
 */
class Windows {
    #windowStart = Number.NEGATIVE_INFINITY;
    #count = 0;

    constructor(readonly windowMs: number) {}

    /** Counts `n` events at `now`; returns the count of the window before and after them. */
    add(now: number, n: number): [before: number, after: number] {
        if (now - this.#windowStart >= this.windowMs) {
            this.#windowStart = now;
            this.#count = 0;
        }
        const before = this.#count;
        this.#count += n;
        return [before, this.#count];
    }

    /** When the current window ends. */
    get end(): number {
        return this.#windowStart + this.windowMs;
    }
}

/** Tells when events come faster than a limit: says so once per window, on the first event over the limit. */
export class FloodDetector {
    readonly #windows: Windows;

    constructor(
        private readonly limit: number,
        windowMs: number
    ) {
        this.#windows = new Windows(windowMs);
    }

    /** Counts one event at `now`; true only for the first event over the limit in its window. */
    hit(now: number): boolean {
        return this.#windows.add(now, 1)[1] === this.limit + 1;
    }
}

/**
 * Bounds the work an upstream may cause per window: past `limit` units in a window, the caller waits until
 * `resumeAt` before doing more (an upstream stream is then not read, so the upstream is held back by its socket).
 */
export class WorkBudget {
    readonly #windows: Windows;

    constructor(
        readonly limit: number,
        windowMs: number
    ) {
        this.#windows = new Windows(windowMs);
    }

    /**
     * Counts `units` done at `now`. 'ok' within the limit; 'flood' the first time a window goes over it, 'over' for
     * every later time in that window (the caller waits until `resumeAt` either way, but tells of the flood once).
     */
    spend(now: number, units: number): 'ok' | 'flood' | 'over' {
        const [before, after] = this.#windows.add(now, units);
        if (after <= this.limit) return 'ok';
        return before <= this.limit ? 'flood' : 'over';
    }

    /** When work may go on after 'flood' or 'over': the end of the window. */
    get resumeAt(): number {
        return this.#windows.end;
    }
}

/**
 * The most lines (of any kind: SSE events, comments, `retry`, ...; stdout lines) read per window of one upstream
 * connection's streams together (its SSE streams, or its child's stdout). An SDK server writes 3 or 4 SSE lines per
 * message (1 on stdio): this is some 2,500 messages a second, far beyond what a prompts server sends, and a flood of
 * tiny lines past it costs the gateway a bounded share of a core.
 */
export const STREAM_LINES_PER_WINDOW = 10_000;
const STREAM_WINDOW_MS = 1000;
/** Lines parsed between two yields to the event loop, so a big chunk of tiny events or lines does not hold it. */
export const LINES_PER_SLICE = 512;

/** How fast one upstream's streams are read. */
export interface StreamPace {
    /** Shared by every stream of one connection, in lines. */
    budget: WorkBudget;
    /** The budget ran out in a window: the streams wait for the next (told once per window). */
    onFlood: () => void;
}

/** A pace for one connection's streams, at the limits above. */
export function streamPace(onFlood: () => void): StreamPace {
    return { budget: new WorkBudget(STREAM_LINES_PER_WINDOW, STREAM_WINDOW_MS), onFlood };
}

/** What the `stream_flood` fault says, for SSE streams and stdout alike. */
export const STREAM_FLOOD = {
    message: 'upstream floods its output; it is read no faster than the limit',
    details: { linesPerSecond: `>${Math.round((STREAM_LINES_PER_WINDOW * 1000) / STREAM_WINDOW_MS)}` }
} as const;
