/**
 * Line framing for a child's output pipes. Bytes are held until their newline and
 * the line is decoded whole, so a character split between chunks stays intact; no
 * more than `maxBytes` of one line is ever held, so a child that never writes a
 * newline cannot grow a buffer without end. Beyond that, the rest of the line is
 * skipped up to its newline, and the line is handled as the pipe needs it:
 * - 'cut' (stderr, logs): the first maxBytes are emitted with `...` appended;
 * - 'report' (stdout, JSON-RPC): a message cut short cannot be parsed, but its first
 *   and last `edgeBytes` can say which request it answers: they are kept (nothing
 *   more) and reported with the line's size once its newline arrives.
 */

import { firstBytes, lastBytes } from './bytes.js';

/** A line longer than maxBytes, as far as it was kept. */
export interface OverlongLine {
    /** The whole line's size, without its newline. */
    bytes: number;
    head: string;
    tail: string;
}

interface CommonOptions {
    maxBytes: number;
    /** Each line without its `\n` or `\r\n`. */
    onLine: (line: string) => void;
}

export type LineReaderOptions = CommonOptions & ({ overlong: 'cut' } | { overlong: 'report'; edgeBytes: number; onOverlong: (line: OverlongLine) => void });

/** What is left of a line being skipped: its size so far and, when reported, its edges. */
interface Skipped {
    bytes: number;
    head: Buffer;
    tail: Buffer;
}

export class LineReader {
    readonly #options: LineReaderOptions;
    readonly #edgeBytes: number;
    #pending: Buffer[] = [];
    #pendingBytes = 0;
    /** The current line went over maxBytes: the rest of it is skipped until its newline. */
    #skipped: Skipped | undefined;
    #lines = 0;

    constructor(options: LineReaderOptions) {
        this.#options = options;
        this.#edgeBytes = options.overlong === 'report' ? Math.min(options.edgeBytes, options.maxBytes) : 0;
    }

    /** Lines ended so far: the work a stream caused. */
    get lines(): number {
        return this.#lines;
    }

    /** Reads `chunk` to its end, or to the end of its `maxLines`-th line: returns how many of its bytes were used. */
    push(chunk: Buffer, maxLines = Number.POSITIVE_INFINITY): number {
        let start = 0;
        const stopAt = this.#lines + maxLines;
        for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
            if (this.#lines >= stopAt) return start;
            this.#append(chunk.subarray(start, newline));
            start = newline + 1;
            this.#lines++;
            this.#endLine();
        }
        this.#append(chunk.subarray(start));
        return chunk.length;
    }

    /** The stream ended: a last line without a newline is emitted too. */
    end(): void {
        if (this.#pendingBytes > 0 || this.#skipped !== undefined) this.#endLine();
    }

    #append(bytes: Buffer): void {
        if (bytes.length === 0) return;
        const skipped = this.#skipped;
        if (skipped !== undefined) {
            skipped.bytes += bytes.length;
            skipped.tail = lastBytes([skipped.tail, bytes], this.#edgeBytes + 1);
            return;
        }
        const { maxBytes } = this.#options;
        if (this.#pendingBytes + bytes.length <= maxBytes) {
            this.#pending.push(bytes);
            this.#pendingBytes += bytes.length;
            return;
        }
        const held = [...this.#pending, bytes];
        const edge = this.#edgeBytes;
        // One byte more at the tail: a `\r` before the newline is not part of the line.
        this.#skipped = { bytes: this.#pendingBytes + bytes.length, head: firstBytes(held, edge), tail: lastBytes(held, edge + 1) };
        this.#pending = [];
        this.#pendingBytes = 0;
        if (this.#options.overlong === 'cut') {
            const line = firstBytes(held, maxBytes + 1);
            // Back off to the start of a UTF-8 character, so the cut does not leave half of one.
            let end = maxBytes;
            while (end > 0 && (line[end]! & 0xc0) === 0x80) end--;
            this.#options.onLine(`${line.toString('utf8', 0, end)}...`);
        }
    }

    #endLine(): void {
        const skipped = this.#skipped;
        if (skipped !== undefined) {
            this.#skipped = undefined;
            const options = this.#options;
            if (options.overlong !== 'report') return;
            const carriageReturn = skipped.tail.at(-1) === 0x0d ? 1 : 0;
            const end = skipped.tail.length - carriageReturn;
            const tail = skipped.tail.subarray(Math.max(0, end - this.#edgeBytes), end);
            options.onOverlong({ bytes: skipped.bytes - carriageReturn, head: skipped.head.toString('utf8'), tail: tail.toString('utf8') });
            return;
        }
        const line = this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending);
        this.#pending = [];
        this.#pendingBytes = 0;
        this.#options.onLine(line.toString('utf8').replace(/\r$/, ''));
    }
}
