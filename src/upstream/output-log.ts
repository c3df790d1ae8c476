/**
 * Logs what an upstream's child writes outside the protocol (stderr lines,
 * stdout lines that are not JSON-RPC) without letting a chatty or broken child
 * flood the gateway's log, or leak payloads into it at the default level.
 */
import type { Logger } from '../diagnostics/logger.js';
import type { StdioHooks } from './transports.js';

const LINES_PER_WINDOW = 50;
const WINDOW_MS = 10_000;
const GARBAGE_SAMPLE_CHARS = 200;

/** At most `max` lines per window of `windowMs`; the others are counted. Pure: the caller passes the time. */
export class LineBudget {
    #windowStart = Number.NEGATIVE_INFINITY;
    #used = 0;
    #dropped = 0;

    constructor(
        readonly max: number,
        readonly windowMs: number
    ) {}

    /** Whether a line arriving at `now` may be logged. */
    admit(now: number): boolean {
        if (now - this.#windowStart >= this.windowMs) {
            this.#windowStart = now;
            this.#used = 0;
        }
        if (this.#used < this.max) {
            this.#used++;
            return true;
        }
        this.#dropped++;
        return false;
    }

    get windowEnd(): number {
        return this.#windowStart + this.windowMs;
    }

    /** How many lines were dropped since the last call. */
    takeDropped(): number {
        const dropped = this.#dropped;
        this.#dropped = 0;
        return dropped;
    }
}

export interface ThrottledLinesOptions {
    max: number;
    windowMs: number;
    write: (line: string) => void;
    reportDropped: (dropped: number) => void;
    now?: () => number;
}

/**
 * A line writer on a LineBudget. How many lines were dropped is reported when their window ends (on a timer that
 * does not keep the process alive), or before the next line written, whichever comes first.
 */
export function throttledLines({ max, windowMs, write, reportDropped, now = Date.now }: ThrottledLinesOptions): (line: string) => void {
    const budget = new LineBudget(max, windowMs);
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
        clearTimeout(timer);
        timer = undefined;
        const dropped = budget.takeDropped();
        if (dropped > 0) reportDropped(dropped);
    };
    return line => {
        const at = now();
        if (budget.admit(at)) {
            flush();
            write(line);
        } else {
            timer ??= setTimeout(flush, Math.max(0, budget.windowEnd - at)).unref();
        }
    };
}

/**
 * Hooks for one upstream's stdio children (shared by its successive children, so a child restarted in a loop has
 * no fresh budget). `onGarbage` counts the fault; it gets only the size, since a garbled line may be a malformed
 * response carrying prompt arguments or results. A sample of the line goes to the debug level.
 */
export function childOutputLog(log: Logger, onGarbage: (bytes: number) => void): Pick<StdioHooks, 'onStderrLine' | 'onNoise'> {
    const stderr = throttledLines({
        max: LINES_PER_WINDOW,
        windowMs: WINDOW_MS,
        write: line => log.info({ stream: 'stderr' }, line),
        reportDropped: dropped => log.info({ stream: 'stderr', dropped }, `${dropped} stderr lines not logged`)
    });
    const garbage = throttledLines({
        max: LINES_PER_WINDOW,
        windowMs: WINDOW_MS,
        write: line => log.debug({ stream: 'stdout', line }, 'line that is not JSON-RPC (start)'),
        reportDropped: dropped => log.debug({ stream: 'stdout', dropped }, `${dropped} lines that are not JSON-RPC not logged`)
    });
    return {
        onStderrLine: stderr,
        onNoise: line => {
            onGarbage(line.length);
            garbage(line.slice(0, GARBAGE_SAMPLE_CHARS));
        }
    };
}
