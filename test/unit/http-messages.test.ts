import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { answerLimit, answersRequest, decodeMessages } from '../../src/upstream/http/messages.js';
import { isOversizedMark, messageLimit } from '../../src/upstream/oversized.js';

const LIMIT = messageLimit(100);

const whole = (text: string) => ({ kind: 'whole' as const, bytes: Buffer.from(text) });

describe('decodeMessages', () => {
    test('one message or a batch; anything else is invalid', () => {
        assert.deepEqual(decodeMessages(whole('{"jsonrpc":"2.0","id":1,"result":{}}'), LIMIT), { kind: 'messages', messages: [{ jsonrpc: '2.0', id: 1, result: {} }] });
        const batch = decodeMessages(whole('[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":2,"result":{}}]'), LIMIT);
        assert.equal(batch.kind === 'messages' && batch.messages.length, 2);
        for (const text of ['not json', '{"hello":1}', '[{"jsonrpc":"2.0","id":1,"result":{}}, 3]', '']) assert.equal(decodeMessages(whole(text), LIMIT).kind, 'invalid', text);
    });

    test('an oversized message: the stand-in error for the id its edges show, else dropped', () => {
        const decoded = decodeMessages({ kind: 'oversized', head: '{"result":{"x":"xxxx', tail: 'xxxx"}},"jsonrpc":"2.0","id":7}', size: 1e6 }, messageLimit(1000));
        assert.ok(decoded.kind === 'messages');
        const [standIn] = decoded.messages;
        assert.ok(standIn !== undefined && 'error' in standIn);
        assert.equal(standIn.id, 7);
        assert.equal(standIn.error.message, 'response larger than 1000 bytes (limits.maxUpstreamMessageBytes)');
        assert.ok(isOversizedMark(standIn.error.data));
        assert.deepEqual(decodeMessages({ kind: 'oversized', head: '{"jsonrpc":"2.0","method":"x","params":{"a":"', tail: 'aaa"}}', size: 1e6 }, messageLimit(1000)), {
            kind: 'dropped'
        });
    });
});

describe('answersRequest', () => {
    test('the answer to request 7: its id first, or no id yet and no method (SDK servers write the id last)', () => {
        assert.ok(answersRequest('{"jsonrpc":"2.0","id":7,"result":{"messages":[', 7));
        assert.ok(answersRequest('{"result":{"messages":[{"role":"user","content":{"type":"text","text":"xxx', 7));
    });

    test('not the answer: another id, or a method (a notification or a request of the server)', () => {
        assert.ok(!answersRequest('{"jsonrpc":"2.0","id":8,"result":{', 7));
        assert.ok(!answersRequest('{"jsonrpc":"2.0","method":"notifications/progress","params":{', 7));
        assert.ok(!answersRequest(' { "method" : "notifications/message", "jsonrpc": "2.0"', 7));
    });
});

describe('answerLimit', () => {
    const limits = { maxUpstreamMessageBytes: 16 * 1024 * 1024, maxResultBytes: 4 * 1024 * 1024 };
    test('prompt and completion answers stop a little past maxResultBytes; everything else at maxUpstreamMessageBytes', () => {
        const result = { bytes: 4 * 1024 * 1024 + 64 * 1024, field: 'maxResultBytes' };
        assert.deepEqual(answerLimit('prompts/get', limits), result);
        assert.deepEqual(answerLimit('completion/complete', limits), result);
        assert.deepEqual(answerLimit('prompts/list', limits), { bytes: 16 * 1024 * 1024, field: 'maxUpstreamMessageBytes' });
        assert.deepEqual(
            answerLimit('prompts/get', { ...limits, maxResultBytes: 32 * 1024 * 1024 }),
            { bytes: 16 * 1024 * 1024, field: 'maxUpstreamMessageBytes' },
            'never past maxUpstreamMessageBytes, and then named as that'
        );
    });
});
