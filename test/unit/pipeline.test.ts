import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import type { CatalogChange } from '../../src/catalog/catalog.js';
import type { PromptService } from '../../src/catalog/service.js';
import { ChangeDelivery } from '../../src/downstream/delivery.js';
import { Dispatcher } from '../../src/downstream/dispatcher.js';
import { claimsStateless, frame, InboundPipeline, isRefusal, type PipelineRefusal } from '../../src/downstream/pipeline.js';
import { RequestRegistry, type Ticket } from '../../src/downstream/requests.js';
import { LocalRevocations } from '../../src/downstream/revocations.js';
import { SessionSeal } from '../../src/downstream/session-seal.js';
import { SessionTable } from '../../src/downstream/sessions.js';
import { Subscriptions } from '../../src/downstream/subscriptions.js';
import { Bus } from '../../src/lib/bus.js';
import { LATEST_STATELESS } from '../../src/protocol/revisions.js';
import { modernMeta, modernRequest } from '../raw-http.js';

/** The pipeline over real parts; no upstream: only what is decided before a service call is exercised. */
function pipeline(maxSubscriptions = 10) {
    const logger = pino({ level: 'silent' });
    const delivery = new ChangeDelivery({ changes: new Bus<CatalogChange>(), currentView: () => undefined, fingerprint: () => '', logger });
    const requests = new RequestRegistry();
    const sessions = new SessionTable({
        delivery,
        callerFor: scope => ({ scope, visible: () => true }),
        seal: new SessionSeal([], ''),
        revocations: new LocalRevocations(),
        requests,
        max: 10
    });
    const subscriptions = new Subscriptions(delivery, () => ({ max: maxSubscriptions, maxPerClient: maxSubscriptions }));
    // The service is never reached by these tests (every message is refused or answered before a call).
    const dispatcher = new Dispatcher({ service: {} as PromptService, logger, ttlMs: () => ({ list: 1000, discover: 1000 }) });
    return { requests, subscriptions, pipeline: new InboundPipeline({ dispatcher, requests, subscriptions, sessions, completions: () => true }) };
}

const caller = { clientId: 'anonymous', cacheScope: 'public' as const };

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

describe('claimsStateless', () => {
    test('the body decides: a _meta version of any type, never for initialize or a batch', () => {
        assert.equal(claimsStateless(modernRequest('prompts/list')), true);
        assert.equal(claimsStateless({ method: 'prompts/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 5 } } }), true);
        assert.equal(claimsStateless({ method: 'initialize', params: { _meta: modernMeta() } }), false);
        assert.equal(claimsStateless([modernRequest('prompts/list')]), false);
        assert.equal(claimsStateless(null), false);
        assert.equal(claimsStateless({ method: 'prompts/list', params: {} }), false);
    });
});

describe('InboundPipeline', () => {
    test('a 2026-07-28 message is checked in the revision’s order', () => {
        const { pipeline: inbound } = pipeline();
        const reasonOf = (message: unknown, headers?: Parameters<InboundPipeline['statelessContext']>[2]) =>
            refused(inbound.statelessContext(message as JSONRPCMessage, caller, headers)).reason;
        assert.equal(reasonOf({ jsonrpc: '2.0', id: 1, result: {} }), 'invalid_message');
        assert.equal(reasonOf({ jsonrpc: '2.0', id: 1, method: 'prompts/list', params: { _meta: {} } }), 'invalid_request_meta');
        const old = modernRequest('prompts/list', {}, 1, '1900-01-01');
        // Over HTTP the headers are compared first: a version they disagree on is a mismatch, supported or not.
        assert.equal(reasonOf(old, { protocolVersion: '2026-07-28', method: 'prompts/list', name: undefined }), 'header_mismatch');
        const unsupported = refused(inbound.statelessContext(old, caller, { protocolVersion: '1900-01-01', method: 'prompts/list', name: undefined }));
        assert.equal(unsupported.error.code, -32022);
        assert.deepEqual(refused(inbound.statelessContext(old, caller)).error, unsupported.error, 'the same error without headers (stdio)');
        assert.equal(
            reasonOf({ jsonrpc: '2.0', id: 1, method: 'prompts/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } }),
            'invalid_request_meta'
        );
        assert.equal(reasonOf(modernRequest('ping')), 'unknown_method');
        const context = inbound.statelessContext(modernRequest('prompts/list'), caller);
        assert.ok(!isRefusal(context));
        assert.equal(context.revision, LATEST_STATELESS);
        assert.equal(context.cacheScope, 'public');
        assert.ok(!isRefusal(inbound.statelessContext({ jsonrpc: '2.0', method: 'notifications/foo', params: { _meta: modernMeta() } }, caller)), 'a notification is taken');
    });

    test('a request reusing an id in flight in its scope is -32600; draining, -32000', async () => {
        const { pipeline: inbound, requests } = pipeline();
        const taken: Ticket[] = [];
        const first = requests.begin('session', 1, 'call');
        const ping: JSONRPCRequest = { jsonrpc: '2.0', id: 1, method: 'ping', params: {} };
        const context = inbound.statelessContext(modernRequest('prompts/list'), caller);
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

    test('subscriptions/listen: acknowledged on its sink, ended by notifications/cancelled in its scope, refused when full', () => {
        const { pipeline: inbound, requests, subscriptions } = pipeline(1);
        const listen = modernRequest('subscriptions/listen', { notifications: { promptsListChanged: true } }, 'l1') as JSONRPCRequest;
        const context = inbound.statelessContext(listen, caller);
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
        assert.deepEqual([subscriptions.size, requests.count], [0, 0]);
    });
});
