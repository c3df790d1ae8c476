import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { Correlation } from '../../src/upstream/correlated.js';

const request = (id: number, progressToken?: number): JSONRPCMessage => ({
    jsonrpc: '2.0',
    id,
    method: 'prompts/get',
    params: progressToken === undefined ? { name: 'x' } : { name: 'x', _meta: { progressToken } }
});
const result = (id: number | string): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: {} });
const progress = (progressToken: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress: 1 } });

describe('Correlation', () => {
    test('an answer to a request in flight passes once; a second one, or one to no request, does not', () => {
        const correlation = new Correlation();
        correlation.sent(request(1));
        assert.equal(correlation.admits(result(2)), false);
        assert.equal(correlation.admits(result('1')), false, 'the id as a string is another id');
        assert.equal(correlation.admits(result(1)), true);
        assert.equal(correlation.admits(result(1)), false);
        assert.equal(correlation.admits({ jsonrpc: '2.0', id: 1, error: { code: -1, message: 'late' } }), false);
    });

    test('errors without an id settle nothing and are dropped', () => {
        const correlation = new Correlation();
        correlation.sent(request(0));
        assert.equal(correlation.admits({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' } }), false);
        assert.equal(correlation.admits(result(0)), true);
    });

    test('progress passes only under a token of a request in flight', () => {
        const correlation = new Correlation();
        correlation.sent(request(1, 77));
        assert.equal(correlation.admits(progress(77)), true);
        assert.equal(correlation.admits(progress(78)), false);
        correlation.admits(result(1));
        assert.equal(correlation.admits(progress(77)), false, 'its request was answered');
    });

    test('a cancelled request is no longer in flight: its late answer is dropped', () => {
        const correlation = new Correlation();
        correlation.sent(request(5, 9));
        correlation.sent({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'timeout' } });
        assert.equal(correlation.admits(result(5)), false);
        assert.equal(correlation.admits(progress(9)), false);
    });

    test('a request that could not be sent is not in flight', () => {
        const correlation = new Correlation();
        correlation.sent(request(6, 10));
        correlation.unsent(request(6, 10));
        assert.equal(correlation.admits(result(6)), false);
        assert.equal(correlation.admits(progress(10)), false);
        assert.equal(correlation.size, 0, 'nothing kept for it');
    });

    test('the upstream\'s own notifications and requests pass', () => {
        const correlation = new Correlation();
        assert.equal(correlation.admits({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed' }), true);
        assert.equal(correlation.admits({ jsonrpc: '2.0', id: 3, method: 'ping' }), true);
    });
});
