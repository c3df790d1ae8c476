import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CursorCodec } from '../../src/catalog/cursor.js';
import { anchorOf, paginate, visibleSlice, type Page, type Position, type Segment, type VersionHistory } from '../../src/catalog/paginate.js';
import { filterKey, filterOf, UPSTREAM_FILTER_BYTES } from '../../src/catalog/upstream-filter.js';

/** Entries are the (upstream, name) keys themselves, so a page says exactly what it returned. */
type Key = string;
const keyOf = (upstreamId: string, name: string): Key => `${upstreamId}\u0000${name}`;
const upstreamOf = (key: Key): string => key.split('\u0000')[0]!;

const digest = (names: readonly string[]): string => createHash('sha256').update(JSON.stringify(names)).digest('hex');

const NO_HISTORY: VersionHistory = () => undefined;

/** Upstream `u<n>` (or `id`); its entries are all there unless listed in `leftOut` (left out for everyone, as on a name clash). */
function segment(n: number, names: readonly string[], leftOut: readonly string[] = [], upstreamId = `u${n}`): Segment<Key> {
    return {
        upstreamId,
        version: digest(names),
        names,
        entries: names.map(name => (leftOut.includes(name) ? undefined : keyOf(upstreamId, name)))
    };
}

const names = (...list: string[]): string[] => list;
const returned = (page: Page<Key>): string[] => page.items.map(key => key.split('\u0000')[1]!);
const sliceOf = (view: readonly Segment<Key>[], visible: (key: Key) => boolean) => visibleSlice(view, visible);

/** Pages until the end, each from the view `viewAt(pageNumber)` returns; the keys of each page. */
function walkAll(viewAt: (page: number) => readonly Segment<Key>[], pageSize: number, history: VersionHistory = NO_HISTORY, start?: Position): Key[][] {
    const pages: Key[][] = [];
    let position = start;
    do {
        assert.ok(pages.length < 1000, 'the walk does not end');
        const page = paginate(viewAt(pages.length), position, pageSize, history);
        pages.push(page.items);
        position = page.next;
    } while (position !== undefined);
    return pages;
}

// ---------------------------------------------------------------------------------------------
// Property-based walks over changing upstreams: prompts added, removed, hidden; upstreams
// disconnected, and reloads that add, remove and reorder upstreams, between any two pages.

const MAX_UPSTREAM_IDS = 16;
const idOf = (n: number) => `u${n}`;

interface UpstreamState {
    names: string[];
    hidden: Set<string>;
    ready: boolean;
    nextName: number;
}

interface Model {
    upstreams: Map<string, UpstreamState>;
    /** The configured upstreams, in config order. */
    order: string[];
    nextId: number;
}

type Op =
    | { kind: 'add'; upstream: number; at: number; hidden: boolean }
    | { kind: 'remove'; upstream: number; pick: number }
    | { kind: 'toggle'; upstream: number; pick: number }
    | { kind: 'disconnect'; upstream: number }
    | { kind: 'reconnect'; upstream: number }
    | { kind: 'add-upstream'; at: number; size: number }
    | { kind: 'remove-upstream'; upstream: number }
    | { kind: 'move-upstream'; upstream: number; to: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('add' as const), upstream: fc.nat(), at: fc.nat(), hidden: fc.integer({ min: 0, max: 4 }).map(n => n === 0) }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('remove' as const), upstream: fc.nat(), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('toggle' as const), upstream: fc.nat(), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('disconnect' as const), upstream: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('reconnect' as const), upstream: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('add-upstream' as const), at: fc.nat(), size: fc.integer({ min: 0, max: 12 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove-upstream' as const), upstream: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('move-upstream' as const), upstream: fc.nat(), to: fc.nat() }) }
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

function newUpstream(size: number, hidden: readonly number[] = []): UpstreamState {
    return {
        names: Array.from({ length: size }, (_, i) => `p${i}`),
        hidden: new Set(hidden.filter(i => i < size).map(i => `p${i}`)),
        ready: true,
        nextName: size
    };
}

/** Applies one change; returns whether it reordered the upstreams that stay. */
function apply(model: Model, op: Op): boolean {
    if (op.kind === 'add-upstream') {
        // Fresh ids only, from a small universe: an upstream never comes back after it was removed.
        if (model.nextId === MAX_UPSTREAM_IDS) return false;
        const id = idOf(model.nextId++);
        model.upstreams.set(id, newUpstream(op.size));
        model.order.splice(op.at % (model.order.length + 1), 0, id);
        return false;
    }
    if (model.order.length === 0) return false;
    const at = ('upstream' in op ? op.upstream : 0) % model.order.length;
    const id = model.order[at]!;
    const upstream = model.upstreams.get(id)!;
    switch (op.kind) {
        case 'add': {
            // Fresh names only: a name never comes back after it was removed.
            const name = `p${upstream.nextName++}`;
            upstream.names.splice(op.at % (upstream.names.length + 1), 0, name);
            if (op.hidden) upstream.hidden.add(name);
            return false;
        }
        case 'remove':
            if (upstream.names.length > 0) upstream.names.splice(op.pick % upstream.names.length, 1);
            return false;
        case 'toggle': {
            if (upstream.names.length === 0) return false;
            const name = upstream.names[op.pick % upstream.names.length]!;
            if (!upstream.hidden.delete(name)) upstream.hidden.add(name);
            return false;
        }
        case 'disconnect':
            upstream.ready = false;
            return false;
        case 'reconnect':
            upstream.ready = true;
            return false;
        case 'remove-upstream':
            model.order.splice(at, 1);
            return false;
        case 'move-upstream': {
            model.order.splice(at, 1);
            const to = op.to % (model.order.length + 1);
            model.order.splice(to, 0, id);
            return to !== at;
        }
    }
}

type Paginator = typeof paginate<Key>;

interface WalkOptions {
    pager?: Paginator;
    /** How hidden prompts are hidden: left out of the view ("missing"), or in it but not visible to the caller. */
    hiding?: 'visibility' | 'missing';
    /** Without the old list versions (a replica that never saw them), prompts of the current upstream may come again. */
    history?: boolean;
}

interface Walked {
    pages: Page<Key>[];
    reorders: number;
}

/**
 * Walks a scenario: pages from the view of the moment, the changes of batch i applied after page i. Every position
 * goes through the cursor codec, as it does between pages. Checks what a walk guarantees (docs/behaviour.md, "Stable pagination").
 */
function walk(scenario: Scenario, options: WalkOptions = {}): Walked {
    const pager = options.pager ?? paginate;
    const model: Model = {
        upstreams: new Map(scenario.upstreams.map((spec, n) => [idOf(n), newUpstream(spec.size, spec.hidden)])),
        order: scenario.upstreams.map((_, n) => idOf(n)),
        nextId: scenario.upstreams.length
    };
    const historyMap = new Map<string, readonly string[]>();
    const history: VersionHistory = (upstreamId, version) => (options.history === false ? undefined : historyMap.get(`${upstreamId}\u0000${version}`));
    const codec = new CursorCodec('a-secret-of-at-least-16-chars');

    /** The view and what the caller sees in it. */
    const buildView = (): { view: Segment<Key>[]; visible: Set<Key> } => {
        const visible = new Set<Key>();
        const view = model.order.map(id => {
            const upstream = model.upstreams.get(id)!;
            // A copy: the model changes its lists in place, and the history must keep the old ones.
            const listed = !upstream.ready ? [] : upstream.names.filter(name => options.hiding !== 'missing' || !upstream.hidden.has(name));
            const seg = segment(0, listed, [], id);
            historyMap.set(`${id}\u0000${seg.version}`, seg.names);
            for (const name of listed) if (!upstream.hidden.has(name)) visible.add(keyOf(id, name));
            return seg;
        });
        return { view, visible };
    };

    const adds = scenario.changes.flat().filter(op => op.kind === 'add' || op.kind === 'add-upstream').length;
    const everExisting = scenario.upstreams.reduce((sum, spec) => sum + spec.size, 0) + adds * 12;
    let reorders = 0;

    const views: Set<Key>[] = [];
    const pages: Page<Key>[] = [];
    let { view, visible } = buildView();
    const firstView = view;
    let start: Position | undefined;
    for (;;) {
        // Every page but the last is full, and a prompt comes back at most once per reorder: the walk ends.
        assert.ok(pages.length <= everExisting * (1 + reorders) + 1, `walk did not end within ${pages.length} pages`);
        views.push(visible);
        const page = pager(
            view,
            start,
            scenario.pageSize,
            history,
            sliceOf(view, key => visible.has(key))
        );
        pages.push(page);

        assert.ok(page.items.length <= scenario.pageSize, 'page larger than pageSize');
        for (const key of page.items) assert.ok(visible.has(key), `returned ${JSON.stringify(key)}, which is not visible in this view`);
        if (page.next === undefined) break;
        assert.equal(page.items.length, scenario.pageSize, 'a page with a next position is not full');

        const sealed = codec.decode(codec.encode({ ...page.next, scope: 'client' }));
        assert.ok(sealed !== undefined);
        const { scope: _scope, ...position } = sealed;
        start = position;
        for (const op of scenario.changes[pages.length - 1] ?? []) if (apply(model, op)) reorders++;
        ({ view, visible } = buildView());
    }

    const all = pages.flatMap(page => page.items);
    const counts = new Map<Key, number>();
    for (const key of all) counts.set(key, (counts.get(key) ?? 0) + 1);
    for (const [key, count] of counts) {
        // Only a reorder lists an upstream again (docs/behaviour.md): without one, nothing twice.
        if (options.history !== false) assert.ok(count <= 1 + reorders, `${JSON.stringify(key)} returned ${count} times with ${reorders} reorders`);
    }
    const stable = [...views[0]!].filter(key => views.every(seen => seen.has(key)));
    for (const key of stable) assert.ok(counts.has(key), `${JSON.stringify(key)} existed and was visible throughout but was skipped`);

    if (scenario.changes.every(batch => batch.length === 0)) {
        const expected = firstView.flatMap(seg => seg.entries.filter((entry): entry is Key => entry !== undefined && visible.has(entry)));
        assert.deepEqual(all, expected);
        if (pages.length > 1) assert.ok(pages.at(-1)!.items.length > 0, 'the last page of a static view is empty');
    }
    return { pages, reorders };
}

describe('paginate: property-based walks', () => {
    test("the test's upstream ids never collide in the upstream filter, so false positives are tested on their own", () => {
        // Each id has a bit no other id sets: the filter of any set of them holds exactly that set.
        const keys = Array.from({ length: MAX_UPSTREAM_IDS }, (_, n) => filterKey(idOf(n)));
        keys.forEach((key, n) => {
            const others = new Set(keys.filter((_, m) => m !== n).flat());
            assert.ok(
                key.some(bit => !others.has(bit)),
                `${idOf(n)} shares all its bits`
            );
        });
    });

    test('no prompt present and visible throughout a walk is skipped, whatever changes between pages; only a reorder repeats one', () => {
        fc.assert(
            fc.property(scenarioArb, scenario => {
                walk(scenario);
            }),
            { numRuns: 500 }
        );
    });

    test('without the old list versions (another replica), still no prompt present throughout is skipped', () => {
        fc.assert(
            fc.property(scenarioArb, scenario => {
                walk(scenario, { history: false });
            }),
            { numRuns: 300 }
        );
    });

    test('a hidden prompt is indistinguishable from a missing one: the same pages, the same end', () => {
        // Under one policy: a prompt that a reload hides or shows mid-walk is a change like an add or a remove.
        const samePolicy = scenarioArb.map(scenario => ({ ...scenario, changes: scenario.changes.map(batch => batch.filter(op => op.kind !== 'toggle')) }));
        fc.assert(
            fc.property(samePolicy, fc.boolean(), (scenario, history) => {
                const hidden = walk(scenario, { hiding: 'visibility', history }).pages;
                const missing = walk(scenario, { hiding: 'missing', history }).pages;
                assert.deepEqual(
                    hidden.map(page => [page.items, page.next === undefined]),
                    missing.map(page => [page.items, page.next === undefined])
                );
            }),
            { numRuns: 300 }
        );
    });

    // The checks above must be able to fail: paginators that are wrong by one position are caught.
    const static3: Scenario = { upstreams: [{ size: 3, hidden: [] }], pageSize: 1, changes: [] };
    const shifted =
        (by: number): Paginator =>
        (segments, start, pageSize, history, slice) =>
            paginate(segments, start === undefined ? undefined : { ...start, offset: Math.max(0, start.offset + by) }, pageSize, history, slice);

    test('the walk check reports a paginator that skips a prompt', () => {
        assert.doesNotThrow(() => walk(static3));
        assert.throws(() => walk(static3, { pager: shifted(1) }), assert.AssertionError);
    });

    test('the walk check reports a paginator that returns a prompt twice', () => {
        assert.throws(() => walk(static3, { pager: shifted(-1) }), assert.AssertionError);
    });

    test('the walk check reports a paginator that never ends', () => {
        const stuck: Paginator = (segments, _start, pageSize, history, slice) => paginate(segments, undefined, pageSize, history, slice);
        assert.throws(() => walk(static3, { pager: stuck }), assert.AssertionError);
    });

    test('the walk check reports a paginator that locates upstreams by config index (issue 13)', () => {
        // u1 is removed while the walk is in it: resuming "at the same index" lands in u2 past its start.
        const removal: Scenario = {
            upstreams: [
                { size: 2, hidden: [] },
                { size: 2, hidden: [] },
                { size: 3, hidden: [] }
            ],
            pageSize: 3,
            changes: [[{ kind: 'remove-upstream', upstream: 1 }]]
        };
        assert.doesNotThrow(() => walk(removal));
        const byIndex: Paginator = (segments, start, pageSize, history, slice) => {
            if (start === undefined || segments.some(seg => seg.upstreamId === start.upstreamId)) return paginate(segments, start, pageSize, history, slice);
            const index = Number(start.upstreamId.slice(1));
            return paginate(segments, { ...start, upstreamId: segments[index]?.upstreamId ?? 'none', positional: true, order: 'unchanged' }, pageSize, history, slice);
        };
        assert.throws(() => walk(removal, { pager: byIndex }), assert.AssertionError);
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

    test('the next position names the upstream, its version, the offset after the last prompt returned and its digest', () => {
        const seg = segment(3, names('a', 'b', 'c'));
        const page = paginate([segment(2, names('x')), seg, segment(4, names('y'))], undefined, 3, NO_HISTORY);
        assert.deepEqual(returned(page), ['x', 'a', 'b']);
        const { pending, order, ...rest } = page.next!;
        assert.deepEqual(rest, { upstreamId: 'u3', version: seg.version, offset: 2, anchor: anchorOf('b'), positional: true });
        assert.equal(order.length, 16);
        // Pending: exactly the upstream after u3.
        assert.deepEqual(pending, filterOf([filterKey('u4')]));
        assert.equal(pending.length, UPSTREAM_FILTER_BYTES);
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

    test('trailing entries left out do not produce a next', () => {
        const view = [segment(0, names('a', 'b', 'x'), names('x')), segment(1, names('y', 'z'), names('y', 'z'))];
        const page = paginate(view, undefined, 2, NO_HISTORY);
        assert.deepEqual(returned(page), ['a', 'b']);
        assert.equal(page.next, undefined);
        // …whereas one entry after them does.
        const withVisible = paginate([view[0]!, segment(1, names('y', 'z'), names('y'))], undefined, 2, NO_HISTORY);
        assert.notEqual(withVisible.next, undefined);
    });

    test('entries left out are skipped and do not count towards the page size', () => {
        const page = paginate([segment(0, names('a', 'h1', 'h2', 'b', 'c'), names('h1', 'h2'))], undefined, 2, NO_HISTORY);
        assert.deepEqual(returned(page), ['a', 'b']);
        assert.notEqual(page.next, undefined);
    });

    test("a caller's slice skips entries like left-out ones, and the walk still sees every visible entry once", () => {
        const view = [segment(0, names('a1', 'b1', 'a2', 'b2', 'a3')), segment(1, names('b3', 'a4', 'b4'))];
        const onlyA = sliceOf(view, key => key.split('\u0000')[1]!.startsWith('a'));
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
        const page = paginate(
            view,
            undefined,
            2,
            NO_HISTORY,
            sliceOf(view, key => key.split('\u0000')[1]!.startsWith('a'))
        );
        assert.deepEqual(returned(page), ['a1', 'a2']);
        assert.equal(page.next, undefined);
        assert.notEqual(paginate(view, undefined, 2, NO_HISTORY).next, undefined, 'without the filter there is more');
    });

    test('an empty view gives one empty last page', () => {
        const page = paginate([], undefined, 3, NO_HISTORY);
        assert.deepEqual(page, { items: [] });
    });
});

describe('visibleSlice', () => {
    test('holds the ascending offsets of the visible entries, per segment', () => {
        const view = [segment(0, names('a', 'x', 'b'), names('x')), segment(1, []), segment(2, names('c', 'd'))];
        const slice = visibleSlice(view, key => !key.endsWith('d'));
        assert.deepEqual(
            slice.offsets.map(offsets => [...offsets]),
            [[0, 2], [], [0]]
        );
    });

    test('a segment seen whole shares the offsets of the slice of everything', () => {
        const view = [segment(0, names('a', 'b')), segment(1, names('c', 'd'))];
        const everything = visibleSlice(view);
        const slice = visibleSlice(view, key => upstreamOf(key) === 'u0' || key.endsWith('c'), everything);
        assert.equal(slice.offsets[0], everything.offsets[0]);
        assert.notEqual(slice.offsets[1], everything.offsets[1]);
        assert.deepEqual([...slice.offsets[1]!], [0]);
    });
});

describe('paginate: resuming after changes within an upstream', () => {
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

    test('without history: the anchor gone resumes at the start of the upstream (prompts again, none skipped)', () => {
        const start = firstPage();
        const page = paginate([segment(0, names('a', 'c', 'd', 'e'))], start, 10, NO_HISTORY);
        assert.deepEqual(returned(page), ['a', 'c', 'd', 'e']);
    });

    test('without history: the anchor gone in a shrunken list lists it again, then the next upstream', () => {
        const first = paginate([segment(0, before), segment(1, names('f'))], undefined, 2, NO_HISTORY);
        const page = paginate([segment(0, names('z')), segment(1, names('f'))], first.next, 10, NO_HISTORY);
        assert.deepEqual(page.items, [keyOf('u0', 'z'), keyOf('u1', 'f')]);
    });

    test('with history: a prompt the caller does not see never decides where the walk resumes', () => {
        // h is hidden: the caller got a, b. b is removed and x inserted between a and h. Resuming after h (passed, still
        // there) would skip x, where a caller of a gateway without h would get it.
        const old = names('a', 'h', 'b', 'c');
        const sees = (view: Segment<Key>[]) => sliceOf(view, key => !key.endsWith('h'));
        const first = paginate([segment(0, old)], undefined, 2, NO_HISTORY, sees([segment(0, old)]));
        assert.deepEqual(returned(first), ['a', 'b']);
        const history: VersionHistory = (id, version) => (version === digest(old) ? old : undefined);
        const now = [segment(0, names('a', 'x', 'h', 'c'))];
        assert.deepEqual(returned(paginate(now, first.next, 10, history, sees(now))), ['x', 'c']);
    });

    test('an unchanged version resumes at the stored offset', () => {
        const start = firstPage();
        // History that would send the walk elsewhere must not be consulted when the version is unchanged.
        const page = paginate([segment(0, before)], start, 10, () => names());
        assert.deepEqual(returned(page), ['c', 'd', 'e']);
    });
});

describe('paginate: resuming after a reload changed the upstreams', () => {
    const a = segment(0, names('a1', 'a2'));
    const b = segment(1, names('b1', 'b2', 'b3'));
    const c = segment(2, names('c1', 'c2'));
    const d = segment(3, names('d1'));
    const all = (...segments: Segment<Key>[]) => segments.flatMap(seg => seg.entries as Key[]);
    /** The position after the first `count` prompts of `view`. */
    const after = (view: Segment<Key>[], count: number): Position => paginate(view, undefined, count, NO_HISTORY).next!;

    test('the upstream the walk is in removed: the upstreams configured after it are listed (issue 13)', () => {
        const start = after([a, b, c, d], 3); // in b, after b1
        assert.deepEqual(paginate([a, c, d], start, 10, NO_HISTORY).items, all(c, d));
    });

    test('an upstream before the position removed: the walk goes on exactly, though config indexes shifted', () => {
        const start = after([a, b, c, d], 5); // at the end of b
        assert.deepEqual(paginate([b, c, d], start, 10, NO_HISTORY).items, all(c, d));
        const inC = after([a, b, c, d], 6);
        assert.deepEqual(paginate([b, c, d], inC, 10, NO_HISTORY).items, [keyOf('u2', 'c2'), ...all(d)]);
    });

    test('an upstream after the position removed: it is not listed, nothing else changes', () => {
        const start = after([a, b, c, d], 3);
        assert.deepEqual(paginate([a, b, d], start, 10, NO_HISTORY).items, [keyOf('u1', 'b2'), keyOf('u1', 'b3'), ...all(d)]);
    });

    test('an upstream added after the position is listed; one added before it is not', () => {
        const start = after([a, b, d], 3);
        const x = segment(8, names('x1'));
        const y = segment(9, names('y1'));
        assert.deepEqual(paginate([x, a, b, y, d], start, 10, NO_HISTORY).items, [keyOf('u1', 'b2'), keyOf('u1', 'b3'), ...all(y, d)]);
    });

    test('the upstream the walk is in removed and another added in the same reload: only the upstreams pending are listed', () => {
        const start = after([a, b, c], 3);
        assert.deepEqual(paginate([a, segment(9, names('y1')), c], start, 10, NO_HISTORY).items, all(c));
    });

    test('a reorder: upstreams still pending are listed wherever they moved, after the rest of the current one', () => {
        const start = after([a, b, c, d], 3); // in b; a listed; c, d pending
        assert.deepEqual(paginate([d, c, a, b], start, 10, NO_HISTORY).items, [keyOf('u1', 'b2'), keyOf('u1', 'b3'), ...all(d, c)]);
    });

    test('a reorder: an upstream already listed that now stands after the position is listed again (the documented repeat)', () => {
        const start = after([a, b, c], 3); // in b; a listed
        assert.deepEqual(paginate([b, a, c], start, 10, NO_HISTORY).items, [keyOf('u1', 'b2'), keyOf('u1', 'b3'), ...all(a, c)]);
    });

    test('after a reorder, later pages without change list only what is pending: nothing listed comes back', () => {
        // In c, d pending; the reload puts d first. The walk takes the rest of c, then d; a and b (listed, and before
        // the current upstream in neither order) never come back, however the pages fall.
        const d2 = segment(3, names('d1', 'd2'));
        const start = after([a, b, c, d2], 6);
        const moved = [d2, a, b, c];
        for (const pageSize of [1, 2, 3]) {
            const pages = walkAll(() => moved, pageSize, NO_HISTORY, start);
            assert.deepEqual(pages.flat(), [keyOf('u2', 'c2'), ...all(d2)], `pages of ${pageSize}`);
        }
    });

    test('a walk out of order goes back to following the view once what is left is the rest of the view', () => {
        const e = segment(4, names('e1', 'e2'));
        const start = after([a, b, c, d, e], 3); // in b; c, d, e pending
        const moved = [c, a, b, d, e];
        const flags: boolean[] = [];
        let page = paginate(moved, start, 1, NO_HISTORY);
        const seen = [...page.items];
        while (page.next !== undefined) {
            flags.push(page.next.positional);
            page = paginate(moved, page.next, 1, NO_HISTORY);
            seen.push(...page.items);
        }
        assert.deepEqual(seen, [keyOf('u1', 'b2'), keyOf('u1', 'b3'), ...all(c, d, e)]);
        // Out of order until the walk is in d, after which d and e are the rest of the view.
        assert.deepEqual(flags, [false, false, false, false, false, true]);
    });

    test('a false positive of the filter repeats an upstream, never skips one, and the walk still ends', () => {
        // Every bit set: every upstream looks pending.
        const start: Position = { ...after([a, b, c, d], 3), pending: new Uint8Array(UPSTREAM_FILTER_BYTES).fill(255), positional: false };
        const pages = walkAll(() => [a, b, c, d], 2, NO_HISTORY, start);
        assert.deepEqual(pages.flat(), [keyOf('u1', 'b2'), keyOf('u1', 'b3'), ...all(a, c, d)]);
    });

    test('a position from another order (a replica whose config differs) resumes like after a reload', () => {
        const start = after([a, b, c], 3);
        assert.deepEqual(paginate([b, c], start, 10, NO_HISTORY).items, [keyOf('u1', 'b2'), keyOf('u1', 'b3'), ...all(c)]);
        const unknown: Position = { ...start, upstreamId: 'gone', order: 'another', pending: filterOf([]) };
        assert.deepEqual(paginate([a, b, c], unknown, 10, NO_HISTORY), { items: [] });
    });
});
