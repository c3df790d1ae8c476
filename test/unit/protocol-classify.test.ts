/** The era and revision of an inbound message, as both transports decide it (HTTP adding its headers). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { classify, claimsStateless, namesStatelessRevision, type Classified, type InboundContext } from '../../src/protocol/classify.js';
import type { MirroredHeaders } from '../../src/protocol/headers.js';
import { LATEST_STATELESS, revisionOf } from '../../src/protocol/revisions.js';
import { modernMeta, modernRequest } from '../raw-http.js';

const HTTP_LIST: MirroredHeaders = { protocolVersion: '2026-07-28', method: 'prompts/list', name: undefined };
const ping = { jsonrpc: '2.0', id: 7, method: 'ping', params: {} } as const;

function classified(message: unknown, context: InboundContext = {}): Classified {
    return classify(message as JSONRPCMessage, context);
}

function reasonOf(message: unknown, context: InboundContext = {}): string {
    const verdict = classified(message, context);
    assert.ok('reason' in verdict, `refused, not ${JSON.stringify(verdict)}`);
    return verdict.reason;
}

describe('claimsStateless', () => {
    test('the body decides: a _meta version of any type, never for initialize or a batch', () => {
        assert.equal(claimsStateless(modernRequest('prompts/list')), true);
        assert.equal(claimsStateless({ method: 'prompts/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 5 } } }), true);
        assert.equal(claimsStateless({ method: 'initialize', params: { _meta: modernMeta() } }), false);
        assert.equal(claimsStateless([modernRequest('prompts/list')]), false);
        assert.equal(claimsStateless(null), false);
        assert.equal(claimsStateless({ method: 'prompts/list', params: {} }), false);
    });

    test('a header names a stateless revision only when the table says so', () => {
        assert.equal(namesStatelessRevision('2026-07-28'), true);
        for (const version of ['2025-11-25', '2099-01-01', '', undefined]) assert.equal(namesStatelessRevision(version), false, String(version));
    });
});

describe('classify', () => {
    test('a stateless request: its row and what its _meta says, on either transport, whatever the session', () => {
        const request = modernRequest('prompts/list');
        const session = revisionOf('2025-06-18');
        for (const context of [{}, { session }, { headers: HTTP_LIST }, { session, headers: HTTP_LIST }]) {
            const verdict = classified(request, context);
            assert.ok(!('reason' in verdict) && verdict.era === 'stateless', JSON.stringify(context));
            assert.equal(verdict.revision, LATEST_STATELESS);
            assert.deepEqual(verdict.meta, { protocolVersion: '2026-07-28', clientCapabilities: {}, clientInfo: { name: 'raw-modern', version: '1' } });
        }
    });

    test('the handshake era: a request without a claim, initialize whatever its _meta, a batch; the session’s row', () => {
        const session = revisionOf('2025-03-26');
        assert.deepEqual(classified(ping, { session }), { era: 'handshake', revision: session });
        assert.deepEqual(classified(ping), { era: 'handshake', revision: undefined });
        assert.deepEqual(classified({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { _meta: modernMeta() } }), { era: 'handshake', revision: undefined });
        assert.deepEqual(classified([modernRequest('prompts/list'), ping], { session }), { era: 'handshake', revision: session });
        const headers = { protocolVersion: '2025-03-26', method: undefined, name: undefined };
        assert.deepEqual(classified(ping, { session, headers }), { era: 'handshake', revision: session });
    });

    test('a stateless message is refused in the revision’s order', () => {
        // Over HTTP a stateless header makes it stateless: a response is refused, and a body without a claim.
        assert.equal(reasonOf({ jsonrpc: '2.0', id: 1, result: {} }, { headers: HTTP_LIST }), 'invalid_message');
        assert.equal(reasonOf(ping, { headers: HTTP_LIST }), 'invalid_request_meta');
        assert.equal(reasonOf({ jsonrpc: '2.0', id: 1, method: 'prompts/list', params: { _meta: {} } }, { headers: HTTP_LIST }), 'invalid_request_meta');
        assert.equal(reasonOf({ jsonrpc: '2.0', id: 1, method: 'prompts/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 5 } } }), 'invalid_request_meta');
        const old = modernRequest('prompts/list', {}, 1, '1900-01-01');
        // The headers are compared first: a version they disagree on is a mismatch, supported or not.
        assert.equal(reasonOf(old, { headers: HTTP_LIST }), 'header_mismatch');
        const unsupported = classified(old, { headers: { ...HTTP_LIST, protocolVersion: '1900-01-01' } });
        assert.ok('reason' in unsupported && unsupported.reason === 'unsupported_protocol_version');
        assert.deepEqual(unsupported.error, {
            code: -32022,
            message: 'Unsupported protocol version',
            data: { supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'], requested: '1900-01-01' }
        });
        assert.deepEqual(classified(old), unsupported, 'the same refusal without headers (stdio)');
        const handshakeVersion = modernRequest('prompts/list', {}, 1, '2025-11-25');
        assert.equal(reasonOf(handshakeVersion), 'unsupported_protocol_version', 'a handshake revision is no stateless one');
        const noCapabilities = { jsonrpc: '2.0', id: 1, method: 'prompts/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } };
        assert.equal(reasonOf(noCapabilities), 'invalid_request_meta');
        assert.deepEqual(classified(noCapabilities), {
            reason: 'invalid_request_meta',
            id: 1,
            error: { code: -32602, message: 'Invalid params: _meta must carry io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities' }
        });
    });

    test('a handshake-era request over HTTP whose header names no revision served: -32022 under its id, the header not echoed unless a date', () => {
        const verdict = classified(ping, { session: revisionOf('2025-11-25'), headers: { protocolVersion: 'nonsense', method: undefined, name: undefined } });
        assert.deepEqual(verdict, {
            reason: 'unsupported_protocol_version',
            id: 7,
            error: {
                code: -32022,
                message: 'Unsupported protocol version',
                data: { supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'], requested: '' }
            }
        });
        const batch = classified([ping], { headers: { protocolVersion: '2099-01-01', method: undefined, name: undefined } });
        assert.ok('reason' in batch);
        assert.equal(batch.id, null);
        assert.equal((batch.error.data as { requested: string }).requested, '2099-01-01');
    });
});
