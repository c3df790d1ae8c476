import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/client';
import type { PromptService } from '../../src/catalog/service.js';
import type { RequestContext } from '../../src/downstream/dispatcher.js';
import { readMessages } from '../../src/downstream/inbound.js';
import { frame, InboundPipeline, isRefusal, type PipelineRefusal } from '../../src/downstream/pipeline.js';
import type { Ticket } from '../../src/downstream/requests.js';
import { classify } from '../../src/protocol/classify.js';
import type { MirroredHeaders } from '../../src/protocol/headers.js';
import { LATEST_STATELESS, revisionOf } from '../../src/protocol/revisions.js';
import { modernMeta, modernRequest } from '../raw-http.js';
import { downstreamParts } from './downstream-parts.js';

/** The pipeline over real parts; no upstream: only what is decided before a service call is exercised. */
function pipeline(maxSubscriptions = 10) {
    // The service is never reached by these tests (every message is refused or answered before a call).
    const { dispatcher, requests, subscriptions, sessions } = downstreamParts({} as PromptService, { maxSubscriptions });
    return { requests, subscriptions, pipeline: new InboundPipeline({ dispatcher, requests, subscriptions, sessions, completions: () => true }) };
}

const caller = { clientId: 'anonymous', cacheScope: 'public' as const };

/** As a transport serves a message: classified (../../src/protocol/classify.ts), then its context built. */
function contextOf(inbound: InboundPipeline, message: unknown, headers?: MirroredHeaders): RequestContext | PipelineRefusal {
    const classified = classify(message as JSONRPCMessage, { headers });
    if ('reason' in classified) return classified;
    assert.ok(classified.era === 'stateless', 'a stateless message');
    return inbound.statelessContext(classified, caller);
}

function refused(value: object): PipelineRefusal {
    assert.ok(isRefusal(value), `refused, not ${JSON.stringify(value)}`);
    return value;
}

describe('frame', () => {
    test('JSON, its depth and the revision’s batch rule, each refused with its reason', () => {
        assert.equal((frame('{"jsonrpc":', 8, '2025-11-25', 100) as { reason: string }).reason, 'parse_error');
        assert.equal((frame(undefined, 8, '2025-11-25', 100) as { reason: string }).reason, 'parse_error');
        assert.equal((frame('[[[[1]]]]', 3, '2025-03-26', 100) as { reason: string }).reason, 'too_deep');
        assert.deepEqual(frame('[1,2]', 8, '2025-11-25', 100), {
            ok: false,
            reason: 'batch_refused',
            error: { code: -32600, message: 'Invalid Request: JSON-RPC batches are not part of MCP 2025-11-25; send one message per request' }
        });
        assert.equal((frame('[1,2,3]', 8, '2025-03-26', 2) as { reason: string }).reason, 'batch_refused');
        assert.deepEqual(frame('[1,2]', 8, '2025-03-26', 100), { ok: true, value: [1, 2], messages: 2 });
        assert.deepEqual(frame('\uFEFF{"a":1}', 8, undefined, 100), { ok: true, value: { a: 1 }, messages: 1 });
    });
});

describe('InboundPipeline', () => {
    test('a classified 2026-07-28 message: served with its row, or -32601 for a method its revision lacks', () => {
        const { pipeline: inbound } = pipeline();
        assert.equal(refused(contextOf(inbound, modernRequest('ping'))).reason, 'unknown_method');
        assert.equal(refused(contextOf(inbound, modernRequest('tools/call'))).reason, 'unknown_method');
        const context = contextOf(inbound, modernRequest('prompts/list'));
        assert.ok(!isRefusal(context));
        assert.equal(context.revision, LATEST_STATELESS);
        assert.equal(context.cacheScope, 'public');
        assert.ok(!isRefusal(contextOf(inbound, modernRequest('subscriptions/listen', { notifications: {} }))));
        assert.ok(!isRefusal(contextOf(inbound, { jsonrpc: '2.0', method: 'notifications/foo', params: { _meta: modernMeta() } })), 'a notification is taken');
    });

    test('a request reusing an id in flight in its scope is -32600; draining, -32000', async () => {
        const { pipeline: inbound, requests } = pipeline();
        const taken: Ticket[] = [];
        const first = requests.begin('session', 1, 'call');
        const ping: JSONRPCRequest = { jsonrpc: '2.0', id: 1, method: 'ping', params: {} };
        const context = contextOf(inbound, modernRequest('prompts/list'));
        assert.ok(!isRefusal(context));
        assert.deepEqual(await inbound.answer(ping, context, { scope: 'session' }, taken), {
            jsonrpc: '2.0',
            id: 1,
            error: { code: -32600, message: 'Invalid Request: id already in use by a request in flight' }
        });
        assert.deepEqual(taken, []);
        assert.ok(typeof first !== 'string');
        first.done();
        requests.refuseNew();
        assert.deepEqual(await inbound.answer(ping, context, { scope: 'session' }, taken), {
            jsonrpc: '2.0',
            id: 1,
            error: { code: -32000, message: 'Gateway is shutting down; try again later' }
        });
    });

    test('serve: a body’s messages in order (refused items answered first, responses ignored), initialize through the transport, nothing due without a request', async () => {
        const { pipeline: inbound, requests } = pipeline();
        const session: RequestContext = { caller: { scope: 'anonymous', visible: () => true }, revision: revisionOf('2025-03-26')!, completions: true, cacheScope: 'private' };
        const initialized: string[] = [];
        const hooks = {
            initialize: (request: JSONRPCRequest) => ({ jsonrpc: '2.0' as const, id: request.id, result: { hook: true } }),
            initialized: () => initialized.push('attached')
        };
        const taken: Ticket[] = [];
        const batch = readMessages([
            { jsonrpc: '1.0', id: 1, method: 'ping' },
            { jsonrpc: '2.0', id: 2, method: 'ping' },
            { jsonrpc: '2.0', method: 'notifications/initialized' },
            { jsonrpc: '2.0', id: 9, result: {} },
            { jsonrpc: '2.0', id: 2, method: 'ping' }
        ]);
        const answers = await inbound.serve(batch, session, { scope: 'b' }, taken, hooks);
        assert.deepEqual(
            answers?.map(answer => [answer?.id, answer !== undefined && 'error' in answer ? answer.error.code : 'result']),
            [
                [1, -32600],
                [2, 'result'],
                [2, -32600]
            ],
            'the refused item first, then each request in order (the second id 2 is in use)'
        );
        assert.deepEqual(initialized, ['attached']);
        assert.equal(taken.length, 1, 'the request taken, done once written');
        for (const ticket of taken) ticket.done();
        const lone = readMessages({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: {} });
        assert.deepEqual(await inbound.serve(lone, session, { scope: 'b' }, taken, hooks), [{ jsonrpc: '2.0', id: 'init', result: { hook: true } }]);
        assert.equal(requests.countOf('call'), 1, 'an initialize is in flight until written, as any request');
        const quiet = readMessages([
            { jsonrpc: '2.0', method: 'notifications/foo' },
            { jsonrpc: '2.0', id: 3, result: {} }
        ]);
        assert.equal(inbound.serve(quiet, session, { scope: 'b' }, taken, hooks), undefined, 'nothing due: HTTP answers 202');
    });

    test('subscriptions/listen: acknowledged on its sink, ended by notifications/cancelled in its scope, refused when full', () => {
        const { pipeline: inbound, requests, subscriptions } = pipeline(1);
        const listen = modernRequest('subscriptions/listen', { notifications: { promptsListChanged: true } }, 'l1') as JSONRPCRequest;
        const context = contextOf(inbound, listen);
        assert.ok(!isRefusal(context));
        const sent: JSONRPCMessage[] = [];
        const sink = { send: (message: JSONRPCMessage) => sent.push(message), end: () => {} };
        const bad = modernRequest('subscriptions/listen', { notifications: 1 }, 'bad') as JSONRPCRequest;
        assert.equal(inbound.listen(bad, context, { scope: 'stdio' }, sink, { quotaKey: 'k' })?.reason, 'invalid_filter');
        assert.equal(inbound.listen(listen, context, { scope: 'stdio' }, sink, { quotaKey: 'k' }), undefined);
        assert.equal((sent[0] as { method?: string }).method, 'notifications/subscriptions/acknowledged');
        assert.equal(requests.countOf('listen'), 1);
        const second = modernRequest('subscriptions/listen', { notifications: {} }, 'l2') as JSONRPCRequest;
        assert.deepEqual(inbound.listen(second, context, { scope: 'stdio' }, sink, { quotaKey: 'k' })?.error, {
            code: -32000,
            message: 'Too many subscriptions; try again later'
        });
        assert.equal(requests.countOf('listen'), 1, 'a refused listen is not in flight');
        inbound.notification({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'l1' } }, { scope: 'stdio' });
        assert.deepEqual([subscriptions.size, requests.countOf('listen')], [0, 0]);
    });
});
