/** Change delivery to audiences and their subscribers, and the one session table, over a real bus. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import type { CatalogChange, CatalogView } from '../../src/catalog/catalog.js';
import { ChangeDelivery, type Subscriber } from '../../src/downstream/delivery.js';
import { LocalRevocations } from '../../src/downstream/revocations.js';
import { SessionSeal } from '../../src/downstream/session-seal.js';
import { RequestRegistry, Ticket } from '../../src/downstream/requests.js';
import { SessionTable, type SessionRecord } from '../../src/downstream/sessions.js';
import { Bus } from '../../src/lib/bus.js';

const logger = pino({ level: 'silent' });

/** A view is only passed through here; what each scope sees of it is the fingerprint table's business. */
function view(): CatalogView {
    return { segments: [], byName: new Map() };
}

/** Fingerprints per view and scope, set by the test; a scope missing from a view's table sees what it saw before. */
function setup(initial: CatalogView = view()) {
    const changes = new Bus<CatalogChange>();
    const seen = new Map<CatalogView, Record<string, string>>([[initial, {}]]);
    let current = initial;
    let notified = 0;
    const delivery = new ChangeDelivery({
        changes,
        currentView: () => current,
        fingerprint: (of, scope) => {
            const fingerprint = seen.get(of)?.[scope];
            if (fingerprint === undefined) throw new Error(`no fingerprint for ${scope}`);
            return fingerprint;
        },
        onNotified: () => notified++,
        logger
    });
    const publish = (fingerprints: Record<string, string>) => {
        const next = view();
        seen.set(next, fingerprints);
        current = next;
        changes.publish({ upstreamIds: [], view: next });
    };
    return { delivery, seen, initial, publish, notified: () => notified };
}

function recorder(): Subscriber & { received: string[]; closed: boolean } {
    const subscriber = {
        received: [] as string[],
        closed: false,
        deliver: (notification: { method: string }) => void subscriber.received.push(notification.method),
        close: () => void (subscriber.closed = true)
    };
    return subscriber;
}

describe('ChangeDelivery', () => {
    test('a change notifies the audiences whose visible list changed, once each', () => {
        const { delivery, seen, initial, publish, notified } = setup();
        seen.set(initial, { a: 'a1', b: 'b1' });
        const a = delivery.join('s1', 'a');
        const b = delivery.join('s2', 'b');
        const [toA, toB] = [recorder(), recorder()];
        a.attach(toA);
        b.attach(toB);
        publish({ a: 'a2', b: 'b1' });
        assert.deepEqual(toA.received, ['notifications/prompts/list_changed']);
        assert.deepEqual(toB.received, []);
        publish({ a: 'a2', b: 'b1' });
        assert.equal(toA.received.length, 1, 'an unchanged list is not announced again');
        assert.equal(notified(), 1);
    });

    test('without a subscriber the notification is held, and delivered once when one attaches', () => {
        const { delivery, seen, initial, publish } = setup();
        seen.set(initial, { a: 'a1' });
        const audience = delivery.join('s1', 'a');
        publish({ a: 'a2' });
        publish({ a: 'a3' });
        assert.equal(audience.pending, true);
        const stream = recorder();
        audience.attach(stream);
        assert.deepEqual(stream.received, ['notifications/prompts/list_changed']);
        audience.detach(stream);
        audience.attach(stream);
        assert.equal(stream.received.length, 1, 'nothing is held after delivery');
    });

    test('detach removes only the subscriber still attached; leave stops delivery and closes it', () => {
        const { delivery, seen, initial, publish } = setup();
        seen.set(initial, { a: 'a1' });
        const audience = delivery.join('s1', 'a');
        const [old, current] = [recorder(), recorder()];
        audience.attach(old);
        audience.attach(current);
        audience.detach(old);
        assert.equal(audience.subscriber, current);
        audience.leave();
        assert.equal(current.closed, true);
        publish({ a: 'a2' });
        assert.deepEqual(current.received, []);
    });

    test('an audience whose baseline could not be taken hears of the next change; a failing subscriber does not stop the others', () => {
        const { delivery, seen, initial, publish } = setup();
        seen.set(initial, { b: 'b1' });
        const unknown = delivery.join('s1', 'a');
        assert.equal(unknown.fingerprint, undefined);
        unknown.attach({
            deliver: () => {
                throw new Error('stream gone');
            }
        });
        const other = delivery.join('s2', 'b');
        const stream = recorder();
        other.attach(stream);
        publish({ a: 'a1', b: 'b2' });
        assert.equal(unknown.fingerprint, 'a1');
        assert.deepEqual(stream.received, ['notifications/prompts/list_changed']);
    });
});

function record(id: string, quotaKey: string): SessionRecord {
    return {
        id,
        nonce: id,
        clientId: 'c',
        quotaKey,
        protocolVersion: '2025-06-18',
        completions: false,
        createdAt: 0,
        expiresAt: Number.MAX_SAFE_INTEGER,
        lastSeen: 0
    };
}

function sessionTable(delivery: ChangeDelivery, requests = new RequestRegistry()): SessionTable {
    return new SessionTable({
        delivery,
        callerFor: scope => ({ scope, visible: () => true }),
        seal: new SessionSeal([], ''),
        revocations: new LocalRevocations(),
        requests,
        max: 100
    });
}

describe('SessionTable', () => {
    test('counts sessions per quota key as they open and close', () => {
        const { delivery, seen, initial } = setup();
        seen.set(initial, { c: 'c1' });
        const sessions = sessionTable(delivery);
        sessions.open(record('1', 'k1'), 'http');
        sessions.open(record('2', 'k1'), 'http');
        sessions.open(record('3', 'k2'), 'stdio');
        assert.deepEqual([sessions.size, sessions.countOf('k1'), sessions.countOf('k2')], [3, 2, 1]);
        assert.deepEqual(sessions.counts(), { http: 2, stdio: 1 });
        assert.equal(sessions.close('1'), true);
        assert.equal(sessions.close('1'), false, 'a session closes once');
        assert.equal(sessions.close('3'), true);
        assert.deepEqual([sessions.size, sessions.countOf('k1'), sessions.countOf('k2')], [1, 1, 0]);
    });

    test('closing a session aborts its requests in flight and ends its stream', () => {
        const { delivery, seen, initial, publish } = setup();
        seen.set(initial, { c: 'c1' });
        const requests = new RequestRegistry();
        const sessions = sessionTable(delivery, requests);
        const session = sessions.open(record('1', 'k'), 'http');
        const request = requests.begin(session.id, 7, 'call');
        assert.ok(request instanceof Ticket);
        const stream = recorder();
        session.audience.attach(stream);
        sessions.close('1');
        assert.equal(request.aborted, true);
        assert.equal(stream.closed, true);
        publish({ c: 'c2' });
        assert.deepEqual(stream.received, []);
    });
});
