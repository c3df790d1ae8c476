import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { UpstreamListCache, type UpstreamList } from '../../src/catalog/list-cache.js';
import { deferred, FakeUpstream, listed, prompt, silentLogger } from './fake-upstream.js';

function setup(upstream = new FakeUpstream('docs', [prompt('a'), prompt('b')])) {
    const remembered: UpstreamList[] = [];
    const late: string[] = [];
    const reads: boolean[] = [];
    const cache = new UpstreamListCache(upstream, {
        logger: silentLogger,
        remember: (_id, list) => remembered.push(list),
        onLateList: id => late.push(id),
        onRead: (_id, hit) => reads.push(hit)
    });
    return { upstream, cache, remembered, late, reads };
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
        assert.deepEqual(list?.prompts[0]?.arguments?.map(argument => argument.name), ['first']);
        assert.equal(list?.digests.length, 2);
        assert.deepEqual(remembered, [list]);
    });
});
