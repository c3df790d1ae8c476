/**
 * The gateway's requests to one 2025 client (src/downstream/client-requests.ts): what goes out on the request's
 * stream, which answers are taken (and how they are checked), and every way a request ends unanswered (timeout,
 * abort, a closed stream, the session's end), the client told with notifications/cancelled each time.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JSONRPCMessage, JSONRPCResponse } from '@modelcontextprotocol/client';
import { UpstreamRejectedError } from '../../src/catalog/upstream-port.js';
import { askIds, ClientRequests, instanceOfAskId, MAX_OUTSTANDING_ASKS } from '../../src/downstream/client-requests.js';
import { MAX_ANSWER_MESSAGE_CHARS } from '../../src/protocol/errors.js';
import type { InputAnswer, InputRequest } from '../../src/protocol/input-requests.js';
import { revisionOf, type Revision } from '../../src/protocol/revisions.js';

const R2025_06 = revisionOf('2025-06-18')!;
const R2025_11 = revisionOf('2025-11-25')!;
const INSTANCE = 'Xk3Jd9ab';

const CONFIRM: InputRequest = {
    method: 'elicitation/create',
    params: { mode: 'form', message: 'Deploy?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }
};
const URL_REQUEST: InputRequest = { method: 'elicitation/create', params: { mode: 'url', message: 'Sign in', url: 'https://example.com/sign-in' } };

/** A table and a stream that records what it was sent (`open` false: the stream is gone). */
function client(options: { timeoutMs?: number; maxOutstanding?: number } = {}) {
    const sent: JSONRPCMessage[] = [];
    const standalone: JSONRPCMessage[] = [];
    const stream = { open: true };
    const send = (message: JSONRPCMessage) => {
        if (stream.open) sent.push(message);
        return stream.open;
    };
    const requests = new ClientRequests({ mintId: askIds(INSTANCE), timeoutMs: () => options.timeoutMs ?? 60_000, maxOutstanding: options.maxOutstanding }, notification =>
        standalone.push(notification)
    );
    const ask = (request: InputRequest = CONFIRM, signal = new AbortController().signal, revision: Revision = R2025_11) => requests.ask(request, revision, send, signal);
    return { requests, sent, standalone, stream, ask };
}

function response(id: unknown, body: { result: unknown } | { error: unknown }): JSONRPCResponse {
    return { jsonrpc: '2.0', id, ...body } as JSONRPCResponse;
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
    try {
        await promise;
    } catch (error) {
        assert.ok(error instanceof Error);
        return error;
    }
    assert.fail('resolved; a rejection was expected');
}

describe('ClientRequests', () => {
    test('a request goes out as a JSON-RPC request under a string id of this instance, as the revision takes it; its answer comes back checked', async () => {
        const { requests, sent, ask } = client();
        const first = ask(CONFIRM, undefined, R2025_06);
        const second = ask(URL_REQUEST);
        assert.deepEqual(sent[0], {
            jsonrpc: '2.0',
            id: `${INSTANCE}.1`,
            method: 'elicitation/create',
            params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }
        });
        assert.equal(Object.hasOwn((sent[0] as { params: object }).params, 'mode'), false, '2025-06-18 has no mode');
        const url = sent[1] as { id: string; params: { elicitationId?: unknown } };
        assert.equal(url.id, `${INSTANCE}.2`);
        assert.equal(typeof url.params.elicitationId, 'string', 'a url elicitation to 2025-11-25 gets an elicitationId');
        assert.equal(requests.size, 2);
        assert.equal(requests.take(response(`${INSTANCE}.2`, { result: { action: 'decline', _meta: { mine: 1 } } })), true);
        assert.equal(requests.take(response(`${INSTANCE}.1`, { result: { action: 'accept', content: { ok: true } } })), true);
        assert.deepEqual(await first, { result: { action: 'accept', content: { ok: true } } });
        assert.deepEqual(await second, { result: { action: 'decline' } }, "the result's own fields only, not its _meta");
        assert.equal(requests.size, 0);
    });

    test('answers to no request out are not taken: unknown, late, duplicate, numeric ids', async () => {
        const { requests, ask } = client();
        const asked = ask();
        const accept = { result: { action: 'accept', content: { ok: true } } };
        for (const id of [`${INSTANCE}.9`, 'Yy3Jd9ab.1', 1, null, `${INSTANCE}.1x`]) assert.equal(requests.take(response(id, accept)), false, String(id));
        assert.equal(requests.take(response(`${INSTANCE}.1`, accept)), true);
        assert.equal(requests.take(response(`${INSTANCE}.1`, { result: { action: 'decline' } })), false, 'a second answer to the same request');
        assert.deepEqual(await asked, accept);
    });

    test("a malformed result settles the request as an error answer (never passed on as a result); the client's error is passed, bounded", async () => {
        const { requests, ask } = client();
        const malformed = ask();
        const declined = ask();
        requests.take(response(`${INSTANCE}.1`, { result: { action: 'maybe' } }));
        requests.take(response(`${INSTANCE}.2`, { error: { code: -1, message: `${'x'.repeat(1000)}\nsecond line`, data: { secret: true } } }));
        assert.deepEqual(await malformed, { error: { code: -32603, message: 'The client answered elicitation/create with a malformed result' } });
        const error = ((await declined) as Extract<InputAnswer, { error: unknown }>).error;
        assert.deepEqual(error, { code: -1, message: 'x'.repeat(MAX_ANSWER_MESSAGE_CHARS) }, 'cut, its first line only, no data');
    });

    test('no answer in time: the client is told the request is cancelled, then the asker gets -32603 naming the wait', async t => {
        t.mock.timers.enable({ apis: ['setTimeout'] });
        const { requests, sent, ask } = client({ timeoutMs: 2000 });
        const asked = ask();
        t.mock.timers.tick(1999);
        assert.equal(requests.size, 1);
        t.mock.timers.tick(1);
        const error = await rejection(asked);
        assert.ok(error instanceof UpstreamRejectedError);
        assert.equal(error.code, -32603);
        assert.equal(error.message, 'The client sent no answer within 2 s (inputRequests.answerTimeoutMs)');
        assert.deepEqual(sent[1], { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: `${INSTANCE}.1`, reason: 'No answer within 2 s' } });
        assert.equal(requests.size, 0);
        assert.equal(requests.take(response(`${INSTANCE}.1`, { result: { action: 'accept' } })), false, 'a late answer is not taken');
    });

    test('an answer in time stops the clock', async t => {
        t.mock.timers.enable({ apis: ['setTimeout'] });
        const { requests, sent, ask } = client({ timeoutMs: 2000 });
        const asked = ask();
        requests.take(response(`${INSTANCE}.1`, { result: { action: 'cancel' } }));
        t.mock.timers.tick(5000);
        assert.deepEqual(await asked, { result: { action: 'cancel' } });
        assert.equal(sent.length, 1, 'nothing more sent');
    });

    test('aborted (the upstream withdrew its request, the call ended): the client is told, the asker gets the reason', async () => {
        const { requests, sent, ask } = client();
        const stop = new AbortController();
        const asked = ask(CONFIRM, stop.signal);
        const reason = new Error('call ended');
        stop.abort(reason);
        assert.equal(await rejection(asked), reason);
        assert.deepEqual(sent[1], { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: `${INSTANCE}.1`, reason: 'The upstream no longer needs the answer' } });
        assert.equal(requests.size, 0);
        const again = await rejection(ask(CONFIRM, stop.signal));
        assert.equal(again, reason, 'an aborted signal sends nothing');
        assert.equal(sent.length, 2);
    });

    test('what cannot be put is refused at once, nothing sent: a revision that cannot carry it, a stream gone, too many out', async () => {
        const { requests, sent, standalone, stream, ask } = client({ maxOutstanding: 2 });
        const carry = await rejection(ask(URL_REQUEST, undefined, R2025_06));
        assert.ok(carry instanceof UpstreamRejectedError);
        assert.equal(carry.message, 'The upstream asks for elicitation (url mode), which MCP 2025-06-18 cannot carry');
        const kept = [ask(), ask()];
        const full = await rejection(ask());
        assert.equal(full.message, 'Too many questions out to this client at once (at most 2)');
        stream.open = false;
        requests.cancelAll('session ended');
        for (const asked of kept) assert.equal((await rejection(asked)).message, 'session ended');
        assert.deepEqual(
            standalone.map(message => (message as { params: unknown }).params),
            [
                { requestId: `${INSTANCE}.1`, reason: 'session ended' },
                { requestId: `${INSTANCE}.2`, reason: 'session ended' }
            ],
            "the request's stream gone, the cancellations go on the session's own"
        );
        const gone = await rejection(ask());
        assert.equal(gone.message, "The client's stream for this request is closed");
        assert.equal(requests.size, 0);
        assert.equal(sent.length, 2, 'the two kept, nothing after');
        assert.equal(standalone.length, 2, 'a request that could not be put is not cancelled');
        assert.equal(MAX_OUTSTANDING_ASKS, 64, "the config's cap on maxPerRound");
    });

    test('the session ends: each request out is cancelled to the client and fails', async () => {
        const { requests, sent, ask } = client();
        const asked = [ask(), ask()];
        requests.cancelAll('The session ended');
        for (const one of asked) assert.equal((await rejection(one)).message, 'The session ended');
        assert.deepEqual(
            sent.slice(2).map(message => (message as { params: unknown }).params),
            [
                { requestId: `${INSTANCE}.1`, reason: 'The session ended' },
                { requestId: `${INSTANCE}.2`, reason: 'The session ended' }
            ]
        );
    });
});

describe('ask ids', () => {
    test("name their instance; anything else is no id of the gateway's", () => {
        const mint = askIds(INSTANCE);
        assert.deepEqual([mint(), mint()], [`${INSTANCE}.1`, `${INSTANCE}.2`]);
        assert.equal(instanceOfAskId(`${INSTANCE}.12`), INSTANCE);
        assert.equal(instanceOfAskId('Yy-_d9ab.3'), 'Yy-_d9ab');
        for (const id of [1, null, 'abc.1', `${INSTANCE}.0`, `${INSTANCE}.`, `${INSTANCE}.1.2`, `x${INSTANCE}.1`, `${INSTANCE}.12345678901234567`]) {
            assert.equal(instanceOfAskId(id), undefined, String(id));
        }
    });
});
