import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isOversizedMark, isRequestOrNotification, messageLimit, oversizedResponse, requestIdOf } from '../../src/upstream/oversized.js';

const big = 'x'.repeat(100);

describe('requestIdOf', () => {
    test('finds the id at the start of the envelope, with or without jsonrpc first', () => {
        assert.equal(requestIdOf(`{"jsonrpc":"2.0","id":7,"result":{"a":"${big}`, ''), 7);
        assert.equal(requestIdOf(`{"id":"req-1","jsonrpc":"2.0","result":{`, ''), 'req-1');
        assert.equal(requestIdOf(` { "jsonrpc" : "2.0" , "id" : 12 , "result"`, ''), 12);
    });

    test('finds the id at the end of the envelope', () => {
        assert.equal(requestIdOf('{"result":{"messages":[', `${big}"}]},"id":3}`), 3);
        assert.equal(requestIdOf('{"result":{', `${big}"}]},"id":3,"jsonrpc":"2.0"}\n`), 3);
    });

    test("an id nested in the result does not pass for the envelope's", () => {
        assert.equal(requestIdOf('{"result":{"id":5,"x":"', `${big}"}}`), undefined);
        assert.equal(requestIdOf('{"jsonrpc":"2.0","result":{"id":5,', `"a":{"id":9}}}`), undefined);
        assert.equal(requestIdOf('{"result":{"a":"', `${big}","id":4}}`), undefined);
    });

    test('nothing usable gives undefined', () => {
        assert.equal(requestIdOf('', ''), undefined);
        assert.equal(requestIdOf('not json at all', 'still not'), undefined);
        assert.equal(requestIdOf('{"jsonrpc":"2.0","id":99999999999999999999,', ''), undefined);
        assert.equal(requestIdOf('{"jsonrpc":"2.0","id":"\\x",', ''), undefined);
    });
});

describe('oversizedResponse', () => {
    test('carries a mark only the gateway can make', () => {
        const response = oversizedResponse(4, messageLimit(1000));
        assert.equal(response.id, 4);
        assert.equal(response.error.code, -32603);
        assert.equal(response.error.message, 'response larger than 1000 bytes (limits.maxUpstreamMessageBytes)');
        assert.ok(isOversizedMark(response.error.data));
        assert.ok(!isOversizedMark(JSON.parse(JSON.stringify(response.error.data))), 'a copy, as an upstream could send, is not the mark');
        assert.ok(!isOversizedMark({}));
    });
});

describe('requests and notifications are never taken for answers', () => {
    test('a method among the first members, or among the last, whatever id the message carries', () => {
        assert.equal(requestIdOf('{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"x":"', ''), undefined);
        assert.equal(requestIdOf('{"method":"sampling/createMessage","params":{"messages":[', '"}]},"jsonrpc":"2.0","id":0}'), undefined);
        assert.equal(requestIdOf('{"jsonrpc":"2.0","id":0,"params":{"x":"', '"},"method":"roots/list"}'), undefined);
        assert.equal(requestIdOf('{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"', '"}}'), undefined);
        assert.ok(isRequestOrNotification('{"id":"a","jsonrpc":"2.0","method":"x"', ''));
    });

    test('a "method" inside a result does not make an answer a request', () => {
        assert.equal(requestIdOf('{"jsonrpc":"2.0","id":7,"result":{"method":"x","text":"', ''), 7);
        assert.equal(requestIdOf('{"result":{"a":"', '","method":"x"},"id":3}'), 3);
    });
});
