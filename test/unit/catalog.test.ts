import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Catalog, type CatalogChange, type CatalogView } from '../../src/catalog/catalog.js';
import { FakeUpstream, prompt, RELIST, silentLogger } from './fake-upstream.js';

async function setup(t: TestContext, upstreams: FakeUpstream[]) {
    const catalog = new Catalog({ naming: { separator: '__' }, logger: silentLogger, notifications: { debounceMs: 5, maxDelayMs: 50 }, relist: () => RELIST });
    t.after(() => catalog.close());
    catalog.setUpstreams(upstreams);
    await catalog.warm();
    return catalog;
}

/**
 * The next change the catalog publishes. The catalog's timers do not hold the process open (unref'd), so this
 * does until the change comes (or the test ends).
 */
function nextChange(t: TestContext, catalog: Catalog): Promise<CatalogChange> {
    const keepAlive = setInterval(() => {}, 60_000);
    t.after(() => clearInterval(keepAlive));
    return new Promise(resolve => {
        const unsubscribe = catalog.changes.subscribe(change => {
            unsubscribe();
            clearInterval(keepAlive);
            resolve(change);
        });
    });
}

const names = (view: CatalogView) => [...view.byName.keys()];

describe('catalog over in-memory upstreams', () => {
    test("an upstream's list changes re-read its list alone, and a burst of them is announced once", { timeout: 10_000 }, async t => {
        const docs = new FakeUpstream('docs', [prompt('a')]);
        const code = new FakeUpstream('code', [prompt('b')]);
        const catalog = await setup(t, [docs, code]);
        assert.deepEqual(names(await catalog.view()), ['docs__a', 'code__b']);
        const announced = nextChange(t, catalog);
        docs.changeList([prompt('a2')]);
        docs.changeList([prompt('a3')]);
        const change = await announced;
        assert.deepEqual(change.upstreamIds, ['docs']);
        assert.deepEqual(names(change.view), ['docs__a3', 'code__b']);
        assert.deepEqual([docs.listCalls, code.listCalls], [2, 1]);
    });

    test('an upstream leaving "ready" takes its prompts out of the view; moves between other states are no news', { timeout: 10_000 }, async t => {
        const docs = new FakeUpstream('docs', [prompt('a')]);
        const code = new FakeUpstream('code', [prompt('b')]);
        const catalog = await setup(t, [docs, code]);
        const announced = nextChange(t, catalog);
        docs.setState('down');
        assert.equal(catalog.cachedEntry('docs__a'), undefined, 'a get does not go to an upstream that is not ready');
        assert.deepEqual(names((await announced).view), ['code__b']);

        docs.setState('connecting');
        docs.setState('down');
        const other = nextChange(t, catalog);
        code.changeList([prompt('b2')]);
        assert.deepEqual((await other).upstreamIds, ['code'], 'the moves between states that are not "ready" joined no burst');
        const back = nextChange(t, catalog);
        docs.setState('ready');
        const returned = await back;
        assert.deepEqual(returned.upstreamIds, ['docs']);
        assert.deepEqual(names(returned.view), ['docs__a', 'code__b2']);
        assert.equal(docs.listCalls, 2, 'the list is read again for the new connection');
    });

    test('an upstream that cannot announce changes is read again on a schedule: a change is announced, the same list is not', async t => {
        t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
        const settle = async () => {
            for (let turn = 0; turn < 3; turn++) await new Promise(resolve => setImmediate(resolve));
        };
        const docs = new FakeUpstream('docs', [prompt('a')]);
        const quiet = new FakeUpstream('quiet', [prompt('b')]);
        quiet.announcesChanges = false;
        const catalog = await setup(t, [docs, quiet]);
        const changes: CatalogChange[] = [];
        t.after(catalog.changes.subscribe(change => changes.push(change)));
        assert.equal(catalog.freshForMs(), RELIST.relistIntervalMs, 'vouched for as long as the quiet upstream is');

        t.mock.timers.tick(RELIST.relistIntervalMs);
        await settle();
        t.mock.timers.tick(50);
        await settle();
        assert.equal(quiet.listCalls, 2);
        assert.equal(changes.length, 0, 'the same list again is announced to no one');

        t.mock.timers.tick(RELIST.relistIntervalMs / 2 - 50);
        assert.equal(catalog.freshForMs(), RELIST.relistIntervalMs / 2, 'what is left of it');
        quiet.prompts = [prompt('b'), prompt('c')];
        t.mock.timers.tick(RELIST.relistIntervalMs / 2);
        await settle();
        t.mock.timers.tick(50);
        await settle();
        assert.deepEqual(
            changes.map(change => [change.upstreamIds, names(change.view)]),
            [[['quiet'], ['docs__a', 'quiet__b', 'quiet__c']]]
        );
        assert.equal(docs.listCalls, 1, 'an upstream that announces its changes is not read on a schedule');

        quiet.setState('down');
        assert.equal(catalog.freshForMs(), undefined, 'an upstream out of the view does not limit it');
    });

    test('a 2026-07-28 upstream with its subscription acknowledged does not limit the merged ttlMs, whatever its own; one whose subscription dropped does', async t => {
        t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
        const settle = async () => {
            for (let turn = 0; turn < 3; turn++) await new Promise(resolve => setImmediate(resolve));
        };
        const modern = new FakeUpstream('modern', [prompt('a')]);
        modern.ttlMs = 0;
        const catalog = await setup(t, [modern]);
        assert.equal(catalog.freshForMs(), undefined);
        t.mock.timers.tick(10 * RELIST.relistIntervalMs);
        await settle();
        assert.equal(modern.listCalls, 1, 'not read on a schedule');

        modern.setAnnouncing(false);
        assert.equal(catalog.freshForMs(), 0, 'its own ttlMs, from the drop on');
        t.mock.timers.tick(RELIST.minRelistIntervalMs);
        await settle();
        assert.equal(modern.listCalls, 2, 'read on a schedule while it cannot announce');

        modern.setAnnouncing(true);
        t.mock.timers.tick(50);
        await settle();
        assert.equal(modern.listCalls, 3, 'read again once the subscription is back, as a change may have gone unheard');
        assert.equal(catalog.freshForMs(), undefined);
    });
});
