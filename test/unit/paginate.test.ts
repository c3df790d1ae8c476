import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { anchorOf, paginate, type Page, type Position, type Segment, type VersionHistory } from '../../src/catalog/paginate.js';

/** Entries are the (upstream, name) keys themselves, so a page says exactly what it returned. */
type Key = string;
const keyOf = (upstreamId: string, name: string): Key => `${upstreamId}\u0000${name}`;

const digest = (names: readonly string[]): string => createHash('sha256').update(JSON.stringify(names)).digest('hex');

const NO_HISTORY: VersionHistory = () => undefined;

/** A segment whose entries are all visible unless listed in `hidden`. */
function segment(upstreamIndex: number, names: readonly string[], hidden: readonly string[] = [], upstreamId = `u${upstreamIndex}`): Segment<Key> {
    return {
        upstreamId,
        upstreamIndex,
        version: digest(names),
        names,
        entries: names.map(name => (hidden.includes(name) ? undefined : keyOf(upstreamId, name)))
    };
}

const names = (...list: string[]): string[] => list;
const returned = (page: Page<Key>): string[] => page.items.map(key => key.split('\u0000')[1]!);

// ---------------------------------------------------------------------------------------------
// Property-based walk over a changing upstream set.

interface UpstreamState {
    id: string;
    index: number;
    names: string[];
    hidden: Set<string>;
    present: boolean;
    nextName: number;
}

type Op =
    | { kind: 'add'; upstream: number; at: number; hidden: boolean }
    | { kind: 'remove'; upstream: number; pick: number }
    | { kind: 'toggle'; upstream: number; pick: number }
    | { kind: 'drop'; upstream: number }
    | { kind: 'restore'; upstream: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('add' as const), upstream: fc.nat(), at: fc.nat(), hidden: fc.integer({ min: 0, max: 4 }).map(n => n === 0) }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('remove' as const), upstream: fc.nat(), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('toggle' as const), upstream: fc.nat(), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), upstream: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('restore' as const), upstream: fc.nat() }) }
);

const scenarioArb = fc.record({
    upstreams: fc.array(
        fc.record({
            size: fc.integer({ min: 0, max: 30 }),
            hidden: fc.array(fc.nat({ max: 29 }), { maxLength: 8 })
        }),
        { minLength: 1, maxLength: 5 }
    ),
    pageSize: fc.integer({ min: 1, max: 10 }),
    // Change batches applied between consecutive pages; often none at all.
    changes: fc.oneof(fc.constant([] as Op[][]), fc.array(fc.array(opArb, { maxLength: 6 }), { maxLength: 25 }))
});

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer S> ? S : never;

function apply(state: UpstreamState[], op: Op): void {
    const upstream = state[op.upstream % state.length]!;
    switch (op.kind) {
        case 'add': {
            // Fresh names only: a name never comes back after it was removed.
            const name = `p${upstream.nextName++}`;
            upstream.names.splice(op.at % (upstream.names.length + 1), 0, name);
            if (op.hidden) upstream.hidden.add(name);
            break;
        }
        case 'remove':
            if (upstream.names.length > 0) upstream.names.splice(op.pick % upstream.names.length, 1);
            break;
        case 'toggle': {
            if (upstream.names.length === 0) break;
            const name = upstream.names[op.pick % upstream.names.length]!;
            if (!upstream.hidden.delete(name)) upstream.hidden.add(name);
            break;
        }
        case 'drop':
            upstream.present = false;
            break;
        case 'restore':
            upstream.present = true;
            break;
    }
}

type Paginator = typeof paginate<Key>;

function walk(scenario: Scenario, pager: Paginator = paginate): void {
    const state: UpstreamState[] = scenario.upstreams.map((spec, index) => ({
        id: `u${index}`,
        index,
        names: Array.from({ length: spec.size }, (_, i) => `p${i}`),
        hidden: new Set(spec.hidden.filter(i => i < spec.size).map(i => `p${i}`)),
        present: true,
        nextName: spec.size
    }));
    const historyMap = new Map<string, readonly string[]>();
    const history: VersionHistory = (upstreamId, version) => historyMap.get(`${upstreamId}\u0000${version}`);

    const buildView = (): Segment<Key>[] =>
        state
            .filter(upstream => upstream.present)
            .map(upstream => {
                const seg = segment(upstream.index, [...upstream.names], [...upstream.hidden], upstream.id);
                historyMap.set(`${seg.upstreamId}\u0000${seg.version}`, seg.names);
                return seg;
            });

    const adds = scenario.changes.flat().filter(op => op.kind === 'add').length;
    const everExisting = scenario.upstreams.reduce((sum, spec) => sum + spec.size, 0) + adds;
    const maxPages = everExisting + 2;

    const views: Set<Key>[] = [];
    const pages: Page<Key>[] = [];
    const firstView = buildView();
    let view = firstView;
    let start: Position | undefined;
    for (;;) {
        assert.ok(pages.length < maxPages, `walk did not end within ${maxPages} pages`);
        const visible = new Set(view.flatMap(seg => seg.entries.filter((entry): entry is Key => entry !== undefined)));
        views.push(visible);
        const page = pager(view, start, scenario.pageSize, history);
        pages.push(page);

        assert.ok(page.items.length <= scenario.pageSize, 'page larger than pageSize');
        for (const key of page.items) assert.ok(visible.has(key), `returned ${JSON.stringify(key)}, which is not visible in this view`);
        if (page.next === undefined) break;
        assert.ok(page.items.length > 0, 'a page with a next position is empty');

        start = page.next;
        for (const op of scenario.changes[pages.length - 1] ?? []) apply(state, op);
        view = buildView();
    }

    const all = pages.flatMap(page => page.items);
    const seen = new Set<Key>();
    for (const key of all) {
        assert.ok(!seen.has(key), `${JSON.stringify(key)} returned twice`);
        seen.add(key);
    }
    const stable = [...views[0]!].filter(key => views.every(visible => visible.has(key)));
    for (const key of stable) assert.ok(seen.has(key), `${JSON.stringify(key)} existed and was visible throughout but was skipped`);

    if (scenario.changes.every(batch => batch.length === 0)) {
        const expected = firstView.flatMap(seg => seg.entries.filter((entry): entry is Key => entry !== undefined));
        assert.deepEqual(all, expected);
        pages.slice(0, -1).forEach((page, i) => {
            assert.equal(page.items.length, scenario.pageSize, `page ${i} of a static view is short`);
            assert.notEqual(page.next, undefined);
        });
        if (pages.length > 1) assert.ok(pages.at(-1)!.items.length > 0, 'the last page of a static view is empty');
    }
}

describe('paginate: property-based walks', () => {
    test('every prompt present and visible throughout a walk is returned exactly once, whatever changes between pages', () => {
        fc.assert(fc.property(scenarioArb, scenario => walk(scenario)), { numRuns: 500 });
    });

    // The checks above must be able to fail: paginators that are wrong by one position are caught.
    const static3: Scenario = { upstreams: [{ size: 3, hidden: [] }], pageSize: 1, changes: [] };
    const shifted =
        (by: number): Paginator =>
        (segments, start, pageSize, history) =>
            paginate(segments, start === undefined ? undefined : { ...start, offset: Math.max(0, start.offset + by) }, pageSize, history);

    test('the walk check reports a paginator that skips a prompt', () => {
        assert.doesNotThrow(() => walk(static3));
        assert.throws(() => walk(static3, shifted(1)), assert.AssertionError);
    });

    test('the walk check reports a paginator that returns a prompt twice', () => {
        assert.throws(() => walk(static3, shifted(-1)), assert.AssertionError);
    });

    test('the walk check reports a paginator that never ends', () => {
        const stuck: Paginator = (segments, _start, pageSize, history) => paginate(segments, undefined, pageSize, history);
        assert.throws(() => walk(static3, stuck), assert.AssertionError);
    });
});

// ---------------------------------------------------------------------------------------------
// Example-based behaviour.

describe('paginate: static views', () => {
    test('a single page holds everything when it fits, with no next', () => {
        const page = paginate([segment(0, names('a', 'b')), segment(1, names('c'))], undefined, 5, NO_HISTORY);
        assert.deepEqual(returned(page), ['a', 'b', 'c']);
        assert.equal(page.next, undefined);
    });

    test('pages span upstream boundaries in config order', () => {
        const view = [segment(0, names('a', 'b', 'c')), segment(1, []), segment(2, names('d', 'e'))];
        const first = paginate(view, undefined, 2, NO_HISTORY);
        assert.deepEqual(returned(first), ['a', 'b']);
        const second = paginate(view, first.next, 2, NO_HISTORY);
        assert.deepEqual(returned(second), ['c', 'd']);
        const third = paginate(view, second.next, 2, NO_HISTORY);
        assert.deepEqual(returned(third), ['e']);
        assert.equal(third.next, undefined);
    });

    test('the next position names the upstream, its version, the offset and a digest of the last consumed name', () => {
        const seg = segment(3, names('a', 'b', 'c'));
        const page = paginate([seg], undefined, 2, NO_HISTORY);
        assert.deepEqual(page.next, { upstreamIndex: 3, upstreamId: 'u3', version: seg.version, offset: 2, anchor: anchorOf('b') });
    });

    test('a page that ends exactly at the last visible entry has no next', () => {
        const page = paginate([segment(0, names('a', 'b')), segment(1, names('c', 'd'))], undefined, 4, NO_HISTORY);
        assert.equal(page.items.length, 4);
        assert.equal(page.next, undefined);
    });

    test('exact fill at an upstream boundary followed only by empty upstreams has no next', () => {
        const page = paginate([segment(0, names('a', 'b')), segment(1, []), segment(2, [])], undefined, 2, NO_HISTORY);
        assert.deepEqual(returned(page), ['a', 'b']);
        assert.equal(page.next, undefined);
    });

    test('trailing invisible entries do not produce a next', () => {
        const view = [segment(0, names('a', 'b', 'x'), names('x')), segment(1, names('y', 'z'), names('y', 'z'))];
        const page = paginate(view, undefined, 2, NO_HISTORY);
        assert.deepEqual(returned(page), ['a', 'b']);
        assert.equal(page.next, undefined);
        // …whereas one visible entry after them does.
        const withVisible = paginate([view[0]!, segment(1, names('y', 'z'), names('y'))], undefined, 2, NO_HISTORY);
        assert.notEqual(withVisible.next, undefined);
    });

    test('invisible entries are skipped and do not count towards the page size', () => {
        const page = paginate([segment(0, names('a', 'h1', 'h2', 'b', 'c'), names('h1', 'h2'))], undefined, 2, NO_HISTORY);
        assert.deepEqual(returned(page), ['a', 'b']);
        assert.notEqual(page.next, undefined);
    });

    test("a caller's visibility filter skips entries like hidden ones, and the walk still sees every visible entry once", () => {
        const view = [segment(0, names('a1', 'b1', 'a2', 'b2', 'a3')), segment(1, names('b3', 'a4', 'b4'))];
        const onlyA = (key: Key) => key.split('\u0000')[1]!.startsWith('a');
        const seen: string[] = [];
        let page = paginate(view, undefined, 2, NO_HISTORY, onlyA);
        seen.push(...returned(page));
        while (page.next !== undefined) {
            page = paginate(view, page.next, 2, NO_HISTORY, onlyA);
            seen.push(...returned(page));
        }
        assert.deepEqual(seen, ['a1', 'a2', 'a3', 'a4']);
    });

    test('no next page when only entries the caller may not see remain', () => {
        const view = [segment(0, names('a1', 'a2', 'b1')), segment(1, names('b2'))];
        const page = paginate(view, undefined, 2, NO_HISTORY, key => key.split('\u0000')[1]!.startsWith('a'));
        assert.deepEqual(returned(page), ['a1', 'a2']);
        assert.equal(page.next, undefined);
        assert.notEqual(paginate(view, undefined, 2, NO_HISTORY).next, undefined, 'without the filter there is more');
    });

    test('an empty view gives one empty last page', () => {
        const page = paginate([], undefined, 3, NO_HISTORY);
        assert.deepEqual(page, { items: [] });
    });
});

describe('paginate: resuming after changes', () => {
    const before = names('a', 'b', 'c', 'd', 'e');
    const firstPage = (): Position => {
        const page = paginate([segment(0, before)], undefined, 2, NO_HISTORY);
        assert.ok(page.next !== undefined);
        return page.next; // offset 2, anchor 'b'
    };

    test('with history: resumes after the last consumed prompt that still exists', () => {
        const start = firstPage();
        const history: VersionHistory = (id, version) => (id === 'u0' && version === digest(before) ? before : undefined);
        // 'b' was removed and 'x' inserted before 'c'; 'a' still exists, so the walk continues after it.
        const page = paginate([segment(0, names('a', 'x', 'c', 'd', 'e'))], start, 10, history);
        assert.deepEqual(returned(page), ['x', 'c', 'd', 'e']);
    });

    test('with history: all consumed prompts gone resumes at the start of the upstream', () => {
        const start = firstPage();
        const history: VersionHistory = (id, version) => (id === 'u0' && version === digest(before) ? before : undefined);
        const page = paginate([segment(0, names('c', 'd', 'e'))], start, 10, history);
        assert.deepEqual(returned(page), ['c', 'd', 'e']);
    });

    test('without history: the anchor still present resumes right after it', () => {
        const start = firstPage();
        const page = paginate([segment(0, names('new1', 'new2', 'a', 'b', 'c', 'd', 'e'))], start, 10, NO_HISTORY);
        assert.deepEqual(returned(page), ['c', 'd', 'e']);
    });

    test('without history: the anchor gone resumes at the same offset', () => {
        const start = firstPage();
        const page = paginate([segment(0, names('a', 'c', 'd', 'e'))], start, 10, NO_HISTORY);
        assert.deepEqual(returned(page), ['d', 'e']);
    });

    test('without history: an offset beyond the shrunken list continues with the next upstream', () => {
        const start = firstPage();
        const page = paginate([segment(0, names('z')), segment(1, names('f'))], start, 10, NO_HISTORY);
        assert.deepEqual(page.items, [keyOf('u1', 'f')]);
    });

    test('an unchanged version resumes at the stored offset', () => {
        const start = firstPage();
        // History that would send the walk elsewhere must not be consulted when the version is unchanged.
        const page = paginate([segment(0, before)], start, 10, () => names());
        assert.deepEqual(returned(page), ['c', 'd', 'e']);
    });

    test('a start in an upstream that is gone resumes at the next configured upstream', () => {
        const view = [segment(0, names('a')), segment(1, names('b')), segment(2, names('c')), segment(3, names('d'))];
        const page = paginate(view, undefined, 2, NO_HISTORY);
        assert.deepEqual(page.next?.upstreamId, 'u2');
        // u2 left the view: the walk goes on with u3, not back to u0/u1.
        const next = paginate([view[0]!, view[1]!, view[3]!], page.next, 10, NO_HISTORY);
        assert.deepEqual(next.items, [keyOf('u3', 'd')]);
    });

    test('a start in an upstream that is gone, with none configured after it, ends the walk', () => {
        const start: Position = { upstreamIndex: 4, upstreamId: 'u4', version: 'v', offset: 1, anchor: 'x' };
        const page = paginate([segment(0, names('a')), segment(1, names('b'))], start, 10, NO_HISTORY);
        assert.deepEqual(page, { items: [] });
    });

    test('a gone upstream is located by config index, not by position in the view', () => {
        // u1 and u2 are both gone; the next configured upstream after index 1 is u3.
        const start: Position = { upstreamIndex: 1, upstreamId: 'u1', version: 'v', offset: 0, anchor: '' };
        const page = paginate([segment(0, names('a')), segment(3, names('d')), segment(5, names('f'))], start, 10, NO_HISTORY);
        assert.deepEqual(page.items, [keyOf('u3', 'd'), keyOf('u5', 'f')]);
    });
});
