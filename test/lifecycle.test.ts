/**
 * Session lifecycle and the Streamable HTTP transport rules not covered by http-endpoint.test.ts: ping, recovery
 * from 404, DELETE next to other sessions and work in flight, the MCP-Protocol-Version header, and many requests
 * and streams on one session at once. Raw fetch where an SDK client would hide the HTTP status or the stream.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, connectStdio, everythingUpstream, fixtureStats, listAllPages, ROOT, startTestGateway, stdioFixture, waitFor } from './helpers.js';
import { call, deleteSession, getStream, messagesOf, openRawSession, post, SseReader, type JsonRpcMessage, type RawSession } from './raw-http.js';

const CLI = path.join(ROOT, 'dist/cli.js');

/** The text of a prompts/get answer's messages, joined. */
function textOf(message: JsonRpcMessage | undefined): string {
    const messages = (message?.result as { messages?: { content: { type: string; text?: string } }[] } | undefined)?.messages ?? [];
    return messages.map(entry => entry.content.text ?? '').join('\n');
}

function sessionIdOf(client: Client): string {
    const id = (client.transport as StreamableHTTPClientTransport | undefined)?.sessionId;
    assert.ok(id, 'the client has a session');
    return id;
}

const NOTIFICATIONS = { debounceMs: 30, maxDelayMs: 150 };
/** Long enough after a notification that a second one for the same burst would have arrived. */
const QUIET_MS = NOTIFICATIONS.maxDelayMs + 4 * NOTIFICATIONS.debounceMs + 200;

describe('session lifecycle over Streamable HTTP', () => {
    let gateway: RunningGateway;
    let url: string;
    const active = () => gateway.upstreams.find(upstream => upstream.id === 'local')!.load.active;

    before(async () => {
        gateway = await startTestGateway({
            notifications: NOTIFICATIONS,
            upstreams: [stdioFixture('local'), everythingUpstream()]
        });
        url = gateway.url!;
    });

    after(async () => {
        await gateway?.close();
    });

    test('ping is answered with an empty result, on an idle session and beside a request in flight', async () => {
        const session = await openRawSession(url);
        const { status, response } = await call(url, session, 'ping', {}, 'ping-1');
        assert.equal(status, 200);
        assert.deepEqual(response, { jsonrpc: '2.0', id: 'ping-1', result: {} });
        let slowAnswered = false;
        const slow = call(url, session, 'prompts/get', { name: 'local__slow', arguments: { ms: '3000' } }, 'slow').finally(() => (slowAnswered = true));
        await waitFor(() => active() === 1, 20_000, 'the slow request to reach the upstream');
        const beside = await call(url, session, 'ping', {}, 'ping-2');
        assert.deepEqual(beside.response, { jsonrpc: '2.0', id: 'ping-2', result: {} });
        assert.ok(!slowAnswered, 'ping does not wait for the request in flight');
        assert.equal((await slow).response?.id, 'slow');
    });

    test('after its session is deleted an SDK client gets HTTP 404, and the same Client re-initializes on a new transport', async () => {
        const client = await connectHttp(url);
        try {
            const first = sessionIdOf(client);
            assert.ok((await listAllPages(client)).names.includes('local__with-required'));
            const deleted = await deleteSession(url, { 'mcp-session-id': first, 'mcp-protocol-version': '2025-06-18' });
            assert.equal(deleted.status, 200);

            const error = (await client.listPrompts().then(
                () => assert.fail('a request on a deleted session must fail'),
                (failure: unknown) => failure
            )) as { message: string; status?: number; data?: { status?: number } };
            assert.equal(error.data?.status ?? error.status, 404, String(error.message));

            // What the spec asks of a client on 404: a new initialize, without the old session id.
            await client.close();
            await client.connect(new StreamableHTTPClientTransport(new URL(url)));
            const second = sessionIdOf(client);
            assert.notEqual(second, first);
            const result = await client.getPrompt({ name: 'local__with-required', arguments: { topic: 'again' } });
            assert.match(JSON.stringify(result.messages), /Write about again/);
            // The old id stays dead.
            const old = await post(url, { jsonrpc: '2.0', id: 9, method: 'ping' }, { 'mcp-session-id': first });
            assert.equal(old.status, 404);
            await old.body?.cancel();
        } finally {
            await client.close();
        }
    });

    test('DELETE ends one session: its request in flight is cancelled upstream, its GET stream ends; other sessions and the upstream carry on', async () => {
        const other = await connectHttp(url);
        try {
            const before = await fixtureStats(other, 'local__stats');
            const doomed = await openRawSession(url);
            const stream = new SseReader(await getStream(url, doomed.headers));
            assert.equal(stream.response.status, 200);
            const inFlight = post(url, { jsonrpc: '2.0', id: 'slow', method: 'prompts/get', params: { name: 'local__slow', arguments: { ms: '60000' } } }, doomed.headers);
            await waitFor(() => active() === 1, 20_000, 'the slow request to reach the upstream');

            const deleted = await deleteSession(url, doomed.headers);
            assert.equal(deleted.status, 200);
            await stream.closed(20_000);
            // The POST of the deleted session ends (with or without an answer) instead of hanging for 60 s.
            const answer = await Promise.race([
                inFlight.then(response => messagesOf(response)).catch(() => []),
                new Promise<'hung'>(resolve => setTimeout(() => resolve('hung'), 20_000))
            ]);
            assert.notEqual(answer, 'hung', 'the request in flight on the deleted session ended');
            await waitFor(() => active() === 0, 20_000, 'the upstream slot to be freed');
            await waitFor(async () => (await fixtureStats(other, 'local__stats')).slowCancelled === before.slowCancelled + 1, 20_000, 'the upstream to see the cancellation');

            const gone = await call(url, doomed, 'ping', {}, 3);
            assert.equal(gone.status, 404);
            // The other session and the upstream process are untouched: the same fixture keeps counting.
            const result = await other.getPrompt({ name: 'local__with-required', arguments: { topic: 'still here' } });
            assert.match(JSON.stringify(result.messages), /Write about still here/);
            const after = await fixtureStats(other, 'local__stats');
            assert.ok(after.requests.get > before.requests.get, 'the same upstream process (its counters did not restart)');
            assert.equal(gateway.upstreams[0]!.state, 'ready');
            // Cancelled by the client's side, not failed by the upstream: no fault counted, no reconnect.
            assert.deepEqual(gateway.faults.of('local'), {});
        } finally {
            await other.close();
        }
    });

    describe('MCP-Protocol-Version', () => {
        let session: RawSession;

        before(async () => {
            session = await openRawSession(url, '2025-06-18');
        });

        const list = (version: string | undefined, id: number) => {
            const headers: Record<string, string> = { 'mcp-session-id': session.id };
            if (version !== undefined) headers['mcp-protocol-version'] = version;
            return call(url, session, 'prompts/list', {}, id, headers);
        };

        test('an unsupported or malformed version is HTTP 400 on POST, GET and DELETE; the session survives', async () => {
            for (const [index, version] of ['2099-01-01', '2000-01-01', 'not-a-version', '', '2025-06-18, 2025-03-26'].entries()) {
                const { status, messages } = await list(version, 10 + index);
                assert.equal(status, 400, JSON.stringify(version));
                assert.ok(!messages.some(message => message.result !== undefined), 'nothing was processed');
                for (const method of ['GET', 'DELETE']) {
                    const response = await fetch(url, { method, headers: { accept: 'text/event-stream', 'mcp-session-id': session.id, 'mcp-protocol-version': version } });
                    assert.equal(response.status, 400, `${method} ${JSON.stringify(version)}`);
                    await response.body?.cancel();
                }
            }
            const { status, response } = await list('2025-06-18', 20);
            assert.equal(status, 200, 'the refused DELETEs did not end the session');
            assert.ok(Array.isArray(response?.result?.prompts));
        });

        test('without the header a request after initialize is accepted (the server assumes a version)', async () => {
            const { status, response } = await list(undefined, 30);
            assert.equal(status, 200);
            assert.ok((response?.result?.prompts as unknown[]).length > 0);
        });

        test('a supported version other than the negotiated one is accepted (the spec requires 400 only for invalid or unsupported ones)', async () => {
            for (const [index, version] of ['2025-03-26', '2025-11-25', '2024-11-05'].entries()) {
                const { status, response } = await list(version, 40 + index);
                assert.equal(status, 200, version);
                assert.ok(Array.isArray(response?.result?.prompts), version);
            }
        });
    });

    test('20 concurrent prompts/get on one session, and the same ids on a second session at once, are each answered with their own result', async () => {
        const [a, b] = await Promise.all([openRawSession(url), openRawSession(url)]);
        const requests: { session: RawSession; label: string; id: number | string; params: Record<string, unknown>; expect: RegExp }[] = [];
        for (const [label, session] of [
            ['A', a],
            ['B', b]
        ] as const) {
            for (let i = 0; i < 20; i++) {
                const id = i % 2 === 0 ? i : `id-${i}`;
                const tag = `${label}-${i}`;
                requests.push(
                    i % 3 === 0
                        ? {
                              session,
                              label,
                              id,
                              params: { name: 'everything__args-prompt', arguments: { city: `city ${tag}`, state: tag } },
                              expect: new RegExp(`city ${tag}, ${tag}\\?`)
                          }
                        : {
                              session,
                              label,
                              id,
                              params: { name: 'local__with-required', arguments: { topic: `topic ${tag}`, tone: tag } },
                              expect: new RegExp(`^Write about topic ${tag} in a ${tag} tone$`)
                          }
                );
            }
        }
        // A slow request on each session holds the line open while the others pass it.
        const slow = [a, b].map(session => call(url, session, 'prompts/get', { name: 'local__slow', arguments: { ms: '800' } }, 'slow'));
        const answers = await Promise.all(requests.map(({ session, id, params }) => call(url, session, 'prompts/get', params, id)));
        for (const [index, { label, id, expect }] of requests.entries()) {
            const { status, messages, response } = answers[index]!;
            assert.equal(status, 200);
            assert.equal(messages.filter(message => message.id !== undefined).length, 1, 'one answer per request');
            assert.ok(response, `${label} ${id}: answered with its own id, got ${JSON.stringify(messages)}`);
            assert.match(textOf(response), expect, `${label} ${id}`);
        }
        for (const done of await Promise.all(slow)) assert.match(textOf(done.response), /slept/);
    });

    describe('streams on one session', () => {
        test('a second GET stream is refused with 409 while the first lives; the first keeps working', async () => {
            const session = await openRawSession(url);
            const first = new SseReader(await getStream(url, session.headers));
            try {
                assert.equal(first.response.status, 200);
                assert.match(first.response.headers.get('content-type') ?? '', /text\/event-stream/);
                const second = await getStream(url, session.headers);
                assert.equal(second.status, 409);
                assert.match(await second.text(), /"code":-32000/);
                // Still the live stream: a change reaches it.
                const trigger = await call(url, session, 'prompts/get', { name: 'local__emit-list-changed', arguments: { add: 'second-get-probe' } }, 5);
                assert.match(textOf(trigger.response), /sent 1/);
                await first.next(message => message.method === 'notifications/prompts/list_changed', 20_000);
            } finally {
                await first.cancel();
            }
            // Once the first stream is gone, a new GET is accepted.
            await waitFor(
                async () => {
                    const again = await getStream(url, session.headers);
                    await again.body?.cancel();
                    return again.status === 200;
                },
                20_000,
                'a new GET stream after the first closed'
            );
        });

        test('while POSTs stream their answers, list_changed arrives on the GET stream only, before the slow answer', async () => {
            const session = await openRawSession(url);
            const stream = new SseReader(await getStream(url, session.headers));
            try {
                assert.equal(stream.response.status, 200);
                // Slow enough that the notification, due within maxDelayMs of the burst, comes before its answer. Not awaited
                // yet: an answer sent as JSON has its headers only once the answer is known, an SSE answer at once.
                const slowPosted = post(url, { jsonrpc: '2.0', id: 'slow', method: 'prompts/get', params: { name: 'local__slow', arguments: { ms: '10000' } } }, session.headers);
                slowPosted.catch(() => {});
                await waitFor(() => active() >= 1, 20_000, 'the slow request to reach the upstream');

                const trigger = await call(url, session, 'prompts/get', { name: 'local__emit-list-changed', arguments: { count: '5', add: 'streams-probe' } }, 'trigger');
                assert.match(textOf(trigger.response), /sent 5/);
                assert.ok(!trigger.messages.some(message => message.method === 'notifications/prompts/list_changed'), 'not on the POST stream that caused it');
                const notified = await stream.next(message => message.method === 'notifications/prompts/list_changed', 20_000);
                assert.equal(notified.id, undefined);
                assert.equal(active(), 1, 'the slow request is still in flight when the notification arrives');

                const slowResponse = await slowPosted;
                assert.equal(slowResponse.status, 200);
                const slow = (slowResponse.headers.get('content-type') ?? '').includes('text/event-stream') ? new SseReader(slowResponse) : undefined;
                const slowMessages = slow ? undefined : messagesOf(slowResponse);
                const answered = slow ? await slow.next(message => message.id === 'slow', 30_000) : (await slowMessages!).find(message => message.id === 'slow');
                assert.match(textOf(answered), /slept/);
                if (slow) {
                    await slow.closed(20_000);
                    assert.deepEqual(
                        slow.messages.map(message => message.id ?? message.method),
                        ['slow'],
                        'the slow request stream carried its answer and nothing else'
                    );
                }
                // One burst, one notification, and the list shows the change: a second one would have come within maxDelayMs.
                await new Promise(resolve => setTimeout(resolve, QUIET_MS));
                assert.equal(stream.messages.filter(message => message.method === 'notifications/prompts/list_changed').length, 1);
                const listed = await call(url, session, 'prompts/list', {}, 'list');
                assert.ok((listed.response?.result?.prompts as { name: string }[]).some(prompt => prompt.name === 'local__streams-probe'));
            } finally {
                await stream.cancel();
            }
        });
    });
});

describe('session lifecycle over stdio (the built CLI with --stdio)', () => {
    let dir: string;
    let client: Client;

    before(async () => {
        assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)');
        dir = await mkdtemp(path.join(tmpdir(), 'gateway-lifecycle-'));
        const file = path.join(dir, 'gateway.json');
        await writeFile(file, JSON.stringify({ upstreams: [stdioFixture('local', {}, { timeoutMs: 30_000 })] }));
        client = await connectStdio(process.execPath, [CLI, '--config', file, '--stdio']);
    });

    after(async () => {
        await client?.close();
        if (dir) await rm(dir, { recursive: true, force: true });
    });

    test('ping is answered with an empty result, also beside a request in flight', async () => {
        assert.deepEqual(await client.ping(), {});
        const before = await fixtureStats(client, 'local__stats');
        let slowAnswered = false;
        const slow = client.getPrompt({ name: 'local__slow', arguments: { ms: '3000' } }).finally(() => (slowAnswered = true));
        await waitFor(async () => (await fixtureStats(client, 'local__stats')).slowStarted > before.slowStarted, 20_000, 'the slow request to reach the upstream');
        assert.deepEqual(await client.ping(), {});
        assert.ok(!slowAnswered, 'ping does not wait for the request in flight');
        assert.match(JSON.stringify((await slow).messages), /slept/);
    });
});
