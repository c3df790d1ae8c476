/**
 * Server-sent events (the WHATWG event-stream format) parsed from Buffers as
 * they arrive. Lines end with LF, CR or CRLF, also when split between chunks;
 * `data` is held through a ByteCollector, so an event whose data passes the
 * limit costs no more memory than the limit, however long its lines; the
 * other fields are short or ignored. Bytes are decoded per whole event, so a
 * character split between chunks stays intact.
 */
import { ByteCollector, type Collected } from '../../lib/byte-collector.js';

export interface SseEvent {
    /** The `event` field; "message" when absent. */
    type: string;
    data: Collected;
}

export interface SseParserOptions {
    /** Most bytes of one event's data (its lines joined by "\n") held whole. */
    maxDataBytes: number;
    /** Each event with data (events without data only update lastEventId, as in a browser). */
    onEvent: (event: SseEvent) => void;
    /** A `retry` field: the reconnection delay the server asks for. */
    onRetry?: (ms: number) => void;
    /** The first time the current event's data passes the limit, with its first bytes (it is read on, bounded). */
    onOversized?: (head: string) => void;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const NEWLINE = Buffer.from('\n');
/** Longer than any field name this parser knows ("retry"): a longer name is an unknown field, its line ignored. */
const MAX_FIELD_NAME = 8;
/** `event`, `id` and `retry` values longer than this are ignored: no server needs them, and they are held whole. */
const MAX_SHORT_VALUE = 1024;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Where the parser is within the current line. */
type Mode = 'name' | 'value-start' | 'value' | 'ignore';

export class SseParser {
    /** The `id` of the last whole event that set one (the `Last-Event-ID` to resume from); undefined before any. */
    lastEventId: string | undefined;
    /** The id set by the event being read, taken as `lastEventId` when the event is complete (as in a browser). */
    #idBuffer: string | undefined;

    readonly #options: SseParserOptions;
    #mode: Mode = 'name';
    #name: number[] = [];
    #field = '';
    #short: Buffer[] = [];
    #shortBytes = 0;
    #type = '';
    #data: ByteCollector;
    #dataLines = 0;
    #afterCR = false;
    #started = false;
    #lines = 0;

    constructor(options: SseParserOptions) {
        this.#options = options;
        this.#data = new ByteCollector(options.maxDataBytes);
    }

    /** Lines read so far, of every kind (data, comments, other fields, the blank lines ending events): a stream's work. */
    get lines(): number {
        return this.#lines;
    }

    /**
     * Parses `chunk` up to its end, or up to the end of its `maxLines`-th line: returns how many of its bytes were
     * used, so the caller can push the rest later (after yielding to the event loop, or once a budget allows).
     */
    push(chunk: Buffer, maxLines = Number.POSITIVE_INFINITY): number {
        let start = 0;
        if (!this.#started) {
            this.#started = true;
            if (chunk.subarray(0, 3).equals(BOM)) start = 3;
        }
        if (this.#afterCR) {
            this.#afterCR = false;
            if (chunk[start] === LF) start++;
        }
        const stopAt = this.#lines + maxLines;
        // Both line-end scans are native and remembered, so a chunk of many short lines is scanned once, not per line.
        let nextLF = chunk.indexOf(LF, start);
        let nextCR = chunk.indexOf(CR, start);
        while (start < chunk.length) {
            if (this.#lines >= stopAt) return start;
            if (nextLF !== -1 && nextLF < start) nextLF = chunk.indexOf(LF, start);
            if (nextCR !== -1 && nextCR < start) nextCR = chunk.indexOf(CR, start);
            const end = nextLF === -1 ? nextCR : nextCR === -1 ? nextLF : Math.min(nextLF, nextCR);
            if (end === -1) {
                this.#consume(chunk.subarray(start));
                return chunk.length;
            }
            this.#consume(chunk.subarray(start, end));
            this.#lines++;
            this.#endLine();
            start = end + 1;
            if (chunk[end] === CR) {
                if (start === chunk.length) this.#afterCR = true;
                else if (chunk[start] === LF) start++;
            }
        }
        return chunk.length;
    }

    /** The stream ended: an event not closed by a blank line is dropped, as the format says. */
    end(): void {
        this.#resetLine();
        this.#resetEvent();
    }

    /** Bytes of the current line, after what came of it before. */
    #consume(bytes: Buffer): void {
        let at = 0;
        while (at < bytes.length) {
            switch (this.#mode) {
                case 'name': {
                    const room = MAX_FIELD_NAME + 1 - this.#name.length;
                    const window = bytes.subarray(at, at + room);
                    const colon = window.indexOf(COLON);
                    const taken = colon === -1 ? window : window.subarray(0, colon);
                    for (const byte of taken) this.#name.push(byte);
                    if (colon === -1) {
                        if (this.#name.length > MAX_FIELD_NAME) this.#mode = 'ignore';
                        at += window.length;
                        break;
                    }
                    at += colon + 1;
                    this.#beginValue(Buffer.from(this.#name).toString('latin1'));
                    break;
                }
                case 'value-start':
                    if (bytes[at] === SPACE) at++;
                    this.#mode = 'value';
                    break;
                case 'value':
                    this.#value(bytes.subarray(at));
                    return;
                case 'ignore':
                    return;
            }
        }
    }

    #beginValue(field: string): void {
        this.#field = field;
        if (field === 'data') {
            if (this.#dataLines++ > 0) this.#pushData(NEWLINE);
        } else if (field !== 'event' && field !== 'id' && field !== 'retry') {
            // A comment (empty name) or a field this format does not define.
            this.#mode = 'ignore';
            return;
        }
        this.#mode = 'value-start';
    }

    #value(bytes: Buffer): void {
        if (this.#field === 'data') return this.#pushData(bytes);
        this.#shortBytes += bytes.length;
        if (this.#shortBytes > MAX_SHORT_VALUE) {
            this.#mode = 'ignore';
            return;
        }
        this.#short.push(Buffer.from(bytes));
    }

    #pushData(bytes: Buffer): void {
        const wasOversized = this.#data.oversized;
        this.#data.push(bytes);
        if (!wasOversized && this.#data.oversized) this.#options.onOversized?.(this.#data.head ?? '');
    }

    #endLine(): void {
        if (this.#mode === 'name') {
            if (this.#name.length === 0) return this.#dispatch();
            // A line without a colon is a field with an empty value.
            this.#beginValue(Buffer.from(this.#name).toString('latin1'));
        }
        if (this.#mode === 'value-start' || this.#mode === 'value') this.#applyShort();
        this.#resetLine();
    }

    #applyShort(): void {
        const value = Buffer.concat(this.#short).toString('utf8');
        switch (this.#field) {
            case 'event':
                this.#type = value;
                break;
            case 'id':
                if (!value.includes('\0')) this.#idBuffer = value;
                break;
            case 'retry':
                if (/^\d{1,9}$/.test(value)) this.#options.onRetry?.(Number(value));
                break;
        }
    }

    #dispatch(): void {
        // Only a whole event moves the resume point: a stream cut after its id line must ask for it again.
        this.lastEventId = this.#idBuffer;
        const lines = this.#dataLines;
        const type = this.#type === '' ? 'message' : this.#type;
        const data = this.#data.take();
        this.#resetEvent();
        if (lines === 0 || (data.kind === 'whole' && data.bytes.length === 0)) return;
        this.#options.onEvent({ type, data });
    }

    #resetLine(): void {
        this.#mode = 'name';
        this.#name = [];
        this.#field = '';
        this.#short = [];
        this.#shortBytes = 0;
    }

    #resetEvent(): void {
        this.#type = '';
        this.#dataLines = 0;
        this.#data = new ByteCollector(this.#options.maxDataBytes);
    }
}
