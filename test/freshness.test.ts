/**
 * Honest freshness: an upstream that cannot announce changes (no `listChanged`, or a 2026-07-28 upstream without an
 * acknowledged subscription) is read again on a schedule (its own ttlMs where it gives one, else
 * caching.relistIntervalMs or its own relistIntervalMs; never more often than caching.minRelistIntervalMs), and the
 * change reaches every client that sees it: a 2025 session as notifications/prompts/list_changed, a 2026-07-28 client
 * on its subscriptions/listen stream. The merged list's ttlMs is never longer than the gateway can vouch for; an
 * upstream that announces its changes binds it to nothing, whatever ttlMs it gives.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { Client, McpSubscription } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { closeAfter, connectHttp, connectModernHttp, listAllPages, startTestGateway, upstreamsReady } from './helpers.js';
import { postModern, type JsonRpcMessage } from './raw-http.js';
import { revisionUpstream } from './revision-upstream.js';

/** How often the 2025 upstream is read again, and the ttlMs the 2026-07-28 one gives: short, for the test's sake. */
const QUIET_RELIST_MS = 300;
const MODERN_TTL_MS = 400;

/**
 * Hands out a promise of the next notifications/prompts/list_changed the client gets. Set up before a 2026-07-28
 * client's listen: its subscription takes the handlers set by then.
 */
function listChangedOf(client: Client): () => Promise<void> {
    let waiting: (() => void)[] = [];
    client.setNotificationHandler('notifications/prompts/list_changed', () => {
        for (const resolve of waiting) resolve();
        waiting = [];
    });
    return () => new Promise(resolve => waiting.push(resolve));
}

async function modernListPage(url: string): Promise<Record<string, unknown>> {
    const response = await postModern(url, 'prompts/list');
    assert.equal(response.status, 200);
    const message = (await response.json()) as JsonRpcMessage;
    return message.result as Record<string, unknown>;
}

describe('upstreams that cannot announce changes', { timeout: 60_000 }, () => {
    let gateway: RunningGateway;
    let legacy: Client;
    let modern: Client;
    let legacyHears: () => Promise<void>;
    let modernHears: () => Promise<void>;
    let subscription: McpSubscription | undefined;

    before(async () => {
        gateway = await startTestGateway({
            notifications: { debounceMs: 20, maxDelayMs: 100 },
            // An hour: only the upstreams' own settings explain a read within the test.
            caching: { relistIntervalMs: 3_600_000, minRelistIntervalMs: 100 },
            upstreams: [
                revisionUpstream('quiet', '2025-11-25', ['--silent'], { relistIntervalMs: QUIET_RELIST_MS }),
                // Neither can announce: one declares no listChanged (so no subscription is opened), one refuses it.
                revisionUpstream('modern', '2026-07-28', ['--silent', '--ttl-ms', String(MODERN_TTL_MS)]),
                revisionUpstream('refused', '2026-07-28', ['--refuse-listen', '--ttl-ms', String(MODERN_TTL_MS)])
            ]
        });
        await upstreamsReady(gateway, undefined, 60_000);
        legacy = await connectHttp(gateway.url!, { protocolVersion: '2025-11-25' });
        modern = await connectModernHttp(gateway.url!);
        legacyHears = listChangedOf(legacy);
        modernHears = listChangedOf(modern);
        subscription = await modern.listen({ promptsListChanged: true });
    });

    after(async () => {
        await subscription?.close();
        await Promise.all([legacy?.close(), modern?.close()]);
        await gateway?.close();
    });

    for (const id of ['quiet', 'modern', 'refused']) {
        test(`a change of the ${id} upstream, announced by no one, reaches a 2025 session and a 2026-07-28 listener`, async () => {
            const before = (await listAllPages(legacy)).names;
            assert.ok(!before.includes(`${id}__added-1`));
            const heard = Promise.all([legacyHears(), modernHears()]);
            await legacy.request({ method: 'prompts/get', params: { name: `${id}__trigger-change` } });
            await heard;
            assert.ok((await listAllPages(legacy)).names.includes(`${id}__added-1`));
        });
    }

    test("the merged ttlMs is no longer than the least fresh list: the re-list interval, or an upstream's own ttlMs", async () => {
        const page = await modernListPage(gateway.url!);
        const ttlMs = page['ttlMs'];
        assert.ok(Number.isSafeInteger(ttlMs) && (ttlMs as number) >= 0 && (ttlMs as number) <= QUIET_RELIST_MS, `ttlMs ${String(ttlMs)}`);
    });
});

/**
 * A 2026-07-28 client of the gateway on subscriptions/listen, and `changeOf(id)`: the upstream `id` changes its list
 * (trigger-change), and the promise settles once the client has heard of it.
 */
async function listeningClient(t: TestContext, gateway: RunningGateway): Promise<{ client: Client; changeOf: (id: string) => Promise<void> }> {
    const client = await connectModernHttp(gateway.url!);
    closeAfter(t, () => client.close());
    const hears = listChangedOf(client);
    const subscription = await client.listen({ promptsListChanged: true });
    closeAfter(t, () => subscription.close());
    const changeOf = async (id: string) => {
        const heard = hears();
        await client.request({ method: 'prompts/get', params: { name: `${id}__trigger-change` } });
        await heard;
    };
    return { client, changeOf };
}

test(
    'a 2026-07-28 upstream that announces its changes on an acknowledged subscription binds nothing with its ttlMs of 0: the merged ttlMs is caching.listTtlMs',
    { timeout: 120_000 },
    async t => {
        // No --ttl-ms: the SDK's default hint, 0. A floor of 100 ms would have it read ten times a second if it counted.
        const gateway = await startTestGateway({
            notifications: { debounceMs: 20, maxDelayMs: 100 },
            caching: { listTtlMs: 45_000, minRelistIntervalMs: 100 },
            upstreams: [revisionUpstream('modern', '2026-07-28', [])]
        });
        closeAfter(t, () => gateway.close());
        await upstreamsReady(gateway, undefined, 60_000);
        const { changeOf } = await listeningClient(t, gateway);
        // Its change reaches the client only over the gateway's subscription to it: acknowledged and open.
        await changeOf('modern');
        assert.equal((await modernListPage(gateway.url!))['ttlMs'], 45_000);
    }
);

/** How many prompts/list requests the gateway has made of an upstream (its client-operation histogram's counts, every outcome). */
async function listReadsOf(gateway: RunningGateway, upstream: string): Promise<number> {
    const metric = gateway.metrics?.registry.getSingleMetric('mcp_client_operation_duration_seconds');
    assert.ok(metric, 'the client-operation histogram');
    // A histogram's values carry the name of the series each belongs to (its buckets, _sum and _count).
    const values = (await metric.get()).values as { value: number; labels: Record<string, unknown>; metricName?: string }[];
    return values
        .filter(value => value.metricName?.endsWith('_count') === true && value.labels['upstream'] === upstream && value.labels['method'] === 'prompts/list')
        .reduce((sum, value) => sum + value.value, 0);
}

test(
    'a 2026-07-28 upstream that announces its changes on an acknowledged subscription is not read on a schedule: while one that cannot is read again at the floor, it is not read',
    { timeout: 120_000 },
    async t => {
        const gateway = await startTestGateway({
            notifications: { debounceMs: 20, maxDelayMs: 100 },
            caching: { minRelistIntervalMs: 100 },
            upstreams: [revisionUpstream('modern', '2026-07-28', []), revisionUpstream('ticking', '2026-07-28', ['--silent', '--ttl-ms', '0'])]
        });
        closeAfter(t, () => gateway.close());
        await upstreamsReady(gateway, undefined, 60_000);
        const { client, changeOf } = await listeningClient(t, gateway);
        // Heard over the gateway's subscription to it: acknowledged and open.
        await changeOf('modern');
        // A change that came while a read was under way leaves one more read to the next reader: here, before the count.
        await listAllPages(client);
        const reads = await listReadsOf(gateway, 'modern');
        // Each change of the other is found only by a read of it on its schedule: two of them span at least one floor.
        await changeOf('ticking');
        await changeOf('ticking');
        assert.equal(await listReadsOf(gateway, 'modern'), reads);
    }
);

test('upstreams that announce their changes: the merged ttlMs is caching.listTtlMs', { timeout: 120_000 }, async t => {
    const gateway = await startTestGateway({ caching: { listTtlMs: 45_000 }, upstreams: [revisionUpstream('loud', '2025-11-25', [])] });
    closeAfter(t, () => gateway.close());
    await upstreamsReady(gateway, undefined, 60_000);
    assert.equal((await modernListPage(gateway.url!))['ttlMs'], 45_000);
});
