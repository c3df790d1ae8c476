import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { exceeds, exceedsDepth } from '../../src/lib/json-bounds.js';

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
