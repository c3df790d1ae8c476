/**
 * RpcClient over a scripted transport: what it sends, and what it makes of each answer, stray and notification
 * the upstream could send. (Over real transports and processes: progress, cancellation, liveness, fuzz-upstream.)
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProtocolError, SdkError, SdkErrorCode, type JSONRPCMessage, type Progress } from '@modelcontextprotocol/client';
import { isAnyResult, isGetPromptResult } from '../../src/upstream/result-schemas.js';
import { isTotalTimeout, LATE_QUESTION_MS, NoAnswerError, RpcClient, type InputBounds, type InputRelay, type RpcClientEvents } from '../../src/upstream/rpc-client.js';
import { InputRefusedError, UpstreamFailedError, type Forwarded } from '../../src/catalog/upstream-port.js';
import { AMBIGUOUS_INPUT_REQUEST, UNRELATED_INPUT_REQUEST, type InputAnswer, type InputRequest } from '../../src/protocol/input-requests.js';
import { missingCapabilityError } from '../../src/protocol/errors.js';
import type { UpstreamTransport } from '../../src/upstream/transports.js';

type Message = Record<string, unknown> & { id?: unknown; method?: string; params?: Record<string, unknown> };

/** Keeps what the client sends; `deliver` plays the upstream. */
class ScriptedTransport implements UpstreamTransport {
    onclose?: (() => void) | undefined;
    onerror?: ((error: Error) => void) | undefined;
    onmessage?: ((message: JSONRPCMessage, relatedTo?: string | number) => void) | undefined;
    readonly sent: Message[] = [];
    /** What each message sent carried of its client request, by position in `sent`. */
    readonly forwarded: (Forwarded | undefined)[] = [];
    failSends = false;
    /** While set, every send waits for `release()` (a slow upstream, a POST in flight). */
    holdSends = false;
    readonly #held: (() => void)[] = [];
    closed = false;

    start(): Promise<void> {
        return Promise.resolve();
    }

    send(message: JSONRPCMessage, forwarded?: Forwarded): Promise<void> {
        if (this.failSends) return Promise.reject(new Error('EPIPE'));
        this.sent.push(message);
        this.forwarded.push(forwarded);
        return this.holdSends ? new Promise(resolve => this.#held.push(resolve)) : Promise.resolve();
    }

    /** The held sends are done. */
    release(): void {
        for (const done of this.#held.splice(0)) done();
    }

    close(): Promise<void> {
        this.closed = true;
        this.onclose?.();
        return Promise.resolve();
    }

    deliver(message: Message, relatedTo?: string | number): void {
        this.onmessage?.(message as JSONRPCMessage, relatedTo);
    }

    /** The last request sent with `method`. */
    request(method: string): Message {
        const found = this.sent.findLast(message => message.method === method && 'id' in message);
        assert.ok(found, `a ${method} request was sent`);
        return found;
    }
}

function setUp(relay?: InputRelay) {
    const transport = new ScriptedTransport();
    const seen = { heard: 0, listChanged: 0, strays: [] as string[], closed: 0, errors: [] as Error[], faults: [] as string[] };
    const events: RpcClientEvents = {
        onHeard: () => seen.heard++,
        onListChanged: () => seen.listChanged++,
        onStray: kind => seen.strays.push(kind),
        onClosed: () => seen.closed++,
        onError: error => seen.errors.push(error),
        onFault: kind => seen.faults.push(kind)
    };
    return { transport, seen, client: new RpcClient(transport, events, relay) };
}

const LONG = { timeoutMs: 60_000 };
const GET = { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] };

async function rejection(promise: Promise<unknown>): Promise<unknown> {
    try {
        await promise;
    } catch (error) {
        return error;
    }
    assert.fail('the request should have failed');
}

describe('RpcClient: answers', () => {
    test('an answer to a request in flight settles it once; a second one, or one to no request, is a stray', async () => {
        const { transport, seen, client } = setUp();
        const result = client.request('prompts/get', { name: 'x' }, isGetPromptResult, LONG);
        const { id } = transport.request('prompts/get');
        assert.deepEqual(transport.sent[0], { jsonrpc: '2.0', id, method: 'prompts/get', params: { name: 'x' } });
        transport.deliver({ jsonrpc: '2.0', id: 999, result: GET });
        transport.deliver({ jsonrpc: '2.0', id: String(id), result: GET });
        transport.deliver({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' } });
        transport.deliver({ jsonrpc: '2.0', id, result: GET });
        transport.deliver({ jsonrpc: '2.0', id, result: GET });
        assert.deepEqual(await result, GET);
        assert.deepEqual(seen.strays, ['answer', 'answer', 'answer', 'answer'], 'unknown id, the id as a string, no id, a second answer');
        assert.equal(seen.heard, 5, 'everything received proves the upstream alive');
        assert.equal(client.inFlight, 0);
    });

    test('the result is the very object received, every field kept', async () => {
        const { transport, client } = setUp();
        const result = client.request('prompts/get', { name: 'x' }, isGetPromptResult, LONG);
        const sent = { ...GET, extra: { anything: [1, 2] }, _meta: { 'example.com/x': 1 } };
        transport.deliver({ jsonrpc: '2.0', id: transport.request('prompts/get').id, result: sent });
        assert.equal(await result, sent);
    });

    test('an error answer is a ProtocolError with its code, message and data; a result its guard refuses is InvalidResult', async () => {
        const { transport, client } = setUp();
        const failing = client.request('prompts/get', { name: 'x' }, isGetPromptResult, LONG);
        transport.deliver({ jsonrpc: '2.0', id: transport.request('prompts/get').id, error: { code: -32602, message: 'bad topic', data: { field: 'topic' } } });
        const error = await rejection(failing);
        assert.ok(error instanceof ProtocolError);
        assert.deepEqual([error.code, error.message, error.data], [-32602, 'bad topic', { field: 'topic' }]);
        const invalid = client.request('prompts/get', { name: 'x' }, isGetPromptResult, LONG);
        transport.deliver({ jsonrpc: '2.0', id: transport.request('prompts/get').id, result: { messages: [{ role: 'robot', content: { type: 'text', text: '' } }] } });
        const refused = await rejection(invalid);
        assert.ok(refused instanceof SdkError && refused.code === SdkErrorCode.InvalidResult);
    });
});

describe('RpcClient: progress', () => {
    test('a request that asks for progress carries a token of the client (its id) beside its own _meta, and hears its progress only', async () => {
        const { transport, seen, client } = setUp();
        const heard: Progress[] = [];
        const result = client.request('prompts/get', { name: 'x', _meta: { 'example.com/trace': 't' } }, isGetPromptResult, {
            ...LONG,
            onProgress: progress => heard.push(progress)
        });
        const plain = client.request('prompts/get', { name: 'y' }, isGetPromptResult, LONG);
        const [asked, other] = transport.sent as [Message, Message];
        assert.deepEqual(asked.params, { name: 'x', _meta: { 'example.com/trace': 't', progressToken: asked.id } });
        assert.deepEqual(other.params, { name: 'y' }, 'no token without onProgress');
        const progress = (params: Record<string, unknown>) => transport.deliver({ jsonrpc: '2.0', method: 'notifications/progress', params });
        progress({ progressToken: asked.id, progress: 1, total: 3, message: 'one', extra: 'left out' });
        progress({ progressToken: asked.id, progress: 2 });
        progress({ progressToken: other.id, progress: 1 });
        progress({ progressToken: String(asked.id), progress: 1 });
        progress({ progressToken: 12345, progress: 1 });
        progress({ progressToken: asked.id, progress: 'three' });
        transport.deliver({ jsonrpc: '2.0', id: asked.id, result: GET });
        progress({ progressToken: asked.id, progress: 4 });
        await result;
        assert.deepEqual(heard, [{ progress: 1, total: 3, message: 'one' }, { progress: 2 }], 'a malformed notification is dropped');
        assert.deepEqual(seen.strays, ['progress', 'progress', 'progress', 'progress'], 'a request that did not ask, a wrong type, no request, an answered one');
        transport.deliver({ jsonrpc: '2.0', id: other.id, result: GET });
        await plain;
    });

    test('maxTotalTimeoutMs ends a request whatever progress comes, and tells the upstream', async () => {
        const { transport, client } = setUp();
        const result = client.request('prompts/get', { name: 'x' }, isGetPromptResult, { timeoutMs: 60_000, maxTotalTimeoutMs: 50, onProgress: () => {} });
        const error = await rejection(result);
        assert.ok(isTotalTimeout(error), String(error));
        const { id } = transport.request('prompts/get');
        assert.deepEqual(transport.sent.at(-1), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'timed out in all' } });
    });
});

describe('RpcClient: timeouts, cancellation, the end', () => {
    test('a timeout fails the request with RequestTimeout and tells the upstream; its late progress and answer are dropped quietly, a second answer is a stray', async () => {
        const { transport, seen, client } = setUp();
        const error = await rejection(
            client.request('prompts/get', { name: 'x' }, isGetPromptResult, { timeoutMs: 20, onProgress: () => assert.fail('no progress after the timeout') })
        );
        assert.ok(error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout && !isTotalTimeout(error));
        const { id } = transport.request('prompts/get');
        assert.deepEqual(transport.sent.at(-1), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'timed out' } });
        transport.deliver({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: id, progress: 1 } });
        transport.deliver({ jsonrpc: '2.0', id, result: GET });
        assert.deepEqual(seen.strays, [], 'the race the spec tells both sides to expect');
        transport.deliver({ jsonrpc: '2.0', id, result: GET });
        assert.deepEqual(seen.strays, ['answer']);
    });

    test('late answers are expected for the last 1024 requests given up on only', async () => {
        const { transport, seen, client } = setUp();
        const controllers = Array.from({ length: 1025 }, () => new AbortController());
        const requests = controllers.map(controller => rejection(client.request('prompts/list', {}, isAnyResult, { ...LONG, signal: controller.signal })));
        for (const controller of controllers) controller.abort();
        await Promise.all(requests);
        const ids = transport.sent.filter(message => message.method === 'prompts/list').map(message => message.id);
        transport.deliver({ jsonrpc: '2.0', id: ids.at(-1), result: {} });
        assert.deepEqual(seen.strays, []);
        transport.deliver({ jsonrpc: '2.0', id: ids[0], result: {} });
        assert.deepEqual(seen.strays, ['answer'], 'the oldest was forgotten');
    });

    test('an initialize that times out is never cancelled upstream (the spec forbids it); another method still is', async () => {
        const { transport, client } = setUp();
        const error = await rejection(client.request('initialize', {}, isAnyResult, { timeoutMs: 20 }));
        assert.ok(error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout);
        assert.equal(client.inFlight, 0, 'abandoned locally all the same');
        await rejection(client.request('prompts/list', {}, isAnyResult, { timeoutMs: 20 }));
        const cancellations = transport.sent.filter(message => message.method === 'notifications/cancelled');
        assert.deepEqual(
            cancellations.map(message => message.params?.requestId),
            [transport.request('prompts/list').id]
        );
    });

    test('a request carries what it was given of its client request; its cancellation carries the same request id, and no headers', async () => {
        const { transport, client } = setUp();
        const controller = new AbortController();
        const forwarded = { requestId: 'req-7', headers: { 'mcp-param-region': 'eu' } };
        const result = client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, signal: controller.signal, forwarded });
        const own = client.request('prompts/list', undefined, isAnyResult, LONG);
        controller.abort();
        await rejection(result);
        assert.deepEqual(
            transport.sent.map(message => message.method),
            ['prompts/get', 'prompts/list', 'notifications/cancelled']
        );
        assert.deepEqual(transport.forwarded, [forwarded, undefined, { requestId: 'req-7' }]);
        transport.deliver({ jsonrpc: '2.0', id: transport.request('prompts/list').id, result: {} });
        await own;
    });

    test('an aborted signal fails the request at once as an AbortError and cancels it upstream; an aborted one is never sent', async () => {
        const { transport, seen, client } = setUp();
        const controller = new AbortController();
        const result = client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, signal: controller.signal });
        controller.abort('the client gave up');
        const error = await rejection(result);
        assert.ok(error instanceof Error && error.name === 'AbortError');
        const { id } = transport.request('prompts/get');
        assert.deepEqual(transport.sent.at(-1), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'cancelled' } });
        transport.deliver({ jsonrpc: '2.0', id, error: { code: -32800, message: 'Request cancelled' } });
        assert.deepEqual(seen.strays, [], 'an answer that crossed the cancellation is expected');
        const count = transport.sent.length;
        await rejection(client.request('prompts/get', { name: 'y' }, isGetPromptResult, { ...LONG, signal: controller.signal }));
        assert.equal(transport.sent.length, count, 'nothing sent for a request cancelled before it started');
        assert.equal(client.inFlight, 0);
    });

    test('a request the transport could not send fails with its error and is not in flight', async () => {
        const { transport, client } = setUp();
        transport.failSends = true;
        const error = await rejection(client.request('prompts/get', { name: 'x' }, isGetPromptResult, LONG));
        assert.match(String(error), /EPIPE/);
        assert.equal(client.inFlight, 0);
    });

    test('the connection closing fails every request in flight at once, and the owner is told once; closing it oneself tells no one', async () => {
        const { transport, seen, client } = setUp();
        const requests = [client.request('prompts/get', { name: 'x' }, isGetPromptResult, LONG), client.request('ping', undefined, isAnyResult, LONG)];
        transport.onclose?.();
        transport.onclose?.();
        for (const request of requests) {
            const error = await rejection(request);
            assert.ok(error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed);
        }
        assert.equal(seen.closed, 1);
        const after = await rejection(client.request('ping', undefined, isAnyResult, LONG));
        assert.ok(after instanceof SdkError && after.code === SdkErrorCode.NotConnected);

        const other = setUp();
        const pending = other.client.request('ping', undefined, isAnyResult, LONG);
        await other.client.close();
        assert.ok((await rejection(pending)) instanceof SdkError);
        assert.equal(other.transport.closed, true);
        assert.equal(other.seen.closed, 0);
    });
    test('close lets the replies and cancellations still being sent go out first, for two seconds at most (the upstream hears them before the end)', async t => {
        const { transport, client } = setUp();
        const controller = new AbortController();
        settledLater(client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, signal: controller.signal }));
        transport.holdSends = true;
        controller.abort();
        transport.deliver({ jsonrpc: '2.0', id: 'p', method: 'ping' });
        const closing = client.close();
        await settled();
        assert.equal(transport.closed, false, 'the cancellation and the reply are still being sent');
        transport.release();
        await closing;
        assert.equal(transport.closed, true);
        assert.deepEqual(
            transport.sent.slice(-2).map(message => message.method ?? message.id),
            ['notifications/cancelled', 'p']
        );

        t.mock.timers.enable({ apis: ['setTimeout'] });
        const stuck = setUp();
        const aborted = new AbortController();
        settledLater(stuck.client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, signal: aborted.signal }));
        stuck.transport.holdSends = true;
        aborted.abort();
        const bounded = stuck.client.close();
        await settled();
        t.mock.timers.tick(1999);
        await settled();
        assert.equal(stuck.transport.closed, false);
        t.mock.timers.tick(1);
        await bounded;
        assert.equal(stuck.transport.closed, true, 'a send that never ends holds close for two seconds only');
    });
});

describe("RpcClient: the upstream's own messages", () => {
    test('its ping is answered, a request for input tied to no call is refused naming the fix, any other request is -32601; list_changed is reported, other notifications ignored', () => {
        const { transport, seen } = setUp();
        transport.deliver({ jsonrpc: '2.0', id: 'p-1', method: 'ping' });
        transport.deliver({ jsonrpc: '2.0', id: 6, method: 'sampling/createMessage', params: {} });
        transport.deliver({ jsonrpc: '2.0', id: 7, method: 'tasks/list', params: {} });
        transport.deliver({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed' });
        transport.deliver({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } });
        transport.deliver({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } });
        assert.deepEqual(transport.sent, [
            { jsonrpc: '2.0', id: 'p-1', result: {} },
            { jsonrpc: '2.0', id: 6, error: { code: -32603, message: UNRELATED_INPUT_REQUEST } },
            { jsonrpc: '2.0', id: 7, error: { code: -32601, message: 'Method not found' } }
        ]);
        assert.equal(seen.listChanged, 1);
        assert.deepEqual(seen.strays, []);
        assert.deepEqual(seen.faults, ['unrelated_request']);
        assert.equal(seen.heard, 6);
    });

    test("a subscription's acknowledgement goes to the listen request it names, with what the upstream agreed to; any other is ignored", () => {
        const { transport, client } = setUp();
        const agreed: Record<string, unknown>[] = [];
        void client.request('subscriptions/listen', { notifications: { promptsListChanged: true } }, isAnyResult, {
            timeoutMs: Infinity,
            onAcknowledged: notifications => agreed.push(notifications)
        });
        const { id } = transport.request('subscriptions/listen');
        const ack = (subscriptionId: unknown, notifications: unknown) =>
            transport.deliver({
                jsonrpc: '2.0',
                method: 'notifications/subscriptions/acknowledged',
                params: { notifications, _meta: { 'io.modelcontextprotocol/subscriptionId': subscriptionId } }
            });
        ack(Number(id) + 1, { promptsListChanged: true });
        ack(String(id), { promptsListChanged: true });
        ack(id, 'everything');
        transport.deliver({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: { promptsListChanged: true } } });
        assert.deepEqual(agreed, [], 'another subscription, a malformed acknowledgement, or one naming none');
        ack(id, { promptsListChanged: true });
        assert.deepEqual(agreed, [{ promptsListChanged: true }]);
    });
});

const ELICIT = { mode: 'form', message: 'Deploy?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } };
const ACCEPTED = { result: { action: 'accept', content: { ok: true } } } as const;
const RELATED: InputRelay = { answerStreams: true, unrelated: 'none', roots: false };
const SOLE: InputRelay = { answerStreams: false, unrelated: 'sole', roots: false };

/** A handler that keeps each request it is handed, with its signal, and answers when the test says. */
function asker() {
    const asked: { request: InputRequest; signal: AbortSignal; answer: (answer: InputAnswer) => void; fail: (error: unknown) => void }[] = [];
    const onInputRequest = (request: InputRequest, signal: AbortSignal) =>
        new Promise<InputAnswer>((answer, fail) => {
            asked.push({ request, signal, answer, fail });
        });
    return { asked, input: (bounds: Partial<InputBounds> = {}) => ({ onInputRequest, inputBounds: { maxPerRound: 8, maxTotalMs: 600_000, ...bounds } }) };
}

/** Lets the handlers' promises settle (setImmediate is not among the mocked timers). */
const settled = () => new Promise(resolve => setImmediate(resolve));

/** A request the test leaves to the client's close: its failure then is expected. */
function settledLater(request: Promise<unknown>): void {
    request.catch(() => {});
}

const elicit = (id: string | number) => ({ jsonrpc: '2.0', id, method: 'elicitation/create', params: ELICIT });

describe("RpcClient: a 2025 upstream's requests for input", () => {
    test('one on the answer stream of a get goes to that get, its answer goes back; the get is then answered as usual', async t => {
        const { transport, seen, client } = setUp(RELATED);
        t.after(() => client.close());
        const { asked, input } = asker();
        const result = client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, ...input() });
        const { id } = transport.request('prompts/get');
        transport.deliver(elicit('e1'), id as number);
        assert.equal(asked.length, 1);
        assert.deepEqual(asked[0]!.request, { method: 'elicitation/create', params: ELICIT });
        asked[0]!.answer(ACCEPTED);
        await settled();
        assert.deepEqual(transport.sent.at(-1), { jsonrpc: '2.0', id: 'e1', ...ACCEPTED });
        transport.deliver({ jsonrpc: '2.0', id, result: GET });
        assert.deepEqual(await result, GET);
        assert.deepEqual(seen.faults, []);
    });

    test("the client's error answer goes back as the request's error", async t => {
        const { transport, client } = setUp(RELATED);
        t.after(() => client.close());
        const { asked, input } = asker();
        settledLater(client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, ...input() }));
        transport.deliver(elicit(3), transport.request('prompts/get').id as number);
        asked[0]!.answer({ error: { code: -1, message: 'User rejected' } });
        await settled();
        assert.deepEqual(transport.sent.at(-1), { jsonrpc: '2.0', id: 3, error: { code: -1, message: 'User rejected' } });
    });

    test('what cannot be tied to a call is answered by the gateway: no roots, the fix named for the others (a fault), -32601 for the rest', async t => {
        const { transport, seen, client } = setUp(RELATED);
        t.after(() => client.close());
        const { asked, input } = asker();
        const list = client.request('prompts/list', {}, isAnyResult, LONG);
        const listId = transport.request('prompts/list').id as number;
        settledLater(client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, ...input() }));
        const count = transport.sent.length;
        transport.deliver(elicit('on-the-get-stream'));
        transport.deliver(elicit('on-a-list-read'), listId);
        transport.deliver(elicit('on-no-request'), 999);
        transport.deliver({ jsonrpc: '2.0', id: 'r', method: 'roots/list' });
        transport.deliver({ jsonrpc: '2.0', id: 's', method: 'tasks/list', params: {} });
        const unrelated = { code: -32603, message: UNRELATED_INPUT_REQUEST };
        assert.deepEqual(transport.sent.slice(count), [
            { jsonrpc: '2.0', id: 'on-the-get-stream', error: unrelated },
            { jsonrpc: '2.0', id: 'on-a-list-read', error: unrelated },
            { jsonrpc: '2.0', id: 'on-no-request', error: unrelated },
            { jsonrpc: '2.0', id: 'r', result: { roots: [] } },
            { jsonrpc: '2.0', id: 's', error: { code: -32601, message: 'Method not found' } }
        ]);
        assert.deepEqual(asked, []);
        assert.deepEqual(seen.faults, ['unrelated_request', 'unrelated_request', 'unrelated_request']);
        transport.deliver({ jsonrpc: '2.0', id: listId, result: {} });
        await list;
    });

    test("with no relay at all, even a request on a get's answer stream is the gateway's to answer", t => {
        const { transport, client } = setUp();
        t.after(() => client.close());
        const { asked, input } = asker();
        settledLater(client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, ...input() }));
        transport.deliver(elicit(1), transport.request('prompts/get').id as number);
        assert.deepEqual(asked, []);
        assert.deepEqual(transport.sent.at(-1), { jsonrpc: '2.0', id: 1, error: { code: -32603, message: UNRELATED_INPUT_REQUEST } });
    });

    test("sole: an unrelated request is the one get in flight's; with two it is refused naming exclusive; a get that takes no input takes none", async t => {
        const { transport, seen, client } = setUp(SOLE);
        t.after(() => client.close());
        const { asked, input } = asker();
        settledLater(client.request('prompts/list', {}, isAnyResult, LONG));
        const first = client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, ...input() });
        transport.deliver(elicit(1));
        assert.equal(asked.length, 1, 'a list read in flight does not ask');
        const second = client.request('prompts/get', { name: 'y' }, isGetPromptResult, { ...LONG, ...input() });
        transport.deliver(elicit(2));
        assert.equal(asked.length, 1);
        assert.deepEqual(transport.sent.at(-1), { jsonrpc: '2.0', id: 2, error: { code: -32603, message: AMBIGUOUS_INPUT_REQUEST } });
        assert.deepEqual(seen.faults, ['unrelated_request']);
        const [firstId, secondId] = transport.sent.filter(message => message.method === 'prompts/get').map(message => message.id);
        transport.deliver({ jsonrpc: '2.0', id: firstId, result: GET });
        await first;
        transport.deliver({ jsonrpc: '2.0', id: secondId, result: GET });
        await second;
        const internal = client.request('prompts/get', { name: 'z' }, isGetPromptResult, LONG);
        transport.deliver(elicit(3));
        assert.equal(asked.length, 1);
        assert.deepEqual(transport.sent.at(-1), { jsonrpc: '2.0', id: 3, error: { code: -32603, message: UNRELATED_INPUT_REQUEST } });
        transport.deliver({ jsonrpc: '2.0', id: transport.request('prompts/get').id, result: GET });
        await internal;
    });

    for (const unrelated of ['sole', 'exclusive'] as const) {
        test(`${unrelated}: with another client's completion in flight beside the one get, an unrelated request is refused, never put to the get's client`, async t => {
            const { transport, seen, client } = setUp({ answerStreams: false, unrelated, roots: false });
            t.after(() => client.close());
            const { asked, input } = asker();
            const get = client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, ...input() });
            const complete = client.request('completion/complete', { ref: { type: 'ref/prompt', name: 'y' }, argument: { name: 'a', value: 'secret' } }, isAnyResult, LONG);
            // Over stdio it could be the completion's as well as the get's: its words must not reach the get's client.
            transport.deliver(elicit(1));
            assert.equal(asked.length, 0);
            assert.deepEqual(transport.sent.at(-1), { jsonrpc: '2.0', id: 1, error: { code: -32603, message: AMBIGUOUS_INPUT_REQUEST } });
            assert.deepEqual(seen.faults, ['unrelated_request']);
            transport.deliver({ jsonrpc: '2.0', id: transport.request('completion/complete').id, result: { completion: { values: [] } } });
            await complete;
            transport.deliver(elicit(2));
            assert.equal(asked.length, 1, 'the get alone in flight again: it is the one asked');
            asked[0]!.answer(ACCEPTED);
            await settled();
            transport.deliver({ jsonrpc: '2.0', id: transport.request('prompts/get').id, result: GET });
            assert.deepEqual(await get, GET);
        });
    }

    test("sole: a question that crossed a cancelled get's cancellation on the wire never reaches the next get's client", async t => {
        t.mock.timers.enable({ apis: ['Date'] });
        const { transport, client } = setUp(SOLE);
        t.after(() => client.close());
        const { asked, input } = asker();
        const controller = new AbortController();
        const gone = client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, signal: controller.signal, ...input() });
        controller.abort('client A went away');
        await rejection(gone);
        const next = client.request('prompts/get', { name: 'y' }, isGetPromptResult, { ...LONG, ...input() });
        // The upstream asked for A's get before it read the cancellation: it is A's question, not B's.
        transport.deliver(elicit('for-a'));
        assert.equal(asked.length, 0);
        assert.deepEqual(transport.sent.at(-1), { jsonrpc: '2.0', id: 'for-a', error: { code: -32603, message: AMBIGUOUS_INPUT_REQUEST } });
        t.mock.timers.tick(LATE_QUESTION_MS);
        transport.deliver(elicit('for-b'));
        assert.equal(asked.length, 1, 'long after the cancellation, the one get in flight is the one asked');
        asked[0]!.answer(ACCEPTED);
        await settled();
        transport.deliver({ jsonrpc: '2.0', id: transport.request('prompts/get').id, result: GET });
        assert.deepEqual(await next, GET);
    });

    test("sole: a cancelled get the upstream answered after all is over: the next get's questions are its own", async t => {
        const { transport, client } = setUp(SOLE);
        t.after(() => client.close());
        const { asked, input } = asker();
        const controller = new AbortController();
        const gone = client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, signal: controller.signal, ...input() });
        const goneId = transport.request('prompts/get').id;
        controller.abort('client A went away');
        await rejection(gone);
        transport.deliver({ jsonrpc: '2.0', id: goneId, error: { code: -32800, message: 'Request cancelled' } });
        settledLater(client.request('prompts/get', { name: 'y' }, isGetPromptResult, { ...LONG, ...input() }));
        transport.deliver(elicit('for-b'));
        assert.equal(asked.length, 1);
    });

    test('roots/list is relayed only with relayRoots', t => {
        const { transport, client } = setUp({ ...RELATED, roots: true });
        t.after(() => client.close());
        const { asked, input } = asker();
        settledLater(client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, ...input() }));
        transport.deliver({ jsonrpc: '2.0', id: 'r', method: 'roots/list' }, transport.request('prompts/get').id as number);
        assert.deepEqual(
            asked.map(ask => ask.request),
            [{ method: 'roots/list', params: {} }]
        );
    });

    test('a malformed request, or one more than maxPerRound at once, is refused to the upstream as its fault', async t => {
        const { transport, seen, client } = setUp(RELATED);
        t.after(() => client.close());
        const { asked, input } = asker();
        settledLater(client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, ...input({ maxPerRound: 2 }) }));
        const id = transport.request('prompts/get').id as number;
        transport.deliver({ jsonrpc: '2.0', id: 'bad', method: 'elicitation/create', params: { message: 'no schema' } }, id);
        transport.deliver(elicit(1), id);
        transport.deliver(elicit(1), id);
        transport.deliver(elicit(2), id);
        transport.deliver(elicit(3), id);
        assert.equal(asked.length, 2);
        assert.deepEqual(
            transport.sent.filter(message => 'error' in message).map(message => [message.id, (message.error as { code: number }).code]),
            [
                ['bad', -32602],
                [1, -32602],
                [3, -32603]
            ]
        );
        assert.deepEqual(seen.faults, ['invalid_result', 'invalid_result', 'invalid_result']);
        asked[0]!.answer(ACCEPTED);
        await settled();
        transport.deliver(elicit(4), id);
        assert.equal(asked.length, 3, 'a place is free again once one is answered');
    });

    test("the get's timeout is paused while a request is out and starts again, whole, once none is", async t => {
        t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
        const { transport, client } = setUp(RELATED);
        t.after(() => client.close());
        const { asked, input } = asker();
        const outcome: { failed?: unknown } = {};
        client.request('prompts/get', { name: 'x' }, isGetPromptResult, { timeoutMs: 1000, ...input() }).catch((error: unknown) => (outcome.failed = error));
        const id = transport.request('prompts/get').id as number;
        t.mock.timers.tick(900);
        transport.deliver(elicit(1), id);
        transport.deliver(elicit(2), id);
        t.mock.timers.tick(50_000);
        asked[0]!.answer(ACCEPTED);
        await settled();
        t.mock.timers.tick(50_000);
        assert.equal(outcome.failed, undefined, 'one is still out');
        asked[1]!.answer(ACCEPTED);
        await settled();
        t.mock.timers.tick(999);
        await settled();
        assert.equal(outcome.failed, undefined);
        t.mock.timers.tick(1);
        await settled();
        const failed: unknown = outcome.failed;
        assert.ok(failed instanceof SdkError && failed.code === SdkErrorCode.RequestTimeout && !isTotalTimeout(failed), String(failed));
        assert.deepEqual(transport.sent.at(-1), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'timed out' } });
    });

    test('once asked, the get may take inputRequests.maxTotalMs in all from its start, whatever is answered', async t => {
        t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
        const { transport, client } = setUp(RELATED);
        t.after(() => client.close());
        const { asked, input } = asker();
        const outcome: { failed?: unknown } = {};
        const options = { timeoutMs: 1000, maxTotalTimeoutMs: 2000, onProgress: () => {}, ...input({ maxTotalMs: 10_000 }) };
        client.request('prompts/get', { name: 'x' }, isGetPromptResult, options).catch((error: unknown) => (outcome.failed = error));
        const id = transport.request('prompts/get').id as number;
        t.mock.timers.tick(500);
        transport.deliver(elicit(1), id);
        t.mock.timers.tick(5000);
        await settled();
        assert.equal(outcome.failed, undefined, 'maxTotalTimeoutMs no longer bounds it');
        t.mock.timers.tick(4500);
        await settled();
        const failed: unknown = outcome.failed;
        assert.ok(isTotalTimeout(failed) && failed.data.setting === 'inputRequests.maxTotalMs' && failed.data.maxTotalTimeout === 10_000, String(failed));
        assert.equal(asked[0]!.signal.aborted, true);
        assert.deepEqual(
            transport.sent.slice(-2),
            [
                { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'timed out in all' } },
                { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'The client request was cancelled' } }
            ],
            'the get cancelled before its request is answered'
        );
    });

    test("the upstream's notifications/cancelled aborts its request's handler, which is never answered", async t => {
        const { transport, client } = setUp(RELATED);
        t.after(() => client.close());
        const { asked, input } = asker();
        settledLater(client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, ...input() }));
        transport.deliver(elicit('e'), transport.request('prompts/get').id as number);
        const count = transport.sent.length;
        transport.deliver({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'other' } });
        assert.equal(asked[0]!.signal.aborted, false);
        transport.deliver({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'e', reason: 'changed my mind' } });
        assert.equal(asked[0]!.signal.aborted, true);
        asked[0]!.fail(asked[0]!.signal.reason);
        asked[0]!.answer(ACCEPTED);
        await settled();
        assert.equal(transport.sent.length, count, 'nothing sent for a withdrawn request');
    });

    test("cancelling the get cancels it, then answers the upstream's requests out for it; their handlers are aborted", async t => {
        const { transport, client } = setUp(RELATED);
        t.after(() => client.close());
        const { asked, input } = asker();
        const controller = new AbortController();
        const result = client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, signal: controller.signal, ...input() });
        const id = transport.request('prompts/get').id as number;
        transport.deliver(elicit('a'), id);
        transport.deliver(elicit('b'), id);
        const count = transport.sent.length;
        controller.abort();
        await rejection(result);
        await settled();
        const ended = { code: -32603, message: 'The client request was cancelled' };
        assert.deepEqual(transport.sent.slice(count), [
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'cancelled' } },
            { jsonrpc: '2.0', id: 'a', error: ended },
            { jsonrpc: '2.0', id: 'b', error: ended }
        ]);
        assert.ok(asked.every(ask => ask.signal.aborted));
        asked[0]!.answer(ACCEPTED);
        await settled();
        assert.equal(transport.sent.length, count + 3, 'a late answer is not sent');
    });

    test('a handler that refuses ends the get: the get cancelled, its request answered with an error, and the get fails with that very error', async t => {
        const { transport, client } = setUp(RELATED);
        t.after(() => client.close());
        const { asked, input } = asker();
        const result = client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, ...input() });
        const id = transport.request('prompts/get').id as number;
        transport.deliver(elicit('a'), id);
        transport.deliver(elicit('b'), id);
        const count = transport.sent.length;
        const refusal = new InputRefusedError(missingCapabilityError({ capability: 'elicitation', feature: 'form' }));
        asked[1]!.fail(refusal);
        assert.equal(await rejection(result), refusal);
        assert.equal(refusal.code, -32021);
        await settled();
        assert.deepEqual(transport.sent.slice(count), [
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: refusal.message } },
            { jsonrpc: '2.0', id: 'b', error: { code: -32603, message: 'The client cannot answer elicitation/create' } },
            { jsonrpc: '2.0', id: 'a', error: { code: -32603, message: 'The client request was cancelled' } }
        ]);
        assert.equal(asked[0]!.signal.aborted, true);
    });

    test("a handler's failure of another kind names no cause to the upstream, and the get fails with it", async t => {
        const { transport, client } = setUp(RELATED);
        t.after(() => client.close());
        const { asked, input } = asker();
        const result = client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, ...input() });
        const id = transport.request('prompts/get').id as number;
        transport.deliver(elicit('a'), id);
        const failure = new UpstreamFailedError('up', 'more than inputRequests.maxRounds rounds of input', 'input_rounds');
        asked[0]!.fail(failure);
        assert.equal(await rejection(result), failure);
        await settled();
        assert.deepEqual(transport.sent.slice(-2), [
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: failure.reason } },
            { jsonrpc: '2.0', id: 'a', error: { code: -32603, message: 'No answer from the client' } }
        ]);
    });

    test("a handler's failure that is not the port's names no cause: the get fails with a NoAnswerError, whatever the handler threw", async t => {
        const { transport, client } = setUp(RELATED);
        t.after(() => client.close());
        const { asked, input } = asker();
        const result = client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, ...input() });
        const id = transport.request('prompts/get').id as number;
        transport.deliver(elicit('a'), id);
        asked[0]!.fail(new Error('socket hang up at 10.0.0.7'));
        const error = await rejection(result);
        assert.ok(error instanceof NoAnswerError);
        assert.equal(error.message, 'the client did not answer');
        await settled();
        assert.deepEqual(transport.sent.slice(-2), [
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the client did not answer' } },
            { jsonrpc: '2.0', id: 'a', error: { code: -32603, message: 'No answer from the client' } }
        ]);
    });

    test('the get answered while a request is out: the request is answered and its handler aborted; the connection lost: aborted, nothing sent', async t => {
        const { transport, client } = setUp(RELATED);
        t.after(() => client.close());
        const { asked, input } = asker();
        const result = client.request('prompts/get', { name: 'x' }, isGetPromptResult, { ...LONG, ...input() });
        const id = transport.request('prompts/get').id as number;
        transport.deliver(elicit('a'), id);
        transport.deliver({ jsonrpc: '2.0', id, result: GET });
        await result;
        assert.deepEqual(transport.sent.at(-1), { jsonrpc: '2.0', id: 'a', error: { code: -32603, message: 'The client request was cancelled' } });
        assert.equal(asked[0]!.signal.aborted, true);

        const lost = client.request('prompts/get', { name: 'y' }, isGetPromptResult, { ...LONG, ...input() });
        transport.deliver(elicit('b'), transport.request('prompts/get').id as number);
        const count = transport.sent.length;
        transport.onclose?.();
        await rejection(lost);
        assert.equal(asked[1]!.signal.aborted, true);
        assert.equal(transport.sent.length, count);
    });
});
