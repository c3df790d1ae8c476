/** A cancelled downstream request cancels its upstream request too. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, fixtureStats, startTestGateway, stdioFixture, waitFor } from './helpers.js';
import { messagesOf, openRawSession, post } from './raw-http.js';

describe('cancellation', () => {
    let gateway: RunningGateway;
    let client: Client;

    before(async () => {
        gateway = await startTestGateway({ upstreams: [stdioFixture('local', {}, { timeoutMs: 30_000 })] });
        client = await connectHttp(gateway.url!);
    });

    after(async () => {
        await client?.close();
        await gateway?.close();
    });

    const active = () => gateway.upstreams[0]!.load.active;

    test('notifications/cancelled from the client reaches the upstream', async () => {
        const before = await fixtureStats(client, 'local__stats');
        const controller = new AbortController();
        const request = client.getPrompt({ name: 'local__slow', arguments: { ms: '20000' } }, { signal: controller.signal });
        request.catch(() => {});
        await waitFor(() => active() === 1, 20_000, 'the request to reach the upstream');
        controller.abort('user gave up');
        await assert.rejects(request);
        await waitFor(async () => (await fixtureStats(client, 'local__stats')).slowCancelled === before.slowCancelled + 1, 20_000, 'the upstream to see the cancellation');
        await waitFor(() => active() === 0, 20_000, 'the upstream slot to be freed');
    });

    test('a client whose HTTP connection goes away mid-request cancels the upstream request', async () => {
        const before = await fixtureStats(client, 'local__stats');
        const session = await openRawSession(gateway.url!);

        const controller = new AbortController();
        const pending = post(gateway.url!, { jsonrpc: '2.0', id: 2, method: 'prompts/get', params: { name: 'local__slow', arguments: { ms: '20000' } } }, session.headers, {
            signal: controller.signal
        }).then(response => response.text());
        pending.catch(() => {});
        await waitFor(() => active() === 1, 20_000, 'the request to reach the upstream');
        controller.abort();
        await waitFor(async () => (await fixtureStats(client, 'local__stats')).slowCancelled === before.slowCancelled + 1, 20_000, 'the upstream to see the cancellation');
        await waitFor(() => active() === 0, 20_000, 'the upstream slot to be freed');
    });

    test('cancelled requests, however many in a row, are not taken for a hung upstream', async () => {
        for (let i = 0; i < 4; i++) {
            const controller = new AbortController();
            const request = client.getPrompt({ name: 'local__slow', arguments: { ms: '20000' } }, { signal: controller.signal });
            request.catch(() => {});
            await waitFor(() => active() === 1, 20_000, 'the request to reach the upstream');
            controller.abort('user gave up');
            await assert.rejects(request);
            await waitFor(() => active() === 0, 20_000, 'the upstream slot to be freed');
        }
        assert.equal(gateway.upstreams[0]!.state, 'ready');
        assert.equal(gateway.faults.of('local').disconnected, undefined, 'the connection was not dropped');
    });

    test('a request reusing the id of one in flight is -32600, and cancelling that id still reaches the first', { timeout: 60_000 }, async t => {
        const before = await fixtureStats(client, 'local__stats');
        const session = await openRawSession(gateway.url!);
        const controller = new AbortController();
        t.after(() => controller.abort());
        const slow = { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'local__slow', arguments: { ms: '20000' } } };
        const first = post(gateway.url!, slow, session.headers, { signal: controller.signal }).then(response => response.text());
        first.catch(() => {});
        await waitFor(() => active() === 1, 20_000, 'the first request to reach the upstream');

        const fast = { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'local__slow', arguments: { ms: '1' } } };
        const [second] = await messagesOf(await post(gateway.url!, fast, session.headers));
        assert.equal(second?.id, 1);
        assert.equal(second?.error?.code, -32600, JSON.stringify(second));
        assert.match(second.error.message, /already in use/);
        assert.equal(active(), 1, 'the first request is untouched');

        const cancelled = await post(gateway.url!, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, session.headers);
        assert.equal(cancelled.status, 202);
        await waitFor(async () => (await fixtureStats(client, 'local__stats')).slowCancelled === before.slowCancelled + 1, 20_000, 'the first request to be cancelled upstream');
        await waitFor(() => active() === 0, 20_000, 'the upstream slot to be freed');
    });
});
