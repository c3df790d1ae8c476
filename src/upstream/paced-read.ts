/** Reading an upstream's stream (an SSE body, a child's stdout) in slices and no faster than its connection's pace. */
import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import { LINES_PER_SLICE, type StreamPace } from './flood.js';

/** What readPaced feeds: a line parser that stops after `maxLines` lines and says how many bytes it used. */
export interface PacedParser {
    /** Lines read so far: the stream's work. */
    readonly lines: number;
    push(chunk: Buffer, maxLines: number): number;
    end(): void;
}

/**
 * Reads `source` to its end through `parser`, LINES_PER_SLICE lines at a time with a yield to the event loop between,
 * and no faster than `pace` allows: past it, the source is not read (the upstream is held back by its socket or pipe)
 * until the window ends. Throws if the source is cut off or `signal` aborts; `parser.end()` only after a whole source.
 */
export async function readPaced(source: AsyncIterable<unknown>, parser: PacedParser, pace: StreamPace, signal: AbortSignal): Promise<void> {
    let sinceYield = 0;
    for await (const chunk of source) {
        for (let rest = chunk as Buffer; rest.length > 0;) {
            const before = parser.lines;
            rest = rest.subarray(parser.push(rest, LINES_PER_SLICE - sinceYield));
            const lines = parser.lines - before;
            sinceYield += lines;
            const now = Date.now();
            const spent = pace.budget.spend(now, lines);
            if (spent !== 'ok') {
                if (spent === 'flood') pace.onFlood();
                await sleep(pace.budget.resumeAt - now, undefined, { signal });
                sinceYield = 0;
            } else if (sinceYield >= LINES_PER_SLICE) {
                await setImmediate(undefined, { signal });
                sinceYield = 0;
            }
        }
    }
    parser.end();
}
