import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LineReader, LineTooLongError, type LineReaderOptions } from '../../src/upstream/lines.js';

function read(chunks: (string | Buffer)[], maxBytes: number, overlong: LineReaderOptions['overlong'], end = true): string[] {
    const lines: string[] = [];
    const reader = new LineReader({ maxBytes, overlong, onLine: line => lines.push(line) });
    for (const chunk of chunks) reader.push(Buffer.from(chunk));
    if (end) reader.end();
    return lines;
}

describe('LineReader', () => {
    for (const overlong of ['cut', 'error'] as const) {
        test(`${overlong}: splits on \\n and \\r\\n across chunk boundaries, keeping empty lines`, () => {
            assert.deepEqual(read(['ab', 'c\nde\r', '\n\nf\n'], 10, overlong), ['abc', 'de', '', 'f']);
        });

        test(`${overlong}: a last line without newline comes out on end(), and only then`, () => {
            assert.deepEqual(read(['a\nb'], 10, overlong, false), ['a']);
            assert.deepEqual(read(['a\nb'], 10, overlong), ['a', 'b']);
        });

        test(`${overlong}: multi-byte characters split between chunks stay whole`, () => {
            const bytes = Buffer.from('é\n');
            assert.deepEqual(read([bytes.subarray(0, 1), bytes.subarray(1)], 10, overlong), ['é']);
        });

        test(`${overlong}: a line of exactly maxBytes is whole`, () => {
            assert.deepEqual(read(['0123456789\n'], 10, overlong), ['0123456789']);
        });
    }

    test('cut: a longer line is cut once and the rest of it dropped, in one chunk or many', () => {
        assert.deepEqual(read(['0123456789abc', 'defghij', 'klm\nnext\n'], 10, 'cut'), ['0123456789...', 'next']);
        assert.deepEqual(read(['0123456789abc\nnext\n'], 10, 'cut'), ['0123456789...', 'next']);
        assert.deepEqual(read(['0123456789abc'], 10, 'cut'), ['0123456789...']);
    });

    test('cut: the cut does not split a multi-byte character', () => {
        // 'é' is two bytes: the 10-byte cut falls between them, so it backs off to 9 bytes.
        assert.deepEqual(read(['012345678é\n'], 10, 'cut'), ['012345678...']);
    });

    test('error: a longer line throws LineTooLongError, whether or not its newline has arrived', () => {
        assert.throws(() => read(['0123456789', 'a'], 10, 'error', false), LineTooLongError);
        assert.throws(() => read(['0123456789a\n'], 10, 'error'), (error: unknown) => error instanceof LineTooLongError && error.maxBytes === 10);
    });

    test('error: lines before the long one are delivered first', () => {
        const lines: string[] = [];
        const reader = new LineReader({ maxBytes: 4, overlong: 'error', onLine: line => lines.push(line) });
        assert.throws(() => reader.push(Buffer.from('ok\ntoo long\n')), LineTooLongError);
        assert.deepEqual(lines, ['ok']);
    });
});
