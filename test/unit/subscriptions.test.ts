/** subscriptions/listen's own rules, over real change delivery: acknowledgment, tagging, bounds, the two endings. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import type { CatalogChange } from '../../src/catalog/catalog.js';
import { ChangeDelivery } from '../../src/downstream/delivery.js';
import { honouredFilter, Subscriptions } from '../../src/downstream/subscriptions.js';
import { Bus } from '../../src/lib/bus.js';

const TAG = 'io.modelcontextprotocol/subscriptionId';

/** Every scope's fingerprint changes with each published view: every audience is told. */
function setup(limits = { max: 10, maxPerClient: 10 }) {
    const changes = new Bus<CatalogChange>();
    let version = 0;
    const delivery = new ChangeDelivery({ changes, currentView: () => undefined, fingerprint: () => String(version), logger: pino({ level: 'silent' }) });
    const subscriptions = new Subscriptions(delivery, () => limits);
    const change = () => {
        version++;
        changes.publish({ upstreamIds: [], view: { segments: [], byName: new Map() } });
    };
    return { subscriptions, change };
}

function sink() {
    const sent: JSONRPCMessage[] = [];
    let ended = false;
    return { sent, ended: () => ended, send: (message: JSONRPCMessage) => void sent.push(message), end: () => void (ended = true) };
}

describe('subscriptions/listen', () => {
    test('only promptsListChanged is honoured; malformed filters are refused', () => {
        assert.deepEqual(honouredFilter({ notifications: { promptsListChanged: true, toolsListChanged: true, resourceSubscriptions: ['x'] } }), { promptsListChanged: true });
        assert.deepEqual(honouredFilter({ notifications: { toolsListChanged: true } }), {});
        assert.deepEqual(honouredFilter({ notifications: {} }), {});
        for (const params of [undefined, {}, { notifications: [] }, { notifications: { promptsListChanged: 'yes' } }]) {
            assert.equal(honouredFilter(params), undefined, JSON.stringify(params));
        }
    });

    test('acknowledged first, then each change tagged with the subscription id; nothing for one that did not ask for prompts', () => {
        const { subscriptions, change } = setup();
        const prompts = sink();
        const tools = sink();
        subscriptions.open(7, 'client', 'client', { promptsListChanged: true }, prompts);
        subscriptions.open('t', 'client', 'client', {}, tools);
        change();
        assert.deepEqual(prompts.sent, [
            { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: { promptsListChanged: true }, _meta: { [TAG]: 7 } } },
            { jsonrpc: '2.0', method: 'notifications/prompts/list_changed', params: { _meta: { [TAG]: 7 } } }
        ]);
        assert.deepEqual(tools.sent, [{ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: {}, _meta: { [TAG]: 't' } } }]);
    });

    test('bounded in all and per client; an ended subscription frees its place', () => {
        const { subscriptions } = setup({ max: 3, maxPerClient: 2 });
        const a1 = subscriptions.open(1, 'a', 'a', {}, sink());
        subscriptions.open(2, 'a', 'a', {}, sink());
        assert.equal(subscriptions.open(3, 'a', 'a', {}, sink()), 'client_subscription_limit');
        subscriptions.open(4, 'b', 'b', {}, sink());
        assert.equal(subscriptions.open(5, 'c', 'c', {}, sink()), 'too_many_subscriptions');
        assert.equal(subscriptions.size, 3);
        assert.ok(typeof a1 !== 'string');
        a1.cancel();
        assert.equal(subscriptions.size, 2);
        assert.notEqual(typeof subscriptions.open(6, 'a', 'a', {}, sink()), 'string');
    });

    test('cancelled by the client: nothing more is sent; closed by the gateway: answered, then ended', () => {
        const { subscriptions, change } = setup();
        const cancelled = sink();
        const closed = sink();
        const first = subscriptions.open(1, 's', 's', { promptsListChanged: true }, cancelled);
        subscriptions.open(2, 's', 's', { promptsListChanged: true }, closed);
        assert.ok(typeof first !== 'string');
        first.cancel();
        subscriptions.closeAll();
        change();
        assert.equal(cancelled.sent.length, 1, 'the acknowledgment only');
        assert.equal(cancelled.ended(), false, 'the client ended it: its stream is its own');
        assert.deepEqual(closed.sent.at(-1), { jsonrpc: '2.0', id: 2, result: { resultType: 'complete', _meta: { [TAG]: 2 } } });
        assert.ok(closed.ended());
        assert.equal(subscriptions.size, 0);
    });

    test("closeClients ends, gracefully, the subscriptions opened with those clients' credentials, and frees their quota", () => {
        const { subscriptions, change } = setup({ max: 10, maxPerClient: 1 });
        const revoked = sink();
        const kept = sink();
        const stdio = sink();
        subscriptions.open('r', 'alice', 'alice', { promptsListChanged: true }, revoked, 'alice');
        subscriptions.open('k', 'bob', 'bob', { promptsListChanged: true }, kept, 'bob');
        // Over stdio no credentials were presented: nothing to revoke.
        subscriptions.open('s', 'alice', 'alice-stdio', { promptsListChanged: true }, stdio);
        assert.equal(subscriptions.closeClients(new Set(['alice'])), 1);
        assert.deepEqual(revoked.sent.at(-1), { jsonrpc: '2.0', id: 'r', result: { resultType: 'complete', _meta: { [TAG]: 'r' } } });
        assert.equal(revoked.ended(), true);
        change();
        assert.equal(revoked.sent.length, 2, 'nothing after its end');
        assert.equal(kept.sent.length, 2);
        assert.equal(stdio.sent.length, 2);
        assert.notEqual(typeof subscriptions.open('again', 'alice', 'alice', {}, sink(), 'alice'), 'string', 'its quota is free');
    });
});
