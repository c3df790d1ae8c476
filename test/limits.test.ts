/**
 * Limits over real HTTP: request body, argument count and size (prompts/get and
 * completion/complete), unknown arguments, upstream result size, sessions per
 * client and the per-client rate limit. Each limit is hit and answered as
 * specified, and afterwards the gateway still serves other clients (and the
 * same client where that makes sense).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, fixtureStats, rpcError, sleep, startTestGateway, stdioFixture } from './helpers.js';
import { deleteSession, initializeBody, JSON_AND_SSE, openRawSession, parseSse, post, type JsonRpcMessage } from './raw-http.js';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdef00';
const SESSIONS = 'sessions-key-0123456789abcdef';
const SINGLE = 'single-key-0123456789abcdef';
const THROTTLED = 'throttled-key-0123456789abcdef';
/** A token every 5 s: the checks made while the client is limited are done long before the next one, even on a loaded machine. */
const THROTTLED_RATE = 0.2;

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

const MAX_BODY = 256 * 1024;
const MAX_ARG = 65_536;
const MAX_RESULT = 200_000;

const PROTOCOL = '2025-06-18';

interface Reply {
    status: number;
    headers: Headers;
    text: string;
    /** The JSON-RPC message answering the request (from JSON or from the SSE stream), if any. */
    message: JsonRpcMessage | undefined;
}

function parseMessage(text: string, contentType: string | null): Reply['message'] {
    try {
        if (contentType?.includes('text/event-stream')) {
            return parseSse(text)
                .map(data => JSON.parse(data) as JsonRpcMessage)
                .find(message => 'result' in message || 'error' in message);
        }
        return JSON.parse(text) as Reply['message'];
    } catch {
        return undefined;
    }
}

/** A POST and its whole answer: status, headers, text and the answering message. */
async function send(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
    const response = await post(url, body, headers);
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, message: parseMessage(text, response.headers.get('content-type')) };
}

/** Ends a session; the status of the DELETE. */
async function endSession(url: string, headers: Record<string, string>): Promise<number> {
    const response = await deleteSession(url, headers);
    await response.body?.cancel();
    return response.status;
}

/** The text of the first message of a prompts/get result. */
function firstText(result: { messages: { content: { type: string; text?: string } }[] }): string {
    const content = result.messages[0]!.content;
    assert.equal(content.type, 'text');
    return content.text!;
}

/** What the fixture's echo prompts say reached the upstream. */
function echoed(result: { messages: { content: { type: string; text?: string } }[] }): { name: string; arguments: Record<string, string> } {
    return JSON.parse(firstText(result)) as { name: string; arguments: Record<string, string> };
}

describe('limits', () => {
    let gateway: RunningGateway;
    let alice: Client;
    let bob: Client;

    before(async () => {
        gateway = await startTestGateway({
            auth: { mode: 'apiKey' },
            clients: [
                { id: 'alice', apiKey: ALICE },
                { id: 'bob', apiKey: BOB },
                { id: 'sessions', apiKey: SESSIONS },
                { id: 'single', apiKey: SINGLE, maxSessions: 1 },
                { id: 'throttled', apiKey: THROTTLED, rateLimit: { requestsPerSecond: THROTTLED_RATE, burst: 3 } }
            ],
            limits: { maxBodyBytes: MAX_BODY, maxResultBytes: MAX_RESULT, maxSessionsPerClient: 3 },
            upstreams: [
                stdioFixture('up', {
                    prompts: 1,
                    extraPrompts: [{ name: 'echo', arguments: [{ name: 'a' }, { name: 'b' }] }, { name: 'any' }]
                }),
                stdioFixture('lax', { prompts: 0, extraPrompts: [{ name: 'echo', arguments: [{ name: 'a' }] }] }, { passUnknownArguments: true })
            ]
        });
        [alice, bob] = await Promise.all([connectHttp(gateway.url!, { headers: bearer(ALICE) }), connectHttp(gateway.url!, { headers: bearer(BOB) })]);
    });

    after(async () => {
        await Promise.allSettled([alice?.close(), bob?.close()]);
        await gateway?.close();
    });

    const gets = async () => (await fixtureStats(alice, 'up__stats')).requests.get;
    const completes = async () => (await fixtureStats(alice, 'up__stats')).requests.complete;

    /** The same client and another one are both still served. */
    async function stillServed(): Promise<void> {
        for (const client of [alice, bob]) {
            const result = await client.getPrompt({ name: 'up__echo', arguments: { a: 'still here' } });
            assert.deepEqual(echoed(result), { name: 'echo', arguments: { a: 'still here' } });
        }
    }

    describe('request body (limits.maxBodyBytes)', () => {
        test('a body over the limit is HTTP 413 with a JSON-RPC error and no stack trace; the upstream sees nothing', async () => {
            const before = await gets();
            const { headers: session } = await openRawSession(gateway.url!, PROTOCOL, bearer(ALICE));
            const reply = await send(gateway.url!, { jsonrpc: '2.0', id: 7, method: 'prompts/get', params: { name: 'up__echo', arguments: { a: 'x'.repeat(MAX_BODY) } } }, session);
            assert.equal(reply.status, 413);
            assert.deepEqual(reply.message, { jsonrpc: '2.0', error: { code: -32600, message: 'Request body too large' }, id: null });
            assert.doesNotMatch(reply.text, /\bat \S+ \(|node_modules|\.ts:\d+|<html|PayloadTooLarge|stack/i);
            assert.equal(await gets(), before, 'nothing reached the upstream');
            // The same session still works afterwards.
            const ok = await send(gateway.url!, { jsonrpc: '2.0', id: 8, method: 'prompts/get', params: { name: 'up__echo', arguments: { a: 'ok' } } }, session);
            assert.equal(ok.status, 200);
            assert.equal(ok.message?.error, undefined, ok.text);
            assert.equal(await endSession(gateway.url!, session), 200);
            await stillServed();
        });

        test('a chunked body (no Content-Length) over the limit is 413 as well', async () => {
            const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
            let sent = 0;
            const body = new ReadableStream<Uint8Array>({
                pull(controller) {
                    if (sent === 0) controller.enqueue(new TextEncoder().encode(JSON.stringify(initializeBody()).slice(0, -1) + ',"pad":"'));
                    if (sent++ < 8) controller.enqueue(chunk);
                    else {
                        controller.enqueue(new TextEncoder().encode('"}'));
                        controller.close();
                    }
                }
            });
            const response = await fetch(gateway.url!, {
                method: 'POST',
                headers: { ...JSON_AND_SSE, ...bearer(ALICE) },
                body,
                duplex: 'half'
            });
            const text = await response.text();
            assert.equal(response.status, 413);
            assert.match(text, /"code":-32600/);
            await stillServed();
        });

        test('a body just under the limit is parsed (the limit is not off by a lot)', async () => {
            const { headers: session } = await openRawSession(gateway.url!, PROTOCOL, bearer(ALICE));
            // Padding in _meta: the whole body stays under MAX_BODY.
            const body = JSON.stringify({
                jsonrpc: '2.0',
                id: 9,
                method: 'prompts/list',
                params: { _meta: { pad: 'y'.repeat(MAX_BODY - 200) } }
            });
            assert.ok(Buffer.byteLength(body) <= MAX_BODY);
            const reply = await send(gateway.url!, body, session);
            assert.equal(reply.status, 200, reply.text.slice(0, 200));
            assert.ok(Array.isArray((reply.message?.result as { prompts?: unknown[] } | undefined)?.prompts));
            assert.equal(await endSession(gateway.url!, session), 200);
        });
    });

    describe('arguments (limits.maxArguments, limits.maxArgumentBytes, passUnknownArguments)', () => {
        test('64 arguments pass; 65 are -32602 and never reach the upstream', async () => {
            const many = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`k${index}`, `v${index}`]));
            const ok = await alice.getPrompt({ name: 'up__any', arguments: many(64) });
            assert.deepEqual(echoed(ok).arguments, many(64));
            const before = await gets();
            const error = await rpcError(alice.getPrompt({ name: 'up__any', arguments: many(65) }));
            assert.equal(error.code, -32602);
            assert.match(error.message, /Too many arguments: 65 \(at most 64\)/);
            assert.equal(await gets(), before);
            await stillServed();
        });

        test('a value of 64 KiB passes; 64 KiB + 1 byte is -32602 and never reaches the upstream', async () => {
            const atLimit = 'x'.repeat(MAX_ARG);
            const ok = await alice.getPrompt({ name: 'up__echo', arguments: { a: atLimit } });
            assert.equal(echoed(ok).arguments.a, atLimit);
            const before = await gets();
            const error = await rpcError(alice.getPrompt({ name: 'up__echo', arguments: { a: 'ok', b: `${atLimit}x` } }));
            assert.equal(error.code, -32602);
            assert.match(error.message, /too large: "b" \(at most 65536 bytes each\)/);
            assert.ok(!error.message.includes('xxxxxxxx'), 'the value is not echoed back');
            assert.equal(await gets(), before);
            await stillServed();
        });

        test('multi-byte values are measured in UTF-8 bytes, not characters', async () => {
            // 32768 x "é" = 65536 bytes: fits exactly.
            const fits = 'é'.repeat(MAX_ARG / 2);
            assert.deepEqual(echoed(await alice.getPrompt({ name: 'up__echo', arguments: { a: fits } })).arguments, { a: fits });
            const before = await gets();
            // Far fewer characters than the limit, but more bytes: 2-byte, 3-byte and 4-byte (surrogate pair) characters.
            for (const value of ['é'.repeat(MAX_ARG / 2 + 1), '€'.repeat(MAX_ARG / 3 + 1), '😀'.repeat(MAX_ARG / 4 + 1)]) {
                assert.ok(value.length < MAX_ARG && Buffer.byteLength(value) > MAX_ARG);
                const error = await rpcError(alice.getPrompt({ name: 'up__echo', arguments: { a: value } }));
                assert.equal(error.code, -32602, `${value.slice(0, 1)}: ${error.message}`);
            }
            assert.equal(await gets(), before);
            await stillServed();
        });

        test('an argument the prompt does not declare is -32602 "Unknown argument", unless the upstream has passUnknownArguments', async () => {
            const before = await gets();
            const error = await rpcError(alice.getPrompt({ name: 'up__echo', arguments: { a: '1', sneaky: '2' } }));
            assert.equal(error.code, -32602);
            assert.equal(error.message, 'Unknown argument: "sneaky"');
            assert.equal(await gets(), before, 'nothing reached the upstream');
            // The same names on an upstream with passUnknownArguments reach it unchanged.
            const passed = await alice.getPrompt({ name: 'lax__echo', arguments: { a: '1', sneaky: '2' } });
            assert.deepEqual(echoed(passed), { name: 'echo', arguments: { a: '1', sneaky: '2' } });
            // The generic prompts declare "note" only.
            const generic = await rpcError(bob.getPrompt({ name: 'up__prompt-000', arguments: { note: 'n', other: 'o' } }));
            assert.equal(generic.code, -32602);
            assert.match(generic.message, /Unknown argument: "other"/);
            await stillServed();
        });

        test('non-string values are -32602 and never reach the upstream', async () => {
            const before = await gets();
            const { headers: session } = await openRawSession(gateway.url!, PROTOCOL, bearer(BOB));
            for (const args of [{ a: 1 }, { a: { nested: 'x' } }, { a: ['x'] }, { a: null }, ['a'], 'a']) {
                const reply = await send(gateway.url!, { jsonrpc: '2.0', id: 3, method: 'prompts/get', params: { name: 'up__echo', arguments: args } }, session);
                assert.equal(reply.message?.error?.code, -32602, `${JSON.stringify(args)}: ${reply.text}`);
            }
            assert.equal(await endSession(gateway.url!, session), 200);
            assert.equal(await gets(), before);
            await stillServed();
        });

        test('completion/complete: argument.value and context.arguments over 64 KiB are -32602 and never reach the upstream', async () => {
            const ref = { type: 'ref/prompt' as const, name: 'up__with-required' };
            const atLimit = await alice.complete({ ref, argument: { name: 'topic', value: 'm'.repeat(MAX_ARG) } });
            assert.deepEqual(atLimit.completion.values, []);
            const before = await completes();
            const tooBig = await rpcError(alice.complete({ ref, argument: { name: 'topic', value: 'm'.repeat(MAX_ARG + 1) } }));
            assert.equal(tooBig.code, -32602);
            assert.match(tooBig.message, /too large/);
            const tooBigMultiByte = await rpcError(alice.complete({ ref, argument: { name: 'topic', value: 'é'.repeat(MAX_ARG / 2 + 1) } }));
            assert.equal(tooBigMultiByte.code, -32602);
            const context = await rpcError(alice.complete({ ref, argument: { name: 'tone', value: 'c' }, context: { arguments: { topic: 'm'.repeat(MAX_ARG + 1) } } }));
            assert.equal(context.code, -32602);
            assert.match(context.message, /too large/);
            const tooMany = await rpcError(
                alice.complete({
                    ref,
                    argument: { name: 'tone', value: 'c' },
                    context: { arguments: Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`k${index}`, 'v'])) }
                })
            );
            assert.equal(tooMany.code, -32602);
            assert.equal(await completes(), before, 'nothing reached the upstream');
            const served = await bob.complete({ ref, argument: { name: 'topic', value: 'm' } });
            assert.deepEqual(served.completion.values, ['mcp', 'music', 'math']);
        });
    });

    describe('upstream result size (limits.maxResultBytes)', () => {
        test('a result at the limit passes; one byte over is -32603 without the payload, counted as oversized_result', async () => {
            // The JSON size of a `big` result is its text length plus a constant envelope; measure it with a small one.
            const probe = await alice.getPrompt({ name: 'up__big', arguments: { bytes: '10' } });
            const envelope = Buffer.byteLength(JSON.stringify(probe)) - 10;
            assert.ok(envelope > 0 && envelope < 200, `envelope ${envelope}`);
            const atLimit = await alice.getPrompt({ name: 'up__big', arguments: { bytes: String(MAX_RESULT - envelope) } });
            assert.equal(Buffer.byteLength(JSON.stringify(atLimit)), MAX_RESULT);
            assert.equal(firstText(atLimit).length, MAX_RESULT - envelope);

            const faultsBefore = gateway.faults.of('up').oversized_result ?? 0;
            const over = await rpcError(alice.getPrompt({ name: 'up__big', arguments: { bytes: String(MAX_RESULT - envelope + 1) } }));
            assert.equal(over.code, -32603);
            assert.equal(over.message, `Upstream up failed: result larger than ${MAX_RESULT} bytes`);
            assert.ok(!over.message.includes('xxxx'));
            assert.equal(gateway.faults.of('up').oversized_result, faultsBefore + 1);

            const wayOver = await rpcError(bob.getPrompt({ name: 'up__big', arguments: { bytes: String(3 * 1024 * 1024) } }));
            assert.equal(wayOver.code, -32603);
            assert.ok(wayOver.message.length < 200);
            assert.equal(gateway.faults.of('up').oversized_result, faultsBefore + 2);
            assert.equal(gateway.faults.of('lax').oversized_result, undefined, 'only the upstream at fault is counted');
            assert.equal(gateway.upstreams.find(upstream => upstream.id === 'up')?.state, 'ready', 'an oversized result is not a disconnect');
            await stillServed();
        });

        // Results that break the GetPromptResult schema (-32603 "invalid result", fault invalid_result, never forwarded)
        // are covered in test/misbehaving.test.ts ("a get result that breaks the schema ...").
    });

    describe('sessions per client (limits.maxSessionsPerClient, clients[].maxSessions)', () => {
        test('beyond maxSessionsPerClient a new session is HTTP 429; DELETE frees a slot; other clients are unaffected', async () => {
            const auth = bearer(SESSIONS);
            const open = [];
            for (let index = 0; index < 3; index++) open.push((await openRawSession(gateway.url!, PROTOCOL, auth)).headers);
            const refused = await send(gateway.url!, initializeBody(), auth);
            assert.equal(refused.status, 429);
            assert.equal(refused.headers.get('mcp-session-id'), null);
            assert.equal(refused.message?.error?.code, -32000);
            assert.match(refused.message?.error?.message ?? '', /Too many sessions for this client \(at most 3\)/);

            // The open sessions keep working.
            const listed = await send(gateway.url!, { jsonrpc: '2.0', id: 5, method: 'prompts/list', params: {} }, open[0]);
            assert.equal(listed.status, 200);
            assert.ok(Array.isArray((listed.message?.result as { prompts?: unknown[] }).prompts));

            // Other clients are counted on their own.
            const { headers: other } = await openRawSession(gateway.url!, PROTOCOL, bearer(BOB));
            assert.equal(await endSession(gateway.url!, other), 200);
            await stillServed();

            assert.equal(await endSession(gateway.url!, open.shift()!), 200);
            open.push((await openRawSession(gateway.url!, PROTOCOL, auth)).headers);
            assert.equal((await send(gateway.url!, initializeBody(), auth)).status, 429, 'still at most 3');
            for (const session of open) assert.equal(await endSession(gateway.url!, session), 200);
        });

        test("a client's own maxSessions overrides the global limit", async () => {
            const auth = bearer(SINGLE);
            const { headers: first } = await openRawSession(gateway.url!, PROTOCOL, auth);
            const second = await send(gateway.url!, initializeBody(), auth);
            assert.equal(second.status, 429);
            assert.match(second.message?.error?.message ?? '', /at most 1\)/);
            assert.equal(await endSession(gateway.url!, first), 200);
            const { headers: again } = await openRawSession(gateway.url!, PROTOCOL, auth);
            assert.equal(await endSession(gateway.url!, again), 200);
        });
    });

    describe('rate limit (limits.rateLimit, clients[].rateLimit)', () => {
        test('after its burst a client gets 429 with Retry-After; others are served; after Retry-After it is served again', async () => {
            const auth = bearer(THROTTLED);
            const list = { jsonrpc: '2.0', id: 1, method: 'prompts/list', params: {} };
            // initialize (1) + notifications/initialized (2): then the bucket (burst 3) has about one token left.
            const started = Date.now();
            const { headers: session } = await openRawSession(gateway.url!, PROTOCOL, auth);
            let served = 2;
            let limited: Reply | undefined;
            for (let attempt = 0; attempt < 20 && limited === undefined; attempt++) {
                const reply = await send(gateway.url!, list, session);
                if (reply.status === 429) limited = reply;
                else {
                    assert.equal(reply.status, 200, reply.text);
                    served++;
                }
            }
            assert.ok(limited, 'the client was rate limited');
            assert.ok(served >= 3, `the burst of 3 was served first (served ${served})`);
            // Not a timing assertion: whatever the machine's speed, the bucket refills only THROTTLED_RATE tokens per second.
            const refilled = Math.ceil(((Date.now() - started) / 1000) * THROTTLED_RATE);
            assert.ok(served <= 3 + refilled, `at most the burst plus what refilled in ${refilled} s was served (served ${served})`);
            const retryAfter = limited.headers.get('retry-after');
            assert.match(retryAfter ?? '', /^\d+$/, 'Retry-After is whole seconds');
            const seconds = Number(retryAfter);
            assert.ok(seconds >= 1 && seconds <= Math.ceil(1 / THROTTLED_RATE), `Retry-After ${seconds}`);
            assert.equal(limited.message?.error?.code, -32000);
            assert.match(limited.message?.error?.message ?? '', /Too many requests/);

            // Limited before any MCP processing: also a fresh initialize, and even an unparseable body.
            assert.equal((await send(gateway.url!, initializeBody(), auth)).status, 429);
            assert.equal((await send(gateway.url!, '{"not json', session)).status, 429);

            // Another client is still served at once.
            await stillServed();

            await sleep(seconds * 1000);
            const again = await send(gateway.url!, list, session);
            assert.equal(again.status, 200, again.text);
            assert.ok(Array.isArray((again.message?.result as { prompts?: unknown[] }).prompts));
            await sleep(1000 / THROTTLED_RATE);
            assert.equal(await endSession(gateway.url!, session), 200);
        });
    });
});
