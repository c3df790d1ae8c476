import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { UpstreamListCache, type ListRead, type RelistPolicy, type UpstreamList } from '../../src/catalog/list-cache.js';
import { deferred, FakeUpstream, listed, prompt, RELIST, silentLogger } from './fake-upstream.js';

function setup(upstream = new FakeUpstream('docs', [prompt('a'), prompt('b')]), relist: RelistPolicy = RELIST) {
    const remembered: UpstreamList[] = [];
    const late: string[] = [];
    const reads: boolean[] = [];
    const cache = new UpstreamListCache(upstream, {
        logger: silentLogger,
        remember: (_id, list) => remembered.push(list),
        onLateList: id => late.push(id),
        onRead: (_id, hit) => reads.push(hit),
        relist: () => relist
    });
    return { upstream, cache, remembered, late, reads };
}

/** An upstream without list_changed. */
function quiet(prompts = [prompt('a')]): FakeUpstream {
    const upstream = new FakeUpstream('quiet', prompts);
    upstream.announcesChanges = false;
    return upstream;
}

/** Lets a read started by a (mocked) timer land: its promises settle within a turn of the event loop. */
const settle = () => new Promise(resolve => setImmediate(resolve));

/** Moves the mocked clock on, and lets what it started land. */
async function advance(t: TestContext, ms: number): Promise<void> {
    t.mock.timers.tick(ms);
    await settle();
}

const namesOf = (list: UpstreamList | undefined) => list?.prompts.map(definition => definition.name);

describe('upstream list cache', () => {
    test('a list read once is served from the cache until the upstream reports a change', async () => {
        const { upstream, cache, reads } = setup();
        const first = await cache.read();
        const second = await cache.read();
        assert.deepEqual(namesOf(first), ['a', 'b']);
        assert.equal(second, first);
        assert.equal(upstream.listCalls, 1);
        assert.deepEqual(reads, [false, true]);
    });

    test('each traced reader is told how it got the list: readers of a shared read with its CLIENT spans, later ones from the cache', async () => {
        const { upstream, cache } = setup();
        const traces = [{ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', sampled: true }];
        upstream.listTraces = traces;
        const pending = deferred<ReturnType<typeof listed>>();
        upstream.nextList = pending.promise;
        const started: ListRead[] = [];
        const joined: ListRead[] = [];
        const readers = [cache.read(started), cache.read(joined), cache.read()];
        pending.resolve(listed([prompt('x')]));
        await Promise.all(readers);
        assert.equal(upstream.listCalls, 1);
        for (const reads of [started, joined]) assert.deepEqual(reads, [{ upstreamId: 'docs', served: 'upstream', traces }]);
        const later: ListRead[] = [];
        await cache.read(later);
        assert.deepEqual(later, [{ upstreamId: 'docs', served: 'cache' }]);
    });

    test('a list change makes the next reader fetch the new list', async () => {
        const { upstream, cache } = setup();
        const before = await cache.read();
        upstream.prompts = [prompt('c')];
        cache.listChanged();
        const after = await cache.read();
        assert.deepEqual(namesOf(after), ['c']);
        assert.equal(upstream.listCalls, 2);
        assert.notEqual(after?.version, before?.version, 'a new name list is a new version (cursors tell them apart)');
    });

    test('readers arriving during a fetch share it', async () => {
        const { upstream, cache } = setup();
        const pending = deferred<ReturnType<typeof listed>>();
        upstream.nextList = pending.promise;
        const readers = [cache.read(), cache.read(), cache.read()];
        pending.resolve(listed([prompt('x')]));
        const lists = await Promise.all(readers);
        assert.equal(upstream.listCalls, 1);
        assert.ok(lists.every(list => list === lists[0]));
        assert.deepEqual(namesOf(lists[0]), ['x']);
    });

    test('a change during a fetch serves its result but makes the next reader fetch again', async () => {
        const { upstream, cache } = setup();
        const pending = deferred<ReturnType<typeof listed>>();
        upstream.nextList = pending.promise;
        const reading = cache.read();
        cache.listChanged();
        cache.listChanged();
        pending.resolve(listed([prompt('old')]));
        assert.deepEqual(namesOf(await reading), ['old']);
        assert.equal(upstream.listCalls, 1, 'changes during a fetch start no parallel fetch');
        upstream.prompts = [prompt('new')];
        assert.deepEqual(namesOf(await cache.read()), ['new']);
        assert.equal(upstream.listCalls, 2);
    });

    test('an upstream that is not ready has no list, and is not asked', async () => {
        const { upstream, cache } = setup();
        upstream.state = 'connecting';
        assert.equal(await cache.read(), undefined);
        assert.equal(upstream.listCalls, 0);
    });

    test('a failed fetch serves the last good list and is not retried for a while, however many changes come', async (t: TestContext) => {
        t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
        const { upstream, cache } = setup();
        const good = await cache.read();
        upstream.nextList = Promise.reject(new Error('boom'));
        cache.listChanged();
        assert.equal(await cache.read(), good);
        for (let i = 0; i < 5; i++) cache.listChanged();
        assert.equal(await cache.read(), good);
        assert.equal(upstream.listCalls, 2, 'no retry within the delay');
        upstream.prompts = [prompt('back')];
        t.mock.timers.tick(5001);
        assert.deepEqual(namesOf(await cache.read()), ['back'], 'retried once the delay is over');
        assert.equal(upstream.listCalls, 3);
    });

    test('a first fetch that fails serves nothing', async () => {
        const { upstream, cache } = setup();
        upstream.nextList = Promise.reject(new Error('boom'));
        assert.equal(await cache.read(), undefined);
    });

    test('a slow fetch serves the last good list at the deadline, and tells the catalog when it lands', async (t: TestContext) => {
        t.mock.timers.enable({ apis: ['setTimeout'] });
        const { upstream, cache, late } = setup(new FakeUpstream('slow', [prompt('a')], { timeoutMs: 1000 }));
        const good = await cache.read();
        const pending = deferred<ReturnType<typeof listed>>();
        upstream.nextList = pending.promise;
        cache.listChanged();
        const waiting = cache.read();
        t.mock.timers.tick(1000);
        assert.equal(await waiting, good);
        assert.deepEqual(upstream.faults, ['list_slow']);
        assert.equal(await cache.read(), good, 'a later reader of the same fetch does not wait again');
        assert.deepEqual(late, []);
        pending.resolve(listed([prompt('b')]));
        await pending.promise;
        await new Promise(resolve => setImmediate(resolve));
        assert.deepEqual(late, ['slow']);
        assert.deepEqual(namesOf(await cache.read()), ['b']);
        assert.equal(upstream.listCalls, 2);
    });

    test('a fetch from before a reconnect is not cached for the new connection', async () => {
        const { upstream, cache } = setup();
        const pending = deferred<ReturnType<typeof listed>>();
        upstream.nextList = pending.promise;
        const reading = cache.read();
        cache.connectionChanged();
        pending.resolve(listed([prompt('before')]));
        await reading;
        upstream.prompts = [prompt('after')];
        assert.deepEqual(namesOf(await cache.read()), ['after']);
        assert.equal(upstream.listCalls, 2);
    });

    test('a name listed twice keeps its first definition, and every list read is remembered for cursors', async () => {
        const upstream = new FakeUpstream('docs', [prompt('a', ['first']), prompt('b'), prompt('a', ['second'])]);
        const { cache, remembered } = setup(upstream);
        const list = await cache.read();
        assert.deepEqual(list?.names, ['a', 'b']);
        assert.deepEqual(
            list?.prompts[0]?.arguments?.map(argument => argument.name),
            ['first']
        );
        assert.equal(list?.digests.length, 2);
        assert.deepEqual(remembered, [list]);
    });

    describe('freshness', () => {
        test('an upstream that cannot announce changes is read again every relistIntervalMs; only a changed list is news', async t => {
            t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
            const { upstream, cache, late } = setup(quiet());
            t.after(() => cache.close());
            const first = await cache.read();
            assert.equal(cache.freshUntil, 1_000_000 + RELIST.relistIntervalMs, 'vouched for one interval');
            await advance(t, RELIST.relistIntervalMs - 1);
            assert.equal(upstream.listCalls, 1, 'not before the interval');
            await advance(t, 1);
            assert.equal(upstream.listCalls, 2);
            assert.deepEqual(late, [], 'the same list again is no news');
            assert.equal(await cache.read(), first, 'the very same list: nothing built from it is built again');
            assert.equal(upstream.listCalls, 2, 'served from the cache meanwhile');
            assert.equal(cache.freshUntil, 1_000_000 + 2 * RELIST.relistIntervalMs);

            upstream.prompts = [prompt('a'), prompt('b')];
            await advance(t, RELIST.relistIntervalMs);
            assert.equal(upstream.listCalls, 3);
            assert.deepEqual(late, ['quiet'], 'the catalog is told of the new list');
            assert.deepEqual(namesOf(await cache.read()), ['a', 'b']);
        });

        test('a changed definition under the same names is news too', async t => {
            t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
            const { upstream, cache, late } = setup(quiet([prompt('a')]));
            t.after(() => cache.close());
            await cache.read();
            upstream.prompts = [prompt('a', ['topic'])];
            await advance(t, RELIST.relistIntervalMs);
            assert.deepEqual(late, ['quiet']);
        });

        test("an upstream's own relistIntervalMs overrides the gateway's", async t => {
            t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
            const upstream = quiet();
            upstream.config.relistIntervalMs = 5000;
            const { cache } = setup(upstream);
            t.after(() => cache.close());
            await cache.read();
            await advance(t, 5000);
            assert.equal(upstream.listCalls, 2);
        });

        test('an upstream that cannot announce changes is read again on its own ttlMs, never more often than minRelistIntervalMs', async t => {
            t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
            // A 2026-07-28 upstream with no subscription open, which says its list holds no time at all.
            const upstream = quiet();
            upstream.ttlMs = 0;
            const { cache } = setup(upstream);
            t.after(() => cache.close());
            await cache.read();
            assert.equal(cache.freshUntil, 1_000_000, 'vouched for no longer than the upstream said');
            await advance(t, RELIST.minRelistIntervalMs - 1);
            assert.equal(upstream.listCalls, 1, 'the floor holds');
            await advance(t, 1);
            assert.equal(upstream.listCalls, 2);

            upstream.ttlMs = 5000;
            await advance(t, RELIST.minRelistIntervalMs);
            assert.equal(upstream.listCalls, 3);
            await advance(t, 4999);
            assert.equal(upstream.listCalls, 3, 'a longer ttlMs is waited out in full');
            await advance(t, 1);
            assert.equal(upstream.listCalls, 4);
        });

        test('a ttlMs too long for a timer is waited out a day at a time, and a failed read is retried no sooner than reads are', async t => {
            t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
            const upstream = quiet();
            upstream.ttlMs = 2 ** 40;
            const { cache } = setup(upstream, { relistIntervalMs: 60_000, minRelistIntervalMs: 100 });
            t.after(() => cache.close());
            await cache.read();
            await advance(t, 86_400_000 - 1);
            assert.equal(upstream.listCalls, 1);
            await advance(t, 1);
            assert.equal(upstream.listCalls, 2);

            upstream.ttlMs = 0;
            await advance(t, 86_400_000);
            assert.equal(upstream.listCalls, 3, 'now at the floor');
            upstream.nextList = Promise.reject(new Error('boom'));
            await advance(t, 100);
            assert.equal(upstream.listCalls, 4);
            await advance(t, 4999);
            assert.equal(upstream.listCalls, 4, 'a failing upstream is not asked at the floor');
            await advance(t, 1);
            assert.equal(upstream.listCalls, 5);
        });

        test('an upstream that announces its changes and gives no ttlMs is never read on a schedule, and vouched for without end', async t => {
            t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
            const { upstream, cache } = setup();
            t.after(() => cache.close());
            await cache.read();
            assert.equal(cache.freshUntil, undefined);
            await advance(t, 10 * RELIST.relistIntervalMs);
            assert.equal(upstream.listCalls, 1);
        });

        test('an upstream that announces its changes (a live, acknowledged subscription) is never read on a schedule, whatever its ttlMs', async t => {
            t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
            // The SDK's default hint: 0. The gateway hears every change on the subscription, so the hint binds nothing.
            const upstream = new FakeUpstream('modern', [prompt('a')]);
            upstream.ttlMs = 0;
            const { cache } = setup(upstream);
            t.after(() => cache.close());
            await cache.read();
            assert.equal(cache.freshUntil, undefined, 'vouched for without end');
            await advance(t, 10 * RELIST.relistIntervalMs);
            assert.equal(upstream.listCalls, 1);
        });

        test('a subscription that drops makes the upstream one that cannot announce, from then on; once acknowledged again, its list is read again', async t => {
            t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
            const upstream = new FakeUpstream('modern', [prompt('a')]);
            upstream.ttlMs = 5000;
            const { cache } = setup(upstream);
            t.after(() => cache.close());
            await cache.read();
            await advance(t, 10_000);

            upstream.announcesChanges = false;
            assert.equal(cache.announcingChanged(), false, 'nothing to read at once');
            assert.equal(cache.freshUntil, 1_010_000 + 5000, 'heard up to the drop: its own ttlMs from then');
            await advance(t, 4999);
            assert.equal(upstream.listCalls, 1);
            await advance(t, 1);
            assert.equal(upstream.listCalls, 2, 'read on its own ttlMs while it cannot announce');
            assert.equal(cache.freshUntil, 1_015_000 + 5000);

            upstream.announcesChanges = true;
            assert.equal(cache.announcingChanged(), true, 'a change made while it could not announce went unheard: read again');
            assert.equal(cache.freshUntil, 1_015_000 + 5000, 'not vouched for before that read');
            await cache.read();
            assert.equal(upstream.listCalls, 3);
            assert.equal(cache.freshUntil, undefined);
            await advance(t, 10 * RELIST.relistIntervalMs);
            assert.equal(upstream.listCalls, 3, 'no schedule left over');
        });

        test('a subscription that drops before any list was read changes nothing', async t => {
            t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
            const upstream = new FakeUpstream('modern', [prompt('a')]);
            const { cache } = setup(upstream);
            t.after(() => cache.close());
            upstream.announcesChanges = false;
            assert.equal(cache.announcingChanged(), false);
            assert.equal(cache.freshUntil, undefined);
            await advance(t, 10 * RELIST.relistIntervalMs);
            assert.equal(upstream.listCalls, 0);
        });

        test('a failed scheduled read keeps the list and tries again at the next interval', async t => {
            t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
            const { upstream, cache } = setup(quiet());
            t.after(() => cache.close());
            const good = await cache.read();
            upstream.nextList = Promise.reject(new Error('boom'));
            await advance(t, RELIST.relistIntervalMs);
            assert.equal(upstream.listCalls, 2);
            assert.equal(await cache.read(), good);
            assert.equal(cache.freshUntil, 1_000_000 + RELIST.relistIntervalMs, 'what was vouched for is not extended');
            await advance(t, RELIST.relistIntervalMs);
            assert.equal(upstream.listCalls, 3);
        });

        test('no scheduled read after the upstream reconnects (the new connection starts over) or leaves', async t => {
            t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
            const { upstream, cache } = setup(quiet());
            await cache.read();
            cache.connectionChanged();
            assert.equal(cache.freshUntil, undefined);
            await advance(t, RELIST.relistIntervalMs);
            assert.equal(upstream.listCalls, 1);
            await cache.read();
            cache.close();
            await advance(t, RELIST.relistIntervalMs);
            assert.equal(upstream.listCalls, 2);
        });
    });
});
