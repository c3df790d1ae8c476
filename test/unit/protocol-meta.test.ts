import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { META, requestTraceContext, serverInfoOf, traceContextOf, traceEntries, traceparentIds, upstreamRequestMeta } from '../../src/protocol/meta.js';
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

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('W3C trace context in _meta and headers', () => {
    test('a version-00 traceparent with non-zero ids is read with its ids', () => {
        assert.deepEqual(traceparentIds(TRACEPARENT), { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', sampled: true });
        assert.deepEqual(traceContextOf(TRACEPARENT, undefined, undefined), { traceparent: TRACEPARENT, traceId: TRACE_ID, sampled: true });
    });

    test('a malformed traceparent is no context at all: its tracestate and baggage go with it', () => {
        for (const bad of [
            '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
            '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
            '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
            '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
            '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
            ` ${TRACEPARENT}`,
            42
        ]) {
            assert.equal(traceContextOf(bad, 'a=b', 'k=v'), undefined, String(bad));
        }
    });

    test('tracestate and baggage pass as they came, within the W3C bounds; beyond them each is dropped alone', () => {
        assert.deepEqual(traceContextOf(TRACEPARENT, 'rojo=00f067aa0ba902b7, congo=t61rcWkgMzE', 'userId=alice,serverNode=DF%2028'), {
            traceparent: TRACEPARENT,
            traceId: TRACE_ID,
            sampled: true,
            tracestate: 'rojo=00f067aa0ba902b7, congo=t61rcWkgMzE',
            baggage: 'userId=alice,serverNode=DF%2028'
        });
        const members33 = Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',');
        const longState = `k=${'v'.repeat(511)}`;
        for (const tracestate of [members33, longState, 'Upper=v', 'k=v=w', 'k=', '', 7]) {
            assert.deepEqual(traceContextOf(TRACEPARENT, tracestate, 'k=v'), { traceparent: TRACEPARENT, traceId: TRACE_ID, sampled: true, baggage: 'k=v' }, String(tracestate));
        }
        for (const baggage of [`k=${'v'.repeat(8191)}`, 'k=v\n', '', {}]) {
            assert.deepEqual(traceContextOf(TRACEPARENT, 'a=b', baggage), { traceparent: TRACEPARENT, traceId: TRACE_ID, sampled: true, tracestate: 'a=b' });
        }
    });

    test("a request's _meta is read; the entries to forward carry only what is there", () => {
        const params = { name: 'p', _meta: { traceparent: TRACEPARENT, tracestate: 'a=b', progressToken: 1 } };
        const trace = requestTraceContext(params)!;
        assert.deepEqual(trace, { traceparent: TRACEPARENT, traceId: TRACE_ID, sampled: true, tracestate: 'a=b' });
        assert.deepEqual(traceEntries(trace), { traceparent: TRACEPARENT, tracestate: 'a=b' });
        assert.equal(requestTraceContext({ name: 'p' }), undefined);
        assert.equal(requestTraceContext(undefined), undefined);
    });
});
