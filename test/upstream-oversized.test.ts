/**
 * Oversized messages from stdio upstreams (limits.maxUpstreamMessageBytes, maxPromptBytes), through real children
 * of test/fixtures/raw-server.ts: each fails only its own request or is left out on its own; the connection stays.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { closeAfter, connectHttp, listAllPages, rawStdio, rpcError, startTestGateway, stdioFixture, upstreamsReady, waitFor } from './helpers.js';
import { scrape, value } from './prometheus.js';

const LINE_LIMIT = 16 * 1024 * 1024;
const OVER_LIMIT = 17_000_000;
const TIMEOUT = { timeout: 60_000 };

describe('oversized messages from stdio upstreams', () => {
    let gateway: RunningGateway;
    let client: Client;

    before(async () => {
        gateway = await startTestGateway({
            notifications: { debounceMs: 20, maxDelayMs: 100 },
            upstreams: [
                rawStdio('big', ['--big-prompt', '50000000']),
                rawStdio('idlast', ['--big-prompt', String(OVER_LIMIT), '--id-last']),
                rawStdio('chatty', ['--big-notification', String(OVER_LIMIT)]),
                rawStdio('bigdesc', ['--big-description', '10000000']),
                rawStdio('biglist', ['--big-list', String(OVER_LIMIT), '--big-list-after', '1', '--flood', '1'])
            ].map(upstream => ({ ...upstream, timeoutMs: 30_000 }))
        });
        await upstreamsReady(gateway);
        client = await connectHttp(gateway.url!);
    });

    after(async () => {
        await client?.close();
        await gateway?.close();
    });

    const faults = (id: string) => gateway.faults.of(id);

    /** Still the first connection: never dropped, never reconnected. */
    async function stillFirstConnection(id: string): Promise<void> {
        assert.equal(gateway.upstreams.find(upstream => upstream.id === id)?.state, 'ready', id);
        assert.equal(faults(id).disconnected, undefined, `${id}: ${JSON.stringify(faults(id))}`);
        const metrics = await scrape(gateway.operatorUrls.metrics!);
        assert.equal(value(metrics, 'mcp_gateway_upstream_reconnects_total', { upstream: id }), 0, `${id}: reconnects`);
    }

    const overLimit = (id: string) => `Upstream ${id} failed: response larger than ${LINE_LIMIT} bytes (limits.maxUpstreamMessageBytes)`;

    test('a 50 MB prompts/get result fails only its own request; concurrent requests on the same upstream succeed', TIMEOUT, async () => {
        // All sent at once: the three small answers are read while the big one is in flight, or after it.
        const [error, ...others] = await Promise.all([
            rpcError(client.getPrompt({ name: 'big__big' })),
            ...['ok-0', 'ok-1', 'ok-2'].map(name => client.getPrompt({ name: `big__${name}`, arguments: { topic: 'size' } }))
        ]);
        assert.deepEqual(error, { code: -32603, message: overLimit('big') });
        for (const [index, other] of others.entries()) assert.match(JSON.stringify(other.messages), new RegExp(`ok-${index}: tell me about size`));
        assert.equal(faults('big').oversized_result, 1);
        await stillFirstConnection('big');
        // And the next request is served as usual.
        const next = await client.getPrompt({ name: 'big__ok-0' });
        assert.match(JSON.stringify(next.messages), /ok-0: tell me about anything/);
    });

    test('an oversized answer with its id at the end of the envelope fails its request alike', TIMEOUT, async () => {
        assert.deepEqual(await rpcError(client.getPrompt({ name: 'idlast__big' })), { code: -32603, message: overLimit('idlast') });
        assert.equal(faults('idlast').oversized_result, 1);
        const next = await client.getPrompt({ name: 'idlast__ok-1' });
        assert.match(JSON.stringify(next.messages), /ok-1: tell me about anything/);
        await stillFirstConnection('idlast');
    });

    test('an oversized notification is dropped and counted; the answer after it arrives', TIMEOUT, async () => {
        const result = await client.getPrompt({ name: 'chatty__ok-2' });
        assert.match(JSON.stringify(result.messages), /ok-2: tell me about anything/);
        assert.equal(faults('chatty').oversized_result, 1);
        await stillFirstConnection('chatty');
    });

    test('a prompt with a 10 MB description is left out alone: its siblings are listed, no reconnect loop', TIMEOUT, async () => {
        const names = (await listAllPages(client)).names.filter(name => name.startsWith('bigdesc__'));
        assert.deepEqual(names, ['bigdesc__ok-0', 'bigdesc__ok-2']);
        assert.ok((faults('bigdesc').oversized_prompt ?? 0) >= 1, JSON.stringify(faults('bigdesc')));
        await stillFirstConnection('bigdesc');
    });

    test('a list page over the line limit fails that read: the last good list is served and read again later', TIMEOUT, async () => {
        const listed = async () => (await listAllPages(client)).names.filter(name => name.startsWith('biglist__'));
        const good = ['biglist__ok-0', 'biglist__ok-1', 'biglist__ok-2', 'biglist__flood'];
        assert.deepEqual(await listed(), good);
        // The second list read (after this list_changed) is the oversized one.
        await client.getPrompt({ name: 'biglist__flood' });
        await waitFor(
            async () => {
                assert.deepEqual(await listed(), good);
                return faults('biglist').oversized_result === 1;
            },
            20_000,
            'the failed list read'
        );
        await stillFirstConnection('biglist');
        // The list cache tries again a few seconds later (and fails again), still on the same connection.
        await waitFor(
            async () => {
                assert.deepEqual(await listed(), good);
                return faults('biglist').oversized_result === 2;
            },
            30_000,
            'the list read retried'
        );
        await stillFirstConnection('biglist');
    });
});

test('an upstream list past limits.maxListBytes is cut there, without dropping the connection', TIMEOUT, async t => {
    // 2,000 prompts of about 200 bytes each: some 400 KB of definitions against a budget of 64 KiB.
    const gateway = await startTestGateway({ limits: { maxListBytes: 65_536 }, upstreams: [stdioFixture('many', { prompts: 2000 })] });
    closeAfter(t, () => gateway.close());
    await upstreamsReady(gateway);
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    const { names } = await listAllPages(client);
    assert.ok(names.length > 100 && names.length < 2000, `${names.length} prompts listed`);
    assert.equal(gateway.faults.of('many').list_truncated, 1);
    assert.equal(gateway.faults.of('many').disconnected, undefined);
    assert.equal(gateway.upstreams[0]!.state, 'ready');
});
