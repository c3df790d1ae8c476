import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { LineSplitter } from '../../src/upstream/lines.js';

async function split(chunks: (string | Buffer)[], max = 10): Promise<string[]> {
    const lines: string[] = [];
    for await (const line of Readable.from(chunks.map(chunk => Buffer.from(chunk))).pipe(new LineSplitter(max))) lines.push(line as string);
    return lines;
}

describe('LineSplitter', () => {
    test('splits on \\n and \\r\\n across chunk boundaries and keeps a last line without newline', async () => {
        assert.deepEqual(await split(['ab', 'c\nde\r', '\nf']), ['abc', 'de', 'f']);
    });

    test('a line longer than the limit is cut once and the rest of it dropped', async () => {
        assert.deepEqual(await split(['0123456789abc', 'defghij', 'klm\nnext\n']), ['0123456789...', 'next']);
    });

    test('multi-byte characters split between chunks stay whole', async () => {
        const bytes = Buffer.from('é\n');
        assert.deepEqual(await split([bytes.subarray(0, 1), bytes.subarray(1)]), ['é']);
    });
});
