/**
 * OpenTelemetry traces, end to end: the built gateway (dist/cli.js) started with the standard OTEL_* environment,
 * exporting to an OTLP/HTTP receiver in this process (test/fixtures/otlp-receiver.ts, JSON and protobuf), in front of
 * upstreams of both eras over stdio and HTTP that answer with the trace context they received
 * (test/fixtures/trace-recorder.ts). Checks the SERVER and CLIENT spans, their parents and attributes, what reached
 * the upstream, sampling, an unreachable collector and the flush at shutdown.
 */
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { compiledFixture } from './fixture-build.js';
import { startOtlpReceiver, SPAN_KIND, type OtlpReceiver, type RecordedSpan } from './fixtures/otlp-receiver.js';
import { BOB, connectInputClient, interactiveStdio } from './input-clients.js';
import { closeAfter, connectHttp, connectModernHttp, freePort, ROOT, startGatewayCli, type RunningCli } from './helpers.js';
import { initializeBody, modernHeaders, modernRequest, openRawSession, post, postModern } from './raw-http.js';
import { RECORDER_IDS, recorderUpstreams, seenBy } from './trace-recorders.js';

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const traceparent = (trace: string, span: string, flags = '01') => `00-${trace}-${span}-${flags}`;
const UPSTREAMS = RECORDER_IDS;

/** The gateway with the four recorders, as a process with `env`; its config in a temporary folder. */
async function gateway(t: TestContext, env: Record<string, string>, extra: Record<string, unknown> = {}): Promise<RunningCli> {
    const upstreams = await recorderUpstreams(t, { timeoutMs: 30_000 });
    const dir = await mkdtemp(path.join(tmpdir(), 'tracing-'));
    closeAfter(t, () => rm(dir, { recursive: true, force: true }));
    const config = {
        listen: { port: 0 },
        log: { format: 'json' },
        upstreams,
        ...extra
    };
    await writeFile(path.join(dir, 'gateway.json'), JSON.stringify(config));
    return startGatewayCli(t, ['--config', 'gateway.json'], { cwd: dir, env: { OTEL_BSP_SCHEDULE_DELAY: '20', ...env } });
}

async function receiver(t: TestContext): Promise<OtlpReceiver> {
    const started = await startOtlpReceiver();
    closeAfter(t, () => started.close());
    return started;
}

const serverSpanOf = (spans: readonly RecordedSpan[], name: string, traceId: string) =>
    spans.find(span => span.kind === SPAN_KIND.server && span.name === name && span.traceId === traceId);

/** `mcp_gateway_spans_dropped_total` by reason, from a Prometheus text exposition. */
function spansDropped(exposition: string): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [, reason, value] of exposition.matchAll(/^mcp_gateway_spans_dropped_total\{reason="(\w+)"\} (\S+)$/gm)) counts[reason!] = Number(value);
    return counts;
}

/** A collector that takes exports and answers none until told to (`release`), with their count awaitable. */
async function stalledCollector(t: TestContext): Promise<{ url: string; requests(count: number): Promise<void>; release(status: number): void }> {
    const held: ServerResponse[] = [];
    const arrived = new EventTarget();
    let received = 0;
    const server = createServer((req, res) => {
        req.resume();
        received++;
        held.push(res);
        arrived.dispatchEvent(new Event('request'));
    });
    closeAfter(t, async () => {
        server.closeAllConnections();
        await new Promise(resolve => server.close(resolve));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        async requests(count) {
            while (received < count) await once(arrived, 'request');
        },
        release(status) {
            for (const res of held.splice(0)) res.writeHead(status).end();
        }
    };
}

/**
 * A 2025 Streamable HTTP upstream whose prompts/get answer stream ends before the answer (event id a1, retry 10 ms),
 * the answer coming on the GET that resumes it from Last-Event-ID; it offers no standalone stream (405). `resumes`:
 * the headers of each resuming GET.
 */
async function resumableUpstream(t: TestContext): Promise<{ url: string; resumes: IncomingHttpHeaders[] }> {
    const resumes: IncomingHttpHeaders[] = [];
    let answer = '';
    const handle = async (req: IncomingMessage, res: ServerResponse) => {
        if (req.method === 'GET') {
            if (req.headers['last-event-id'] !== 'a1') return void res.writeHead(405).end();
            resumes.push(req.headers);
            return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`id: a2\ndata: ${answer}\n\n`);
        }
        if (req.method !== 'POST') return void res.writeHead(200).end();
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const message = JSON.parse(Buffer.concat(chunks).toString()) as { id?: number; method: string; params?: { protocolVersion?: string } };
        if (message.id === undefined) return void res.writeHead(202).end();
        const reply = (result: unknown) => JSON.stringify({ jsonrpc: '2.0', id: message.id, result });
        const json = (body: string, headers: Record<string, string> = {}) => void res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(body);
        switch (message.method) {
            case 'initialize':
                return json(reply({ protocolVersion: message.params?.protocolVersion, capabilities: { prompts: {} }, serverInfo: { name: 'resumable', version: '1' } }), {
                    'mcp-session-id': 's-1'
                });
            case 'prompts/list':
                return json(reply({ prompts: [{ name: 'p' }] }));
            case 'prompts/get':
                answer = reply({ messages: [{ role: 'user', content: { type: 'text', text: 'resumed' } }] });
                return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end('id: a1\nretry: 10\ndata: \n\n');
            default:
                return json(reply({}));
        }
    };
    const server = createServer((req, res) => void handle(req, res));
    closeAfter(t, () => {
        server.closeAllConnections();
        return new Promise(resolve => server.close(resolve));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, resumes };
}

describe('OpenTelemetry traces', () => {
    for (const protocol of ['http/protobuf', 'http/json'] as const) {
        test(`${protocol}: a get is a SERVER span continuing the client's trace, and a CLIENT span per upstream call whose context the upstream receives`, async t => {
            const otlp = await receiver(t);
            const cli = await gateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_SERVICE_NAME: 'gw-under-test' });
            for (const connect of [connectHttp, connectModernHttp]) {
                const client = await connect(cli.url);
                closeAfter(t, () => client.close());
                for (const upstream of UPSTREAMS) {
                    // A trace of its own per call, so each call's spans are told apart.
                    const trace = `${CLIENT_TRACE.slice(0, 24)}${connect === connectHttp ? '1' : '2'}${UPSTREAMS.indexOf(upstream)}${CLIENT_TRACE.slice(26)}`;
                    const sent = { traceparent: traceparent(trace, CLIENT_SPAN), tracestate: 'rojo=00f067aa0ba902b7', baggage: 'userId=alice' };
                    const seen = await seenBy(client, `${upstream}__echo`, sent);
                    const spans = await otlp.until(all => all.some(span => span.traceId === trace && span.kind === SPAN_KIND.server));
                    const server = serverSpanOf(spans, `prompts/get ${upstream}__echo`, trace);
                    assert.ok(server, `${connect.name} -> ${upstream}: ${JSON.stringify(spans.map(span => span.name))}`);
                    assert.equal(server.parentSpanId, CLIENT_SPAN);
                    assert.equal(server.resource['service.name'], 'gw-under-test');
                    assert.equal(server.attributes['mcp.method.name'], 'prompts/get');
                    assert.equal(server.attributes['gen_ai.prompt.name'], `${upstream}__echo`);
                    assert.equal(server.attributes['mcp.protocol.version'], connect === connectHttp ? '2025-11-25' : '2026-07-28');
                    assert.equal(server.attributes['network.transport'], 'tcp');
                    assert.equal(server.attributes['client.address'], '127.0.0.1');
                    assert.equal(server.attributes['mcp.gateway.client.id'], 'anonymous');
                    assert.equal(typeof server.attributes['jsonrpc.request.id'], 'string');
                    assert.equal(server.attributes['mcp.session.id'] !== undefined, connect === connectHttp, 'a session id for 2025 sessions only');
                    const clientSpan = spans.find(span => span.kind === SPAN_KIND.client && span.parentSpanId === server.spanId);
                    assert.ok(clientSpan, 'a CLIENT span under the SERVER span');
                    assert.equal(clientSpan.traceId, trace);
                    assert.equal(clientSpan.name, 'prompts/get echo');
                    assert.equal(clientSpan.attributes['gen_ai.prompt.name'], 'echo');
                    assert.equal(clientSpan.attributes['mcp.gateway.upstream.id'], upstream);
                    assert.equal(clientSpan.attributes['mcp.protocol.version'], upstream.endsWith('26') ? '2026-07-28' : '2025-11-25');
                    if (upstream.startsWith('h')) {
                        assert.equal(clientSpan.attributes['server.address'], '127.0.0.1');
                        assert.equal(clientSpan.attributes['network.transport'], 'tcp');
                        assert.equal(typeof clientSpan.attributes['server.port'], 'number');
                    } else {
                        assert.equal(clientSpan.attributes['server.address'], path.basename(process.execPath));
                        assert.equal(clientSpan.attributes['network.transport'], 'pipe');
                    }
                    const injected = { traceparent: traceparent(trace, clientSpan.spanId), tracestate: sent.tracestate, baggage: sent.baggage };
                    assert.deepEqual(seen.meta, injected, 'the upstream request carries the CLIENT span in _meta');
                    if (upstream.startsWith('h')) assert.deepEqual(seen.headers, injected, 'and as headers over HTTP');
                }
            }
            const expected = protocol === 'http/json' ? 'application/json' : 'application/x-protobuf';
            assert.ok(
                otlp.contentTypes.every(type => type.startsWith(expected)),
                otlp.contentTypes.join()
            );
        });
    }

    test('a failure is status ERROR with the JSON-RPC code; a hidden or unknown prompt looks the same; the upstream rejection is on the CLIENT span', async t => {
        const otlp = await receiver(t);
        const cli = await gateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url }, { anonymous: { prompts: { deny: ['h25__fail'] } } });
        const client = await connectModernHttp(cli.url);
        closeAfter(t, () => client.close());
        const failing = '5bf92f3577b34da6a3ce929d0e0e4736';
        const unknown = '6bf92f3577b34da6a3ce929d0e0e4736';
        await assert.rejects(client.getPrompt({ name: 'h26__fail', _meta: { traceparent: traceparent(failing, CLIENT_SPAN) } }));
        await assert.rejects(client.getPrompt({ name: 'h26__nothing', _meta: { traceparent: traceparent(unknown, CLIENT_SPAN) } }));
        const spans = await otlp.until(all => [failing, unknown].every(trace => all.some(span => span.traceId === trace && span.kind === SPAN_KIND.server)));
        const failed = serverSpanOf(spans, 'prompts/get h26__fail', failing)!;
        assert.equal(failed.statusCode, 2);
        assert.equal(failed.attributes['error.type'], '-32602');
        assert.equal(failed.attributes['rpc.response.status_code'], '-32602');
        const upstreamCall = spans.find(span => span.parentSpanId === failed.spanId)!;
        assert.equal(upstreamCall.kind, SPAN_KIND.client);
        assert.equal(upstreamCall.statusCode, 2);
        assert.equal(upstreamCall.attributes['error.type'], '-32602');
        // A name that names no prompt the caller sees is no span name (a client could send any number of them).
        const missing = serverSpanOf(spans, 'prompts/get', unknown)!;
        assert.equal(missing.statusCode, 2);
        assert.equal(missing.attributes['error.type'], '-32602');
        assert.equal(missing.attributes['gen_ai.prompt.name'], 'h26__nothing');
        assert.ok(!spans.some(span => span.parentSpanId === missing.spanId), 'no upstream call for an unknown prompt');
        const hiddenTrace = '9cf92f3577b34da6a3ce929d0e0e4736';
        await assert.rejects(client.getPrompt({ name: 'h25__fail', _meta: { traceparent: traceparent(hiddenTrace, CLIENT_SPAN) } }));
        const hidden = serverSpanOf(await otlp.until(all => all.some(span => span.traceId === hiddenTrace)), 'prompts/get', hiddenTrace)!;
        assert.deepEqual([hidden.statusCode, hidden.attributes['error.type'], hidden.attributes['gen_ai.prompt.name']], [2, '-32602', 'h25__fail']);
        assert.ok(!spans.some(span => span.parentSpanId === hidden.spanId), 'no upstream call for a hidden prompt');
    });

    test("an unsampled client trace (parentbased) records no spans, and its context still reaches the upstream, as the gateway's own", async t => {
        const otlp = await receiver(t);
        const cli = await gateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_TRACES_SAMPLER: 'parentbased_always_on' });
        const client = await connectHttp(cli.url);
        closeAfter(t, () => client.close());
        const unsampled = '7bf92f3577b34da6a3ce929d0e0e4736';
        const sampled = '8bf92f3577b34da6a3ce929d0e0e4736';
        const seen = await seenBy(client, 'h25__echo', { traceparent: traceparent(unsampled, CLIENT_SPAN, '00') });
        const [, trace, span, flags] = seen.meta.traceparent!.split('-');
        assert.deepEqual([trace, flags], [unsampled, '00']);
        assert.notEqual(span, CLIENT_SPAN, "the gateway's own (unrecorded) span id");
        // Spans are exported in the order they end: once the sampled call's are in, the unsampled one's would be too.
        await seenBy(client, 'h25__echo', { traceparent: traceparent(sampled, CLIENT_SPAN) });
        const spans = await otlp.until(all => all.some(one => one.traceId === sampled && one.kind === SPAN_KIND.server));
        assert.deepEqual(
            spans.filter(one => one.traceId === unsampled),
            []
        );
    });

    test('a prompts/list SERVER span names the upstreams it asked, links the reads it waited for, and tells the lists served from the cache', async t => {
        const otlp = await receiver(t);
        // Nothing announced within the test: the list after a change is the one that reads the changed list again.
        const cli = await gateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url }, { notifications: { debounceMs: 60_000, maxDelayMs: 600_000 } });
        // A 2025 session: a 2026-07-28 client keeps list pages for their ttlMs, and would not ask again.
        const client = await connectHttp(cli.url);
        closeAfter(t, () => client.close());
        const [reading, cached] = ['a1', 'a2'].map(tag => `${tag}${CLIENT_TRACE.slice(2)}`) as [string, string];
        await client.listPrompts();
        // s25's get sends list_changed before its answer: its cached list is dropped.
        await seenBy(client, 's25__change');
        await client.listPrompts({ _meta: { traceparent: traceparent(reading, CLIENT_SPAN) } });
        await client.listPrompts({ _meta: { traceparent: traceparent(cached, CLIENT_SPAN) } });
        const spans = await otlp.until(all => serverSpanOf(all, 'prompts/list', cached) !== undefined);
        const cachedIds = (span: RecordedSpan) =>
            [...((span.events.find(event => event.name === 'mcp.gateway.list.cached')?.attributes['mcp.gateway.upstream.ids'] ?? []) as string[])].sort();
        const read = serverSpanOf(spans, 'prompts/list', reading)!;
        assert.deepEqual(read.attributes['mcp.gateway.upstream.ids'], ['s25']);
        assert.deepEqual(cachedIds(read), ['h25', 'h26', 's26']);
        assert.equal(read.attributes['gen_ai.prompt.name'], undefined);
        // The read is shared work: its CLIENT span is a root of its own, linked from the list that waited for it.
        assert.equal(read.links.length, 1, JSON.stringify(read.links));
        const refresh = spans.find(span => span.spanId === read.links[0]!.spanId)!;
        assert.ok(refresh, 'the linked span was exported');
        assert.deepEqual([refresh.kind, refresh.name, refresh.parentSpanId, refresh.attributes['mcp.gateway.upstream.id']], [SPAN_KIND.client, 'prompts/list', '', 's25']);
        const fromCache = serverSpanOf(spans, 'prompts/list', cached)!;
        assert.equal(fromCache.attributes['mcp.gateway.upstream.ids'], undefined);
        assert.deepEqual(cachedIds(fromCache), [...UPSTREAMS].sort());
        assert.deepEqual(fromCache.links, []);
    });

    test('initialize, the opening of subscriptions/listen and requests refused before they are served are SERVER spans too', async t => {
        const otlp = await receiver(t);
        const cli = await gateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
        const [opening, listening, unknown, unreadable] = ['d1', 'd2', 'd3', 'd4'].map(tag => `${tag}${CLIENT_TRACE.slice(2)}`) as [string, string, string, string];
        const opened = await post(cli.url, initializeBody('2025-06-18'), { traceparent: traceparent(opening, CLIENT_SPAN) });
        assert.equal(opened.status, 200);
        const stream = new AbortController();
        closeAfter(t, () => stream.abort());
        const listen = modernRequest(
            'subscriptions/listen',
            { notifications: { promptsListChanged: true }, _meta: { traceparent: traceparent(listening, CLIENT_SPAN) } },
            'listen'
        );
        assert.equal((await post(cli.url, listen, modernHeaders(listen), { signal: stream.signal })).status, 200);
        assert.equal((await postModern(cli.url, 'widgets/list', { _meta: { traceparent: traceparent(unknown, CLIENT_SPAN) } })).status, 404);
        // Params that are no object: refused as it is read, before it is served; its HTTP header carries its trace.
        const bad = { jsonrpc: '2.0', id: 'bad', method: 'prompts/list', params: 'all' };
        assert.equal((await post(cli.url, bad, { 'mcp-protocol-version': '2026-07-28', traceparent: traceparent(unreadable, CLIENT_SPAN) })).status, 400);
        const spans = await otlp.until(all => [opening, listening, unknown, unreadable].every(trace => all.some(span => span.traceId === trace && span.kind === SPAN_KIND.server)));
        const initialize = serverSpanOf(spans, 'initialize', opening)!;
        assert.ok(initialize, JSON.stringify(spans.map(span => span.name)));
        assert.equal(initialize.parentSpanId, CLIENT_SPAN);
        assert.equal(initialize.statusCode, 0);
        assert.equal(initialize.attributes['mcp.protocol.version'], '2025-06-18');
        assert.equal(typeof initialize.attributes['mcp.session.id'], 'string');
        assert.equal(initialize.attributes['client.address'], '127.0.0.1');
        assert.equal(initialize.attributes['mcp.gateway.client.id'], 'anonymous');
        // Ended once the subscription is open (the stream is still open here).
        const listenSpan = serverSpanOf(spans, 'subscriptions/listen', listening)!;
        assert.equal(listenSpan.statusCode, 0);
        assert.equal(listenSpan.attributes['mcp.protocol.version'], '2026-07-28');
        for (const [trace, name, code] of [
            [unknown, 'widgets/list', '-32601'],
            [unreadable, 'prompts/list', '-32602']
        ] as const) {
            const refused = serverSpanOf(spans, name, trace)!;
            assert.ok(refused, `${name}: ${JSON.stringify(spans.filter(span => span.traceId === trace).map(span => span.name))}`);
            assert.equal(refused.parentSpanId, CLIENT_SPAN);
            assert.equal(refused.statusCode, 2);
            assert.equal(refused.attributes['error.type'], code);
            assert.equal(refused.attributes['jsonrpc.request.id'], trace === unknown ? '1' : 'bad');
        }
    });

    test('a second initialize on an HTTP session is a SERVER span with status ERROR, in its session', async t => {
        const otlp = await receiver(t);
        const cli = await gateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
        const session = await openRawSession(cli.url);
        const again = 'f1' + CLIENT_TRACE.slice(2);
        const refused = await post(cli.url, initializeBody('2025-06-18', 'again'), { ...session.headers, traceparent: traceparent(again, CLIENT_SPAN) });
        assert.equal(refused.status, 400);
        // A request served after it: its span is exported after the refusal's (spans are queued as they end).
        const after = 'f2' + CLIENT_TRACE.slice(2);
        const ping = { jsonrpc: '2.0', id: 'after', method: 'ping', params: { _meta: { traceparent: traceparent(after, CLIENT_SPAN) } } };
        assert.equal((await post(cli.url, ping, session.headers)).status, 200);
        const spans = await otlp.until(all => serverSpanOf(all, 'ping', after) !== undefined);
        const span = serverSpanOf(spans, 'initialize', again);
        assert.ok(span, JSON.stringify(spans.map(one => [one.name, one.traceId])));
        assert.equal(span.parentSpanId, CLIENT_SPAN);
        assert.equal(span.statusCode, 2);
        assert.equal(span.attributes['error.type'], '-32600');
        assert.equal(span.attributes['jsonrpc.request.id'], 'again');
        assert.equal(span.attributes['mcp.protocol.version'], '2025-06-18');
        assert.equal(typeof span.attributes['mcp.session.id'], 'string');
        assert.equal(span.attributes['mcp.gateway.client.id'], 'anonymous');
    });

    test("an answer stream resumed with Last-Event-ID is an event on the call's CLIENT span, and its GET carries the call's trace context", async t => {
        const otlp = await receiver(t);
        const upstream = await resumableUpstream(t);
        const dir = await mkdtemp(path.join(tmpdir(), 'tracing-'));
        closeAfter(t, () => rm(dir, { recursive: true, force: true }));
        const config = {
            listen: { port: 0 },
            log: { format: 'json' },
            upstreams: [{ id: 'res', transport: 'streamable-http', url: upstream.url, protocol: '2025', pingIntervalMs: 0 }]
        };
        await writeFile(path.join(dir, 'gateway.json'), JSON.stringify(config));
        const cli = await startGatewayCli(t, ['--config', 'gateway.json'], { cwd: dir, env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '20' } });
        const client = await connectHttp(cli.url);
        closeAfter(t, () => client.close());
        const trace = 'f3' + CLIENT_TRACE.slice(2);
        const got = await client.getPrompt({ name: 'res__p', _meta: { traceparent: traceparent(trace, CLIENT_SPAN), tracestate: 'rojo=1', baggage: 'userId=alice' } });
        assert.deepEqual(got.messages, [{ role: 'user', content: { type: 'text', text: 'resumed' } }]);
        const spans = await otlp.until(all => serverSpanOf(all, 'prompts/get res__p', trace) !== undefined);
        const server = serverSpanOf(spans, 'prompts/get res__p', trace)!;
        const call = spans.find(span => span.kind === SPAN_KIND.client && span.parentSpanId === server.spanId)!;
        assert.deepEqual(
            call.events.map(event => [event.name, event.attributes['mcp.stream.attempt']]),
            [['mcp.stream.resume', 1]]
        );
        assert.equal(upstream.resumes.length, 1);
        const [resumed] = upstream.resumes;
        assert.deepEqual([resumed!.traceparent, resumed!.tracestate, resumed!.baggage], [traceparent(trace, call.spanId), 'rojo=1', 'userId=alice']);
    });

    test('2026-07-28 requests refused by the _meta and header checks (HTTP and stdio) are SERVER spans with status ERROR', async t => {
        const otlp = await receiver(t);
        const cli = await gateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
        const [unclaimed, mismatched, unsupported, httpServed, stdioServed] = ['e1', 'e2', 'e3', 'e4', 'e5'].map(tag => `${tag}${CLIENT_TRACE.slice(2)}`) as [
            string,
            string,
            string,
            string,
            string
        ];
        const context = (trace: string) => ({ _meta: { traceparent: traceparent(trace, CLIENT_SPAN) } });
        // A stateless revision's header, but no protocol version in _meta.
        const noVersion = { jsonrpc: '2.0', id: 'no-version', method: 'prompts/list', params: context(unclaimed) };
        assert.equal((await post(cli.url, noVersion, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'prompts/list' })).status, 400);
        const listing = modernRequest('prompts/list', context(mismatched), 'mismatch');
        assert.equal((await post(cli.url, listing, { ...modernHeaders(listing), 'mcp-method': 'prompts/get' })).status, 400);
        // A request served after them: its span is exported after theirs (spans are queued as they end).
        assert.equal((await postModern(cli.url, 'prompts/list', context(httpServed))).status, 200);
        // Over stdio: a version the gateway does not speak.
        const dir = await mkdtemp(path.join(tmpdir(), 'tracing-'));
        closeAfter(t, () => rm(dir, { recursive: true, force: true }));
        await writeFile(path.join(dir, 'gateway.json'), JSON.stringify({ log: { format: 'json' }, upstreams: [{ id: 'none', transport: 'files', path: dir }] }));
        const env = { ...(process.env as Record<string, string>), OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '20' };
        const stdio = new StdioClientTransport({
            command: process.execPath,
            args: [path.join(ROOT, 'dist/cli.js'), '--config', 'gateway.json', '--stdio'],
            cwd: dir,
            env,
            stderr: 'pipe'
        });
        const answers = new EventEmitter();
        stdio.onmessage = message => answers.emit('message', message);
        await stdio.start();
        closeAfter(t, () => stdio.close());
        const answered = once(answers, 'message');
        await stdio.send(modernRequest('prompts/list', context(unsupported), 'too-new', '2099-01-01'));
        assert.equal(((await answered)[0] as { error?: { code: number } }).error?.code, -32022);
        const served = once(answers, 'message');
        await stdio.send(modernRequest('prompts/list', context(stdioServed), 'served'));
        assert.ok('result' in ((await served)[0] as object));
        const spans = await otlp.until(all => [httpServed, stdioServed].every(trace => serverSpanOf(all, 'prompts/list', trace) !== undefined));
        for (const [trace, id, code, transport] of [
            [unclaimed, 'no-version', '-32602', 'tcp'],
            [mismatched, 'mismatch', '-32020', 'tcp'],
            [unsupported, 'too-new', '-32022', 'pipe']
        ] as const) {
            const refused = serverSpanOf(spans, 'prompts/list', trace)!;
            assert.ok(refused, `no SERVER span for the request ${id}`);
            assert.equal(refused.parentSpanId, CLIENT_SPAN);
            assert.equal(refused.statusCode, 2);
            assert.equal(refused.attributes['error.type'], code);
            assert.equal(refused.attributes['rpc.response.status_code'], code);
            assert.equal(refused.attributes['jsonrpc.request.id'], id);
            assert.equal(refused.attributes['network.transport'], transport);
        }
        // The claimed revision where the gateway knows it; an unknown claim is never an attribute.
        assert.equal(serverSpanOf(spans, 'prompts/list', mismatched)!.attributes['mcp.protocol.version'], '2026-07-28');
        assert.notEqual(serverSpanOf(spans, 'prompts/list', unsupported)!.attributes['mcp.protocol.version'], '2099-01-01');
    });

    test('a client without trace context gets a root SERVER span; its HTTP traceparent header is continued; client.address is the caller behind a trusted proxy', async t => {
        const otlp = await receiver(t);
        const cli = await gateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url }, { listen: { port: 0, trustProxy: ['loopback'] } });
        const plain = await connectModernHttp(cli.url);
        closeAfter(t, () => plain.close());
        const seen = await seenBy(plain, 's26__echo');
        const rootTrace = seen.meta.traceparent!.split('-')[1]!;
        const headerTrace = '9bf92f3577b34da6a3ce929d0e0e4736';
        // Through a proxy on loopback (trusted): the caller is who it names, as for the anonymous client's quotas.
        const viaHeader = await connectModernHttp(cli.url, { headers: { traceparent: traceparent(headerTrace, CLIENT_SPAN), 'x-forwarded-for': '203.0.113.7' } });
        closeAfter(t, () => viaHeader.close());
        await seenBy(viaHeader, 's26__echo');
        // server/discover (the client's connect) carries the header too: wait for the gets' own spans.
        const spans = await otlp.until(all => [rootTrace, headerTrace].every(trace => serverSpanOf(all, 'prompts/get s26__echo', trace) !== undefined));
        const root = serverSpanOf(spans, 'prompts/get s26__echo', rootTrace)!;
        assert.equal(root.parentSpanId, '');
        assert.equal(root.attributes['client.address'], '127.0.0.1');
        const continued = serverSpanOf(spans, 'prompts/get s26__echo', headerTrace)!;
        assert.equal(continued.parentSpanId, CLIENT_SPAN);
        assert.equal(continued.attributes['client.address'], '203.0.113.7');
    });

    test('over stdio (--stdio), both eras: the SERVER span says network.transport pipe and continues the _meta trace', async t => {
        const otlp = await receiver(t);
        const recorder = compiledFixture('trace-recorder');
        const dir = await mkdtemp(path.join(tmpdir(), 'tracing-'));
        closeAfter(t, () => rm(dir, { recursive: true, force: true }));
        const upstream = { id: 's25', transport: 'stdio', command: process.execPath, args: [recorder, '--era', '2025'], cwd: ROOT, protocol: '2025', timeoutMs: 30_000 };
        await writeFile(path.join(dir, 'gateway.json'), JSON.stringify({ log: { format: 'json' }, upstreams: [upstream] }));
        const env = { ...(process.env as Record<string, string>), OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '20' };
        for (const [era, options] of [
            ['2025', {}],
            ['2026', { versionNegotiation: { mode: { pin: '2026-07-28' } } }]
        ] as const) {
            const client = new Client({ name: 'stdio-trace-test', version: '1.0.0' }, options);
            closeAfter(t, () => client.close());
            await client.connect(
                new StdioClientTransport({
                    command: process.execPath,
                    args: [path.join(ROOT, 'dist/cli.js'), '--config', 'gateway.json', '--stdio'],
                    cwd: dir,
                    env,
                    stderr: 'pipe'
                })
            );
            const trace = `cbf92f3577b34da6a3ce929d0e0e473${era === '2025' ? '5' : '6'}`;
            const seen = await seenBy(client, 's25__echo', { traceparent: traceparent(trace, CLIENT_SPAN) });
            const spans = await otlp.until(all => serverSpanOf(all, 'prompts/get s25__echo', trace) !== undefined);
            const server = serverSpanOf(spans, 'prompts/get s25__echo', trace)!;
            assert.equal(server.parentSpanId, CLIENT_SPAN);
            assert.equal(server.attributes['network.transport'], 'pipe');
            assert.equal(server.attributes['client.address'], undefined);
            assert.equal(server.attributes['mcp.session.id'], undefined);
            assert.equal(server.attributes['mcp.protocol.version'], era === '2025' ? '2025-11-25' : '2026-07-28');
            const clientSpan = spans.find(span => span.parentSpanId === server.spanId)!;
            assert.equal(seen.meta.traceparent, traceparent(trace, clientSpan.spanId));
        }
    });

    test("an upstream's questions on its way (input requests) are events on the call's CLIENT span", async t => {
        const otlp = await receiver(t);
        const dir = await mkdtemp(path.join(tmpdir(), 'tracing-'));
        closeAfter(t, () => rm(dir, { recursive: true, force: true }));
        await writeFile(path.join(dir, 'gateway.json'), JSON.stringify({ listen: { port: 0 }, log: { format: 'json' }, upstreams: [interactiveStdio('ask')] }));
        const cli = await startGatewayCli(t, ['--config', 'gateway.json'], { cwd: dir, env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '20' } });
        const bob = await connectInputClient(t, { url: cli.url }, BOB);
        await bob.get('ask__confirm', { who: 'bob' });
        const spans = await otlp.until(all => all.some(span => span.kind === SPAN_KIND.server && span.name === 'prompts/get ask__confirm'));
        const server = spans.find(span => span.kind === SPAN_KIND.server && span.name === 'prompts/get ask__confirm')!;
        const call = spans.find(span => span.parentSpanId === server.spanId)!;
        assert.equal(call.name, 'prompts/get confirm');
        assert.deepEqual(
            call.events.map(event => [event.name, event.attributes['mcp.method.name'], event.attributes['mcp.input.outcome']]),
            [
                ['mcp.input.request', 'elicitation/create', undefined],
                ['mcp.input.answer', 'elicitation/create', 'answered']
            ]
        );
    });

    test('spans still queued at SIGTERM are exported before the gateway exits', async t => {
        const otlp = await receiver(t);
        // Nothing leaves on a schedule within the test: only the shutdown's flush sends them.
        const cli = await gateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '600000' });
        const client = await connectHttp(cli.url);
        await seenBy(client, 's25__echo', { traceparent: traceparent(CLIENT_TRACE, CLIENT_SPAN) });
        await client.close();
        assert.equal(otlp.spans.filter(span => span.traceId === CLIENT_TRACE).length, 0);
        const exited = once(cli.child, 'exit');
        cli.child.kill('SIGTERM');
        const [code] = (await exited) as [number | null];
        assert.equal(code, 0, cli.stderr.join('\n'));
        assert.ok(serverSpanOf(otlp.spans, 'prompts/get s25__echo', CLIENT_TRACE), 'the SERVER span arrived before the exit');
        assert.ok(otlp.spans.some(span => span.traceId === CLIENT_TRACE && span.kind === SPAN_KIND.client));
    });

    test('an unreachable collector: requests are answered, and one warning is logged however many exports fail', async t => {
        const closedPort = await freePort();
        const cli = await gateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closedPort}`, OTEL_EXPORTER_OTLP_TIMEOUT: '2000' });
        const client = await connectHttp(cli.url);
        for (let round = 0; round < 3; round++) {
            const trace = `${CLIENT_TRACE.slice(0, 31)}${round}`;
            // Each round's export fails before the next round's spans end: three failed exports at least.
            assert.deepEqual((await seenBy(client, 'h25__echo', { traceparent: traceparent(trace, CLIENT_SPAN) })).meta.traceparent?.split('-')[1], trace);
        }
        await client.close();
        const exited = once(cli.child, 'exit');
        cli.child.kill('SIGTERM');
        await exited;
        const warnings = cli.logs.filter(line => typeof line.msg === 'string' && line.msg.startsWith('traces cannot be exported'));
        assert.equal(warnings.length, 1, cli.stderr.join('\n'));
        assert.equal(warnings[0]!.collector, `http://127.0.0.1:${closedPort}`);
    });

    test('spans a full export queue or a failed export loses are counted in mcp_gateway_spans_dropped_total', async t => {
        const collector = await stalledCollector(t);
        // A queue of one span, exports of one: while the first export waits, every other span but one is dropped.
        const cli = await gateway(
            t,
            { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_MAX_QUEUE_SIZE: '1', OTEL_BSP_EXPORT_TIMEOUT: '600000', OTEL_EXPORTER_OTLP_TIMEOUT: '600000' },
            { shutdownTimeoutMs: 5000 }
        );
        // Answered first at teardown (before the gateway stops), so the shutdown's flush does not wait on it.
        closeAfter(t, () => collector.release(200));
        const client = await connectHttp(cli.url);
        closeAfter(t, () => client.close());
        await seenBy(client, 'h25__echo');
        await collector.requests(1);
        // Two gets: four spans ended while at most one fits in the queue.
        for (let get = 0; get < 2; get++) await seenBy(client, 'h25__echo');
        const dropped = async () => spansDropped(await (await fetch(new URL('/metrics', cli.url))).text());
        const whileStalled = await dropped();
        assert.ok(whileStalled.queue_full! >= 3, JSON.stringify(whileStalled));
        assert.equal(whileStalled.export_failed, 0);
        // The collector refuses the export it held: its span is lost too; the next export starts once that is counted.
        collector.release(400);
        await collector.requests(2);
        const afterRefusal = await dropped();
        assert.ok(afterRefusal.export_failed! >= 1, JSON.stringify(afterRefusal));
    });

    test('a collector that takes the export and never answers: requests are still answered, and the stop waits no longer than shutdownTimeoutMs', async t => {
        const held = new EventEmitter();
        const silent = createServer((req, res) => {
            closeAfter(t, () => void res.destroy());
            req.resume();
            held.emit('export');
        });
        closeAfter(t, () => {
            silent.closeAllConnections();
            return new Promise(resolve => silent.close(resolve));
        });
        silent.listen(0, '127.0.0.1');
        await once(silent, 'listening');
        const { port } = silent.address() as AddressInfo;
        const exported = once(held, 'export');
        const cli = await gateway(
            t,
            { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_BSP_EXPORT_TIMEOUT: '600000', OTEL_EXPORTER_OTLP_TIMEOUT: '600000' },
            { shutdownTimeoutMs: 1000 }
        );
        const client = await connectHttp(cli.url);
        await seenBy(client, 'h25__echo', { traceparent: traceparent(CLIENT_TRACE, CLIENT_SPAN) });
        await exported;
        // The first export hangs at the collector: every request after it is answered all the same, its context injected.
        for (let round = 0; round < 20; round++) {
            const trace = `${CLIENT_TRACE.slice(0, 30)}${String(round).padStart(2, '0')}`;
            const seen = await seenBy(client, UPSTREAMS[round % UPSTREAMS.length] + '__echo', { traceparent: traceparent(trace, CLIENT_SPAN) });
            assert.equal(seen.meta.traceparent?.split('-')[1], trace);
        }
        await client.close();
        const exited = once(cli.child, 'exit');
        cli.child.kill('SIGTERM');
        const [code] = (await exited) as [number | null];
        assert.equal(code, 0, cli.stderr.join('\n'));
        assert.ok(
            cli.logs.some(line => line.msg === 'spans still unexported at shutdown; dropped'),
            cli.stderr.join('\n')
        );
    });

    test('OTEL_EXPORTER_OTLP_PROTOCOL=grpc stops the start, and a bad OTEL_* value fails --check: exit 2, naming the variable and the fix', async t => {
        const dir = await mkdtemp(path.join(tmpdir(), 'tracing-'));
        closeAfter(t, () => rm(dir, { recursive: true, force: true }));
        await writeFile(
            path.join(dir, 'gateway.json'),
            JSON.stringify({ listen: { port: 0 }, upstreams: [{ id: 'never-started', transport: 'stdio', command: process.execPath, args: ['-e', ''] }] })
        );
        const { spawnSync } = await import('node:child_process');
        const result = spawnSync(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--config', 'gateway.json'], {
            cwd: dir,
            encoding: 'utf8',
            env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
            timeout: 120_000
        });
        assert.equal(result.status, 2, result.stderr);
        assert.match(result.stderr, /OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not supported: use "http\/protobuf".*4318/);
        const checked = spawnSync(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--config', 'gateway.json', '--check'], {
            cwd: dir,
            encoding: 'utf8',
            env: { ...process.env, OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'sometimes' },
            timeout: 120_000
        });
        assert.equal(checked.status, 2, checked.stderr);
        assert.match(checked.stderr, /OTEL_TRACES_SAMPLER: "sometimes" is not supported/);
    });
});

describe('list_changed traced by links', () => {
    test("an upstream's list_changed is a CONSUMER span; each client's notification a PRODUCER span linked to it", async t => {
        const otlp = await receiver(t);
        const cli = await gateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url }, { notifications: { debounceMs: 0, maxDelayMs: 0 } });
        const clients: Client[] = [];
        for (let count = 0; count < 2; count++) {
            const client = await connectHttp(cli.url);
            closeAfter(t, () => client.close());
            clients.push(client);
        }
        const notified = clients.map(client => new Promise<void>(resolve => client.setNotificationHandler('notifications/prompts/list_changed', () => resolve())));
        // The sessions' streams are open once a request of theirs was answered.
        for (const client of clients) await client.listPrompts();
        await seenBy(clients[0]!, 's25__change');
        await Promise.all(notified);
        const spans = await otlp.until(all => all.filter(span => span.kind === SPAN_KIND.producer).length >= 2);
        const received = spans.find(span => span.kind === SPAN_KIND.consumer && span.name === 'notifications/prompts/list_changed');
        assert.ok(received, JSON.stringify(spans.map(span => [span.name, span.kind])));
        assert.equal(received.attributes['mcp.gateway.upstream.id'], 's25');
        const sent = spans.filter(span => span.kind === SPAN_KIND.producer);
        assert.equal(sent.length, 2);
        for (const span of sent) {
            assert.equal(span.name, 'notifications/prompts/list_changed');
            assert.equal(span.parentSpanId, '', 'a trace of its own');
            assert.deepEqual(span.links, [{ traceId: received.traceId, spanId: received.spanId }]);
        }
    });
});
