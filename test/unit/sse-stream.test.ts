/**
 * Reading an upstream's SSE body: in slices with the event loop served between them, no faster than the connection's
 * budget of lines, and reconnecting no faster than a floor whatever `retry` says.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { LINES_PER_SLICE, STREAM_LINES_PER_WINDOW, streamPace, WorkBudget } from '../../src/upstream/flood.js';
import { SseParser } from '../../src/upstream/http/sse-parser.js';
import { MIN_RECONNECT_MS, reconnectDelay } from '../../src/upstream/http/sse-stream.js';
import { readPaced } from '../../src/upstream/paced-read.js';

const newParser = (onEvent = () => {}) => new SseParser({ maxDataBytes: 1024, onEvent });

test('a big chunk of tiny lines is parsed in slices: work queued meanwhile runs before the chunk is done', async () => {
    const total = Math.min(8 * LINES_PER_SLICE, STREAM_LINES_PER_WINDOW);
    const parser = newParser();
    let seenByOtherWork: number | undefined;
    // Queued before the read starts: it runs at the first yield to the event loop.
    setImmediate(() => (seenByOtherWork = parser.lines));
    await readPaced(
        Readable.from([Buffer.from(':\n'.repeat(total))]),
        parser,
        streamPace(() => {}),
        new AbortController().signal
    );
    assert.equal(parser.lines, total);
    assert.ok(seenByOtherWork !== undefined && seenByOtherWork <= LINES_PER_SLICE, `other work ran after ${seenByOtherWork} of ${total} lines`);
});

for (const [kind, line] of [
    ['empty events', 'data: {}\n\n'],
    ['comments', ':\n'],
    ['retry lines', 'retry: 0\n']
]) {
    test(`a flood of ${kind}: reading stops once the budget is spent, the flood is told once, nothing more is read in the window`, async () => {
        const limit = 1000;
        const parser = newParser();
        const reading = new AbortController();
        let linesAtFlood: number | undefined;
        let floods = 0;
        const pace = {
            // A window far longer than the test: the stream cannot go on in it.
            budget: new WorkBudget(limit, 3_600_000),
            onFlood: () => {
                floods++;
                linesAtFlood = parser.lines;
                // Let the read wait for the window a moment, then stop it.
                setImmediate(() => reading.abort());
            }
        };
        const chunks = Array.from({ length: 20 }, () => Buffer.from(line!.repeat(2000)));
        await assert.rejects(readPaced(Readable.from(chunks), parser, pace, reading.signal), { name: 'AbortError' });
        assert.equal(floods, 1);
        assert.ok(linesAtFlood !== undefined && linesAtFlood > limit && linesAtFlood <= limit + LINES_PER_SLICE, `flood told after ${linesAtFlood} lines`);
        assert.equal(parser.lines, linesAtFlood, 'not a line more was read');
    });
}

test('a budget that runs out in short windows slows the stream down, and every line is still read', async () => {
    const parser = newParser();
    let floods = 0;
    const pace = { budget: new WorkBudget(500, 5), onFlood: () => floods++ };
    await readPaced(Readable.from(Array.from({ length: 4 }, () => Buffer.from(':\n'.repeat(1000)))), parser, pace, new AbortController().signal);
    assert.equal(parser.lines, 4000);
    assert.ok(floods >= 1);
});

test('retry: 0 does not make reconnects hot: the delay has a floor, whatever the server asks', () => {
    assert.equal(reconnectDelay(0, 0), MIN_RECONNECT_MS);
    assert.equal(reconnectDelay(1, 5), MIN_RECONNECT_MS);
    assert.ok(MIN_RECONNECT_MS >= 1000, 'at most one reopened stream a second');
    assert.equal(reconnectDelay(2000, 0), 2000, 'a longer retry is honoured');
});
