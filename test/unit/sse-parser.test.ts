import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ByteCollector, OVERSIZED_EDGE_BYTES, type Collected } from '../../src/lib/byte-collector.js';
import { SseParser, type SseEvent } from '../../src/upstream/http/sse-parser.js';

interface Parsed {
    events: { type: string; data: string }[];
    retries: number[];
    oversized: string[];
    lastEventId: string | undefined;
}

const text = (data: Collected): string => (data.kind === 'whole' ? data.bytes.toString('utf8') : `<oversized ${data.size}>`);

/** Feeds `chunks` to a parser, as a stream does; `end` as the stream ends. */
function parse(chunks: (string | Buffer)[], maxDataBytes = 1 << 20): Parsed {
    const parsed: Parsed = { events: [], retries: [], oversized: [], lastEventId: undefined };
    const parser = new SseParser({
        maxDataBytes,
        onEvent: (event: SseEvent) => parsed.events.push({ type: event.type, data: text(event.data) }),
        onRetry: ms => parsed.retries.push(ms),
        onOversized: head => parsed.oversized.push(head)
    });
    for (const chunk of chunks) parser.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    parser.end();
    parsed.lastEventId = parser.lastEventId;
    return parsed;
}

describe('SseParser', () => {
    test('events, their types and multi-line data; comments and unknown fields ignored', () => {
        const { events } = parse([': comment\n', 'event: endpoint\ndata: /messages?s=1\n\n', 'data: a\ndata:b\ndata\nfoo: bar\n\n', 'data: {"x":1}\n\n']);
        assert.deepEqual(events, [
            { type: 'endpoint', data: '/messages?s=1' },
            { type: 'message', data: 'a\nb\n' },
            { type: 'message', data: '{"x":1}' }
        ]);
    });

    test('LF, CR and CRLF line ends, a leading BOM, and only one space removed after the colon', () => {
        const { events } = parse(['\uFEFFdata:  two spaces\r\rdata: cr\r\n\r\ndata: lf\n\n']);
        assert.deepEqual(
            events.map(event => event.data),
            [' two spaces', 'cr', 'lf']
        );
    });

    test('id (kept across events, NUL refused) and retry (digits only)', () => {
        const parsed = parse(['id: e-1\nretry: 500\ndata: \n\n', 'retry: soon\nid: bad\0id\ndata: x\n\n']);
        assert.deepEqual(parsed.events, [{ type: 'message', data: 'x' }], 'a priming event (empty data) is not dispatched');
        assert.deepEqual(parsed.retries, [500]);
        assert.equal(parsed.lastEventId, 'e-1');
    });

    test('an id counts once its event is whole: a stream cut after the id line resumes from the event before', () => {
        assert.equal(parse(['id: 4\ndata: a\n\n', 'id: 5\ndata: b\n']).lastEventId, '4');
        assert.equal(parse(['id: 4\ndata: a\n\n', 'id: 5\n']).lastEventId, '4');
        assert.equal(parse(['id: 4\ndata: a\n\n', 'id: 5\n\n']).lastEventId, '5', 'an event without data still moves the resume point');
    });

    test('an event not closed by a blank line is dropped at the end of the stream', () => {
        assert.deepEqual(
            parse(['data: complete\n\ndata: cut off\n']).events.map(event => event.data),
            ['complete']
        );
    });

    test('any chunking of a stream gives the same events, multi-byte characters and CRLF split included', () => {
        const stream = Buffer.from('event: a\r\ndata: héllo ☃\r\n\r\n: c\rid: 7\rdata: x\r\rdata:y\n\n');
        const whole = parse([stream]);
        assert.equal(whole.events.length, 3);
        fc.assert(
            fc.property(fc.array(fc.nat(stream.length), { maxLength: 12 }), cuts => {
                const points = [...new Set(cuts)].sort((a, b) => a - b);
                const chunks = [0, ...points].map((start, index) => stream.subarray(start, points[index] ?? stream.length));
                assert.deepEqual(parse(chunks), whole);
            })
        );
    });

    test('data past the limit is not held: the event keeps its first and last bytes, onOversized sees the head once', () => {
        const limit = 64 * 1024;
        const head = '{"jsonrpc":"2.0","id":42,"result":{"text":"';
        const body = 'x'.repeat(1024 * 1024);
        const tail = '"}}';
        const events: SseEvent[] = [];
        const heads: string[] = [];
        const parser = new SseParser({ maxDataBytes: limit, onEvent: event => events.push(event), onOversized: first => heads.push(first) });
        parser.push(Buffer.from(`data: ${head}`));
        for (let sent = 0; sent < body.length; sent += 4096) parser.push(Buffer.from(body.slice(sent, sent + 4096)));
        parser.push(Buffer.from(`${tail}\n\ndata: next\n\n`));
        assert.equal(heads.length, 1);
        assert.ok(heads[0]!.startsWith(head));
        const [big, next] = events;
        assert.ok(big?.data.kind === 'oversized');
        assert.equal(big.data.size, head.length + body.length + tail.length);
        assert.ok(big.data.head.startsWith(head) && big.data.head.length === OVERSIZED_EDGE_BYTES);
        assert.ok(big.data.tail.endsWith(`x${tail}`) && big.data.tail.length === OVERSIZED_EDGE_BYTES);
        assert.equal(next && text(next.data), 'next', 'the stream goes on');
    });

    test('an overlong field name or short value is ignored, not held', () => {
        const parsed = parse([`${'e'.repeat(100_000)}: x\nid: ${'i'.repeat(5000)}\nevent: ${'t'.repeat(5000)}\ndata: kept\n\n`]);
        assert.deepEqual(parsed.events, [{ type: 'message', data: 'kept' }]);
        assert.equal(parsed.lastEventId, undefined);
    });

    test('every line counts, whatever its kind: data, comments, retry, other fields and the blank lines ending events', () => {
        const parser = new SseParser({ maxDataBytes: 1024, onEvent: () => {} });
        parser.push(Buffer.from(':\n:c\r\nretry: 0\rdata: {}\n\nid: 1\nfoo\n\n'));
        assert.equal(parser.lines, 8);
        parser.push(Buffer.from('data: no line end yet'));
        assert.equal(parser.lines, 8, 'a line counts once it ends');
    });

    test('push stops after maxLines lines and says how far it got; the rest pushed later parses the same', () => {
        const stream = Buffer.from('\uFEFFdata: a\r\n\r\n: c\rretry: 7\rdata: b\ndata: c\n\nid: x\ndata: d\r\n\r\n');
        const whole = parse([stream]);
        fc.assert(
            fc.property(fc.integer({ min: 1, max: 5 }), maxLines => {
                const parsed: Parsed = { events: [], retries: [], oversized: [], lastEventId: undefined };
                const parser = new SseParser({
                    maxDataBytes: 1 << 20,
                    onEvent: event => parsed.events.push({ type: event.type, data: text(event.data) }),
                    onRetry: ms => parsed.retries.push(ms),
                    onOversized: head => parsed.oversized.push(head)
                });
                let rest = stream;
                while (rest.length > 0) {
                    const lines = parser.lines;
                    const used = parser.push(rest, maxLines);
                    assert.ok(parser.lines - lines <= maxLines, `${parser.lines - lines} lines parsed with maxLines ${maxLines}`);
                    rest = rest.subarray(used);
                }
                parser.end();
                parsed.lastEventId = parser.lastEventId;
                assert.deepEqual(parsed, whole);
            })
        );
    });
});

describe('ByteCollector', () => {
    test('up to the limit: the bytes, whole, copied from the chunks', () => {
        const collector = new ByteCollector(6);
        const chunk = Buffer.from('abc');
        collector.push(chunk);
        collector.push(Buffer.from('def'));
        chunk.fill(0);
        const taken = collector.take();
        assert.ok(taken.kind === 'whole');
        assert.equal(taken.bytes.toString(), 'abcdef');
    });

    test('past the limit: first and last edge bytes across chunks, and the size', () => {
        const collector = new ByteCollector(10);
        const data = Array.from({ length: 3000 }, (_, index) => String.fromCharCode(97 + (index % 26))).join('');
        for (let at = 0; at < data.length; at += 7) collector.push(Buffer.from(data.slice(at, at + 7)));
        const taken = collector.take();
        assert.ok(taken.kind === 'oversized');
        assert.equal(taken.size, data.length);
        assert.equal(taken.head, data.slice(0, OVERSIZED_EDGE_BYTES));
        assert.equal(taken.tail, data.slice(-OVERSIZED_EDGE_BYTES));
    });
});
