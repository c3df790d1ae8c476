import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isJSONRPCErrorResponse, isJSONRPCRequest, isJSONRPCResultResponse, specTypeSchemas, type JSONRPCMessage } from '@modelcontextprotocol/client';
import fc from 'fast-check';
import { answeredId, asJsonRpcMessage, isRequest, parseJsonRpcMessage, readEnvelope } from '../../src/protocol/json-rpc.js';

/** The SDK's own judgement of a message, through the Standard Schema interface it exports. */
function isValid(value: unknown): boolean {
    return specTypeSchemas.JSONRPCMessage['~standard'].validate(value).issues === undefined;
}

describe('asJsonRpcMessage', () => {
    test('takes requests, notifications, results and errors', () => {
        for (const message of [
            { jsonrpc: '2.0', id: 1, method: 'prompts/list' },
            { jsonrpc: '2.0', id: 'a', method: 'prompts/get', params: { name: 'x' } },
            { jsonrpc: '2.0', method: 'notifications/prompts/list_changed' },
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
            { jsonrpc: '2.0', id: 0, result: {} },
            { jsonrpc: '2.0', id: 3, error: { code: -32602, message: 'bad', data: { x: 1 } } },
            { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
            { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' } }
        ]) {
            assert.equal(asJsonRpcMessage(message), message, JSON.stringify(message));
        }
    });

    test('refuses what is not one', () => {
        for (const value of [
            null,
            [],
            'x',
            [{ jsonrpc: '2.0', method: 'a' }],
            { jsonrpc: '1.0', id: 1, method: 'a' },
            { id: 1, method: 'a' },
            { jsonrpc: '2.0', id: 1.5, method: 'a' },
            { jsonrpc: '2.0', id: {}, method: 'a' },
            { jsonrpc: '2.0', id: 1, method: 7 },
            { jsonrpc: '2.0', id: 1, method: 'a', params: [1] },
            { jsonrpc: '2.0', id: 1, method: 'a', result: {} },
            { jsonrpc: '2.0', id: 1, result: 'ok' },
            { jsonrpc: '2.0', result: {} },
            { jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'x' } },
            { jsonrpc: '2.0', id: 1, error: { code: '1', message: 'x' } },
            { jsonrpc: '2.0', id: 1, error: { code: 1 } },
            { jsonrpc: '2.0', id: 1 },
            // Over MAX_REQUEST_ID_BYTES (256), counted in UTF-8: 'é' is two bytes.
            { jsonrpc: '2.0', id: 'x'.repeat(257), method: 'a' },
            { jsonrpc: '2.0', id: 'é'.repeat(129), method: 'a' },
            { jsonrpc: '2.0', id: 'x'.repeat(257), result: {} }
        ]) {
            assert.equal(asJsonRpcMessage(value), undefined, JSON.stringify(value));
        }
    });

    test('takes string ids up to 256 UTF-8 bytes', () => {
        assert.ok(asJsonRpcMessage({ jsonrpc: '2.0', id: 'x'.repeat(256), method: 'a' }));
        assert.ok(asJsonRpcMessage({ jsonrpc: '2.0', id: 'é'.repeat(128), method: 'a' }));
    });

    test('never takes what the SDK schema refuses', () => {
        const id = fc.oneof(fc.integer(), fc.string(), fc.double(), fc.constant(null));
        const member = fc.oneof(fc.anything(), fc.dictionary(fc.string(), fc.anything()));
        const envelope = fc.record(
            { jsonrpc: fc.constantFrom('2.0', '1.0'), id, method: fc.oneof(fc.string(), fc.integer()), params: member, result: member, error: member },
            { requiredKeys: [] }
        );
        // Through JSON, as messages arrive: no undefined members, no NaN.
        const asReceived = envelope.map(value => JSON.parse(JSON.stringify(value)) as unknown);
        fc.assert(
            fc.property(asReceived, value => {
                if (asJsonRpcMessage(value) !== undefined) assert.ok(isValid(value), JSON.stringify(value));
            }),
            // fc.anything() is costly to generate: 5000 runs took 60-70 s alone, past the unit timeout on a busy machine.
            { numRuns: 1000 }
        );
    });
});

describe('isRequest and answeredId', () => {
    test('say what the SDK guards say of every message asJsonRpcMessage takes', () => {
        const id = fc.oneof(fc.integer(), fc.string(), fc.constant(null));
        const member = fc.oneof(fc.anything(), fc.dictionary(fc.string(), fc.anything()));
        const envelope = fc.record({ jsonrpc: fc.constant('2.0'), id, method: fc.string(), params: member, result: member, error: member }, { requiredKeys: ['jsonrpc'] });
        // Mostly shaped like one of the four kinds, so that the filter below keeps most of what is generated: random
        // envelopes alone are nearly all refused, and generating enough of them took a minute.
        const object = fc.dictionary(fc.string(), fc.anything());
        const error = fc.record({ code: fc.integer(), message: fc.string(), data: fc.anything() }, { requiredKeys: ['code', 'message'] });
        const kinds = [
            fc.record({ jsonrpc: fc.constant('2.0'), id, method: fc.string(), params: object }, { requiredKeys: ['jsonrpc', 'id', 'method'] }),
            fc.record({ jsonrpc: fc.constant('2.0'), method: fc.string(), params: object }, { requiredKeys: ['jsonrpc', 'method'] }),
            fc.record({ jsonrpc: fc.constant('2.0'), id, result: object }),
            fc.record({ jsonrpc: fc.constant('2.0'), id, error })
        ];
        const messages = fc
            .oneof(...kinds, envelope)
            .map(value => asJsonRpcMessage(JSON.parse(JSON.stringify(value)) as unknown))
            .filter(message => message !== undefined);
        fc.assert(
            fc.property(messages, message => {
                assert.equal(isRequest(message), isJSONRPCRequest(message), JSON.stringify(message));
                const answer = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
                assert.equal(answeredId(message), answer ? (message.id ?? undefined) : undefined, JSON.stringify(message));
            }),
            // fc.anything() is costly to generate: 5000 runs took 60-70 s alone, past the unit timeout on a busy machine.
            { numRuns: 1000 }
        );
        // Rare among generated messages: an error about a request that could not be read answers none.
        assert.equal(answeredId({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } } as unknown as JSONRPCMessage), undefined);
    });
});

describe('readEnvelope', () => {
    const refusal = (value: unknown) => {
        const envelope = readEnvelope(value);
        return envelope.ok ? 'ok' : envelope.reason === 'invalid_notification' ? envelope.reason : [envelope.reason, envelope.id];
    };

    test('echoes the id of an invalid message whenever it is a valid id: -32600 for the envelope', () => {
        assert.deepEqual(refusal({ jsonrpc: '1.0', id: 1, method: 'ping' }), ['invalid_request', 1]);
        assert.deepEqual(refusal({ jsonrpc: '2.0', id: 'a' }), ['invalid_request', 'a']);
        assert.deepEqual(refusal({ jsonrpc: '2.0', id: 1, method: 5 }), ['invalid_request', 1]);
        assert.deepEqual(refusal({ jsonrpc: '2.0', id: 1, method: 'ping', foo: 1 }), ['invalid_request', 1], "a closed envelope, as the SDK's .strict() schemas");
        assert.deepEqual(refusal({ jsonrpc: '2.0', id: 1, result: 'ok' }), ['invalid_request', 1]);
    });

    test('answers an unreadable id with null, and an oversized one without storing or repeating it', () => {
        for (const id of [null, {}, true, 1.5, 2 ** 53, [1]]) assert.deepEqual(refusal({ jsonrpc: '2.0', id, method: 'ping' }), ['invalid_request', null], JSON.stringify(id));
        for (const value of [42, 'x', null, true, [], { jsonrpc: '2.0', method: 5 }]) assert.deepEqual(refusal(value), ['invalid_request', null], JSON.stringify(value));
        assert.deepEqual(refusal({ jsonrpc: '2.0', id: 'x'.repeat(257), method: 'ping' }), ['id_too_long', null]);
        assert.deepEqual(refusal({ jsonrpc: '1.0', id: 'é'.repeat(129) }), ['id_too_long', null], 'before anything else is read');
    });

    test('params that are not an object: -32602 for a request, dropped for a notification, after the envelope', () => {
        for (const params of [[], null, 1, 'x']) {
            assert.deepEqual(refusal({ jsonrpc: '2.0', id: 1, method: 'prompts/list', params }), ['invalid_params', 1], JSON.stringify(params));
            assert.equal(refusal({ jsonrpc: '2.0', method: 'notifications/cancelled', params }), 'invalid_notification');
        }
        assert.deepEqual(refusal({ jsonrpc: '1.0', id: 1, method: 'prompts/list', params: [] }), ['invalid_request', 1]);
        assert.deepEqual(refusal({ jsonrpc: '2.0', id: 1, method: 'prompts/list', params: [], foo: 1 }), ['invalid_request', 1]);
    });

    test('gives back the very message it read (no copy)', () => {
        const message = { jsonrpc: '2.0', id: 1, method: 'ping' };
        const envelope = readEnvelope(message);
        assert.ok(envelope.ok);
        assert.equal(envelope.message, message);
    });
});

describe('parseJsonRpcMessage', () => {
    test('parses text, and gives undefined for junk', () => {
        assert.deepEqual(parseJsonRpcMessage('{"jsonrpc":"2.0","method":"a"}'), { jsonrpc: '2.0', method: 'a' });
        assert.equal(parseJsonRpcMessage('{not json'), undefined);
        assert.equal(parseJsonRpcMessage('{"hello":1}'), undefined);
        assert.equal(parseJsonRpcMessage(''), undefined);
    });
});
