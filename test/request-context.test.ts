/**
 * What an upstream request carries comes from the client request it serves, and from no other: its X-Request-Id and
 * Mcp-Param-* headers, its W3C trace context (traceparent, tracestate, baggage: passed on as headers and in `_meta`),
 * and the request id on the log lines written about it. Checked at every place that defers
 * work: a request queued in the upstream's bulkhead (started when another one finishes), many requests at once, a
 * reconnect brought on by one request's failure, a connection the pool starts while a request is served, a list read started by one request and joined by another, and the
 * announcement of a list change an upstream told while answering one request (shared work is nobody's: it carries no
 * client's headers and its lines name no request).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { parseConfig } from '../src/config/load.js';
import type { RunningGateway } from '../src/gateway.js';
import { capturingLogger, startTestGateway, upstreamsReady, waitFor } from './helpers.js';
import { messagesOf, openRawSession, post, postModern, type JsonRpcMessage } from './raw-http.js';

interface Seen {
    /** The JSON-RPC method, or the HTTP method of a GET or DELETE. */
    method: string;
    headers: IncomingHttpHeaders;
    params?: { name?: string; arguments?: Record<string, string>; _meta?: Record<string, unknown> } | undefined;
}

interface Held {
    key: string;
    release: () => void;
}

const PROMPTS = [{ name: 'p', arguments: [{ name: 'n', required: false }] }, { name: 'slow' }, { name: 'fail' }, { name: 'fast' }, { name: 'announce' }];

/**
 * A Streamable HTTP upstream that records the headers of everything it receives. `stateless`: 2026-07-28, else a
 * 2025-era server with sessions and a GET stream. Requests whose key ('prompts/list', or a prompt's name) is held wait
 * until released; the prompt `fail` is answered with HTTP 500, `announce` on an SSE stream that tells of a list change
 * first.
 */
async function startRecordingUpstream(t: TestContext, era: 'stateless' | 'handshake') {
    const seen: Seen[] = [];
    const held: Held[] = [];
    const holding = new Set<string>();
    const sessions = new Set<string>();
    const streams = new Set<ServerResponse>();
    let failLists = false;
    let sessionCount = 0;
    const stateless = era === 'stateless';
    const envelope = stateless ? { resultType: 'complete' } : {};

    const answer = (res: ServerResponse, id: unknown, result: unknown, headers: Record<string, string> = {}): void =>
        void res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ jsonrpc: '2.0', id, result }));

    const server = createServer((req, res) => {
        if (req.method === 'GET' || req.method === 'DELETE') {
            seen.push({ method: req.method, headers: { ...req.headers } });
            if (req.method === 'DELETE' || stateless) return void res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
            if (!sessions.has(String(req.headers['mcp-session-id']))) return void res.writeHead(404).end();
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write(': open\n\n');
            streams.add(res);
            res.once('close', () => streams.delete(res));
            return;
        }
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
            const message = JSON.parse(Buffer.concat(chunks).toString()) as { id?: number; method: string; params?: Seen['params'] };
            seen.push({ method: message.method, headers: { ...req.headers }, params: message.params });
            if (!stateless && message.method !== 'initialize' && !sessions.has(String(req.headers['mcp-session-id']))) return void res.writeHead(404).end();
            if (message.id === undefined) return void res.writeHead(202).end();
            const respond = () => serve(message as { id: number; method: string; params?: Seen['params'] }, res);
            const key = message.method === 'prompts/get' ? (message.params?.name ?? '') : message.method;
            if (holding.has(key)) held.push({ key, release: respond });
            else respond();
        });
    });

    const announced: { name: string }[] = [];

    function serve(message: { id: number; method: string; params?: Seen['params'] }, res: ServerResponse): void {
        switch (message.method) {
            case 'initialize': {
                const session = `s-${++sessionCount}`;
                sessions.add(session);
                const result = { protocolVersion: '2025-06-18', capabilities: { prompts: { listChanged: true } }, serverInfo: { name: 'recorder', version: '1.0.0' } };
                return answer(res, message.id, result, { 'mcp-session-id': session });
            }
            case 'server/discover':
                return answer(res, message.id, { ...envelope, supportedVersions: ['2026-07-28'], capabilities: { prompts: {}, completions: {} }, ttlMs: 0, cacheScope: 'public' });
            case 'completion/complete':
                return answer(res, message.id, { ...envelope, completion: { values: ['one'] } });
            case 'ping':
                return answer(res, message.id, {});
            case 'prompts/list':
                if (failLists)
                    return void res
                        .writeHead(200, { 'content-type': 'application/json' })
                        .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: 'list broke' } }));
                return answer(res, message.id, { ...envelope, prompts: [...PROMPTS, ...announced], ...(stateless ? { ttlMs: 0, cacheScope: 'public' } : {}) });
            case 'prompts/get':
                if (message.params?.name === 'fail') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('no');
                if (message.params?.name === 'announce') {
                    // A real change, so the list read again differs (an unchanged one is kept as it is: nothing to rebuild).
                    announced.push({ name: `announced-${announced.length + 1}` });
                    const events = [
                        { jsonrpc: '2.0', method: 'notifications/prompts/list_changed' },
                        { jsonrpc: '2.0', id: message.id, result: { messages: [] } }
                    ];
                    return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(events.map(event => `data: ${JSON.stringify(event)}\n\n`).join(''));
                }
                return answer(res, message.id, { ...envelope, messages: [{ role: 'user', content: { type: 'text', text: String(message.params?.name) } }] });
            default:
                return void res
                    .writeHead(404, { 'content-type': 'application/json' })
                    .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } }));
        }
    }

    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    t.after(() => {
        for (const { release } of held.splice(0)) release();
        server.closeAllConnections();
        return new Promise(resolve => server.close(resolve));
    });
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
        seen,
        held,
        hold: (key: string) => holding.add(key),
        /** Answers every held request with `key` and holds no more. */
        release(key: string) {
            holding.delete(key);
            for (const waiting of held.filter(item => item.key === key)) {
                held.splice(held.indexOf(waiting), 1);
                waiting.release();
            }
        },
        failLists: () => (failLists = true),
        /** As a restarted server: every session is unknown from now on. */
        forgetSessions: () => sessions.clear(),
        listChanged() {
            for (const stream of streams) stream.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed' })}\n\n`);
        },
        get streams() {
            return streams.size;
        }
    };
}

type Recorder = Awaited<ReturnType<typeof startRecordingUpstream>>;

const TRACE_KEYS = ['traceparent', 'tracestate', 'baggage'];

/**
 * What a client request's upstream call may carry of it (its headers, and its trace context in `_meta`, as `_meta.*`);
 * every other request the upstream sees must carry none.
 */
function carried({ headers, params }: Seen): Record<string, string> {
    const found = Object.entries(headers).filter(([name]) => name === 'x-request-id' || name.startsWith('mcp-param-') || TRACE_KEYS.includes(name));
    const meta = Object.entries(params?._meta ?? {}).filter(([name]) => TRACE_KEYS.includes(name));
    return Object.fromEntries([...found, ...meta.map(([name, value]) => [`_meta.${name}`, value])]) as Record<string, string>;
}

/** A client request's own W3C trace context, told apart by `tag`, as HTTP headers. */
function traceFor(tag: string): Record<string, string> {
    const traceId = createHash('sha256').update(tag).digest('hex').slice(0, 32);
    return { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, tracestate: `gw=${tag}`, baggage: `request=${tag}` };
}

/** What the upstream call of a request sent with `headers` and traceFor(tag) carries: both, the trace in `_meta` too. */
function own(headers: Record<string, string>, tag: string): Record<string, string> {
    const trace = traceFor(tag);
    return { ...headers, ...trace, ...Object.fromEntries(Object.entries(trace).map(([name, value]) => [`_meta.${name}`, value])) };
}

function getsOf(upstream: Recorder, name: string): Seen[] {
    return upstream.seen.filter(item => item.method === 'prompts/get' && item.params?.name === name);
}

async function resultOf(response: Promise<Response>): Promise<JsonRpcMessage> {
    const [message] = await messagesOf(await response);
    assert.ok(message);
    return message;
}

async function gatewayFor(t: TestContext, upstream: Recorder, settings: Record<string, unknown>, config: Record<string, unknown> = {}) {
    const capture = capturingLogger();
    const gateway: RunningGateway = await startTestGateway({ upstreams: [{ id: 'rec', transport: 'streamable-http', url: upstream.url, ...settings }], ...config }, capture.logger);
    t.after(() => gateway.close());
    await upstreamsReady(gateway);
    return { gateway, url: gateway.url!, lines: capture.lines, load: () => gateway.upstreams[0]!.load };
}

describe("what an upstream request carries is its own client request's", () => {
    test(
        "a get and a completion queued behind another client's get (maxConcurrency 1) reach the upstream with their own headers, and lines name their own request",
        { timeout: 60_000 },
        async t => {
            const upstream = await startRecordingUpstream(t, 'stateless');
            const { url, lines, load } = await gatewayFor(t, upstream, { protocol: '2026-07-28', maxConcurrency: 1, timeoutMs: 60_000 });
            upstream.hold('slow');
            const a = resultOf(
                postModern(
                    url,
                    'prompts/get',
                    { name: 'rec__slow' },
                    { 'mcp-param-token': 'A-PRIVATE-VALUE', 'mcp-param-only-a': 'a', 'x-request-id': 'a-req-1', ...traceFor('a') }
                )
            );
            await waitFor(() => upstream.held.length === 1, 20_000, "A's get at the upstream");
            // B's upstream call fails in the transport (HTTP 500): the line about it must name B's request.
            const b = resultOf(postModern(url, 'prompts/get', { name: 'rec__fail' }, { 'mcp-param-token': 'B-VALUE', 'x-request-id': 'b-req-1', ...traceFor('b') }));
            await waitFor(() => load().queued === 1, 20_000, "B's get queued behind A's");
            const complete = { ref: { type: 'ref/prompt', name: 'rec__p' }, argument: { name: 'n', value: '' } };
            const c = resultOf(postModern(url, 'completion/complete', complete, { 'mcp-param-token': 'C-VALUE', 'x-request-id': 'c-req-1', ...traceFor('c') }));
            await waitFor(() => load().queued === 2, 20_000, "C's completion queued behind B's get");
            upstream.release('slow');
            assert.ok('result' in (await a));
            assert.ok('error' in (await b));
            assert.ok('result' in (await c));

            assert.deepEqual(carried(getsOf(upstream, 'slow')[0]!), own({ 'mcp-param-token': 'A-PRIVATE-VALUE', 'mcp-param-only-a': 'a', 'x-request-id': 'a-req-1' }, 'a'));
            assert.deepEqual(carried(getsOf(upstream, 'fail')[0]!), own({ 'mcp-param-token': 'B-VALUE', 'x-request-id': 'b-req-1' }, 'b'), "B's own, none of A's");
            const completion = upstream.seen.find(item => item.method === 'completion/complete');
            assert.deepEqual(carried(completion!), own({ 'mcp-param-token': 'C-VALUE', 'x-request-id': 'c-req-1' }, 'c'), "C's own");
            const transportErrors = lines().filter(line => line.msg === 'upstream transport error');
            assert.equal(transportErrors.length, 1);
            assert.equal(transportErrors[0]!.requestId, 'b-req-1');
        }
    );

    test('40 concurrent gets, most of them queued (default maxConcurrency): each upstream request carries exactly its own headers', { timeout: 120_000 }, async t => {
        const upstream = await startRecordingUpstream(t, 'stateless');
        // Held until all 40 arrived, which a loaded machine makes slow: the default 10 s per request would fail the last.
        const { url, load } = await gatewayFor(t, upstream, { protocol: '2026-07-28', timeoutMs: 60_000 });
        upstream.hold('p');
        const answers = Array.from({ length: 40 }, (_, n) =>
            resultOf(
                postModern(
                    url,
                    'prompts/get',
                    { name: 'rec__p', arguments: { n: String(n) } },
                    { 'mcp-param-token': `token-${n}`, 'x-request-id': `req-${n}`, ...traceFor(`req-${n}`) }
                )
            )
        );
        // Every slot taken and the rest queued: the queued ones start as others finish.
        await waitFor(() => upstream.held.length === 16 && load().queued === 24, 60_000, '16 in flight, 24 queued');
        upstream.release('p');
        for (const answer of await Promise.all(answers)) assert.ok('result' in answer, JSON.stringify(answer));
        const gets = getsOf(upstream, 'p');
        assert.equal(gets.length, 40);
        for (const get of gets) {
            const n = get.params?.arguments?.n;
            assert.deepEqual(carried(get), own({ 'mcp-param-token': `token-${n}`, 'x-request-id': `req-${n}` }, `req-${n}`), `get ${n}`);
        }
    });

    test(
        "a reconnect brought on by one client's request is nobody's: the new connection carries no request's headers and its lines name no request",
        { timeout: 60_000 },
        async t => {
            const upstream = await startRecordingUpstream(t, 'handshake');
            const { url, lines, gateway } = await gatewayFor(t, upstream, { protocol: '2025', reconnect: { initialMs: 1, maxMs: 10 } });
            await waitFor(() => upstream.streams === 1, 20_000, 'the GET stream open');
            const session = await openRawSession(url);
            const before = upstream.seen.length;
            upstream.forgetSessions();
            // Its get finds the session gone (404): the connection is lost, and reconnected.
            const failed = await resultOf(
                post(url, { jsonrpc: '2.0', id: 7, method: 'prompts/get', params: { name: 'rec__fast' } }, { ...session.headers, 'x-request-id': 'a-req-1', ...traceFor('a') })
            );
            assert.ok('error' in failed);
            await waitFor(
                () => upstream.seen.slice(before).some(item => item.method === 'GET') && gateway.upstreams[0]!.state === 'ready',
                20_000,
                'reconnected, its GET stream open'
            );
            const fast = await resultOf(
                post(url, { jsonrpc: '2.0', id: 8, method: 'prompts/get', params: { name: 'rec__fast' } }, { ...session.headers, 'x-request-id': 'b-req-1', ...traceFor('b') })
            );
            assert.ok('result' in fast);

            const after = upstream.seen.slice(before);
            assert.ok(after.some(item => item.method === 'initialize') && after.some(item => item.method === 'GET'), 'a new handshake and stream');
            for (const item of after) {
                const tag = item === getsOf(upstream, 'fast').at(-1) ? 'b' : 'a';
                assert.deepEqual(carried(item), item.method === 'prompts/get' ? own({ 'x-request-id': `${tag}-req-1` }, tag) : {}, item.method);
            }
            const connected = lines().filter(line => line.msg === 'upstream connected');
            assert.equal(connected.length, 2);
            for (const line of [...connected, ...lines().filter(line => String(line.msg).startsWith('upstream down'))]) assert.equal(line.requestId, undefined, String(line.msg));
        }
    );

    test("a list read started by one client and joined by another carries neither one's headers, and its lines name neither", { timeout: 60_000 }, async t => {
        const upstream = await startRecordingUpstream(t, 'handshake');
        // Announcements wait long: the list is read again by the next client, not by the gateway on its own.
        const { url, lines, gateway } = await gatewayFor(t, upstream, { protocol: '2025', timeoutMs: 1000 }, { notifications: { debounceMs: 60_000, maxDelayMs: 60_000 } });
        await waitFor(() => upstream.streams === 1, 20_000, 'the GET stream open');
        const list = (requestId: string, token: string) =>
            resultOf(postModern(url, 'prompts/list', {}, { 'mcp-param-token': token, 'x-request-id': requestId, ...traceFor(requestId) }));
        const listed = (result: JsonRpcMessage) => (result.result as { prompts: unknown[] }).prompts.length;
        assert.equal(listed(await list('first', 'first')), PROMPTS.length, 'a good list to fall back on');
        const changed = new Promise<void>(resolve => gateway.upstreams[0]!.events.subscribe(event => event.type === 'prompts-changed' && resolve()));
        upstream.listChanged();
        await changed;
        const before = upstream.seen.length;
        upstream.hold('prompts/list');
        upstream.failLists();
        // A starts the read, which outlasts the upstream's timeoutMs: A is served the last good list, and so is B, which
        // comes while the read is under way (or just after it failed: no read again for a while).
        const a = await list('a-list', 'A-PRIVATE-VALUE');
        const b = await list('b-list', 'B-VALUE');
        assert.equal(upstream.held.length, 1, 'one read for both');
        upstream.release('prompts/list');
        await waitFor(() => lines().some(line => String(line.msg).startsWith('listing upstream prompts failed')), 20_000, 'the read failed');
        for (const result of [a, b]) assert.equal(listed(result), PROMPTS.length);

        const reads = upstream.seen.slice(before).filter(item => item.method === 'prompts/list');
        assert.equal(reads.length, 1);
        assert.deepEqual(carried(reads[0]!), {});
        const failure = lines().find(line => String(line.msg).startsWith('listing upstream prompts failed'));
        assert.equal(failure?.requestId, undefined);
    });

    test("a list change an upstream tells while answering one client's get is announced to everyone: the view rebuilt for it names no request", { timeout: 60_000 }, async t => {
        const upstream = await startRecordingUpstream(t, 'handshake');
        const capture = capturingLogger();
        // The same prompts from two upstreams, both unprefixed: every view built warns of the clash.
        const twin = (id: string) => ({ id, transport: 'streamable-http', url: upstream.url, protocol: '2025', namespace: false });
        const gateway = await startTestGateway({ upstreams: [twin('one'), twin('two')], notifications: { debounceMs: 0, maxDelayMs: 10 } }, capture.logger);
        t.after(() => gateway.close());
        await upstreamsReady(gateway);
        const clashes = () => capture.lines().filter(line => line.msg === 'prompt name clash; keeping the first upstream in config order');
        const atStart = clashes().length;
        assert.ok(atStart > 0);
        const session = await openRawSession(gateway.url!);
        const answered = await resultOf(
            post(gateway.url!, { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'announce' } }, { ...session.headers, 'x-request-id': 'a-ann' })
        );
        assert.ok('result' in answered);
        await waitFor(() => clashes().length > atStart, 20_000, 'the view rebuilt after the change');
        for (const line of clashes()) assert.equal(line.requestId, undefined);
    });

    test("a connection a reload starts is nobody's: it carries no request's headers and its lines name no request", { timeout: 60_000 }, async t => {
        const upstream = await startRecordingUpstream(t, 'handshake');
        const { gateway, lines } = await gatewayFor(t, upstream, { protocol: '2025' });
        const added = { id: 'added', transport: 'streamable-http', url: upstream.url, protocol: '2025' };
        const next = parseConfig(
            JSON.stringify({ listen: { port: 0 }, upstreams: [{ id: 'rec', transport: 'streamable-http', url: upstream.url, protocol: '2025' }, added] }),
            'test config',
            process.env
        );
        const before = upstream.seen.length;
        const change = await gateway.reload(next);
        assert.deepEqual(change.added, ['added']);
        await waitFor(() => upstream.seen.slice(before).some(item => item.method === 'GET'), 20_000, "the new connection's GET stream");
        for (const item of upstream.seen.slice(before)) assert.deepEqual(carried(item), {}, item.method);
        const connected = lines().filter(line => line.msg === 'upstream connected' && line.upstream === 'added');
        assert.equal(connected.length, 1);
        assert.equal(connected[0]!.requestId, undefined);
    });
});
