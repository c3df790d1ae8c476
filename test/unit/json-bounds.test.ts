import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { exceeds, exceedsDepth, jsonWithin } from '../../src/lib/json-bounds.js';

/** `[[[...]]]` or `{"a":{"a":...}}` nested `depth` levels, built without recursion. */
function nested(depth: number, kind: 'array' | 'object'): unknown {
    let value: unknown = kind === 'array' ? [] : {};
    for (let level = 1; level < depth; level++) value = kind === 'array' ? [value] : { a: value };
    return value;
}

describe('exceedsDepth', () => {
    test('counts nesting of objects and arrays; scalars are depth 0', () => {
        assert.equal(exceedsDepth('text', 0), false);
        assert.equal(exceedsDepth(null, 0), false);
        assert.equal(exceedsDepth({}, 1), false);
        assert.equal(exceedsDepth({}, 0), true);
        assert.equal(exceedsDepth({ a: [1, { b: 2 }] }, 3), false);
        assert.equal(exceedsDepth({ a: [1, { b: 2 }] }, 2), true);
        for (const kind of ['array', 'object'] as const) {
            assert.equal(exceedsDepth(nested(64, kind), 64), false, kind);
            assert.equal(exceedsDepth(nested(65, kind), 64), true, kind);
        }
    });

    test('finds the deep branch among shallow siblings, in any position', () => {
        const deep = nested(100, 'object');
        assert.equal(exceedsDepth({ first: 1, list: [0, 1, 2, deep], last: 'x' }, 64), true);
        assert.equal(exceedsDepth([deep, 1, 2], 64), true);
    });

    test('nesting far beyond what recursion survives is measured without overflowing the stack', () => {
        const deep = JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`) as unknown;
        assert.throws(() => JSON.stringify(deep), RangeError, 'the walk that this check protects would overflow');
        assert.equal(exceedsDepth(deep, 64), true);
    });
});

describe('exceeds', () => {
    test('measures UTF-8 bytes, not UTF-16 units', () => {
        assert.equal(exceeds('abc', 3), false);
        assert.equal(exceeds('abcd', 3), true);
        assert.equal(exceeds('é', 1), true, 'é is two bytes');
        assert.equal(exceeds('é', 2), false);
        assert.equal(exceeds('😀', 3), true, 'an emoji is four bytes');
        assert.equal(exceeds('😀', 4), false);
    });
});

describe('jsonWithin', () => {
    const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

    test('the exact bound on the JSON length, whatever the walk estimates: at the limit within, one byte less too large', () => {
        const values: unknown[] = [
            { messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }], description: 'd' },
            ['a', 1, -Number.MAX_VALUE, -Number.MIN_VALUE, 1 / 3, true, null, { '': [] }],
            { 'k\u0000"\\': '\u0001\ud800é😀"\\', n: 0.0000012345678901234567 },
            'a lone string',
            12345
        ];
        for (const value of values) {
            const size = bytes(value);
            assert.deepEqual(jsonWithin(value, 64, size), { within: true }, JSON.stringify(value));
            assert.deepEqual(jsonWithin(value, 64, size - 1), { within: false, reason: 'too_large', bytes: size }, JSON.stringify(value));
        }
    });

    test('what JSON.stringify writes differently from the data is measured as written: toJSON, holes, undefined', () => {
        const withToJson = { a: { toJSON: () => 'x'.repeat(100) } };
        assert.deepEqual(jsonWithin(withToJson, 64, 50), { within: false, reason: 'too_large', bytes: bytes(withToJson) });
        const date = { at: new Date(0) };
        assert.deepEqual(jsonWithin(date, 64, bytes(date) - 1), { within: false, reason: 'too_large', bytes: bytes(date) });
        // eslint-disable-next-line no-sparse-arrays -- a hole is what is measured
        const holes = [1, , 3];
        assert.deepEqual(jsonWithin(holes, 64, bytes(holes) - 1), { within: false, reason: 'too_large', bytes: bytes(holes) });
        assert.deepEqual(jsonWithin({ gone: undefined, kept: 1 }, 64, bytes({ kept: 1 })), { within: true });
        assert.throws(() => jsonWithin({ n: 1n }, 64, 1000), TypeError, 'a bigint cannot be written, as JSON.stringify says');
    });

    test('an array JSON.stringify writes through a toJSON (its own, or its class) is measured as written', () => {
        const own = Object.assign(['a'], { toJSON: () => 'x'.repeat(100) });
        assert.deepEqual(jsonWithin({ list: own }, 64, 50), { within: false, reason: 'too_large', bytes: bytes({ list: own }) });
        class Listed extends Array<string> {
            toJSON(): string {
                return 'y'.repeat(100);
            }
        }
        const subclassed = Listed.from(['a']);
        assert.deepEqual(jsonWithin(subclassed, 64, 50), { within: false, reason: 'too_large', bytes: bytes(subclassed) });
    });

    test('depth is checked as exceedsDepth checks it, before anything is serialised, also when the result is small', () => {
        assert.deepEqual(jsonWithin(nested(64, 'object'), 64, 1_000_000), { within: true });
        assert.deepEqual(jsonWithin(nested(65, 'array'), 64, 1_000_000), { within: false, reason: 'too_deep' });
        const deep = JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`) as unknown;
        assert.deepEqual(jsonWithin(deep, 64, 10), { within: false, reason: 'too_deep' });
    });

    test('large results are not serialised to be judged within when their bound settles it, and are when it does not', () => {
        const large = { text: 'x'.repeat(100_000) };
        assert.deepEqual(jsonWithin(large, 64, 700_000), { within: true });
        assert.deepEqual(jsonWithin(large, 64, 100_011), { within: true }, 'the bound (6 bytes a unit) passes the limit: measured exactly');
        assert.deepEqual(jsonWithin(large, 64, 100_010), { within: false, reason: 'too_large', bytes: 100_011 });
    });
});
