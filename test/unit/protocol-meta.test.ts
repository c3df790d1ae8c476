import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { META, serverInfoOf, upstreamRequestMeta } from '../../src/protocol/meta.js';
import { LATEST_HANDSHAKE, LATEST_STATELESS } from '../../src/protocol/revisions.js';

const GATEWAY = { name: 'mcp-prompt-gateway', version: '1.2.3' };

describe('_meta keys and what an upstream request names there', () => {
    test('the keys are the ones 2026-07-28 reserves (basic/index)', () => {
        assert.equal(META.protocolVersion, 'io.modelcontextprotocol/protocolVersion');
        assert.equal(META.clientCapabilities, 'io.modelcontextprotocol/clientCapabilities');
        assert.equal(META.clientInfo, 'io.modelcontextprotocol/clientInfo');
        assert.equal(META.serverInfo, 'io.modelcontextprotocol/serverInfo');
        assert.equal(META.subscriptionId, 'io.modelcontextprotocol/subscriptionId');
        assert.deepEqual([META.traceparent, META.tracestate, META.baggage], ['traceparent', 'tracestate', 'baggage']);
    });

    test('a stateless upstream is told the revision, the gateway and its client per request; a handshake-era one nothing', () => {
        const capabilities = { elicitation: {} };
        assert.deepEqual(upstreamRequestMeta(LATEST_STATELESS, GATEWAY, capabilities), {
            [META.protocolVersion]: LATEST_STATELESS.version,
            [META.clientInfo]: GATEWAY,
            [META.clientCapabilities]: capabilities
        });
        assert.equal(upstreamRequestMeta(LATEST_HANDSHAKE, GATEWAY, capabilities), undefined);
    });

    test("a stateless result's server info, when well-formed", () => {
        assert.deepEqual(serverInfoOf({ _meta: { [META.serverInfo]: { name: 's', version: '1' } } }), { name: 's', version: '1' });
        for (const info of [undefined, 'x', { name: 's' }, { name: 1, version: '1' }]) assert.equal(serverInfoOf({ _meta: { [META.serverInfo]: info } }), undefined);
        assert.equal(serverInfoOf({}), undefined);
    });
});
