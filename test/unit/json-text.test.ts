import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readJson } from '../../src/protocol/json-text.js';

describe('readJson', () => {
    test('parses JSON of any kind, a byte order mark ignored', () => {
        assert.deepEqual(readJson('{"a":[1,2]}', 8), { ok: true, value: { a: [1, 2] } });
        assert.deepEqual(readJson('42', 8), { ok: true, value: 42 });
        assert.deepEqual(readJson('\uFEFF{"a":1}', 8), { ok: true, value: { a: 1 } });
    });

    test('text that is not JSON is -32700; only one byte order mark is skipped', () => {
        for (const text of ['', '{"jsonrpc":', '\uFEFF\uFEFF{}', "{'a':1}", '{"a":1,}']) {
            assert.deepEqual(readJson(text, 8), { ok: false, reason: 'parse_error', error: { code: -32700, message: 'Parse error: invalid JSON' } }, JSON.stringify(text));
        }
    });

    test('JSON nested deeper than the bound is -32600 naming the bound; at the bound it is read', () => {
        assert.equal(readJson(`${'['.repeat(8)}${']'.repeat(8)}`, 8).ok, true);
        assert.deepEqual(readJson(`${'['.repeat(9)}${']'.repeat(9)}`, 8), {
            ok: false,
            reason: 'too_deep',
            error: { code: -32600, message: 'Invalid Request: nested deeper than 8 levels' }
        });
    });
});
