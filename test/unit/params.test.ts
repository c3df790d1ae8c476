/** The hand-written params checks of the methods the gateway serves downstream, and the version it settles on. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isJsonContentType } from '../../src/downstream/http/mcp.js';
import { completeParams, getParams, initializeParams, listParams, metaOf } from '../../src/downstream/params.js';
import { LATEST_HANDSHAKE, negotiateHandshake } from '../../src/protocol/revisions.js';

const clientInfo = { name: 'c', version: '1' };

describe('params of the methods served', () => {
    test('_meta may be absent or an object; a progress token is a string or a safe integer', () => {
        assert.deepEqual(metaOf(undefined), {});
        assert.deepEqual(metaOf({ _meta: {} }), {});
        assert.deepEqual(metaOf({ _meta: { progressToken: 'p' } }), { progressToken: 'p' });
        assert.deepEqual(metaOf({ _meta: { progressToken: 7 } }), { progressToken: 7 });
        // A progress token is echoed in every progress notification: bounded as request ids are (256 bytes).
        assert.deepEqual(metaOf({ _meta: { progressToken: 'p'.repeat(256) } }), { progressToken: 'p'.repeat(256) });
        for (const _meta of [null, [], 'x', { progressToken: 1.5 }, { progressToken: {} }, { progressToken: null }, { progressToken: 'p'.repeat(257) }]) {
            assert.equal(metaOf({ _meta }), undefined, JSON.stringify(_meta));
        }
    });

    test('prompts/list: a string cursor, or none', () => {
        assert.deepEqual(listParams(undefined), { cursor: undefined });
        assert.deepEqual(listParams({ cursor: 'abc', _meta: { progressToken: 1 } }), { cursor: 'abc', progressToken: 1 });
        assert.equal(listParams({ cursor: 5 }), undefined);
        assert.equal(listParams({ cursor: null }), undefined);
    });

    test('prompts/get: a string name; arguments pass as they came (the catalog checks them and names the one at fault)', () => {
        assert.deepEqual(getParams({ name: 'a__b', arguments: { x: '1' } }), { name: 'a__b', arguments: { x: '1' } });
        assert.deepEqual(getParams({ name: 'a__b', arguments: 'not an object' }), { name: 'a__b', arguments: 'not an object' });
        assert.equal(getParams(undefined), undefined);
        assert.equal(getParams({ name: 1 }), undefined);
        assert.equal(getParams({ name: 'a', _meta: 'x' }), undefined);
    });

    test('completion/complete: a prompt or resource ref, an argument with name and value, an optional context object', () => {
        const argument = { name: 'n', value: 'v' };
        const valid = { ref: { type: 'ref/prompt', name: 'p' }, argument, context: { arguments: { a: '1' } }, _meta: { progressToken: 't' } };
        assert.deepEqual(completeParams(valid), { progressToken: 't', request: valid });
        assert.notEqual(completeParams({ ref: { type: 'ref/resource', uri: 'file:///x' }, argument }), undefined);
        for (const params of [
            undefined,
            { ref: { type: 'ref/prompt' }, argument },
            { ref: { type: 'ref/tool', name: 'p' }, argument },
            { ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'n' } },
            { ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'n', value: 1 } },
            { ref: { type: 'ref/prompt', name: 'p' }, argument, context: 'x' }
        ]) {
            assert.equal(completeParams(params), undefined, JSON.stringify(params));
        }
    });

    test('initialize: a protocol version, a capabilities object and clientInfo with name and version; only those are kept', () => {
        assert.deepEqual(initializeParams({ protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { ...clientInfo, title: 'T', extra: 'x'.repeat(10) } }), {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo
        });
        for (const params of [
            undefined,
            { capabilities: {}, clientInfo },
            { protocolVersion: 20250618, capabilities: {}, clientInfo },
            { protocolVersion: '2025-06-18', capabilities: [], clientInfo },
            { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c' } },
            { protocolVersion: '2025-06-18', capabilities: {}, clientInfo, _meta: 1 }
        ]) {
            assert.equal(initializeParams(params as Record<string, unknown> | undefined), undefined, JSON.stringify(params));
        }
    });

    test("initialize settles on the client's revision when the gateway speaks it, else on the newest", () => {
        for (const version of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']) assert.equal(negotiateHandshake(version).version, version);
        for (const version of ['2024-10-07', '2099-01-01', '']) assert.equal(negotiateHandshake(version), LATEST_HANDSHAKE);
    });
});

describe('Content-Type of a POST', () => {
    test('application/json in any case, with no charset or UTF-8', () => {
        for (const header of ['application/json', 'Application/JSON', 'application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'application/json; foo=bar']) {
            assert.equal(isJsonContentType(header), true, header);
        }
        for (const header of [undefined, '', 'text/plain', 'application/json-seq', 'application/json; charset=latin1', 'application/x-www-form-urlencoded']) {
            assert.equal(isJsonContentType(header), false, String(header));
        }
    });
});
