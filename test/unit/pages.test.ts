import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { collectPages as collectAdmitted, type CollectLimits, type PageOf } from '../../src/upstream/pages.js';

const LIMITS: CollectLimits = { maxPages: 1000, maxItems: 100_000, maxBytes: Number.MAX_SAFE_INTEGER };

/** Every item kept, one byte each. */
function collectPages<T>(fetchPage: (cursor: string | undefined) => Promise<PageOf<T>>, limits: Partial<CollectLimits> = {}) {
    return collectAdmitted(fetchPage, { ...LIMITS, ...limits }, item => ({ kept: item, bytes: 1 }));
}

/** A fake upstream serving fixed pages; `cursor-N` is the cursor of page N. Records the cursors it was asked for. */
function pagedUpstream(pages: readonly (readonly number[])[]) {
    const requested: (string | undefined)[] = [];
    const fetchPage = (cursor: string | undefined): Promise<PageOf<number>> => {
        requested.push(cursor);
        const index = cursor === undefined ? 0 : Number(cursor.replace('cursor-', ''));
        const items = pages[index];
        assert.ok(items !== undefined, `unknown cursor ${String(cursor)}`);
        return Promise.resolve(index + 1 < pages.length ? { items, nextCursor: `cursor-${index + 1}` } : { items });
    };
    return { fetchPage, requested };
}

describe('collectPages', () => {
    test('follows cursors to the end and keeps items in order', async () => {
        const { fetchPage, requested } = pagedUpstream([[1, 2], [3], [], [4, 5, 6]]);
        const result = await collectPages(fetchPage);
        assert.deepEqual(result, { items: [1, 2, 3, 4, 5, 6] });
        assert.deepEqual(requested, [undefined, 'cursor-1', 'cursor-2', 'cursor-3']);
    });

    test('a single page without a cursor is complete', async () => {
        const result = await collectPages(() => Promise.resolve({ items: ['a'] }));
        assert.deepEqual(result, { items: ['a'] });
    });

    test('an empty-string cursor is a cursor: it is followed, and only an absent one ends the list', async () => {
        const next: Record<string, string | undefined> = { start: '', '': 'last', last: undefined };
        const requested: (string | undefined)[] = [];
        const result = await collectPages(cursor => {
            requested.push(cursor);
            return Promise.resolve({ items: [cursor ?? 'start'], nextCursor: next[cursor ?? 'start'] });
        });
        assert.deepEqual(result, { items: ['start', '', 'last'] });
        assert.deepEqual(requested, [undefined, '', 'last']);
    });

    test('an empty-string cursor that comes back is a loop', async () => {
        let calls = 0;
        const result = await collectPages(() => {
            calls++;
            return Promise.resolve({ items: [calls], nextCursor: '' });
        });
        assert.deepEqual(result, { items: [1, 2], truncated: 'cursor-loop' });
    });

    test('an explicit undefined cursor ends the list', async () => {
        const result = await collectPages(() => Promise.resolve({ items: [1], nextCursor: undefined }));
        assert.deepEqual(result, { items: [1] });
    });

    test('a cursor that comes back stops with cursor-loop, after reading each page once', async () => {
        // a -> b -> c -> b: the loop is detected when "b" is offered a second time.
        const next: Record<string, string> = { start: 'a', a: 'b', b: 'c', c: 'b' };
        const requested: (string | undefined)[] = [];
        const result = await collectPages(cursor => {
            requested.push(cursor);
            return Promise.resolve({ items: [cursor ?? 'start'], nextCursor: next[cursor ?? 'start'] });
        });
        assert.equal(result.truncated, 'cursor-loop');
        assert.deepEqual(result.items, ['start', 'a', 'b', 'c']);
        assert.deepEqual(requested, [undefined, 'a', 'b', 'c']);
    });

    test('an upstream that returns its own cursor again is a loop', async () => {
        let calls = 0;
        const result = await collectPages(() => {
            calls++;
            return Promise.resolve({ items: [calls], nextCursor: 'same' });
        });
        assert.equal(result.truncated, 'cursor-loop');
        assert.equal(calls, 2);
    });

    test('an endless, never-repeating cursor stops at maxPages', async () => {
        let calls = 0;
        const result = await collectPages(
            cursor => {
                calls++;
                return Promise.resolve({ items: [cursor ?? ''], nextCursor: `c${calls}` });
            },
            { maxPages: 7 }
        );
        assert.equal(result.truncated, 'too-many-pages');
        assert.equal(calls, 7);
        assert.equal(result.items.length, 7);
    });

    test('exactly maxPages pages that end properly are complete', async () => {
        const { fetchPage } = pagedUpstream([[1], [2], [3]]);
        const result = await collectPages(fetchPage, { maxPages: 3 });
        assert.deepEqual(result, { items: [1, 2, 3] });
    });

    test('maxItems caps the items kept', async () => {
        const { fetchPage } = pagedUpstream([
            [1, 2, 3],
            [4, 5, 6],
            [7, 8, 9]
        ]);
        const result = await collectPages(fetchPage, { maxItems: 5 });
        assert.equal(result.truncated, 'too-many-items');
        assert.deepEqual(result.items, [1, 2, 3, 4, 5]);
    });

    test('a list of exactly maxItems items is complete', async () => {
        const { fetchPage } = pagedUpstream([
            [1, 2],
            [3, 4]
        ]);
        const result = await collectPages(fetchPage, { maxItems: 4 });
        assert.deepEqual(result, { items: [1, 2, 3, 4] });
    });

    test('items are admitted as their page arrives: left out ones never count, kept ones count their bytes', async () => {
        const { fetchPage } = pagedUpstream([[1, 20, 3], [40, 5], [6]]);
        const admitted: number[] = [];
        const result = await collectAdmitted(fetchPage, { ...LIMITS, maxItems: 4 }, item => {
            admitted.push(item);
            return item >= 10 ? undefined : { kept: `#${item}`, bytes: item };
        });
        assert.deepEqual(result, { items: ['#1', '#3', '#5', '#6'] });
        assert.deepEqual(admitted, [1, 20, 3, 40, 5, 6], 'each item seen once, in order');
    });

    test('maxBytes caps the bytes kept: the item that would pass it ends the list', async () => {
        const { fetchPage } = pagedUpstream([
            [3, 3],
            [3, 1]
        ]);
        const result = await collectAdmitted(fetchPage, { ...LIMITS, maxBytes: 8 }, item => ({ kept: item, bytes: item }));
        assert.equal(result.truncated, 'too-many-bytes');
        assert.deepEqual(result.items, [3, 3]);
        const exact = await collectAdmitted(pagedUpstream([[3, 3], [2]]).fetchPage, { ...LIMITS, maxBytes: 8 }, item => ({ kept: item, bytes: item }));
        assert.deepEqual(exact, { items: [3, 3, 2] }, 'a list of exactly maxBytes is complete');
    });

    test('a fetch error propagates', async () => {
        await assert.rejects(
            collectPages(() => Promise.reject(new Error('upstream down'))),
            /upstream down/
        );
    });
});
