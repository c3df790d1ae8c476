import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { collectPages, type PageOf } from '../../src/upstream/pages.js';

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

    test('an empty-string cursor ends the list', async () => {
        const requested: (string | undefined)[] = [];
        const result = await collectPages(cursor => {
            requested.push(cursor);
            return Promise.resolve({ items: [requested.length], nextCursor: '' });
        });
        assert.deepEqual(result, { items: [1] });
        assert.deepEqual(requested, [undefined]);
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
            { maxPages: 7, maxItems: 1000 }
        );
        assert.equal(result.truncated, 'too-many-pages');
        assert.equal(calls, 7);
        assert.equal(result.items.length, 7);
    });

    test('exactly maxPages pages that end properly are complete', async () => {
        const { fetchPage } = pagedUpstream([[1], [2], [3]]);
        const result = await collectPages(fetchPage, { maxPages: 3, maxItems: 1000 });
        assert.deepEqual(result, { items: [1, 2, 3] });
    });

    test('maxItems caps the items kept', async () => {
        const { fetchPage } = pagedUpstream([[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
        const result = await collectPages(fetchPage, { maxPages: 100, maxItems: 5 });
        assert.equal(result.truncated, 'too-many-items');
        assert.deepEqual(result.items, [1, 2, 3, 4, 5]);
    });

    test('a list of exactly maxItems items is complete', async () => {
        const { fetchPage } = pagedUpstream([[1, 2], [3, 4]]);
        const result = await collectPages(fetchPage, { maxPages: 100, maxItems: 4 });
        assert.deepEqual(result, { items: [1, 2, 3, 4] });
    });

    test('a fetch error propagates', async () => {
        await assert.rejects(
            collectPages(() => Promise.reject(new Error('upstream down'))),
            /upstream down/
        );
    });
});
