/**
 * Sealed session ids (any replica with the key ring serves any session) and the session table's rules for them:
 * rotation, expiry, revocation, another client's id, a table that is full.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import type { CatalogChange, CatalogView } from '../../src/catalog/catalog.js';
import { ChangeDelivery } from '../../src/downstream/delivery.js';
import { LocalRevocations } from '../../src/downstream/revocations.js';
import { SessionSeal, type SealedSession } from '../../src/downstream/session-seal.js';
import { RequestRegistry } from '../../src/downstream/requests.js';
import { SessionTable } from '../../src/downstream/sessions.js';
import { Bus } from '../../src/lib/bus.js';
import { Sealer } from '../../src/lib/sealed.js';
import { UpstreamRejectedError } from '../../src/catalog/upstream-port.js';
import { capabilityBits } from '../../src/protocol/input-requests.js';

const NEW = 'a new secret of 32 characters...';
const OLD = 'an old secret of 32 characters..';
const NOW = 1_800_000_000_000;
const FIELDS: Omit<SealedSession, 'nonce'> = { clientId: 'alice', quotaKey: 'alice', protocolVersion: '2025-06-18', completions: true, createdAt: NOW, expiresAt: NOW + 60_000 };

describe('SessionSeal', () => {
    test('an id opens, to what was sealed, with a ring that holds its key, and nowhere else', () => {
        const { id, sealed } = new SessionSeal([NEW], '').seal(FIELDS);
        assert.match(id, /^[0-9a-f]{8}\.[A-Za-z0-9_-]+$/, 'visible ASCII, as the transport asks');
        assert.ok(id.length < 300, `short enough for any proxy's header limits: ${id.length}`);
        assert.deepEqual(new SessionSeal([NEW], '').open(id, NOW), sealed, 'another replica with the same secret');
        assert.equal(new SessionSeal([OLD], '').open(id, NOW), undefined, 'another secret');
        assert.deepEqual(new SessionSeal([], NEW).open(id, NOW), sealed, 'without sessions.secrets, the key comes from cursorSecret');
        const cursorKey = new Sealer(NEW, 'mcp-prompt-gateway cursor v2');
        assert.notEqual(cursorKey.keyId, id.split('.')[0], 'under a label of its own: the cursor key is another key');
        assert.equal(new SessionSeal([NEW], '').open(`${id.split('.')[0]}.${cursorKey.seal(Buffer.from('[1]'))}`, NOW), undefined);
    });

    test("the client's input capabilities are sealed in (FORMAT 2); an id of FORMAT 1, sealed before them, opens as none", () => {
        const seal = new SessionSeal([NEW], '');
        const { id, sealed } = seal.seal({ ...FIELDS, input: 37 });
        assert.equal(sealed.input, 37);
        assert.equal(seal.open(id, NOW)?.input, 37);
        assert.equal(seal.open(seal.seal(FIELDS).id, NOW)?.input, 0, 'none given: none declared');
        const sealer = new Sealer(NEW, 'mcp-prompt-gateway session v1');
        const sealOf = (fields: unknown[]) => `${sealer.keyId}.${sealer.seal(Buffer.from(JSON.stringify(fields)))}`;
        const formatOne = sealOf([1, 'nonce', 'alice', 'alice', '2025-06-18', 1, NOW, NOW + 60_000]);
        assert.deepEqual(seal.open(formatOne, NOW), { ...FIELDS, nonce: 'nonce', input: 0 });
        for (const bad of [
            [2, 'nonce', 'alice', 'alice', '2025-06-18', 1, NOW, NOW + 60_000],
            [1, 'nonce', 'alice', 'alice', '2025-06-18', 1, 5, NOW, NOW + 60_000],
            [2, 'nonce', 'alice', 'alice', '2025-06-18', 1, -1, NOW, NOW + 60_000],
            [2, 'nonce', 'alice', 'alice', '2025-06-18', 1, 1.5, NOW, NOW + 60_000],
            [2, 'nonce', 'alice', 'alice', '2025-06-18', 1, '5', NOW, NOW + 60_000],
            [3, 'nonce', 'alice', 'alice', '2025-06-18', 1, 5, NOW, NOW + 60_000]
        ]) {
            assert.equal(seal.open(sealOf(bad), NOW), undefined, JSON.stringify(bad));
        }
    });

    test('rotation: new ids are sealed with the newest key; ids of an older key of the ring still open', () => {
        const before = new SessionSeal([OLD], '').seal(FIELDS).id;
        const rotated = new SessionSeal([NEW, OLD], '');
        const after = rotated.seal(FIELDS).id;
        assert.ok(rotated.open(before, NOW));
        assert.ok(rotated.open(after, NOW));
        assert.equal(new SessionSeal([OLD], '').open(after, NOW), undefined, 'sealed with the newest');
        assert.equal(new SessionSeal([NEW], '').open(before, NOW), undefined, 'the old secret dropped: its ids end');
    });

    test('expiry is sealed in: an id opens until expiresAt, not after', () => {
        const seal = new SessionSeal([NEW], '');
        const { id } = seal.seal(FIELDS);
        assert.ok(seal.open(id, FIELDS.expiresAt - 1));
        assert.equal(seal.open(id, FIELDS.expiresAt), undefined);
    });

    test('tampered, truncated, re-keyed or oversized ids open to nothing', () => {
        const seal = new SessionSeal([NEW], '');
        const { id } = seal.seal(FIELDS);
        const [keyId, body] = id.split('.') as [string, string];
        const flipped = `${keyId}.${body.slice(0, 20)}${body[20] === 'A' ? 'B' : 'A'}${body.slice(21)}`;
        for (const bad of [flipped, id.slice(0, -1), `00000000.${body}`, body, `${keyId}.`, `${id}=`, `${keyId}.${'A'.repeat(2000)}`, '']) {
            assert.equal(seal.open(bad, NOW), undefined, bad.slice(0, 40));
        }
    });
});

function table(seal: SessionSeal, revocations = new LocalRevocations(), max = 10): SessionTable {
    const delivery = new ChangeDelivery({
        changes: new Bus<CatalogChange>(),
        currentView: () => ({}) as CatalogView,
        fingerprint: () => 'f',
        onNotified: () => {},
        logger: pino({ level: 'silent' })
    });
    return new SessionTable({ delivery, callerFor: scope => ({ scope, visible: () => true }), seal, revocations, requests: new RequestRegistry(), max });
}

describe('SessionTable: sealed sessions', () => {
    test('a session created on one replica is served on another: brought in once, then held', () => {
        const here = table(new SessionSeal([NEW], ''));
        const there = table(new SessionSeal([NEW], ''));
        const session = here.create(FIELDS);
        const served = there.resolve(session.id, 'alice', NOW);
        assert.ok(typeof served !== 'string');
        assert.deepEqual({ ...served.record, lastSeen: 0 }, { ...session.record, lastSeen: 0 });
        assert.equal(there.resolve(session.id, 'alice', NOW), served, 'held from then on');
        assert.deepEqual([there.size, there.countOf('alice')], [1, 1]);
    });

    test("another client's id, an expired one and an ended one are all 404; ending revokes before anyone asks again", async () => {
        const revocations = new LocalRevocations(() => NOW);
        const sessions = table(new SessionSeal([NEW], ''), revocations);
        const session = sessions.create(FIELDS);
        assert.equal(sessions.resolve(session.id, 'mallory', NOW), 'session_not_found');
        assert.equal(sessions.resolve(session.id, 'alice', FIELDS.expiresAt), 'session_not_found');
        assert.equal(sessions.size, 0, 'an expired session is let go');
        const again = sessions.resolve(session.id, 'alice', NOW);
        assert.ok(typeof again !== 'string');
        await sessions.end(again);
        assert.equal(sessions.resolve(session.id, 'alice', NOW), 'session_not_found');
        assert.equal(revocations.size, 1);
    });

    test('closing here only (shutdown, a replica letting go) leaves the id good; a revocation elsewhere ends the held copy', () => {
        const revocations = new LocalRevocations(() => NOW);
        const sessions = table(new SessionSeal([NEW], ''), revocations);
        const session = sessions.create(FIELDS);
        assert.equal(sessions.close(session.id), true);
        const back = sessions.resolve(session.id, 'alice', NOW);
        assert.ok(typeof back !== 'string');
        revocations.remember(back.record.nonce, back.record.expiresAt);
        assert.equal(sessions.resolve(session.id, 'alice', NOW), 'session_not_found');
        assert.equal(back.audience.subscriber, undefined);
        assert.equal(sessions.size, 0);
    });

    test("a client's credentials revoked by a reload: its sessions held here end, ids sealed before then open nowhere, later ones do", async () => {
        const seal = new SessionSeal([NEW], '');
        const sessions = table(seal, new LocalRevocations(() => NOW));
        const held = sessions.create(FIELDS);
        const letGo = sessions.create({ ...FIELDS, createdAt: NOW - 1 });
        sessions.close(letGo.id);
        const elsewhere = table(seal).create({ ...FIELDS, createdAt: NOW - 1 });
        const other = sessions.create({ ...FIELDS, clientId: 'bob', quotaKey: 'bob' });
        assert.deepEqual(await sessions.endClients(new Set(['alice']), NOW + 1), { sessions: 1, streams: 0 });
        assert.equal(sessions.get(held.id), undefined);
        assert.equal(sessions.countOf('alice'), 0, 'its quota is free');
        for (const id of [held.id, letGo.id, elsewhere.id]) assert.equal(sessions.resolve(id, 'alice', NOW + 2), 'session_not_found');
        assert.equal(sessions.resolve(other.id, 'bob', NOW + 2), other, "another client's session stays");
        const renewed = table(seal).create({ ...FIELDS, createdAt: NOW + 1 });
        assert.ok(typeof sessions.resolve(renewed.id, 'alice', NOW + 2) !== 'string', 'a session opened since is served');
    });

    test('what its client can be asked travels with the session to another replica, and it is asked nothing else', async () => {
        const seal = new SessionSeal([NEW], '');
        const session = table(seal).create({ ...FIELDS, input: capabilityBits({ elicitation: { form: {} }, roots: {} }) });
        const there = table(seal).resolve(session.id, 'alice', NOW);
        assert.ok(typeof there !== 'string');
        assert.deepEqual(there.input, { elicitation: { form: {} }, roots: {} });
        const input = there.clientInput(() => true);
        assert.deepEqual([input.capabilities, input.revision.version, input.holder], [there.input, '2025-06-18', '']);
        assert.equal(there.clientInput(undefined).ask, undefined, 'no stream to ask on: not asked');
        const refused = await input.ask!({ method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } }, new AbortController().signal).then(
            () => assert.fail('asked what it did not declare'),
            (error: unknown) => error
        );
        assert.ok(refused instanceof UpstreamRejectedError);
        assert.deepEqual(
            [refused.code, refused.message, refused.data],
            [-32021, 'The upstream asks for sampling, which this client did not declare', { requiredCapabilities: { sampling: {} } }]
        );
        assert.equal(there.answered({ jsonrpc: '2.0', id: 'Inst0001.1', result: {} }), false, 'nothing asked, nothing answered');
        assert.deepEqual(table(seal).create(FIELDS).input, {}, 'none sealed: none');
    });

    test('a full table takes no session in: 503, not 404', () => {
        const seal = new SessionSeal([NEW], '');
        const sessions = table(seal, new LocalRevocations(), 1);
        sessions.create(FIELDS);
        const elsewhere = table(seal).create(FIELDS);
        assert.equal(sessions.resolve(elsewhere.id, 'alice', NOW), 'too_many_sessions');
    });
});

describe('LocalRevocations', () => {
    test('remembers until expiry, once each, and tells the first revocation apart', async () => {
        let now = NOW;
        const revocations = new LocalRevocations(() => now);
        assert.equal(await revocations.add('n', NOW + 10), true);
        assert.equal(await revocations.add('n', NOW + 10), false);
        assert.equal(await revocations.add('past', NOW), false, 'an expired id needs no revocation');
        assert.ok(revocations.has('n'));
        now = NOW + 11;
        for (let index = 0; index < 1024; index++) revocations.remember(`x${index}`, NOW + 100);
        assert.equal(revocations.has('n'), false, 'forgotten once expired');
    });
});
