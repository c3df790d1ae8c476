/**
 * Line framing for a child's output pipes. Bytes are held until their newline and
 * the line is decoded whole, so a character split between chunks stays intact; no
 * more than `maxBytes` of one line is ever held, so a child that never writes a
 * newline cannot grow a buffer without end. Too long a line is handled as the pipe
 * needs it:
 * - 'error' (stdout, JSON-RPC): a message cut short is a broken one, and skipping to
 *   the next newline could resync on a fragment, so push() throws LineTooLongError;
 * - 'cut' (stderr, logs): the first maxBytes are kept with `...` appended, and the
 *   rest of that line is dropped.
 */

export class LineTooLongError extends Error {
    override readonly name = 'LineTooLongError';

    constructor(readonly maxBytes: number) {
        super(`line longer than ${maxBytes} bytes`);
    }
}

export interface LineReaderOptions {
    maxBytes: number;
    overlong: 'cut' | 'error';
    /** Each line without its `\n` or `\r\n`. */
    onLine: (line: string) => void;
}

export class LineReader {
    readonly #options: LineReaderOptions;
    #pending: Buffer[] = [];
    #pendingBytes = 0;
    /** Cut mode: the line was already emitted in part, its rest is skipped until the newline. */
    #dropping = false;

    constructor(options: LineReaderOptions) {
        this.#options = options;
    }

    /** In 'error' mode, throws LineTooLongError when the current line grows beyond maxBytes. */
    push(chunk: Buffer): void {
        let start = 0;
        for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
            this.#append(chunk.subarray(start, newline));
            start = newline + 1;
            this.#endLine();
        }
        this.#append(chunk.subarray(start));
    }

    /** The stream ended: a last line without a newline is emitted too. */
    end(): void {
        if (this.#pendingBytes > 0) this.#endLine();
        this.#dropping = false;
    }

    #append(bytes: Buffer): void {
        if (bytes.length === 0 || this.#dropping) return;
        const { maxBytes, overlong } = this.#options;
        if (this.#pendingBytes + bytes.length <= maxBytes) {
            this.#pending.push(bytes);
            this.#pendingBytes += bytes.length;
            return;
        }
        const line = Buffer.concat([...this.#pending, bytes]);
        this.#pending = [];
        this.#pendingBytes = 0;
        if (overlong === 'error') throw new LineTooLongError(maxBytes);
        this.#dropping = true;
        // Back off to the start of a UTF-8 character, so the cut does not leave half of one.
        let end = maxBytes;
        while (end > 0 && (line[end]! & 0xc0) === 0x80) end--;
        this.#options.onLine(`${line.toString('utf8', 0, end)}...`);
    }

    #endLine(): void {
        if (this.#dropping) {
            this.#dropping = false;
            return;
        }
        const line = this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending);
        this.#pending = [];
        this.#pendingBytes = 0;
        this.#options.onLine(line.toString('utf8').replace(/\r$/, ''));
    }
}
