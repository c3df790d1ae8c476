/**
 * 2026-07-28 (stateless) clients on the same URL as 2025 sessions: the request checks and statuses the revision
 * prescribes, subscriptions/listen (acknowledgment, per-client precision, bounds, the graceful end at shutdown), and
 * SDK clients of both eras side by side in front of a 2026-07-28-only upstream (`legacy: 'reject'`).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, connectModernHttp, ROOT, startHttpFixture, startModernHttpFixture, startTestGateway, upstreamsReady, waitFor } from './helpers.js';
import { compiledFixture } from './fixture-build.js';
import { initializeBody, modernHeaders, modernMeta, modernRequest, post, postModern, SseReader, type JsonRpcMessage } from './raw-http.js';
import { MODERN_REVISION, SpecSchema } from './spec-schema.js';

const SCHEMA = new SpecSchema(MODERN_REVISION);
const keyOf = (clientId: string) => `key-of-${clientId}-0123456789abcdef`;
const bearer = (clientId: string) => ({ authorization: `Bearer ${keyOf(clientId)}` });

/** The revision fixture at 2026-07-28 only: initialize is refused, list changes go to subscriptions/listen. */
function modernUpstream(id = 'up') {
    return { id, transport: 'stdio', command: process.execPath, args: [compiledFixture('revision-server'), '--revision', MODERN_REVISION], cwd: ROOT };
}

async function startGateway(t: { after(fn: () => unknown): void }, config: Record<string, unknown> = {}): Promise<RunningGateway> {
    const gateway = await startTestGateway({
        notifications: { debounceMs: 20, maxDelayMs: 100 },
        limits: { rateLimit: { requestsPerSecond: 0, burst: 1 } },
        upstreams: [modernUpstream()],
        ...config
    });
    t.after(() => gateway.close());
    await upstreamsReady(gateway);
    return gateway;
}

/**
 * An SDK client pinned to 2026-07-28 (listening for prompt list changes) and a 2025-06-18 SDK client (its session's
 * GET stream), on one URL; `heard` counts the list_changed notifications each got.
 */
async function clientsOfBothEras(t: { after(fn: () => unknown): void }, url: string) {
    const modern = await connectModernHttp(url);
    t.after(() => modern.close());
    const legacy = await connectHttp(url, { protocolVersion: '2025-06-18' });
    t.after(() => legacy.close());
    const heard = { modern: 0, legacy: 0 };
    modern.setNotificationHandler('notifications/prompts/list_changed', () => void heard.modern++);
    legacy.setNotificationHandler('notifications/prompts/list_changed', () => void heard.legacy++);
    const subscription = await modern.listen({ promptsListChanged: true });
    t.after(() => subscription.close());
    return { modern, legacy, heard };
}

async function json(response: Response): Promise<JsonRpcMessage> {
    return (await response.json()) as JsonRpcMessage;
}

/** A subscriptions/listen stream, open once acknowledged. */
async function listen(url: string, headers: Record<string, string> = {}, id: string | number = 'listen-1'): Promise<SseReader> {
    const body = { jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications: { promptsListChanged: true, toolsListChanged: true }, _meta: modernMeta() } };
    const response = await post(url, body, { ...modernHeaders(body), ...headers });
    assert.equal(response.status, 200, `listen: ${response.status}`);
    const reader = new SseReader(response);
    const ack = await reader.next();
    assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
    assert.deepEqual(ack.params, { notifications: { promptsListChanged: true }, _meta: { 'io.modelcontextprotocol/subscriptionId': id } }, 'only what is honoured');
    assert.deepEqual(SCHEMA.problems(ack, undefined), []);
    return reader;
}

describe('2026-07-28 clients', () => {
    test('the mirrored headers must match the body: HTTP 400 -32020 HeaderMismatch, nothing served', { timeout: 60_000 }, async t => {
        const { url } = await startGateway(t);
        const cases: [string, Promise<Response>][] = [
            ['no MCP-Protocol-Version', post(url!, modernRequest('prompts/list'), { 'mcp-method': 'prompts/list' })],
            ['MCP-Protocol-Version other than _meta', postModern(url!, 'prompts/list', {}, { 'mcp-protocol-version': '2025-11-25' })],
            ['no Mcp-Method', post(url!, modernRequest('prompts/list'), { 'mcp-protocol-version': MODERN_REVISION })],
            ['Mcp-Method other than the body', postModern(url!, 'prompts/list', {}, { 'mcp-method': 'prompts/get' })],
            [
                'no Mcp-Name on prompts/get',
                post(url!, modernRequest('prompts/get', { name: 'up__plain' }), { 'mcp-protocol-version': MODERN_REVISION, 'mcp-method': 'prompts/get' })
            ],
            ['Mcp-Name other than the body', postModern(url!, 'prompts/get', { name: 'up__plain' }, { 'mcp-name': 'up__rich' })],
            ['Mcp-Name malformed base64', postModern(url!, 'prompts/get', { name: 'up__plain' }, { 'mcp-name': '=?base64?not*base64?=' })]
        ];
        const withoutCapabilities = modernRequest('prompts/list', { _meta: { 'io.modelcontextprotocol/clientCapabilities': 'none' } });
        for (const [what, body] of [
            ['no _meta', { jsonrpc: '2.0', id: 5, method: 'prompts/list', params: {} }],
            ['clientCapabilities not an object', withoutCapabilities]
        ] as const) {
            const response = await post(url!, body, { 'mcp-protocol-version': MODERN_REVISION, 'mcp-method': 'prompts/list' });
            assert.equal(response.status, 400, what);
            const message = await json(response);
            assert.equal(message.error?.code, -32602, what);
            assert.equal(message.id, body.id, `${what}: the error answers the request`);
        }
        for (const [what, pending] of cases) {
            const response = await pending;
            assert.equal(response.status, 400, what);
            const message = await json(response);
            assert.equal(message.error?.code, -32020, what);
            assert.equal(message.result, undefined);
        }
    });

    test('Mcp-Name in its base64 form is decoded before it is compared', { timeout: 60_000 }, async t => {
        const { url } = await startGateway(t);
        const encoded = `=?base64?${Buffer.from('up__plain').toString('base64')}?=`;
        const response = await postModern(url!, 'prompts/get', { name: 'up__plain' }, { 'mcp-name': encoded });
        assert.equal(response.status, 200);
        const message = await json(response);
        assert.equal(message.result?.resultType, 'complete');
        assert.deepEqual(SCHEMA.problems(message, 'prompts/get'), []);
    });

    test('versions, methods and shapes the revision refuses: 400 -32022 with the supported versions, 404 -32601, 405, batches 400', { timeout: 60_000 }, async t => {
        const { url } = await startGateway(t);
        const unsupported = await post(url!, modernRequest('prompts/list', {}, 7, '2099-01-01'), { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'prompts/list' });
        assert.equal(unsupported.status, 400);
        const refusal = await json(unsupported);
        assert.equal(refusal.error?.code, -32022);
        assert.deepEqual(refusal.error?.data, { supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'], requested: '2099-01-01' });
        // tools/list and resources/list are answered (empty): see unserved-lists.test.ts.
        for (const method of ['ping', 'logging/setLevel', 'resources/subscribe', 'sampling/createMessage']) {
            const response = await postModern(url!, method);
            assert.equal(response.status, 404, method);
            const message = await json(response);
            assert.equal(message.error?.code, -32601, method);
            assert.equal(message.id, 1, 'the error answers the request');
            assert.deepEqual(SCHEMA.problems(message, method), [], method);
        }
        for (const method of ['GET', 'DELETE']) {
            const response = await fetch(url!, { method, headers: { 'mcp-protocol-version': MODERN_REVISION, accept: 'text/event-stream' } });
            assert.equal(response.status, 405, method);
            await response.body?.cancel();
        }
        const batch = [modernRequest('prompts/list', {}, 1), modernRequest('prompts/list', {}, 2)];
        const batched = await post(url!, batch, { 'mcp-protocol-version': MODERN_REVISION, 'mcp-method': 'prompts/list' });
        assert.equal(batched.status, 400);
        await batched.body?.cancel();
        const notification = await post(
            url!,
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: modernMeta() } },
            { 'mcp-protocol-version': MODERN_REVISION, 'mcp-method': 'notifications/cancelled' }
        );
        assert.equal(notification.status, 202);
    });

    test('an initialize selects the 2025 era whatever its _meta says', { timeout: 60_000 }, async t => {
        const { url } = await startGateway(t);
        const body = { ...initializeBody('2025-11-25'), params: { ...initializeBody('2025-11-25').params, _meta: modernMeta() } };
        const response = await post(url!, body);
        assert.equal(response.status, 200);
        assert.ok(response.headers.get('mcp-session-id'), 'a session is opened');
        assert.equal((await json(response)).result?.protocolVersion, '2025-11-25');
    });

    test('Mcp-Session-Id on a 2026-07-28 request is ignored, never minted nor echoed', { timeout: 60_000 }, async t => {
        const { url } = await startGateway(t);
        const response = await postModern(url!, 'prompts/list', {}, { 'mcp-session-id': 'made-up' });
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('mcp-session-id'), null);
        const message = await json(response);
        assert.equal(message.result?.cacheScope, 'public', 'no authentication: one view for everyone');
        assert.deepEqual(SCHEMA.problems(message, 'prompts/list'), []);
    });

    test('subscriptions/listen: acknowledged first, then list changes tagged with its id; a client that cannot see the change hears nothing', { timeout: 90_000 }, async t => {
        const { url } = await startGateway(t, {
            auth: { mode: 'apiKey' },
            clients: [
                { id: 'all', apiKey: keyOf('all') },
                { id: 'narrow', apiKey: keyOf('narrow'), prompts: { allow: ['up__rich'] } }
            ]
        });
        const list = await json(await postModern(url!, 'prompts/list', {}, bearer('narrow')));
        assert.equal(list.result?.cacheScope, 'private', 'authenticated callers see lists of their own');
        const all = await listen(url!, bearer('all'), 'all-1');
        t.after(() => all.cancel());
        const narrow = await listen(url!, bearer('narrow'), 'narrow-1');
        t.after(() => narrow.cancel());
        const trigger = await json(await postModern(url!, 'prompts/get', { name: 'up__trigger-change' }, bearer('all')));
        assert.match(JSON.stringify(trigger.result), /added added-/);
        const changed = await all.next(message => message.method === 'notifications/prompts/list_changed');
        assert.deepEqual(changed.params, { _meta: { 'io.modelcontextprotocol/subscriptionId': 'all-1' } });
        assert.deepEqual(SCHEMA.problems(changed, undefined), []);
        // Delivered in the same pass over the audiences: had the narrow client been told, it would have it by now.
        await new Promise(resolve => setImmediate(resolve));
        assert.deepEqual(
            narrow.messages.map(message => message.method),
            ['notifications/subscriptions/acknowledged']
        );
    });

    test('subscriptions are bounded per client (HTTP 429) and the client closing its stream frees its place', { timeout: 60_000 }, async t => {
        const { url } = await startGateway(t, { subscriptions: { maxPerClient: 1 } });
        const first = await listen(url!);
        const second = await postModern(url!, 'subscriptions/listen', { notifications: { promptsListChanged: true } });
        assert.equal(second.status, 429);
        assert.equal((await json(second)).error?.code, -32000);
        await first.cancel();
        await waitFor(
            async () => {
                const again = await postModern(url!, 'subscriptions/listen', { notifications: { promptsListChanged: true } });
                await again.body?.cancel();
                return again.status === 200;
            },
            10_000,
            'the closed subscription to free its place'
        );
    });

    test('at shutdown each subscription is answered (its graceful end), then its stream ends', { timeout: 60_000 }, async t => {
        const gateway = await startGateway(t);
        const reader = await listen(gateway.url!, {}, 42);
        await gateway.close();
        const end = await reader.next(message => message.id === 42);
        assert.deepEqual(end, { jsonrpc: '2.0', id: 42, result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 42 } } });
        assert.deepEqual(SCHEMA.problems(end, 'subscriptions/listen'), []);
        await reader.closed();
    });

    test('an SDK client pinned to 2026-07-28 and a 2025 SDK client on the same URL, in front of a 2026-07-28-only upstream', { timeout: 90_000 }, async t => {
        const { url } = await startGateway(t);
        const { modern, legacy, heard } = await clientsOfBothEras(t, url!);
        assert.equal(modern.getProtocolEra(), 'modern');
        const [modernList, legacyList] = await Promise.all([modern.listPrompts(), legacy.listPrompts()]);
        assert.deepEqual(
            modernList.prompts.map(prompt => prompt.name),
            legacyList.prompts.map(prompt => prompt.name)
        );
        const [fromModern, fromLegacy] = await Promise.all([modern.getPrompt({ name: 'up__plain' }), legacy.getPrompt({ name: 'up__plain' })]);
        assert.deepEqual(fromModern.messages, fromLegacy.messages);
        assert.match(JSON.stringify(fromModern.messages), /negotiated 2026-07-28/, 'the upstream speaks 2026-07-28 to the gateway');
        await legacy.getPrompt({ name: 'up__trigger-change' });
        await waitFor(() => heard.modern > 0 && heard.legacy > 0, 20_000, 'both clients to hear of the upstream change');
        const names = (await modern.listPrompts()).prompts.map(prompt => prompt.name);
        assert.ok(
            names.some(name => /^up__added-\d+$/.test(name)),
            names.join(', ')
        );
    });
});

describe('2026-07-28 upstreams over Streamable HTTP', () => {
    test('an SDK v2 server with legacy: "reject" behind the gateway: found by the probe, served to clients of both eras, its list changes heard', { timeout: 90_000 }, async t => {
        const fixture = await startModernHttpFixture();
        t.after(() => fixture.close());
        const gateway = await startTestGateway({
            notifications: { debounceMs: 20, maxDelayMs: 100 },
            limits: { rateLimit: { requestsPerSecond: 0, burst: 1 } },
            upstreams: [{ id: 'web', transport: 'http', url: fixture.url }]
        });
        t.after(() => gateway.close());
        await upstreamsReady(gateway);
        const { modern, legacy, heard } = await clientsOfBothEras(t, gateway.url!);
        for (const client of [modern, legacy]) {
            const greeting = await client.getPrompt({ name: 'web__greet', arguments: { name: 'Ada' } });
            assert.deepEqual(greeting.messages, [{ role: 'user', content: { type: 'text', text: 'Hello, Ada' } }]);
        }
        const missing = await legacy.getPrompt({ name: 'web__greet', arguments: {} }).then(
            () => assert.fail('a missing argument must fail'),
            (error: unknown) => error as { code?: number }
        );
        assert.equal(missing.code, -32602, 'the gateway checks arguments before the upstream is asked');
        await modern.getPrompt({ name: 'web__add-prompt' });
        await waitFor(() => heard.modern > 0 && heard.legacy > 0, 20_000, 'both clients to hear of the upstream change (via its subscriptions/listen)');
        await waitFor(async () => (await legacy.listPrompts()).prompts.some(prompt => prompt.name === 'web__added-1'), 10_000, 'the added prompt to be listed');
    });

    test('protocol "2025" before a 2026-07-28-only server does not connect (initialize is refused); "auto" finds a 2025-era server beside it', { timeout: 90_000 }, async t => {
        const modern = await startModernHttpFixture();
        t.after(() => modern.close());
        const legacy = await startHttpFixture('streamable-http');
        t.after(() => legacy.close());
        const gateway = await startTestGateway({
            upstreams: [
                { id: 'pinned', transport: 'http', url: modern.url, protocol: '2025' },
                { id: 'old', transport: 'http', url: legacy.url }
            ]
        });
        t.after(() => gateway.close());
        await upstreamsReady(gateway, ['old']);
        await waitFor(() => gateway.upstreams.find(upstream => upstream.id === 'pinned')?.state === 'down', 20_000, 'the pinned upstream to fail');
        assert.equal(gateway.upstreams.find(upstream => upstream.id === 'old')?.state, 'ready');
    });
});

/**
 * A minimal 2026-07-28 server over node:http that remembers the headers of each prompts/get: what the gateway
 * passes on is seen exactly.
 */
async function startHeaderRecordingUpstream(t: { after(fn: () => unknown): void }) {
    const gets: Record<string, string | string[] | undefined>[] = [];
    const states: (string | undefined)[] = [];
    const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
            const message = JSON.parse(Buffer.concat(chunks).toString()) as { id?: number; method: string; params?: GetParams };
            if (message.id === undefined) return void res.writeHead(202).end();
            const results: Record<string, unknown> = {
                'server/discover': { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { prompts: {} }, ttlMs: 0, cacheScope: 'public' },
                'prompts/list': { resultType: 'complete', prompts: [{ name: 'p' }, { name: 'ask' }], ttlMs: 0, cacheScope: 'public' },
                'prompts/get': message.params?.name === 'ask' ? ask(message.params) : { resultType: 'complete', messages: [{ role: 'user', content: { type: 'text', text: 'p' } }] }
            };
            if (message.method === 'prompts/get') {
                gets.push({ ...req.headers });
                states.push(message.params?.requestState);
            }
            const result = results[message.method];
            const body =
                result === undefined ? { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } } : { jsonrpc: '2.0', id: message.id, result };
            res.writeHead(result === undefined ? 404 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        });
    });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    t.after(() => {
        server.closeAllConnections();
        return new Promise(resolve => server.close(resolve));
    });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, gets, states };
}

interface GetParams {
    name: string;
    inputResponses?: { who?: { content?: { name?: string } } };
    requestState?: string;
}

/** `ask` asks for a name first (multi round-trip requests), then greets it; its own state is plain text. */
function ask(params: GetParams): unknown {
    const name = params.inputResponses?.who?.content?.name;
    if (params.requestState === 'upstream-state-1' && name !== undefined) {
        return { resultType: 'complete', messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${name}` } }] };
    }
    const requestedSchema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    return {
        resultType: 'input_required',
        inputRequests: { who: { method: 'elicitation/create', params: { mode: 'form', message: 'Your name?', requestedSchema } } },
        requestState: 'upstream-state-1'
    };
}

describe('Mcp-Param-* headers', () => {
    test('are passed on, as they came, with the prompts/get they came with; the upstream gets the mirrored headers of its own request', { timeout: 60_000 }, async t => {
        const upstream = await startHeaderRecordingUpstream(t);
        const gateway = await startTestGateway({ upstreams: [{ id: 'rec', transport: 'http', url: upstream.url, protocol: '2026-07-28' }] });
        t.after(() => gateway.close());
        await upstreamsReady(gateway);
        const response = await postModern(
            gateway.url!,
            'prompts/get',
            { name: 'rec__p' },
            { 'mcp-param-region': 'us-west1', 'mcp-param-greeting': '=?base64?SGVsbG8sIOS4lueVjA==?=' }
        );
        assert.equal(response.status, 200);
        await response.body?.cancel();
        const [seen] = upstream.gets;
        assert.ok(seen);
        assert.equal(seen['mcp-param-region'], 'us-west1');
        assert.equal(seen['mcp-param-greeting'], '=?base64?SGVsbG8sIOS4lueVjA==?=');
        assert.equal(seen['mcp-protocol-version'], '2026-07-28');
        assert.equal(seen['mcp-method'], 'prompts/get');
        assert.equal(seen['mcp-name'], 'p', "the upstream's own name for it");
        const plain = await postModern(gateway.url!, 'prompts/get', { name: 'rec__p' });
        await plain.body?.cancel();
        assert.equal(upstream.gets[1]?.['mcp-param-region'], undefined, 'nothing carries over to the next request');
    });
});

describe('input_required (multi round-trip requests)', () => {
    test(
        'passes from a 2026-07-28 upstream to a 2026-07-28 client, its state sealed to the caller and prompt; the retry reaches the upstream with its own state',
        { timeout: 60_000 },
        async t => {
            const upstream = await startHeaderRecordingUpstream(t);
            const gateway = await startTestGateway({
                auth: { mode: 'apiKey' },
                clients: [
                    { id: 'alice', apiKey: keyOf('alice') },
                    { id: 'bob', apiKey: keyOf('bob') }
                ],
                upstreams: [{ id: 'rec', transport: 'http', url: upstream.url }]
            });
            t.after(() => gateway.close());
            await upstreamsReady(gateway);
            // Declared, as a client that can answer an elicitation must (one that cannot is refused: test/input-requests.test.ts).
            const _meta = modernMeta('2026-07-28', { elicitation: { form: {} } });
            const first = await json(await postModern(gateway.url!, 'prompts/get', { name: 'rec__ask', _meta }, bearer('alice')));
            assert.deepEqual(SCHEMA.problems(first, 'prompts/get'), []);
            const result = first.result as { resultType: string; inputRequests: unknown; requestState: string };
            assert.equal(result.resultType, 'input_required');
            assert.deepEqual(Object.keys(result.inputRequests as object), ['who']);
            assert.notEqual(result.requestState, 'upstream-state-1', "the upstream's state is sealed, not shown");
            const inputResponses = { who: { action: 'accept', content: { name: 'Ada' } } };
            const retry = await json(
                await postModern(gateway.url!, 'prompts/get', { name: 'rec__ask', inputResponses, requestState: result.requestState, _meta }, bearer('alice'))
            );
            assert.deepEqual(SCHEMA.problems(retry, 'prompts/get'), []);
            assert.deepEqual((retry.result as { messages: unknown }).messages, [{ role: 'user', content: { type: 'text', text: 'Hello, Ada' } }]);
            assert.deepEqual(upstream.states, [undefined, 'upstream-state-1'], 'the upstream got its own state back');
            const tampered = `${result.requestState.slice(0, -2)}${result.requestState.endsWith('AA') ? 'BB' : 'AA'}`;
            for (const [what, state, who, name] of [
                ['altered', tampered, 'alice', 'rec__ask'],
                ["another client's", result.requestState, 'bob', 'rec__ask'],
                ['for another prompt', result.requestState, 'alice', 'rec__p'],
                ["the upstream's own", 'upstream-state-1', 'alice', 'rec__ask']
            ] as const) {
                const refused = await json(await postModern(gateway.url!, 'prompts/get', { name, inputResponses, requestState: state, _meta }, bearer(who)));
                assert.equal(refused.error?.code, -32602, what);
            }
            assert.equal(upstream.states.length, 2, 'no refused state reached the upstream');
        }
    );

    test('a handshake-era client that did not declare elicitation gets -32021 naming it (one that did is asked: test/input-requests.test.ts)', { timeout: 60_000 }, async t => {
        const upstream = await startHeaderRecordingUpstream(t);
        const gateway = await startTestGateway({ upstreams: [{ id: 'rec', transport: 'http', url: upstream.url }] });
        t.after(() => gateway.close());
        await upstreamsReady(gateway);
        const legacy = await connectHttp(gateway.url!);
        t.after(() => legacy.close());
        const error = await legacy.getPrompt({ name: 'rec__ask' }).then(
            () => assert.fail('must fail'),
            (failure: unknown) => failure as { code?: number; message?: string }
        );
        assert.equal(error.code, -32021);
        assert.match(error.message ?? '', /elicitation/);
    });
});
