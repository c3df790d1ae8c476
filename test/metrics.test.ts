/**
 * /metrics after a known sequence of requests: every counter holds exactly what the sequence implies, with
 * exactly the label sets it implies, read through a Prometheus text-format parser. Made-up prompt names never
 * become label values. Also: the separate metrics listener, the bearer token, and metrics turned off.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import type { DashboardData } from '../src/observability/dashboard-data.js';
import { closeAfter, connectHttp, rpcError, startHttpFixture, startTestGateway, stdioFixture, upstreamsReady, waitFor, type HttpFixture } from './helpers.js';
import { ALICE, assertOwn, BOB, CAROL, connectInputClient, interactiveStdio, startInteractiveHttp } from './input-clients.js';
import { bucket, count, countOver, labelValues, samples, scrape, value, type Families } from './prometheus.js';
import { modernHeaders, modernRequest, post } from './raw-http.js';

const keyOf = (clientId: string) => `key-of-${clientId}-0123456789abcdef`;
const CANCELLED = { upstream: 'alpha', prompt: 'alpha__slow', client: 'alice', outcome: 'cancelled' };
const MADE_UP = ['nope-1', 'alpha__nope', 'beta__prompt-999', '__proto__', 'x'.repeat(300)];

describe('metrics after a known sequence of requests', () => {
    let gateway: RunningGateway;
    let alice: Client;
    let bob: Client;
    let alphaServer: HttpFixture | undefined;
    let metricsUrl: string;
    let before1: Families;
    let families: Families;
    const notified = { alice: 0, bob: 0 };

    before(async () => {
        // alpha over HTTP: its short timeoutMs bounds a round trip there, not the start-up of a process (which takes
        // seconds on a loaded machine, and connecting is bounded by timeoutMs too).
        alphaServer = await startHttpFixture('streamable-http', { prompts: 2 });
        gateway = await startTestGateway({
            auth: { mode: 'apiKey' },
            // With auth on, metrics are served apart (or behind metrics.bearerToken), never open on the MCP listener.
            metrics: { listen: { port: 0 } },
            limits: { rateLimit: { requestsPerSecond: 0, burst: 1 } },
            notifications: { debounceMs: 20, maxDelayMs: 100 },
            clients: [
                { id: 'alice', apiKey: keyOf('alice') },
                { id: 'bob', apiKey: keyOf('bob'), prompts: { deny: ['alpha__prompt-001'] } }
            ],
            upstreams: [{ id: 'alpha', transport: 'streamable-http', url: alphaServer.url, timeoutMs: 3000 }, stdioFixture('beta', { prompts: 1 })]
        });
        await upstreamsReady(gateway);
        metricsUrl = gateway.operatorUrls.metrics!;
        alice = await connectHttp(gateway.url!, { headers: { 'x-api-key': keyOf('alice') } });
        bob = await connectHttp(gateway.url!, { headers: { 'x-api-key': keyOf('bob') } });
        alice.setNotificationHandler('notifications/prompts/list_changed', () => void notified.alice++);
        bob.setNotificationHandler('notifications/prompts/list_changed', () => void notified.bob++);
        before1 = await scrape(metricsUrl);

        // alice: 1 list; 3 + 1 good gets; a missing argument; 5 made-up names; an upstream failure; a timeout.
        await alice.request({ method: 'prompts/list', params: {} });
        for (let i = 0; i < 3; i++) await alice.getPrompt({ name: 'alpha__prompt-000' });
        await alice.getPrompt({ name: 'beta__prompt-000' });
        await rpcError(alice.getPrompt({ name: 'alpha__with-required', arguments: {} }));
        for (const name of MADE_UP) await rpcError(alice.getPrompt({ name }));
        await rpcError(alice.getPrompt({ name: 'alpha__fail-internal' }));
        await rpcError(alice.getPrompt({ name: 'alpha__slow', arguments: { ms: '10000' } }));
        // A get the client gives up on: cancelled, not an upstream error.
        const cancelled = alice.getPrompt({ name: 'alpha__slow', arguments: { ms: '10000' } }, { signal: AbortSignal.timeout(300) });
        await assert.rejects(cancelled);
        await waitFor(async () => value(await scrape(metricsUrl), 'mcp_gateway_prompt_gets_total', CANCELLED) === 1, 30_000, 'the cancellation recorded');
        // Completions: one known prompt, one made-up.
        await alice.complete({ ref: { type: 'ref/prompt', name: 'alpha__with-required' }, argument: { name: 'topic', value: 'a' } });
        await rpcError(alice.complete({ ref: { type: 'ref/prompt', name: 'nope-2' }, argument: { name: 'topic', value: 'a' } }));
        // bob: a denied prompt, 2 lists, and a get that makes alpha announce a new prompt.
        await rpcError(bob.getPrompt({ name: 'alpha__prompt-001' }));
        await bob.request({ method: 'prompts/list', params: {} });
        await bob.request({ method: 'prompts/list', params: {} });
        await bob.getPrompt({ name: 'alpha__emit-list-changed', arguments: { add: 'prompt-new' } });
        await waitFor(() => notified.alice === 1 && notified.bob === 1, 30_000, 'both sessions notified');
        // Turned away before MCP: a wrong key, and a foreign Origin.
        const wrongKey = await fetch(gateway.url!, { method: 'POST', headers: { 'x-api-key': 'wrong-key-0123456789', 'content-type': 'application/json' }, body: '{}' });
        assert.equal(wrongKey.status, 401);
        const foreign = await fetch(gateway.url!, { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/json' }, body: '{}' });
        assert.equal(foreign.status, 403);
        families = await scrape(metricsUrl);
    });

    after(async () => {
        await Promise.all([alice?.close(), bob?.close()]);
        await gateway?.close();
        await alphaServer?.close();
    });

    test('before any request, no prompt counter has a sample', () => {
        assert.equal(samples(before1, 'mcp_gateway_prompt_gets_total', ['prompt']).size, 0);
        assert.equal(samples(before1, 'mcp_gateway_prompt_lists_total', ['client']).size, 0);
    });

    test('prompt gets: exactly the expected label sets and counts', () => {
        const expected = new Map([
            ['upstream=alpha,prompt=alpha__prompt-000,client=alice,outcome=ok', 3],
            ['upstream=beta,prompt=beta__prompt-000,client=alice,outcome=ok', 1],
            ['upstream=alpha,prompt=alpha__with-required,client=alice,outcome=invalid_params', 1],
            ['upstream=_unknown,prompt=_unknown,client=alice,outcome=invalid_params', MADE_UP.length],
            ['upstream=alpha,prompt=alpha__fail-internal,client=alice,outcome=upstream_error', 1],
            ['upstream=alpha,prompt=alpha__slow,client=alice,outcome=timeout', 1],
            ['upstream=alpha,prompt=alpha__slow,client=alice,outcome=cancelled', 1],
            ['upstream=alpha,prompt=alpha__prompt-001,client=bob,outcome=denied', 1],
            ['upstream=alpha,prompt=alpha__emit-list-changed,client=bob,outcome=ok', 1]
        ]);
        assert.deepEqual(samples(families, 'mcp_gateway_prompt_gets_total', ['upstream', 'prompt', 'client', 'outcome']), expected);
    });

    test('made-up names never become label values', () => {
        for (const metric of ['mcp_gateway_prompt_gets_total', 'mcp_gateway_completions_total', 'mcp_server_operation_duration_seconds_count']) {
            for (const name of [...MADE_UP, 'nope-2']) assert.ok(!labelValues(families, metric, 'prompt').has(name), `${metric} has prompt="${name}"`);
        }
    });

    test('durations: one observation per get, by upstream and outcome; per prompt for successful gets only', () => {
        const operations = 'mcp_server_operation_duration_seconds';
        const gets = { method: 'prompts/get' };
        // By upstream and outcome, whatever the prompt (as the removed mcp_gateway_prompt_get_duration_seconds counted).
        assert.equal(countOver(families, operations, { ...gets, upstream: 'alpha', outcome: 'ok' }), 4);
        assert.equal(countOver(families, operations, { ...gets, upstream: 'beta', outcome: 'ok' }), 1);
        assert.equal(count(families, operations, { ...gets, upstream: 'alpha', outcome: 'ok', prompt: 'alpha__prompt-000' }), 3);
        assert.equal(count(families, operations, { ...gets, upstream: '_unknown', outcome: 'invalid_params' }), MADE_UP.length);
        assert.equal(count(families, operations, { ...gets, upstream: 'alpha', outcome: 'timeout' }), 1);
        assert.equal(count(families, operations, { method: 'prompts/list', outcome: 'ok' }), 3);
        assert.equal(count(families, operations, { method: 'completion/complete', upstream: 'alpha', outcome: 'ok' }), 1);
        assert.deepEqual([...labelValues(families, `${operations}_count`, 'prompt')].sort(), ['alpha__emit-list-changed', 'alpha__prompt-000', 'beta__prompt-000']);
        // The timed-out get waited for timeoutMs (3000 ms): its observation lies above the bucket of 2.5 s (how far
        // above depends on the machine's load).
        assert.equal(bucket(families, operations, '2.5', { ...gets, upstream: 'alpha', outcome: 'timeout' }), 0);
        assert.equal(
            bucket(families, operations, '5', { ...gets, upstream: 'alpha', outcome: 'timeout' }) +
                bucket(families, operations, '10', { ...gets, upstream: 'alpha', outcome: 'timeout' }) >
                0,
            true
        );
        for (const removed of ['mcp_gateway_prompt_get_duration_seconds', 'mcp_gateway_upstream_request_duration_seconds'])
            assert.equal(families.types.get(removed), undefined, `${removed} is gone`);
    });

    test('lists by client, completions by prompt and outcome', () => {
        assert.deepEqual(
            samples(families, 'mcp_gateway_prompt_lists_total', ['client']),
            new Map([
                ['client=alice', 1],
                ['client=bob', 2]
            ])
        );
        assert.equal(countOver(families, 'mcp_server_operation_duration_seconds', { method: 'prompts/list' }), 3);
        assert.equal(families.types.get('mcp_gateway_prompt_list_duration_seconds'), undefined, 'mcp_gateway_prompt_list_duration_seconds is gone');
        assert.deepEqual(
            samples(families, 'mcp_gateway_completions_total', ['upstream', 'prompt', 'outcome']),
            new Map([
                ['upstream=alpha,prompt=alpha__with-required,outcome=ok', 1],
                ['upstream=_unknown,prompt=_unknown,outcome=invalid_params', 1]
            ])
        );
    });

    test('upstream requests: only the gets the gateway forwarded reach alpha', () => {
        // prompt-000 x3, fail-internal, slow x2, emit-list-changed; the missing argument and the denied get stop at the gateway.
        const calls = 'mcp_client_operation_duration_seconds';
        assert.equal(countOver(families, calls, { upstream: 'alpha', method: 'prompts/get' }), 7);
        assert.equal(countOver(families, calls, { upstream: 'beta', method: 'prompts/get' }), 1);
        assert.equal(countOver(families, calls, { upstream: 'alpha', method: 'completion/complete' }), 1);
        assert.equal(value(families, 'mcp_gateway_upstream_faults_total', { upstream: 'alpha', kind: 'timeout' }), 1);
        // The same calls by how each ended (list reads depend on refreshes and list_changed: left out here).
        const byOutcome = samples(families, `${calls}_count`, ['method', 'upstream', 'outcome']);
        for (const key of byOutcome.keys()) if (key.startsWith('method=prompts/list,')) byOutcome.delete(key);
        assert.deepEqual(
            byOutcome,
            new Map([
                ['method=prompts/get,upstream=alpha,outcome=ok', 4],
                ['method=prompts/get,upstream=alpha,outcome=upstream_error', 1],
                ['method=prompts/get,upstream=alpha,outcome=timeout', 1],
                ['method=prompts/get,upstream=alpha,outcome=cancelled', 1],
                ['method=prompts/get,upstream=beta,outcome=ok', 1],
                ['method=completion/complete,upstream=alpha,outcome=ok', 1]
            ])
        );
        assert.ok(count(families, 'mcp_client_operation_duration_seconds', { method: 'prompts/list', upstream: 'beta', outcome: 'ok' }) >= 1);
    });

    test('a scrape that asks for OpenMetrics gets it', async () => {
        const response = await fetch(metricsUrl, { headers: { accept: 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' } });
        assert.equal(response.headers.get('content-type'), 'application/openmetrics-text; version=1.0.0; charset=utf-8');
        const body = await response.text();
        assert.ok(body.endsWith('# EOF\n'));
        assert.match(body, /^mcp_gateway_prompt_gets_total\{upstream="alpha",prompt="alpha__prompt-000",client="alice",outcome="ok"\} 3$/m);
        // A Prometheus-format scrape after it is unchanged.
        assert.equal(value(await scrape(metricsUrl), 'mcp_gateway_prompt_gets_total', { upstream: 'alpha', prompt: 'alpha__prompt-000', client: 'alice', outcome: 'ok' }), 3);
    });

    test('upstream state, prompt counts, list_changed in and out, sessions, rejections', () => {
        assert.equal(value(families, 'mcp_gateway_upstream_up', { upstream: 'alpha' }), 1);
        assert.equal(value(families, 'mcp_gateway_upstream_up', { upstream: 'beta' }), 1);
        // The fixture's generic prompts plus its fixed ones; alpha gained one.
        const alphaBefore = value(before1, 'mcp_gateway_upstream_prompts', { upstream: 'alpha' });
        assert.ok(alphaBefore > 2);
        assert.equal(value(families, 'mcp_gateway_upstream_prompts', { upstream: 'alpha' }), alphaBefore + 1);
        assert.equal(value(families, 'mcp_gateway_upstream_prompts', { upstream: 'beta' }), alphaBefore - 1);
        assert.equal(value(families, 'mcp_gateway_list_changed_received_total', { upstream: 'alpha' }), 1);
        assert.equal(value(families, 'mcp_gateway_list_changed_sent_total'), 2);
        assert.equal(value(families, 'mcp_gateway_sessions', { transport: 'http' }), 2);
        assert.equal(value(families, 'mcp_gateway_upstream_reconnects_total', { upstream: 'alpha' }), 0);
        assert.deepEqual(
            samples(families, 'mcp_gateway_requests_rejected_total', ['reason']),
            new Map([
                ['reason=unauthorized', 1],
                ['reason=forbidden_origin', 1]
            ])
        );
    });

    test("catalog cache: a list reads each upstream's cached list once", async () => {
        const hits = (f: Families, upstream: string) => value(f, 'mcp_gateway_catalog_cache_hits_total', { upstream });
        assert.ok(value(families, 'mcp_gateway_catalog_cache_misses_total', { upstream: 'alpha' }) >= 2, 'first read and the read after list_changed');
        await alice.request({ method: 'prompts/list', params: {} });
        const later = await scrape(metricsUrl);
        assert.equal(hits(later, 'alpha'), hits(families, 'alpha') + 1);
        assert.equal(hits(later, 'beta'), hits(families, 'beta') + 1);
    });

    test('process metrics and the version are exported too', () => {
        assert.ok(value(families, 'process_resident_memory_bytes') > 0);
        assert.equal(samples(families, 'mcp_gateway_info', ['version']).size, 1);
    });
});

describe('metrics: reconnects of an upstream that keeps failing', () => {
    test('counted per attempt, with up = 0 and connect_failed faults', async () => {
        const gateway = await startTestGateway({
            reconnect: { initialMs: 20, maxMs: 40 },
            upstreams: [stdioFixture('good'), { id: 'broken', transport: 'stdio', command: process.execPath, args: ['-e', 'process.exit(3)'] }]
        });
        try {
            let families: Families | undefined;
            await waitFor(async () => {
                families = await scrape(gateway.operatorUrls.metrics!);
                return value(families, 'mcp_gateway_upstream_reconnects_total', { upstream: 'broken' }) >= 3;
            });
            assert.ok(families !== undefined);
            assert.equal(value(families, 'mcp_gateway_upstream_up', { upstream: 'broken' }), 0);
            assert.equal(value(families, 'mcp_gateway_upstream_up', { upstream: 'good' }), 1);
            // Each attempt fails: the first one plus every reconnect attempt that has finished.
            const attempts = value(families, 'mcp_gateway_upstream_reconnects_total', { upstream: 'broken' });
            const failed = value(families, 'mcp_gateway_upstream_faults_total', { upstream: 'broken', kind: 'connect_failed' });
            assert.ok(failed >= attempts && failed <= attempts + 1, `${failed} failures for ${attempts} reconnect attempts`);
            assert.equal(value(families, 'mcp_gateway_upstream_reconnects_total', { upstream: 'good' }), 0);
        } finally {
            await gateway.close();
        }
    });
});

describe('metrics: requests in flight', () => {
    test('a slow get is a call in flight until it is cancelled, a subscriptions/listen a listen until its stream closes', async t => {
        const gateway = await startTestGateway({ upstreams: [stdioFixture('alpha')] });
        t.after(() => gateway.close());
        await upstreamsReady(gateway);
        const inFlight = async (kind: 'call' | 'listen') => value(await scrape(gateway.operatorUrls.metrics!), 'mcp_gateway_requests_in_flight', { kind });
        assert.deepEqual([await inFlight('call'), await inFlight('listen')], [0, 0]);

        const client = await connectHttp(gateway.url!);
        t.after(() => client.close());
        const giveUp = new AbortController();
        const get = client.getPrompt({ name: 'alpha__slow', arguments: { ms: '60000' } }, { signal: giveUp.signal });
        await waitFor(async () => (await inFlight('call')) === 1, 20_000, 'the get in flight');
        giveUp.abort();
        await assert.rejects(get);
        await waitFor(async () => (await inFlight('call')) === 0, 20_000, 'the cancelled get no longer in flight');

        const closeStream = new AbortController();
        t.after(() => closeStream.abort());
        const listen = modernRequest('subscriptions/listen', { notifications: { promptsListChanged: true } }, 'listen');
        const response = await post(gateway.url!, listen, modernHeaders(listen), { signal: closeStream.signal });
        assert.equal(response.status, 200);
        // Taken before its acknowledgment was sent: in flight once the response has begun.
        assert.deepEqual([await inFlight('call'), await inFlight('listen')], [0, 1]);
        closeStream.abort();
        await waitFor(async () => (await inFlight('listen')) === 0, 20_000, 'the closed listen no longer in flight');
    });
});

describe('metrics: input requests across eras', () => {
    test('input rounds by upstream and path, input requests by outcome, questions waiting while they wait; the dashboard rows agree', { timeout: 120_000 }, async t => {
        const up26 = await startInteractiveHttp(t, '2026-07-28');
        const gateway = await startTestGateway({ upstreams: [{ id: 'up26', transport: 'http', url: up26.url }, interactiveStdio('up25')] });
        closeAfter(t, () => gateway.close());
        await upstreamsReady(gateway);
        const metricsUrl = gateway.operatorUrls.metrics!;
        const waiting = async () => {
            const families = await scrape(metricsUrl);
            return { asked: value(families, 'mcp_gateway_input_waiting', { kind: 'asked' }), held: value(families, 'mcp_gateway_input_waiting', { kind: 'held' }) };
        };
        assert.deepEqual(await waiting(), { asked: 0, held: 0 });
        // alice (2025) and carol (2026-07-28) hold their answers: while they do, the question is out (asked), or the
        // 2025 upstream's call is held for carol's retry (held).
        const alice = await connectInputClient(t, { url: gateway.url! }, { ...ALICE, hold: true });
        const carol = await connectInputClient(t, { url: gateway.url! }, { ...CAROL, hold: true });
        const bob = await connectInputClient(t, { url: gateway.url! }, BOB);
        const asking = alice.get('up25__confirm', { who: 'alice' });
        await alice.whenAsked(1);
        assert.deepEqual(await waiting(), { asked: 1, held: 0 });
        alice.release();
        assertOwn(await asking, alice, 'up25__confirm');
        const holding = carol.get('up25__confirm', { who: 'carol' });
        await carol.whenAsked(1);
        assert.deepEqual(await waiting(), { asked: 0, held: 1 });
        carol.release();
        assertOwn(await holding, carol, 'up25__confirm');
        // One get per path more: row A (up26 to carol), row B (up26 to bob, two rounds), row C (up25 to alice, two rounds).
        assertOwn(await carol.get('up26__confirm', { who: 'carol' }), carol, 'up26__confirm');
        assertOwn(await bob.get('up26__twice', { who: 'bob' }), bob, 'up26__twice');
        assertOwn(await alice.get('up25__twice', { who: 'alice' }), alice, 'up25__twice');

        const families = await scrape(metricsUrl);
        assert.deepEqual(
            samples(families, 'mcp_gateway_input_rounds_total', ['upstream', 'path']),
            new Map([
                ['upstream=up25,path=request', 3],
                ['upstream=up25,path=request_to_mrtr', 1],
                ['upstream=up26,path=mrtr', 1],
                ['upstream=up26,path=mrtr_to_request', 2]
            ])
        );
        // A question handed to a 2026-07-28 client is `passed`; held for it (request_to_mrtr), its answer counts again.
        assert.deepEqual(
            samples(families, 'mcp_gateway_input_requests_total', ['upstream', 'path', 'method', 'outcome']),
            new Map([
                ['upstream=up25,path=request,method=elicitation/create,outcome=answered', 3],
                ['upstream=up25,path=request_to_mrtr,method=elicitation/create,outcome=passed', 1],
                ['upstream=up25,path=request_to_mrtr,method=elicitation/create,outcome=answered', 1],
                ['upstream=up26,path=mrtr,method=elicitation/create,outcome=passed', 1],
                ['upstream=up26,path=mrtr_to_request,method=elicitation/create,outcome=answered', 2]
            ])
        );
        assert.deepEqual(await waiting(), { asked: 0, held: 0 });

        const data = (await (await fetch(`${gateway.operatorUrls.dashboard!}/data`)).json()) as DashboardData;
        assert.deepEqual(
            data.upstreams.map(({ id, inputRounds, inputRoundsByPath }) => ({ id, inputRounds, inputRoundsByPath })),
            [
                { id: 'up26', inputRounds: 3, inputRoundsByPath: { mrtr: 1, mrtr_to_request: 2 } },
                { id: 'up25', inputRounds: 4, inputRoundsByPath: { request: 3, request_to_mrtr: 1 } }
            ]
        );
    });
});

describe('metrics: where and to whom they are served', () => {
    const token = 'metrics-token-0123456789';

    test('a separate listener with a bearer token: nothing on the MCP listener, 401 without the token', async () => {
        const gateway = await startTestGateway({ metrics: { listen: { port: 0 }, bearerToken: token }, upstreams: [stdioFixture('alpha')] });
        try {
            const admin = new URL(gateway.operatorUrls.metrics!).origin;
            assert.notEqual(admin, new URL(gateway.url!).origin);
            assert.equal((await fetch(new URL('/metrics', gateway.url))).status, 404);
            const missing = await fetch(`${admin}/metrics`);
            assert.equal(missing.status, 401);
            assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer /);
            assert.equal((await fetch(`${admin}/metrics`, { headers: { authorization: `Bearer ${token}x` } })).status, 401);
            assert.equal((await fetch(`${admin}/dashboard/data`)).status, 401);
            const families = await scrape(`${admin}/metrics`, { authorization: `Bearer ${token}` });
            assert.equal(value(families, 'mcp_gateway_requests_rejected_total', { reason: 'unauthorized' }), 3);
            // Health checks are served there too, without the token.
            assert.equal((await fetch(`${admin}/readyz`)).status, 200);
            // The dashboard's data with the token.
            const data = await fetch(`${admin}/dashboard/data`, { headers: { authorization: `Bearer ${token}` } });
            assert.equal(data.status, 200);
        } finally {
            await gateway.close();
        }
    });

    test('metrics and the dashboard turned off: 404, and nothing advertised', async () => {
        const gateway = await startTestGateway({ metrics: { enabled: false }, dashboard: { enabled: false }, upstreams: [stdioFixture('alpha')] });
        try {
            assert.deepEqual(gateway.operatorUrls, {});
            assert.equal(gateway.metrics, undefined);
            assert.equal((await fetch(new URL('/metrics', gateway.url))).status, 404);
            assert.equal((await fetch(new URL('/dashboard', gateway.url))).status, 404);
        } finally {
            await gateway.close();
        }
    });

    test('not bound to loopback: the dashboard is off unless configured, metrics stay on', async () => {
        const gateway = await startTestGateway({
            listen: { host: '0.0.0.0', port: 0, allowedHosts: ['127.0.0.1'] },
            cursorSecret: 'a shared secret of 32 characters',
            upstreams: [stdioFixture('alpha')]
        });
        try {
            assert.equal(gateway.operatorUrls.dashboard, undefined);
            const origin = `http://127.0.0.1:${new URL(gateway.url!).port}`;
            assert.equal((await fetch(`${origin}/dashboard`)).status, 404);
            assert.equal((await fetch(`${origin}/metrics`)).status, 200);
        } finally {
            await gateway.close();
        }
    });
});
