import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readMessages, refusalAnswer } from '../../src/downstream/inbound.js';

const ping = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('readMessages', () => {
    test('a lone message: the message, or one refusal under its id', () => {
        const message = ping(1);
        assert.deepEqual(readMessages(message), { batch: false, messages: [message], refusals: [] });
        const refused = readMessages({ jsonrpc: '2.0', id: 7, method: 'prompts/list', params: [] });
        assert.deepEqual(refused.refusals.map(refusalAnswer), [{ jsonrpc: '2.0', id: 7, error: { code: -32602, message: 'Invalid params: params must be an object' } }]);
        assert.deepEqual(readMessages({ jsonrpc: '2.0', method: 'notifications/x', params: [1] }), { batch: false, messages: [], refusals: [] }, 'a notification is dropped');
    });

    test('a batch: each item on its own (JSON-RPC §6), initialize refused inside one', () => {
        const inbound = readMessages([ping(1), { jsonrpc: '1.0', id: 2, method: 'ping' }, { jsonrpc: '2.0', id: 3, method: 'initialize', params: {} }, 42]);
        assert.equal(inbound.batch, true);
        assert.deepEqual(inbound.messages, [ping(1)]);
        assert.deepEqual(
            inbound.refusals.map(refusal => [refusal.reason, refusal.id, refusal.error.code]),
            [
                ['invalid_message', 2, -32600],
                ['invalid_message', 3, -32600],
                ['invalid_message', null, -32600]
            ]
        );
        assert.deepEqual(
            readMessages([{ jsonrpc: '2.0', id: 3, method: 'initialize', params: {} }]).refusals[0]?.error.message,
            'Invalid Request: initialize cannot be part of a JSON-RPC batch'
        );
    });
});
