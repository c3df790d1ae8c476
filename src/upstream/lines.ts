/**
 * Splits a byte stream into text lines, cutting any line longer than `maxLength`
 * characters, so a child that never writes a newline cannot grow a buffer without end.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

export class LineSplitter extends Transform {
    #partial = '';
    #dropping = false;
    readonly #decoder = new StringDecoder('utf8');

    constructor(private readonly maxLength: number) {
        super({ readableObjectMode: true });
    }

    override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
        const lines = (this.#partial + this.#decoder.write(chunk)).split(/\r?\n/);
        this.#partial = lines.pop() ?? '';
        for (const line of lines) {
            if (!this.#dropping) this.push(line);
            this.#dropping = false;
        }
        if (this.#partial.length > this.maxLength) {
            if (!this.#dropping) this.push(`${this.#partial.slice(0, this.maxLength)}...`);
            this.#dropping = true;
            this.#partial = '';
        }
        callback();
    }

    override _flush(callback: TransformCallback): void {
        const rest = this.#partial + this.#decoder.end();
        if (rest !== '' && !this.#dropping) this.push(rest);
        callback();
    }
}
