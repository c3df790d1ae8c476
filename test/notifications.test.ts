/**
 * Upstream list_changed bursts become one downstream notification per session,
 * and only when what the session can see changed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { closeAfter, connectHttp, listAllPages, sleep, startHttpFixture, startTestGateway, stdioFixture, waitFor, type HttpFixture } from './helpers.js';
import { getStream, openRawSession, SseReader } from './raw-http.js';

/**
 * A burst ends after DEBOUNCE_MS without an event: on a loaded machine two upstreams' events, sent at once, can
 * arrive a few hundred milliseconds apart, and must still be one burst.
 */
const DEBOUNCE_MS = 500;
const MAX_DELAY_MS = 2500;
/** Long enough after a notification that a second one for the same burst would have arrived. */
const QUIET_MS = MAX_DELAY_MS + 4 * DEBOUNCE_MS;

interface Observed {
    client: Client;
    count: number;
}

async function observe(url: string): Promise<Observed> {
    const client = await connectHttp(url);
    const observed: Observed = { client, count: 0 };
    client.setNotificationHandler('notifications/prompts/list_changed', () => {
        observed.count++;
    });
    // No wait for the client's standalone GET stream: a notification sent before it opens is held for it.
    return observed;
}

describe('list_changed coalescing', () => {
    let docs: HttpFixture;
    let gateway: RunningGateway;
    let sessions: Observed[];

    before(async () => {
        docs = await startHttpFixture('streamable-http', { name: 'docs' });
        gateway = await startTestGateway({
            notifications: { debounceMs: DEBOUNCE_MS, maxDelayMs: MAX_DELAY_MS },
            upstreams: [stdioFixture('local'), { id: 'docs', transport: 'streamable-http', url: docs.url }]
        });
        sessions = [await observe(gateway.url!), await observe(gateway.url!)];
    });

    after(async () => {
        await Promise.all(sessions.map(session => session.client.close()));
        await gateway?.close();
        await docs?.close();
    });

    const counts = () => sessions.map(session => session.count);

    test('a burst of 100 upstream events reaches each session as exactly one notification', async () => {
        const before = counts();
        const result = await sessions[0]!.client.getPrompt({ name: 'local__emit-list-changed', arguments: { count: '100', add: 'burst-1' } });
        assert.match(JSON.stringify(result), /sent 100/);
        await waitFor(() => sessions.every((session, i) => session.count > before[i]!), 60_000, 'a notification on every session');
        await sleep(QUIET_MS);
        assert.deepEqual(
            counts(),
            before.map(count => count + 1)
        );
    });

    test('events from two upstreams in one burst still give one notification', async () => {
        const before = counts();
        await Promise.all([
            sessions[0]!.client.getPrompt({ name: 'local__emit-list-changed', arguments: { count: '20', add: 'burst-2' } }),
            sessions[1]!.client.getPrompt({ name: 'docs__emit-list-changed', arguments: { count: '20', add: 'burst-2' } })
        ]);
        await waitFor(() => sessions.every((session, i) => session.count > before[i]!), 60_000, 'a notification on every session');
        await sleep(QUIET_MS);
        assert.deepEqual(
            counts(),
            before.map(count => count + 1)
        );
    });

    test('a burst that changes nothing a session can see sends no notification', async () => {
        const before = counts();
        await sessions[0]!.client.getPrompt({ name: 'local__emit-list-changed', arguments: { count: '50' } });
        // Control: a real change afterwards is announced, so the quiet above was not a broken pipeline.
        await sleep(QUIET_MS);
        assert.deepEqual(counts(), before, 'notified although the list is the same');
        await sessions[0]!.client.getPrompt({ name: 'local__emit-list-changed', arguments: { count: '1', add: 'control' } });
        await waitFor(() => sessions.every((session, i) => session.count > before[i]!), 60_000, 'a notification for the real change');
    });

    test('after the notification, the list shows the change', async () => {
        const before = counts();
        await sessions[0]!.client.getPrompt({ name: 'docs__mutate', arguments: { add: 'fresh-one', remove: 'prompt-001' } });
        await waitFor(() => sessions[1]!.count > before[1]!, 60_000, 'the notification');
        const names = (await listAllPages(sessions[1]!.client)).names;
        assert.ok(names.includes('docs__fresh-one'));
        assert.ok(!names.includes('docs__prompt-001'));
        assert.ok(names.includes('local__prompt-001'), 'the other upstream is untouched');
    });

    test('an upstream going down and coming back notifies sessions', async () => {
        const before = counts();
        await sessions[0]!.client.getPrompt({ name: 'local__crash' }).catch(() => {});
        await waitFor(() => sessions.every((session, i) => session.count > before[i]!), 60_000, 'a notification on every session');
        await waitFor(() => gateway.upstreams[0]!.state === 'ready', 60_000, 'local to reconnect');
        await waitFor(async () => (await listAllPages(sessions[1]!.client)).names.includes('local__with-required'), 60_000, 'local prompts back');
    });
});

describe('a session without a GET stream', () => {
    test('gets the notification held back when it opens the stream', async t => {
        const gateway = await startTestGateway({ notifications: { debounceMs: 20, maxDelayMs: 100 }, upstreams: [stdioFixture('local')] });
        closeAfter(t, () => gateway.close());
        const other = await connectHttp(gateway.url!);
        closeAfter(t, () => other.close());
        const session = await openRawSession(gateway.url!);

        // The change happens while the raw session has no stream open.
        let seenByOther = 0;
        other.setNotificationHandler('notifications/prompts/list_changed', () => void seenByOther++);
        await other.getPrompt({ name: 'local__emit-list-changed', arguments: { count: '3', add: 'held-back' } });
        await waitFor(() => seenByOther > 0, 60_000, 'the burst to be flushed');

        const stream = await getStream(gateway.url!, session.headers);
        assert.equal(stream.status, 200);
        const reader = new SseReader(stream);
        try {
            // Without the held-back notification nothing arrives: give up after a while instead of waiting forever.
            await assert.doesNotReject(
                reader.next(message => message.method === 'notifications/prompts/list_changed', 20_000),
                'the held-back list_changed arrives'
            );
        } finally {
            await reader.cancel();
        }
    });
});
