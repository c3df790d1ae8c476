/**
 * Bounded latency: a slow upstream never holds prompts/list longer than its
 * timeoutMs, and a saturated one refuses work at once instead of queueing
 * without end.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
    capturingLogger,
    closeAfter,
    connectHttp,
    listAllPages,
    rpcError,
    silentStdio,
    startHttpFixture,
    startRawHttp,
    startTestGateway,
    stdioFixture,
    upstreamsReady,
    waitFor
} from './helpers.js';

/**
 * Each page of the lagging upstream's list answers within its timeoutMs, the whole list lands long after it: the
 * gap, LATE_LIST_MS - TIMEOUT_MS, is the time the test has to see the stale list served and no notification yet.
 */
const TIMEOUT_MS = 2000;
const PAGE_DELAY_MS = 800;
const PAGE_SIZE = 2;

test('a list slower than timeoutMs is served from the last good list, then updated with a notification when it lands', async t => {
    const { logger, lines } = capturingLogger();
    const lagging = await startHttpFixture('streamable-http', { pageSize: PAGE_SIZE });
    closeAfter(t, () => lagging.close());
    const gateway = await startTestGateway(
        {
            notifications: { debounceMs: 50, maxDelayMs: 200 },
            upstreams: [{ id: 'lagging', transport: 'streamable-http', url: lagging.url, timeoutMs: TIMEOUT_MS }, stdioFixture('local')]
        },
        logger
    );
    closeAfter(t, () => gateway.close());
    await upstreamsReady(gateway);
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    let notified = 0;
    client.setNotificationHandler('notifications/prompts/list_changed', () => void notified++);

    const before = (await listAllPages(client)).names;
    assert.ok(before.includes('lagging__with-required'));
    const pages = Math.ceil((before.filter(name => name.startsWith('lagging__')).length + 1) / PAGE_SIZE);
    assert.ok(pages * PAGE_DELAY_MS >= 3 * TIMEOUT_MS, `${pages} pages of ${PAGE_DELAY_MS} ms: the late list must land well after timeoutMs`);
    // Over HTTP the upstream's list_changed comes on its own stream, not before the answer: wait for the gateway to get it.
    let changed = false;
    gateway.upstreams[0]!.events.subscribe(event => void (changed ||= event.type === 'prompts-changed'));
    await client.getPrompt({ name: 'lagging__set-list-delay', arguments: { ms: String(PAGE_DELAY_MS), add: 'late-one' } });
    await waitFor(() => changed, 20_000, "the upstream's list_changed to reach the gateway");
    const started = Date.now();
    const during = (await listAllPages(client)).names;
    const took = Date.now() - started;
    assert.deepEqual(during, before, 'the last good list is served while the new one is slow');
    assert.equal(gateway.faults.of('lagging').list_slow, 1);
    assert.ok(
        lines().some(line => line.upstream === 'lagging' && line.fault === 'list_slow'),
        'the slow list is logged with the upstream id'
    );
    // A loaded machine may take longer than the slow list to walk the served one: only once the late list landed (a
    // view with it built) may a notification have come.
    if (gateway.catalog.cachedEntry('lagging__late-one') === undefined) assert.equal(notified, 0, 'nothing visible changed yet');

    await waitFor(() => notified >= 1, 30_000, 'a notification when the slow list lands');
    const after = (await listAllPages(client)).names;
    assert.ok(after.includes('lagging__late-one'), 'the late list is served once it landed');
    t.diagnostic(`list with a slow upstream answered in ${took} ms (timeoutMs ${TIMEOUT_MS}; the whole list takes ${pages * PAGE_DELAY_MS} ms)`);
});

test('an upstream whose list never answers is left out after timeoutMs; later lists do not wait for it again', async t => {
    const timeoutMs = 3000;
    const stuck = await startRawHttp(['--hang', 'list']);
    closeAfter(t, () => stuck.close());
    const gateway = await startTestGateway({
        upstreams: [{ id: 'stuck', transport: 'streamable-http', url: stuck.url, timeoutMs }, silentStdio('hung', 'answer', { timeoutMs }), stdioFixture('local')]
    });
    closeAfter(t, () => gateway.close());
    await upstreamsReady(gateway);
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    await listAllPages(client);
    // A clock of the gateway's own: a get that "hung" never answers fails at its timeoutMs, the same as stuck's. A
    // later list that waited for stuck again would start after that get and so end after it.
    const settled: string[] = [];
    const hung = rpcError(client.getPrompt({ name: 'hung__p' })).finally(() => settled.push('get'));
    await waitFor(() => gateway.upstreams[1]!.load.active === 1, 20_000, 'the get to reach hung');
    const names = (await listAllPages(client)).names;
    settled.push('list');
    assert.match((await hung).message, new RegExp(`Upstream hung failed: timed out after ${timeoutMs} ms`));
    assert.deepEqual(settled, ['list', 'get'], 'the list waited for stuck again: it ended after a get to hung that began before it timed out');
    assert.ok(names.includes('local__with-required'));
    assert.ok(!names.some(name => name.startsWith('stuck__')));
    assert.equal(gateway.upstreams[0]!.state, 'ready', 'a slow list is not a dead connection');
});

test('beyond maxConcurrency + maxQueue, requests fail at once with "upstream busy"; the rest complete', async t => {
    const gateway = await startTestGateway({
        upstreams: [stdioFixture('busy', {}, { maxConcurrency: 2, maxQueue: 3 }), stdioFixture('local')]
    });
    closeAfter(t, () => gateway.close());
    await upstreamsReady(gateway);
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    // Long enough that all eight requests are in before the first slot frees, even on a loaded machine.
    const slowMs = 3000;
    let settled = 0;
    const results = await Promise.all(
        Array.from({ length: 8 }, async () => {
            try {
                await client.getPrompt({ name: 'busy__slow', arguments: { ms: String(slowMs) } });
                return { ok: true, order: settled++ };
            } catch (error) {
                const { code, message } = error as { code: number; message: string };
                return { ok: false, order: settled++, code, message };
            }
        })
    );
    const refused = results.filter(result => !result.ok);
    assert.equal(results.filter(result => result.ok).length, 5, '2 in flight and 3 queued complete');
    assert.equal(refused.length, 3);
    for (const result of refused) {
        assert.equal(result.code, -32603);
        assert.match(result.message ?? '', /upstream busy/);
        // Refused at once: before any admitted request completed, so none of them waited for a slot.
        assert.ok(result.order < refused.length, `a refused request settled after ${result.order} others: it waited`);
    }
    assert.equal(gateway.faults.of('busy').busy, 3);
    assert.deepEqual(gateway.upstreams[0]!.load, { active: 0, queued: 0 });
    const other = await client.getPrompt({ name: 'local__all-content' });
    assert.ok(other.messages.length > 0);
    const error = await rpcError(client.getPrompt({ name: 'busy__with-required' }));
    assert.equal(error.code, -32602, 'after the burst the upstream takes requests again (and validates them)');
});
