/**
 * Bounded latency: a slow upstream never holds prompts/list longer than its
 * timeoutMs, and a saturated one refuses work at once instead of queueing
 * without end.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { capturingLogger, connectHttp, listAllPages, rawStdio, rpcError, startTestGateway, stdioFixture, upstreamsReady, waitFor } from './helpers.js';

test('a list slower than timeoutMs is served from the last good list, then updated with a notification when it lands', async t => {
    const { logger, lines } = capturingLogger();
    const gateway = await startTestGateway(
        {
            notifications: { debounceMs: 50, maxDelayMs: 200 },
            // Pages of 5 at 700 ms each: every page is within timeoutMs, the whole list is not.
            upstreams: [stdioFixture('lagging', { pageSize: 5 }, { timeoutMs: 1000 }), stdioFixture('local')]
        },
        logger
    );
    await upstreamsReady(gateway);
    const client = await connectHttp(gateway.url!);
    let notified = 0;
    client.setNotificationHandler('notifications/prompts/list_changed', () => void notified++);
    try {
        const before = (await listAllPages(client)).names;
        assert.ok(before.includes('lagging__with-required'));
        // The upstream's list_changed reaches the gateway before this call returns (the fixture sends it first).
        await client.getPrompt({ name: 'lagging__set-list-delay', arguments: { ms: '700', add: 'late-one' } });
        const started = Date.now();
        const during = (await listAllPages(client)).names;
        const took = Date.now() - started;
        assert.ok(took < 2000, `list took ${took} ms with a 1000 ms timeout`);
        assert.deepEqual(during, before, 'the last good list is served while the new one is slow');
        assert.equal(gateway.faults.of('lagging').list_slow, 1);
        assert.ok(lines().some(line => line.upstream === 'lagging' && line.fault === 'list_slow'), 'the slow list is logged with the upstream id');

        assert.equal(notified, 0, 'nothing visible changed yet');
        await waitFor(() => notified >= 1, 8000, 'a notification when the slow list lands');
        const after = (await listAllPages(client)).names;
        assert.ok(after.includes('lagging__late-one'), 'the late list is served once it landed');
        t.diagnostic(`list with a slow upstream answered in ${took} ms (timeoutMs 1000)`);
    } finally {
        await client.close();
        await gateway.close();
    }
});

test('an upstream whose list never answers is left out after timeoutMs; later lists do not wait for it again', async () => {
    const gateway = await startTestGateway({
        upstreams: [rawStdio('stuck', ['--hang', 'list'], { timeoutMs: 800 }), stdioFixture('local')]
    });
    await upstreamsReady(gateway);
    const client = await connectHttp(gateway.url!);
    try {
        const started = Date.now();
        const names = (await listAllPages(client)).names;
        const took = Date.now() - started;
        assert.ok(names.includes('local__with-required'));
        assert.ok(!names.some(name => name.startsWith('stuck__')));
        assert.ok(took < 1500, `a list after the warm-up took ${took} ms: it waited for the stuck upstream again`);
        assert.equal(gateway.upstreams[0]!.state, 'ready', 'a slow list is not a dead connection');
    } finally {
        await client.close();
        await gateway.close();
    }
});

test('beyond maxConcurrency + maxQueue, requests fail at once with "upstream busy"; the rest complete', async () => {
    const gateway = await startTestGateway({
        upstreams: [stdioFixture('busy', {}, { maxConcurrency: 2, maxQueue: 3, timeoutMs: 20_000 }), stdioFixture('local')]
    });
    const client = await connectHttp(gateway.url!);
    try {
        const results = await Promise.all(
            Array.from({ length: 8 }, async () => {
                const started = Date.now();
                try {
                    await client.getPrompt({ name: 'busy__slow', arguments: { ms: '1500' } });
                    return { ok: true, took: Date.now() - started };
                } catch (error) {
                    const { code, message } = error as { code: number; message: string };
                    return { ok: false, took: Date.now() - started, code, message };
                }
            })
        );
        const refused = results.filter(result => !result.ok);
        assert.equal(results.filter(result => result.ok).length, 5, '2 in flight and 3 queued complete');
        assert.equal(refused.length, 3);
        for (const result of refused) {
            assert.equal(result.code, -32603);
            assert.match(result.message ?? '', /upstream busy/);
            assert.ok(result.took < 1000, `a refused request took ${result.took} ms: it waited`);
        }
        assert.equal(gateway.faults.of('busy').busy, 3);
        assert.deepEqual(gateway.upstreams[0]!.load, { active: 0, queued: 0 });
        const other = await client.getPrompt({ name: 'local__all-content' });
        assert.ok(other.messages.length > 0);
        const error = await rpcError(client.getPrompt({ name: 'busy__with-required' }));
        assert.equal(error.code, -32602, 'after the burst the upstream takes requests again (and validates them)');
    } finally {
        await client.close();
        await gateway.close();
    }
});
