/** What a 2026-07-28 request tells of itself: `_meta`, the mirrored headers and their base64 form, the errors. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { supportedVersionsOf, unsupportedVersion } from '../../src/protocol/errors.js';
import { headerMismatch } from '../../src/protocol/headers.js';
import { claimedVersion, readStatelessMeta } from '../../src/protocol/meta.js';
import { SUPPORTED_VERSIONS } from '../../src/protocol/revisions.js';
import { decodeHeaderValue, encodeHeaderValue } from '../../src/lib/header-value.js';

const META = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': { elicitation: {} }
};

describe('the request _meta of 2026-07-28', () => {
    test('names the version, capabilities and client; a request without it is of the handshake era', () => {
        assert.deepEqual(readStatelessMeta({ _meta: META }), { protocolVersion: '2026-07-28', clientCapabilities: { elicitation: {} }, clientInfo: { name: 'c', version: '1' } });
        assert.equal(claimedVersion({ _meta: META }), '2026-07-28');
        for (const params of [undefined, {}, { _meta: {} }, { _meta: [] }, { _meta: { 'io.modelcontextprotocol/protocolVersion': 7 } }, []]) {
            assert.equal(claimedVersion(params), undefined, JSON.stringify(params));
            assert.equal(readStatelessMeta(params), undefined, JSON.stringify(params));
        }
    });

    test('malformed capabilities or client info make it malformed, though the version is claimed', () => {
        for (const bad of [
            { 'io.modelcontextprotocol/clientCapabilities': [] },
            { 'io.modelcontextprotocol/clientCapabilities': undefined },
            { 'io.modelcontextprotocol/clientInfo': { name: 1 } },
            { 'io.modelcontextprotocol/clientInfo': 'c' }
        ]) {
            const params = { _meta: { ...META, ...bad } };
            assert.equal(claimedVersion(params), '2026-07-28');
            assert.equal(readStatelessMeta(params), undefined, JSON.stringify(bad));
        }
    });

    test('an unsupported version lists every supported one; named back from the body, from a header only when date-shaped', () => {
        assert.deepEqual(unsupportedVersion('2099-01-01', 'header').data, {
            supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'],
            requested: '2099-01-01'
        });
        assert.equal(unsupportedVersion('<script>', 'header').data.requested, '');
        assert.equal(unsupportedVersion('v999.0.0', 'body').data.requested, 'v999.0.0');
        assert.equal(unsupportedVersion('x'.repeat(1000), 'body').data.requested.length, 64);
        assert.equal(unsupportedVersion('2099-01-01', 'body').code, -32022);
    });
});

describe('mirrored headers', () => {
    const get = { name: 'up__plain' };
    const headers = (overrides: Partial<Record<'protocolVersion' | 'method' | 'name', string | undefined>> = {}) => ({
        protocolVersion: '2026-07-28',
        method: 'prompts/get',
        name: 'up__plain',
        ...overrides
    });

    test('match: nothing to say; Mcp-Name only for the methods that name a target', () => {
        assert.equal(headerMismatch(headers(), 'prompts/get', get, '2026-07-28'), undefined);
        assert.equal(headerMismatch(headers({ method: 'prompts/list', name: undefined }), 'prompts/list', {}, '2026-07-28'), undefined);
        assert.equal(headerMismatch(headers({ name: `=?base64?${Buffer.from('up__plain').toString('base64')}?=` }), 'prompts/get', get, '2026-07-28'), undefined);
    });

    test('each missing or different header is named, never its value', () => {
        const cases: [Parameters<typeof headers>[0], RegExp][] = [
            [{ protocolVersion: undefined }, /MCP-Protocol-Version header is required/],
            [{ protocolVersion: '2025-11-25' }, /MCP-Protocol-Version header does not match/],
            [{ method: undefined }, /Mcp-Method header is required/],
            [{ method: 'prompts/list' }, /Mcp-Method header does not match/],
            [{ name: undefined }, /Mcp-Name header is required/],
            [{ name: 'up__other' }, /Mcp-Name header does not match/],
            [{ name: '=?base64?!!!?=' }, /Mcp-Name header is malformed/],
            [{ name: ' padded ' }, /Mcp-Name header is malformed/]
        ];
        for (const [overrides, expected] of cases) {
            const message = headerMismatch(headers(overrides), 'prompts/get', get, '2026-07-28');
            assert.match(message ?? '', expected, JSON.stringify(overrides));
            assert.doesNotMatch(message ?? '', /up__other|2025-11-25|padded/);
        }
    });
});

describe('header values in their base64 form', () => {
    test('any string survives encoding and decoding; plain ASCII goes as it is', () => {
        fc.assert(
            fc.property(fc.string({ unit: 'binary' }), value => {
                const encoded = encodeHeaderValue(value);
                assert.match(encoded, /^[\x20-\x7e]*$/, 'a header value is visible ASCII');
                assert.equal(decodeHeaderValue(encoded), value);
            })
        );
        assert.equal(encodeHeaderValue('us-west1'), 'us-west1');
        assert.equal(encodeHeaderValue('Hello, 世界'), '=?base64?SGVsbG8sIOS4lueVjA==?=');
        assert.equal(encodeHeaderValue(' padded '), '=?base64?IHBhZGRlZCA=?=');
        assert.equal(encodeHeaderValue('a\tb'), '=?base64?YQli?=', 'a tab is legal in a header, but sent encoded');
        assert.equal(decodeHeaderValue('a\tb'), 'a\tb', 'and taken as it is');
        assert.equal(encodeHeaderValue('=?base64?literal?='), '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=');
    });

    test('what is not base64, or not UTF-8 once decoded, is malformed', () => {
        for (const value of ['=?base64?a*b?=', `=?base64?${Buffer.from([0xff, 0xfe]).toString('base64')}?=`, 'line\nbreak', '']) {
            assert.equal(decodeHeaderValue(value), undefined, JSON.stringify(value));
        }
    });
});

describe("an upstream's UnsupportedProtocolVersionError, read back", () => {
    test('its supported versions: what the gateway sends reads back whole; strings only, at most 32, from untrusted data', () => {
        assert.deepEqual(supportedVersionsOf(unsupportedVersion('1900-01-01', 'body').data), [...SUPPORTED_VERSIONS]);
        assert.deepEqual(supportedVersionsOf({ supported: ['2026-07-28', 7, null, { a: 1 }, '2025-11-25'] }), ['2026-07-28', '2025-11-25']);
        assert.equal(supportedVersionsOf({ supported: Array.from({ length: 100 }, (_, i) => String(i)) }).length, 32);
        for (const data of [undefined, null, 'x', [], { supported: 'x' }, { supported: {} }]) assert.deepEqual(supportedVersionsOf(data), [], JSON.stringify(data));
    });
});
