/**
 * Supervision: an upstream that crashes, goes away or hangs fails its own
 * requests promptly, never the others', and comes back by itself.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import {
    closeAfter,
    connectHttp,
    freePort,
    getJson,
    listAllPages,
    rawStdio,
    rpcError,
    silentStdio,
    startHttpFixture,
    startTestGateway,
    stdioFixture,
    waitFor,
    upstreamsReady,
    type HttpFixture
} from './helpers.js';

const FAST_RECONNECT = { initialMs: 50, maxMs: 400 };
/** Bounds each test: its waits are on events, this only turns a hang into a failure. */
const TIMEOUT = { timeout: 120_000 };

async function namesOf(client: Client): Promise<string[]> {
    return (await listAllPages(client)).names;
}

async function assertServed(client: Client, prompt: string): Promise<void> {
    const result = await client.getPrompt({ name: prompt });
    assert.ok(result.messages.length > 0, `${prompt} answered without messages`);
}

test('a stdio upstream that crashes mid-request fails that request at once, the others carry on, and it comes back', TIMEOUT, async t => {
    const timeoutMs = 60_000;
    const gateway = await startTestGateway({
        reconnect: FAST_RECONNECT,
        notifications: { debounceMs: 50, maxDelayMs: 200 },
        upstreams: [stdioFixture('victim', {}, { timeoutMs }), stdioFixture('steady')]
    });
    closeAfter(t, () => gateway.close());
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    let notified = 0;
    client.setNotificationHandler('notifications/prompts/list_changed', () => void notified++);
    const inFlight = client.getPrompt({ name: 'victim__slow', arguments: { ms: String(timeoutMs - 5000) } }).then(
        () => ({ code: 0, message: 'answered' }),
        (error: { code: number; message: string }) => ({ code: error.code, message: error.message })
    );
    await waitFor(() => gateway.upstreams[0]!.load.active === 1, 20_000, 'the slow request to reach the upstream');
    await client.getPrompt({ name: 'victim__crash' }).catch(() => {});
    const failure = await inFlight;
    // Failed by the crash, not by a timeout (the gateway's timeoutMs or the client's own, both 60 s).
    assert.deepEqual(failure, { code: -32603, message: 'Upstream victim failed: connection closed' });

    // While the victim is down (or already back), the steady upstream is listed and served.
    assert.ok((await namesOf(client)).includes('steady__with-required'));
    await assertServed(client, 'steady__all-content');

    await waitFor(() => gateway.upstreams[0]!.state === 'ready', 60_000, 'the victim to reconnect');
    await waitFor(async () => (await namesOf(client)).includes('victim__with-required'), 20_000, 'victim prompts back in the list');
    await assertServed(client, 'victim__all-content');
    await waitFor(() => notified >= 1, 20_000, 'sessions notified of the change');
    assert.ok((gateway.faults.of('victim').disconnected ?? 0) >= 1, 'the disconnect is counted');
    assert.equal(gateway.faults.of('steady').disconnected, undefined, 'the steady upstream has no fault');
});

test('an HTTP upstream that goes away fails fast and rejoins when it is back on the same port', TIMEOUT, async t => {
    const timeoutMs = 60_000;
    const port = await freePort();
    let web: HttpFixture | undefined = await startHttpFixture('streamable-http', { flags: ['--port', String(port)] });
    closeAfter(t, () => web?.close());
    const gateway = await startTestGateway({
        reconnect: FAST_RECONNECT,
        upstreams: [{ id: 'web', transport: 'streamable-http', url: web.url, timeoutMs, pingIntervalMs: 200 }, stdioFixture('local')]
    });
    closeAfter(t, () => gateway.close());
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    await upstreamsReady(gateway);
    await assertServed(client, 'web__all-content');
    await web.close();
    web = undefined;
    const failure = await rpcError(client.getPrompt({ name: 'web__all-content' }));
    // Either the request reaches the dead port (-32603), or a ping already took the upstream out (-32602 unknown).
    assert.ok(failure.code === -32603 || failure.code === -32602, `unexpected ${failure.code} ${failure.message}`);
    // At once, not by a timeout (the gateway's timeoutMs or the client's own, both 60 s).
    assert.doesNotMatch(failure.message, /timed out/);
    assert.equal(gateway.faults.of('web').timeout, undefined, 'no request to web timed out');
    await waitFor(() => gateway.upstreams[0]!.state !== 'ready', 20_000, 'the upstream to be marked down');
    assert.ok(!(await namesOf(client)).some(name => name.startsWith('web__')), "a down upstream's prompts leave the list");
    await assertServed(client, 'local__all-content');

    web = await startHttpFixture('streamable-http', { flags: ['--port', String(port)] });
    const backAt = Date.now();
    await waitFor(() => gateway.upstreams[0]!.state === 'ready', 30_000, 'web to reconnect with a new session');
    await waitFor(async () => (await namesOf(client)).includes('web__all-content'), 20_000, 'web prompts back');
    await assertServed(client, 'web__all-content');
    t.diagnostic(`back -> ready: ${Date.now() - backAt} ms`);
});

test('/readyz is 503 while a required upstream is down and 200 once it is up; optional ones do not count', TIMEOUT, async t => {
    const port = await freePort();
    const gateway = await startTestGateway({
        reconnect: FAST_RECONNECT,
        upstreams: [
            { id: 'needed', transport: 'streamable-http', url: `http://127.0.0.1:${port}/mcp`, required: true, timeoutMs: 10_000, pingIntervalMs: 200 },
            { id: 'optional', transport: 'stdio', command: 'no-such-command-anywhere' },
            stdioFixture('local')
        ]
    });
    closeAfter(t, () => gateway.close());
    const base = new URL(gateway.url!);
    const readyz = new URL('/readyz', base).href;
    const before = await getJson(readyz);
    assert.equal(before.status, 503);
    assert.deepEqual(before.body.requiredDown, ['needed']);
    assert.equal((await getJson(new URL('/healthz', base).href)).status, 200, 'alive even when not ready');

    const fixture = await startHttpFixture('streamable-http', { flags: ['--port', String(port)] });
    closeAfter(t, () => fixture.close());
    await waitFor(async () => (await getJson(readyz)).status === 200, 30_000, '/readyz to turn 200');
    const ready = await getJson(readyz);
    assert.deepEqual(ready.body.requiredDown, []);
    const states = Object.fromEntries((ready.body.upstreams as { id: string; state: string }[]).map(u => [u.id, u.state]));
    // "optional" is down or in one of its quick reconnect attempts: not up either way.
    assert.deepEqual({ ...states, optional: states.optional === 'ready' ? 'ready' : 'not ready' }, { needed: 'ready', optional: 'not ready', local: 'ready' });

    await fixture.close();
    await waitFor(async () => (await getJson(readyz)).status === 503, 20_000, '/readyz to turn 503 when the required upstream goes away');
});

test('a hung upstream fails its request after timeoutMs; a slow starter joins; the others are served meanwhile', TIMEOUT, async t => {
    const timeoutMs = 1000;
    const gateway = await startTestGateway({
        upstreams: [silentStdio('hung', 'answer', { timeoutMs }), rawStdio('sleepy', ['--start-delay', '1500']), stdioFixture('local')]
    });
    closeAfter(t, () => gateway.close());
    // Start-up waited for the slow starter; only the short connect of "hung" may need its retry on a loaded machine.
    await upstreamsReady(gateway, ['hung']);
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    assert.deepEqual(
        gateway.upstreams.map(upstream => upstream.state),
        ['ready', 'ready', 'ready']
    );
    const started = Date.now();
    const [hung, local] = await Promise.all([rpcError(client.getPrompt({ name: 'hung__p' })), client.getPrompt({ name: 'local__all-content' })]);
    const took = Date.now() - started;
    assert.equal(hung.code, -32603);
    assert.match(hung.message, new RegExp(`Upstream hung failed: timed out after ${timeoutMs} ms`));
    assert.ok(took >= timeoutMs - 100, `the hung request failed after ${took} ms, before its timeoutMs`);
    assert.ok(local.messages.length > 0);
    assert.ok((await namesOf(client)).includes('sleepy__ok-0'));
    assert.equal(gateway.faults.of('hung').timeout, 1);
});
