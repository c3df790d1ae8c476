/**
 * The catalog page's MCP client (src/downstream/http/catalog-page/mcp-client.js) under Node: its SSE reader over
 * every way a stream can be cut into chunks, its header encoder against the gateway's own, and what it sends and
 * makes of answers a real gateway cannot give (an empty-string cursor, a torn or oversized body, the listen loop's
 * timing), over real HTTP from a scripted node:http server. What a real gateway answers is in
 * test/catalog-client-wire.test.ts.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { encodeHeaderValue as serverEncodeHeaderValue, decodeHeaderValue } from '../../src/lib/header-value.js';
import { CatalogRequestError, createCatalogClient, encodeHeaderValue, listenBackoffMs, PROTOCOL_VERSION, sseMessages } from '../../src/downstream/http/catalog-page/mcp-client.js';

const encoder = new TextEncoder();

/** A byte stream of `chunks`, then its end (or, `open`, nothing more); `cancelled` says whether its reader cancelled it. */
function byteStream(chunks: Uint8Array[], { open = false } = {}): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean } {
    let cancelled = false;
    let next = 0;
    const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
            if (next < chunks.length) controller.enqueue(chunks[next++]!);
            else if (!open) controller.close();
        },
        cancel() {
            cancelled = true;
        }
    });
    return { stream, cancelled: () => cancelled };
}

/** `bytes` cut at `cuts` (offsets, any order, repeats allowed: an empty chunk is a chunk too). */
function cutAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
    const offsets = [0, ...cuts.map(cut => Math.min(cut, bytes.length)).sort((a, b) => a - b), bytes.length];
    return offsets.slice(1).map((end, i) => bytes.slice(offsets[i], end));
}

async function collect(stream: ReadableStream<Uint8Array>, options?: { maxEventBytes?: number }): Promise<unknown[]> {
    const messages: unknown[] = [];
    for await (const message of sseMessages(stream, options)) messages.push(message);
    return messages;
}

async function rejection(promise: Promise<unknown>): Promise<CatalogRequestError> {
    try {
        await promise;
    } catch (error) {
        if (error instanceof CatalogRequestError) return error;
        throw error;
    }
    assert.fail('expected a CatalogRequestError');
}

/** A stream as the gateway writes it (src/downstream/http/sse.ts): messages, keepalives, non-ASCII text. */
const RECORDED_MESSAGES = [
    {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { promptsListChanged: true }, _meta: { 'io.modelcontextprotocol/subscriptionId': 'catalog-listen-1' } }
    },
    { jsonrpc: '2.0', method: 'notifications/prompts/list_changed', params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'catalog-listen-1' } } },
    { jsonrpc: '2.0', method: 'split over data lines' },
    { jsonrpc: '2.0', id: 'catalog-listen-1', result: { resultType: 'complete', note: 'café ☕ 𝄞' } }
];
const RECORDED = [
    `event: message\ndata: ${JSON.stringify(RECORDED_MESSAGES[0])}\n\n`,
    ': keepalive\n\n',
    `event: message\ndata: ${JSON.stringify(RECORDED_MESSAGES[1])}\n\n`,
    // Not what the gateway writes, but SSE: one message over three data lines (a line end inside JSON is whitespace).
    'data: {"jsonrpc":"2.0",\ndata:\ndata: "method":"split over data lines"}\n\n',
    ': keepalive\n\n',
    `event: message\ndata: ${JSON.stringify(RECORDED_MESSAGES[3])}\n\n`
].join('');

const LINE_ENDS = { LF: '\n', CRLF: '\r\n', CR: '\r' } as const;

describe('catalog client: sseMessages', () => {
    for (const [name, end] of Object.entries(LINE_ENDS)) {
        test(`every split of a recorded stream in two gives its messages (${name} line ends)`, async () => {
            const bytes = encoder.encode(RECORDED.replaceAll('\n', end));
            for (let cut = 0; cut <= bytes.length; cut++) {
                assert.deepEqual(await collect(byteStream(cutAt(bytes, [cut])).stream), RECORDED_MESSAGES, `cut at byte ${cut}`);
            }
        });

        test(`any split of a recorded stream in many gives its messages (${name} line ends)`, async () => {
            const bytes = encoder.encode(RECORDED.replaceAll('\n', end));
            await fc.assert(
                fc.asyncProperty(fc.array(fc.integer({ min: 0, max: bytes.length }), { maxLength: 40 }), async cuts => {
                    assert.deepEqual(await collect(byteStream(cutAt(bytes, cuts)).stream), RECORDED_MESSAGES);
                }),
                { numRuns: 200 }
            );
        });
    }

    test('data lines of one event are joined with a line feed; comments, other fields and blank events are skipped', async () => {
        const text = [
            ': a comment first',
            'id: 7',
            'retry: 1000',
            'event: message',
            'unknown-field: x',
            'data: {"jsonrpc":"2.0",',
            'data:"method":"two\\nlines",',
            'data:  "params": {"spaced": true}}',
            '',
            'event: message',
            '',
            'data',
            'data: {"empty-line-above": 1}',
            '',
            'data: {"incomplete": "never ended"}'
        ].join('\n');
        assert.deepEqual(await collect(byteStream([encoder.encode(text)]).stream), [{ jsonrpc: '2.0', method: 'two\nlines', params: { spaced: true } }, { 'empty-line-above': 1 }]);
    });

    test('one event is bounded (1 MiB by default): at the bound it is read, one byte past it is refused and the stream cancelled', async () => {
        const atBound = (bytes: number) => {
            const prefix = 'data: {"pad":"';
            const suffix = '"}';
            return `${prefix}${'x'.repeat(bytes - prefix.length - suffix.length)}${suffix}\n\n`;
        };
        const [read] = await collect(byteStream([encoder.encode(atBound(1 << 20))]).stream);
        assert.equal((read as { pad: string }).pad.length, (1 << 20) - 16);

        const over = byteStream([encoder.encode(atBound((1 << 20) + 1))], { open: true });
        const error = await rejection(collect(over.stream));
        assert.equal(error.kind, 'too-large');
        assert.equal(error.message, 'The gateway sent an event larger than 1 MiB; the catalog does not read it');
        assert.equal(over.cancelled(), true);
    });

    test('a line that never ends is refused at the bound, not read to the end', async () => {
        let pulled = 0;
        const endless = new ReadableStream<Uint8Array>({
            pull(controller) {
                pulled++;
                controller.enqueue(encoder.encode('data: ' + 'x'.repeat(1000)));
            }
        });
        const error = await rejection(collect(endless, { maxEventBytes: 10_000 }));
        assert.equal(error.kind, 'too-large');
        assert.ok(pulled <= 12, `read ${pulled} chunks of a 10 kB bound`);
    });

    test('the bound counts one event: many events, each under it, are read', async () => {
        const event = `data: {"n":"${'y'.repeat(80)}"}\n\n`;
        const messages = await collect(byteStream([encoder.encode(event.repeat(50))]).stream, { maxEventBytes: 100 });
        assert.equal(messages.length, 50);
    });

    test('an event that is not a JSON object is a protocol error; a stream cut is a network error', async () => {
        assert.equal((await rejection(collect(byteStream([encoder.encode('data: not json\n\n')]).stream))).kind, 'protocol');
        assert.equal((await rejection(collect(byteStream([encoder.encode('data: [1,2]\n\n')]).stream))).kind, 'protocol');
        let pulls = 0;
        const cut = new ReadableStream<Uint8Array>({
            pull(controller) {
                if (pulls++ === 0) controller.enqueue(encoder.encode(`data: ${JSON.stringify(RECORDED_MESSAGES[1])}\n\n`));
                else controller.error(new TypeError('terminated'));
            }
        });
        const messages: unknown[] = [];
        const error = await rejection(
            (async () => {
                for await (const message of sseMessages(cut)) messages.push(message);
            })()
        );
        assert.deepEqual([error.kind, error.message, messages], ['network', 'The connection to the gateway was cut', [RECORDED_MESSAGES[1]]]);
    });

    test('a reader that stops early cancels the stream', async () => {
        const source = byteStream([encoder.encode(RECORDED)], { open: true });
        for await (const message of sseMessages(source.stream)) {
            assert.deepEqual(message, RECORDED_MESSAGES[0]);
            break;
        }
        assert.equal(source.cancelled(), true);
    });
});

describe('catalog client: encodeHeaderValue', () => {
    test("equals the gateway's own for any string, and the gateway decodes it back", () => {
        const tricky = fc.constantFrom('=?base64?', '?=', ' ', '\t', '\u00e9', '\ud800', '\udfff', '😀', '=', '?', 'a', '\u007f', '\u0000');
        const units = fc.oneof(
            tricky,
            fc.integer({ min: 0, max: 0xffff }).map(code => String.fromCharCode(code)),
            fc.string({ unit: 'binary', maxLength: 2 })
        );
        const value = fc.oneof(fc.string({ unit: units, maxLength: 30 }), fc.string(), fc.string({ unit: 'binary' }));
        fc.assert(
            fc.property(value, text => {
                const encoded = encodeHeaderValue(text);
                assert.equal(encoded, serverEncodeHeaderValue(text));
                // Lone surrogates go as U+FFFD, on both sides.
                assert.equal(decodeHeaderValue(encoded), new TextDecoder().decode(encoder.encode(text)));
            }),
            { numRuns: 2000 }
        );
    });

    test('plain names go as they are; others as base64 of their UTF-8', () => {
        assert.equal(encodeHeaderValue('team__code-review'), 'team__code-review');
        assert.equal(encodeHeaderValue('team__café'), '=?base64?dGVhbV9fY2Fmw6k=?=');
        assert.equal(encodeHeaderValue('=?base64?eA==?='), '=?base64?PT9iYXNlNjQ/ZUE9PT89?=');
        assert.equal(encodeHeaderValue(' lead'), '=?base64?IGxlYWQ=?=');
    });
});

interface Recorded {
    headers: Record<string, string>;
    body: Record<string, unknown>;
}

/** Headers Node's fetch adds of its own; what remains is what the client chose to send. */
const FETCH_OWN_HEADERS = new Set(['host', 'connection', 'content-length', 'user-agent', 'accept-language', 'sec-fetch-mode', 'accept-encoding']);

type Script = (request: Recorded, res: ServerResponse, index: number) => void;

/** A node:http server that records each POST (headers the client chose, parsed body) and answers by `script`. */
async function scriptedServer(t: TestContext, script: Script): Promise<{ url: string; requests: Recorded[] }> {
    const requests: Recorded[] = [];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
        // No idle connection left behind: fetch would keep it with a timer, and a timer made under one test's mocked
        // setTimeout, cleared under the next test's, takes another timer out of that test's queue (Node 20).
        res.setHeader('connection', 'close');
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
            const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !FETCH_OWN_HEADERS.has(name))) as Record<string, string>;
            const recorded = { headers, body: JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown> };
            requests.push(recorded);
            script(recorded, res, requests.length - 1);
        });
    });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    t.after(() => {
        server.closeAllConnections();
        server.close();
    });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, requests };
}

function answer(res: ServerResponse, id: unknown, result: Record<string, unknown>): void {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }));
}

/** Answers every request with `result` (resultType added), echoing its id. */
const answering =
    (result: Record<string, unknown>): Script =>
    ({ body }, res) =>
        answer(res, body.id, { ...result, resultType: 'complete' });

const META = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'mcp-prompt-gateway-catalog', version: '1.2.3' },
    'io.modelcontextprotocol/clientCapabilities': {}
};

const COMMON_HEADERS = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    // What fetch adds for `cache: 'no-store'` (browsers too, by the Fetch standard).
    'cache-control': 'no-cache',
    pragma: 'no-cache'
};

describe('catalog client: requests', { timeout: 60_000 }, () => {
    test('every method sends exactly the headers and body of the revision, ids from 1, the credential read per request', async t => {
        const { url, requests } = await scriptedServer(t, (request, res) => {
            if (request.body.method === 'prompts/list') return answer(res, request.body.id, { prompts: [], resultType: 'complete' });
            if (request.body.method === 'completion/complete') return answer(res, request.body.id, { completion: { values: [] }, resultType: 'complete' });
            if (request.body.method !== 'subscriptions/listen') return answer(res, request.body.id, { messages: [], resultType: 'complete' });
            res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: request.body.id, result: {} })}\n\n`);
        });
        let credential: string | undefined;
        const client = createCatalogClient({ endpoint: url, clientVersion: '1.2.3', credential: () => credential });
        assert.equal(PROTOCOL_VERSION, '2026-07-28');

        await client.discover();
        credential = 'the-key-0123456789';
        await client.listPrompts();
        await client.complete({ prompt: 'team__code-review', argument: 'language', value: 'py', context: { diff: 'x' } });
        await client.complete({ prompt: 'team__code-review', argument: 'language', value: '' });
        credential = '';
        await client.getPrompt({ name: 'team__code-review', arguments: { diff: 'd' } });
        await client.getPrompt({ name: 'team__café' });
        const controller = new AbortController();
        t.after(() => controller.abort());
        const states: string[] = [];
        await client.listen({
            signal: controller.signal,
            onState: state => {
                states.push(state);
                // The graceful end makes the loop reconnect; one stream is all this test needs.
                if (state === 'reconnecting') controller.abort();
            }
        });

        const bearer = { authorization: 'Bearer the-key-0123456789' };
        assert.deepEqual(requests, [
            {
                headers: { ...COMMON_HEADERS, 'mcp-method': 'server/discover' },
                body: { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: META } }
            },
            {
                headers: { ...COMMON_HEADERS, 'mcp-method': 'prompts/list', ...bearer },
                body: { jsonrpc: '2.0', id: 2, method: 'prompts/list', params: { _meta: META } }
            },
            {
                headers: { ...COMMON_HEADERS, 'mcp-method': 'completion/complete', ...bearer },
                body: {
                    jsonrpc: '2.0',
                    id: 3,
                    method: 'completion/complete',
                    params: {
                        ref: { type: 'ref/prompt', name: 'team__code-review' },
                        argument: { name: 'language', value: 'py' },
                        context: { arguments: { diff: 'x' } },
                        _meta: META
                    }
                }
            },
            {
                headers: { ...COMMON_HEADERS, 'mcp-method': 'completion/complete', ...bearer },
                body: {
                    jsonrpc: '2.0',
                    id: 4,
                    method: 'completion/complete',
                    params: { ref: { type: 'ref/prompt', name: 'team__code-review' }, argument: { name: 'language', value: '' }, _meta: META }
                }
            },
            {
                headers: { ...COMMON_HEADERS, 'mcp-method': 'prompts/get', 'mcp-name': 'team__code-review' },
                body: { jsonrpc: '2.0', id: 5, method: 'prompts/get', params: { name: 'team__code-review', arguments: { diff: 'd' }, _meta: META } }
            },
            {
                headers: { ...COMMON_HEADERS, 'mcp-method': 'prompts/get', 'mcp-name': '=?base64?dGVhbV9fY2Fmw6k=?=' },
                body: { jsonrpc: '2.0', id: 6, method: 'prompts/get', params: { name: 'team__café', _meta: META } }
            },
            {
                headers: { ...COMMON_HEADERS, 'mcp-method': 'subscriptions/listen' },
                body: { jsonrpc: '2.0', id: 'catalog-listen-1', method: 'subscriptions/listen', params: { notifications: { promptsListChanged: true }, _meta: META } }
            }
        ]);
        assert.deepEqual(states, ['connecting', 'reconnecting']);
    });

    test('the list is walked to its end: an empty-string cursor is a cursor; ttlMs is the least of the pages', async t => {
        const pages = [
            { prompts: [{ name: 'a' }], nextCursor: '', ttlMs: 5000 },
            { prompts: [{ name: 'b' }, { name: 'c' }], nextCursor: 'next', ttlMs: 2000 },
            { prompts: [{ name: 'd' }], ttlMs: 3000 }
        ];
        const { url, requests } = await scriptedServer(t, ({ body }, res, index) => answer(res, body.id, { ...pages[index], resultType: 'complete' }));
        const client = createCatalogClient({ endpoint: url, clientVersion: '1' });
        // Every entry comes back with an arguments array (the walk normalises them).
        const expected = ['a', 'b', 'c', 'd'].map(name => ({ name, arguments: [] }));
        assert.deepEqual(await client.listPrompts(), { prompts: expected, truncated: false, ttlMs: 2000 });
        assert.deepEqual(
            requests.map(({ body }) => (body.params as Record<string, unknown>).cursor),
            [undefined, '', 'next']
        );
    });

    test('the walk stops at maxPages and at maxPrompts, and says the list is truncated', async t => {
        const { url, requests } = await scriptedServer(t, ({ body }, res, index) =>
            answer(res, body.id, { prompts: [{ name: `p${index}a` }, { name: `p${index}b` }], nextCursor: `c${index}`, resultType: 'complete' })
        );
        const client = createCatalogClient({ endpoint: url, clientVersion: '1' });
        const byPages = await client.listPrompts({ maxPages: 3 });
        assert.deepEqual([byPages.prompts.length, byPages.truncated, requests.length], [6, true, 3]);
        assert.equal('ttlMs' in byPages, false, 'no page carried one');
        const byPrompts = await client.listPrompts({ maxPrompts: 3 });
        assert.deepEqual([byPrompts.prompts.map(prompt => prompt.name), byPrompts.truncated, requests.length], [['p3a', 'p3b', 'p4a'], true, 5]);
        const exact = await client.listPrompts({ maxPrompts: 2 });
        assert.deepEqual([exact.prompts.length, exact.truncated], [2, true], 'the bound reached with a cursor still to follow');
    });

    test('a list page without prompts is a protocol error', async t => {
        const { url } = await scriptedServer(t, answering({ prompts: 'none' }));
        const error = await rejection(createCatalogClient({ endpoint: url, clientVersion: '1' }).listPrompts());
        assert.deepEqual([error.kind, error.message], ['protocol', 'The gateway sent a prompt list without prompts']);
    });

    test('completion values: strings only, at most 100, hasMore and total passed on', async t => {
        const values = [...Array.from({ length: 120 }, (_, i) => `v${i}`), 7];
        const { url } = await scriptedServer(t, answering({ completion: { values, hasMore: true, total: 500 } }));
        const completion = await createCatalogClient({ endpoint: url, clientVersion: '1' }).complete({ prompt: 'p', argument: 'a', value: 'v' });
        assert.deepEqual([completion.values.length, completion.values[99], completion.hasMore, completion.total], [100, 'v99', true, 500]);
    });

    test('input_required is its own kind, with a plain message', async t => {
        const { url } = await scriptedServer(t, ({ body }, res) => answer(res, body.id, { resultType: 'input_required', inputRequests: {}, requestState: 'x' }));
        const error = await rejection(createCatalogClient({ endpoint: url, clientVersion: '1' }).getPrompt({ name: 'p' }));
        assert.equal(error.kind, 'input-required');
        assert.match(error.message, /^This prompt asks the client for more input \(input_required\)/);
    });

    test('an SSE answer to a request is read to the response with its id', async t => {
        const { url } = await scriptedServer(t, ({ body }, res) => {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write(`: keepalive\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n`);
            res.write(`data: {"jsonrpc":"2.0","id":999,"result":{"other":true}}\n\n`);
            res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { messages: [], resultType: 'complete' } })}\n\n`);
        });
        assert.deepEqual(await createCatalogClient({ endpoint: url, clientVersion: '1' }).getPrompt({ name: 'p' }), { messages: [], resultType: 'complete' });
    });

    test('bodies are bounded: a declared length or a streamed body over maxResponseBytes is too large', async t => {
        const big = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { pad: 'x'.repeat(5000) } });
        const { url } = await scriptedServer(t, (_request, res, index) => {
            if (index === 0) return res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(big)) }).end(big);
            res.writeHead(200, { 'content-type': 'application/json' });
            // Chunked, no length: the reader counts.
            res.write(big.slice(0, 3000));
            res.end(big.slice(3000));
        });
        const client = createCatalogClient({ endpoint: url, clientVersion: '1', maxResponseBytes: 4096 });
        for (const attempt of [client.discover(), client.discover()]) {
            const error = await rejection(attempt);
            assert.deepEqual([error.kind, error.message, error.status], ['too-large', "The gateway's answer is larger than 4 KiB; the catalog does not read it", 200]);
        }
    });

    test('a body cut short is a network error; a refused connection too', async t => {
        const { url } = await scriptedServer(t, (_request, res) => {
            res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
            res.write('{"jsonrpc":"2.0","id":1,', () => res.destroy());
        });
        const torn = await rejection(createCatalogClient({ endpoint: url, clientVersion: '1' }).discover());
        assert.deepEqual([torn.kind, torn.message], ['network', 'The connection to the gateway was cut']);

        const closed = createServer();
        await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve));
        const { port } = closed.address() as AddressInfo;
        await new Promise(resolve => closed.close(resolve));
        const refused = await rejection(createCatalogClient({ endpoint: `http://127.0.0.1:${port}/mcp`, clientVersion: '1' }).discover());
        assert.deepEqual([refused.kind, refused.status, refused.message], ['network', 0, 'The gateway did not answer; check that it is running and reachable']);
    });

    test('statuses: each kind, its message, Retry-After in seconds or as a date; never the credential', async t => {
        const refusals: [number, Record<string, string>, string][] = [
            [403, {}, JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Forbidden: Host not allowed' }, id: null })],
            [503, { 'retry-after': new Date(Date.now() + 120_000).toUTCString() }, '<html>busy</html>'],
            [502, {}, 'Bad gateway'],
            [404, { 'content-type': 'text/html' }, '<h1>Not found</h1>'],
            [200, { 'content-type': 'text/html' }, '<h1>hello</h1>'],
            [429, { 'retry-after': '7' }, ''],
            [401, { 'www-authenticate': 'Bearer' }, JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Unauthorized: invalid credentials' }, id: null })],
            [413, {}, JSON.stringify({ jsonrpc: '2.0', error: { code: -32600, message: 'Request body too large', data: { max: 1 } }, id: null })]
        ];
        const { url } = await scriptedServer(t, (_request, res, index) => {
            const [status, headers, body] = refusals[index]!;
            res.writeHead(status, headers).end(body);
        });
        const secret = 'sekrit-credential-4242';
        const client = createCatalogClient({ endpoint: url, clientVersion: '1', credential: () => secret });
        const errors: CatalogRequestError[] = [];
        for (let i = 0; i < refusals.length; i++) errors.push(await rejection(client.discover()));
        const seen = errors.map(({ kind, status, message, code }) => ({ kind, status, message, code }));
        assert.deepEqual(seen, [
            { kind: 'forbidden', status: 403, message: 'Forbidden: Host not allowed', code: -32000 },
            { kind: 'unavailable', status: 503, message: 'The gateway is unavailable (HTTP 503); try again later', code: undefined },
            { kind: 'unavailable', status: 502, message: 'The gateway is unavailable (HTTP 502); try again later', code: undefined },
            { kind: 'protocol', status: 404, message: `The gateway answered HTTP 404 without an MCP error; is ${url} its MCP endpoint?`, code: undefined },
            { kind: 'protocol', status: 200, message: 'The gateway answered text/html, not MCP', code: undefined },
            { kind: 'rate-limited', status: 429, message: 'Too many requests; try again in 7 s', code: undefined },
            { kind: 'unauthorized', status: 401, message: 'The gateway did not accept this credential', code: -32000 },
            { kind: 'rpc', status: 413, message: 'Request body too large', code: -32600 }
        ]);
        assert.deepEqual(errors[7]!.data, { max: 1 });
        assert.equal(errors[5]!.retryAfterMs, 7000);
        const dated = errors[1]!.retryAfterMs!;
        assert.ok(dated > 100_000 && dated <= 120_000, `Retry-After as a date: ${dated} ms`);
        for (const error of errors) {
            assert.equal(JSON.stringify({ ...error, message: error.message }).includes(secret), false);
            assert.equal(error.message.includes('    at '), false, 'no stack text');
        }
    });

    test('an abort rejects with the abort, not a CatalogRequestError', async t => {
        const { url } = await scriptedServer(t, () => {
            /* never answers: the client aborts */
        });
        const controller = new AbortController();
        const pending = createCatalogClient({ endpoint: url, clientVersion: '1' }).discover({ signal: controller.signal });
        controller.abort();
        await assert.rejects(pending, (error: Error) => error.name === 'AbortError' && !(error instanceof CatalogRequestError));
    });
});

/** An SSE answer to a listen request: `events` written, then the stream ended (or held open). */
function listenStream(res: ServerResponse, id: unknown, events: ('ack' | 'changed' | 'keepalive' | 'end-response')[], end = true): void {
    const tag = { 'io.modelcontextprotocol/subscriptionId': id };
    const text: Record<string, string> = {
        ack: `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: { promptsListChanged: true }, _meta: tag } })}\n\n`,
        changed: `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed', params: { _meta: tag } })}\n\n`,
        keepalive: ': keepalive\n\n',
        'end-response': `data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete' } })}\n\n`
    };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(events.map(event => text[event]).join(''));
    if (end) res.end();
}

/** The listen loop's reports, to await one by one. */
function listenRecorder() {
    const seen: string[] = [];
    const waiting: { what: string; resolve: (error: CatalogRequestError | undefined) => void }[] = [];
    const errors = new Map<string, CatalogRequestError | undefined>();
    const report = (what: string, error?: CatalogRequestError) => {
        seen.push(what);
        errors.set(what, error);
        for (const waiter of waiting.splice(0)) {
            if (waiter.what === what) waiter.resolve(error);
            else waiting.push(waiter);
        }
    };
    return {
        seen,
        handlers: {
            onState: (state: string, error?: CatalogRequestError) => report(state, error),
            onAcknowledged: () => report('ack'),
            onListChanged: () => report('changed')
        },
        /** The next report of `what` from now on (failing after 10 s). */
        next: (what: string) => bounded(new Promise<CatalogRequestError | undefined>(resolve => waiting.push({ what, resolve })), `"${what}"`)
    };
}

/** Mocked setTimeout, and the time the test advanced it by (what the stamps of stampingFetch read). */
function mockClock(t: TestContext) {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const clock = {
        elapsed: 0,
        tick(ms: number) {
            clock.elapsed += ms;
            t.mock.timers.tick(ms);
        }
    };
    return clock;
}

/** A fetch that stamps each call with the mocked time, then goes over real HTTP. */
function stampingFetch(clock: { elapsed: number }) {
    const calls: number[] = [];
    const fetchImpl: typeof fetch = (input, init) => {
        calls.push(clock.elapsed);
        return fetch(input, init);
    };
    return { calls, fetchImpl };
}

/** Lets every pending promise continuation run (they, not timers, carry a resumed loop to its fetch). */
const settled = () => new Promise(resolve => setImmediate(resolve));

/**
 * Advances the mocked clock by `wait` and checks that the loop's next request went out then, not a millisecond
 * before: from its timer to its fetch is promise continuations only, all run once `settled`.
 */
async function nextRequestAfter(clock: ReturnType<typeof mockClock>, calls: number[], wait: number): Promise<void> {
    const before = calls.length;
    clock.tick(wait - 1);
    await settled();
    assert.equal(calls.length, before, `no request before ${wait} ms`);
    clock.tick(1);
    await settled();
    assert.equal(calls.length, before + 1, `a request at ${wait} ms`);
    assert.equal(calls.at(-1)! - calls.at(-2)!, wait);
}

/**
 * `promise`, or a failure after 10 s of real time: with setTimeout mocked, the test's own timeout cannot fire
 * (setInterval is not mocked).
 */
function bounded<T>(promise: Promise<T>, what: string): Promise<T> {
    let left = 100;
    let interval: ReturnType<typeof setInterval> | undefined;
    const expired = new Promise<never>((_, reject) => {
        interval = setInterval(() => {
            if (--left === 0) reject(new Error(`no ${what} within 10 s`));
        }, 100);
    });
    return Promise.race([promise, expired]).finally(() => clearInterval(interval));
}

describe('catalog client: the listen loop', { timeout: 60_000 }, () => {
    test('ack and list_changed reach their callbacks; keepalives are skipped; reconnects back off 1, 2, 4 s and start over after an ack', async t => {
        const clock = mockClock(t);
        const scripts: ((res: ServerResponse, id: unknown) => void)[] = [
            (res, id) => listenStream(res, id, ['ack', 'keepalive', 'changed', 'keepalive', 'changed']),
            res => res.writeHead(500).end(),
            res => res.writeHead(502).end(),
            (res, id) => listenStream(res, id, ['ack']),
            (res, id) => listenStream(res, id, ['ack'], false)
        ];
        const { url, requests } = await scriptedServer(t, ({ body }, res, index) => scripts[index]!(res, body.id));
        const { calls, fetchImpl } = stampingFetch(clock);
        const client = createCatalogClient({ endpoint: url, clientVersion: '1', fetch: fetchImpl, random: () => 0.5 });
        const controller = new AbortController();
        t.after(() => controller.abort());
        const recorder = listenRecorder();

        const reconnecting = recorder.next('reconnecting');
        const done = client.listen({ signal: controller.signal, ...recorder.handlers });
        assert.equal(await reconnecting, undefined, 'the stream ended: no error');
        assert.deepEqual(recorder.seen, ['connecting', 'listening', 'ack', 'changed', 'changed', 'reconnecting']);

        // Random 0.5: the waits are exactly 1, 2 and 4 s, then 1 s again after an acknowledged stream.
        for (const wait of [1000, 2000]) {
            const failed = recorder.next('reconnecting');
            await nextRequestAfter(clock, calls, wait);
            assert.equal((await failed)?.kind, 'unavailable');
        }
        const ended = recorder.next('reconnecting');
        await nextRequestAfter(clock, calls, 4000);
        await ended;
        const listening = recorder.next('listening');
        await nextRequestAfter(clock, calls, 1000);
        await listening;
        assert.deepEqual(
            requests.map(({ body }) => body.id),
            ['catalog-listen-1', 'catalog-listen-2', 'catalog-listen-3', 'catalog-listen-4', 'catalog-listen-5']
        );

        controller.abort();
        await bounded(done, 'end of the loop');
        assert.equal(recorder.seen.at(-1), 'ack', 'an abort reports no state');
    });

    test('429 and 503 turn it off until Retry-After (or 30 s); 401 turns it off for good', async t => {
        const clock = mockClock(t);
        const scripts: ((res: ServerResponse) => void)[] = [
            res =>
                res
                    .writeHead(429, { 'retry-after': '7' })
                    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Too many subscriptions for this client; close unused ones' }, id: null })),
            res => res.writeHead(503).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Too many subscriptions; try again later' }, id: null })),
            res => res.writeHead(401).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Unauthorized: credentials required' }, id: null }))
        ];
        const { url, requests } = await scriptedServer(t, (_request, res, index) => scripts[index]!(res));
        const { calls, fetchImpl } = stampingFetch(clock);
        const client = createCatalogClient({ endpoint: url, clientVersion: '1', fetch: fetchImpl });
        const controller = new AbortController();
        t.after(() => controller.abort());
        const recorder = listenRecorder();

        const off = recorder.next('off');
        const done = client.listen({ signal: controller.signal, ...recorder.handlers });
        const limited = await off;
        assert.deepEqual([limited?.kind, limited?.retryAfterMs, limited?.message], ['rate-limited', 7000, 'Too many subscriptions for this client; close unused ones']);

        for (const wait of [7000, 30_000]) {
            const next = recorder.next('off');
            await nextRequestAfter(clock, calls, wait);
            const error = await next;
            if (wait === 7000) assert.deepEqual([error?.kind, error?.status, error?.message], ['unavailable', 503, 'Too many subscriptions; try again later']);
            else assert.deepEqual([error?.kind, error?.message], ['unauthorized', 'The gateway asks for a credential']);
        }
        await bounded(done, 'end of the loop');
        assert.equal(requests.length, 3, 'nothing after the 401');
        assert.deepEqual(recorder.seen, ['connecting', 'off', 'reconnecting', 'off', 'reconnecting', 'off']);
    });

    test('a graceful end (the response to the listen) reconnects; an abort during the wait ends the loop', async t => {
        mockClock(t);
        const { url, requests } = await scriptedServer(t, ({ body }, res) => listenStream(res, body.id, ['ack', 'end-response'], false));
        const client = createCatalogClient({ endpoint: url, clientVersion: '1' });
        const controller = new AbortController();
        const recorder = listenRecorder();
        const reconnecting = recorder.next('reconnecting');
        const done = client.listen({ signal: controller.signal, ...recorder.handlers });
        assert.equal(await reconnecting, undefined, 'a graceful end is no error');
        controller.abort();
        await bounded(done, 'end of the loop');
        assert.deepEqual([recorder.seen, requests.length], [['connecting', 'listening', 'ack', 'reconnecting'], 1]);
    });

    test('messages tagged for another subscription are not this one', async t => {
        const { url } = await scriptedServer(t, (_request, res) => listenStream(res, 'someone-else', ['ack', 'changed']));
        const controller = new AbortController();
        const recorder = listenRecorder();
        const reconnecting = recorder.next('reconnecting');
        const done = createCatalogClient({ endpoint: url, clientVersion: '1' }).listen({ signal: controller.signal, ...recorder.handlers });
        await reconnecting;
        controller.abort();
        await done;
        assert.deepEqual(recorder.seen, ['connecting', 'reconnecting']);
    });

    test('backoff: 1, 2, 4 ... 30 s, each within a quarter either side', () => {
        assert.deepEqual(
            [0, 1, 2, 3, 4, 5, 6, 40].map(attempt => listenBackoffMs(attempt, () => 0.5)),
            [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]
        );
        assert.deepEqual([listenBackoffMs(0, () => 0), listenBackoffMs(0, () => 0.999999)], [750, 1250]);
    });
});
