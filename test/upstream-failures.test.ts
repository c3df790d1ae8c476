/** Upstreams that are missing at start never stop the gateway; they are retried and join later. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closeAfter, connectHttp, freePort, listAllPages, rpcError, startHttpFixture, startTestGateway, stdioFixture, waitFor } from './helpers.js';

test('unreachable and unstartable upstreams are left out, the rest is served, and a late upstream joins', async t => {
    const port = await freePort();
    const gateway = await startTestGateway({
        upstreams: [
            { id: 'late', transport: 'streamable-http', url: `http://127.0.0.1:${port}/mcp`, timeoutMs: 2000 },
            { id: 'broken', transport: 'stdio', command: 'definitely-not-a-command-here' },
            stdioFixture('local')
        ]
    });
    closeAfter(t, () => gateway.close());
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    // The two missing ones are down, or already in a reconnect attempt: not up either way.
    assert.deepEqual(
        gateway.upstreams.map(upstream => upstream.state === 'ready'),
        [false, false, true]
    );
    const first = await listAllPages(client);
    assert.ok(first.names.length > 0 && first.names.every(name => name.startsWith('local__')));
    const down = await rpcError(client.getPrompt({ name: 'late__with-required', arguments: { topic: 'x' } }));
    assert.equal(down.code, -32602, 'a prompt of an upstream that never connected is unknown');

    let notified = 0;
    client.setNotificationHandler('notifications/prompts/list_changed', () => void notified++);
    const fixture = await startHttpFixture('streamable-http', { flags: ['--port', String(port)] });
    closeAfter(t, () => fixture.close());
    await waitFor(() => gateway.upstreams[0]!.state === 'ready', 60_000, 'the late upstream to be connected by a retry');
    await waitFor(() => notified > 0, 20_000, 'a list_changed for the new prompts');
    const after = await listAllPages(client);
    assert.ok(after.names.includes('late__with-required'));
    assert.notEqual(gateway.upstreams[1]!.state, 'ready', 'the broken one is still retried, not fatal');
});

test('an upstream that answers 401 is reported as such, with no credential in the report', async t => {
    const key = 'gateway-a-key-0123456789';
    const guarded = await startTestGateway({
        auth: { mode: 'apiKey' },
        clients: [{ id: 'b', apiKey: key }],
        upstreams: [stdioFixture('local')]
    });
    closeAfter(t, () => guarded.close());
    // A second gateway in front of the first, over each transport, without a key or with a wrong one.
    const wrongKey = { 'X-API-Key': 'not-the-key-0123456789' };
    const gateway = await startTestGateway({
        // No reconnect attempt while the test looks: the refused ones stay "down" with their first error.
        reconnect: { initialMs: 60_000, maxMs: 60_000 },
        upstreams: [
            { id: 'streamable', transport: 'streamable-http', url: guarded.url!, timeoutMs: 3000 },
            // "http" falls back to legacy SSE on a 4xx, but not on 401: the SSE attempt would hide the real failure.
            { id: 'either', transport: 'http', url: guarded.url!, timeoutMs: 3000, headers: wrongKey },
            { id: 'legacy', transport: 'sse', url: guarded.url!, timeoutMs: 3000, headers: wrongKey },
            { id: 'goodkey', transport: 'streamable-http', url: guarded.url!, timeoutMs: 10_000, headers: { 'X-API-Key': key } }
        ]
    });
    closeAfter(t, () => gateway.close());
    const [streamable, either, legacy, goodkey] = gateway.upstreams;
    assert.equal(goodkey!.state, 'ready');
    for (const upstream of [streamable!, either!, legacy!]) {
        assert.equal(upstream.state, 'down');
        assert.match(upstream.lastError ?? '', /HTTP 401/);
        assert.doesNotMatch(upstream.lastError ?? '', /not-the-key|gateway-a-key/);
    }
});
