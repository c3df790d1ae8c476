import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LineReader, type OverlongLine } from '../../src/lib/lines.js';

type Mode = 'cut' | 'report';

/** Lines and overlong lines in the order they came out. */
function read(chunks: (string | Buffer)[], maxBytes: number, overlong: Mode, end = true, edgeBytes = 4): (string | OverlongLine)[] {
    const out: (string | OverlongLine)[] = [];
    const onLine = (line: string) => out.push(line);
    const reader = new LineReader(overlong === 'cut' ? { maxBytes, overlong, onLine } : { maxBytes, overlong, edgeBytes, onLine, onOverlong: line => out.push(line) });
    for (const chunk of chunks) reader.push(Buffer.from(chunk));
    if (end) reader.end();
    return out;
}

describe('LineReader', () => {
    for (const overlong of ['cut', 'report'] as const) {
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
        assert.deepEqual(read(['01234', '56789', 'a\n'], 10, 'cut'), ['0123456789...']);
    });

    test('cut: the cut does not split a multi-byte character', () => {
        // 'é' is two bytes: the 10-byte cut falls between them, so it backs off to 9 bytes.
        assert.deepEqual(read(['012345678é\n'], 10, 'cut'), ['012345678...']);
    });

    test('report: a longer line is skipped to its newline and reported once with its size, first and last bytes', () => {
        const expected = { bytes: 26, head: 'abcd', tail: 'wxyz' };
        assert.deepEqual(read(['abcdefghijklmnopqrstuvwxyz\nnext\n'], 10, 'report'), [expected, 'next']);
        // In pieces: the line goes over the limit in the middle of a chunk, its tail spans chunks, \r\n ends it.
        assert.deepEqual(read(['ok\nabcdef', 'ghijklmnopqrstuvw', 'x', 'yz\r', '\nnext\n'], 10, 'report'), ['ok', expected, 'next']);
        assert.deepEqual(read(['abc', 'def', 'ghi', 'jkl', 'mno', 'pqr', 'stu', 'vwx', 'yz\n'], 10, 'report'), [expected]);
    });

    test('report: a longer last line without newline is reported on end()', () => {
        assert.deepEqual(read(['abcdefghijklmnopqrstuvwxyz'], 10, 'report', false), []);
        assert.deepEqual(read(['abcdefghijklmnopqrstuvwxyz'], 10, 'report'), [{ bytes: 26, head: 'abcd', tail: 'wxyz' }]);
    });

    test('report: one byte over the limit is over; the edges never exceed the limit', () => {
        assert.deepEqual(read(['0123456789a\n'], 10, 'report', true, 1024), [{ bytes: 11, head: '0123456789', tail: '123456789a' }]);
    });

    test('report: a line of megabytes arrives in 64 KiB chunks and keeps only its edges', () => {
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const chunks = [Buffer.from('{"id":7,'), ...Array.from({ length: 80 }, () => chunk), Buffer.from('"end":1}\n')];
        const [line] = read(chunks, 1024 * 1024, 'report', true, 16) as OverlongLine[];
        assert.deepEqual(line, { bytes: 8 + 80 * chunk.length + 8, head: `{"id":7,${'x'.repeat(8)}`, tail: `${'x'.repeat(8)}"end":1}` });
    });
    test('push stops after maxLines lines and says how far it got; the rest pushed later reads the same; every line counts', () => {
        const stream = Buffer.from('{}\n\nab\r\n' + 'x'.repeat(30) + '\nlast\n');
        const whole = read([stream], 10, 'report');
        for (let maxLines = 1; maxLines <= 5; maxLines++) {
            const out: (string | OverlongLine)[] = [];
            const reader = new LineReader({ maxBytes: 10, overlong: 'report', edgeBytes: 4, onLine: line => out.push(line), onOverlong: line => out.push(line) });
            for (let rest = stream; rest.length > 0;) {
                const lines = reader.lines;
                rest = rest.subarray(reader.push(rest, maxLines));
                assert.ok(reader.lines - lines <= maxLines, `${reader.lines - lines} lines read with maxLines ${maxLines}`);
            }
            reader.end();
            assert.deepEqual(out, whole, `maxLines ${maxLines}`);
            assert.equal(reader.lines, 5);
        }
    });
});
