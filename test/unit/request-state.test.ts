/** requestState as the gateway seals it: bound to the caller, its address, the prompt, the arguments and the round, for a while only. */
import assert from 'node:assert/strict';
import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { RequestStates, type StateBinding } from '../../src/catalog/request-state.js';

const SECRET = 'a-secret-of-at-least-16-chars';
const binding: StateBinding = { scope: 'alice', holder: '', name: 'rec__ask', args: { who: 'alice', when: 'now' } };
const now = 1_000_000;

test('kind u opens for the same caller, address, prompt and arguments, in time, with the upstream, its state and the round', () => {
    const states = new RequestStates(SECRET);
    const sealed = states.sealUpstream('opaque upstream state', 'rec', 2, binding, now);
    assert.doesNotMatch(sealed, /opaque|rec__ask|alice/, 'nothing of it is readable');
    assert.deepEqual(states.open(sealed, binding, 'G1', now + 1000), { kind: 'u', upstreamId: 'rec', state: 'opaque upstream state', round: 2 });
    assert.deepEqual(states.open(sealed, { ...binding, args: { when: 'now', who: 'alice' } }, 'G1', now), states.open(sealed, binding, 'G1', now), 'key order is irrelevant');
    assert.deepEqual(
        states.open(states.sealUpstream(undefined, 'rec', 1, binding, now), binding, 'G2', now),
        { kind: 'u', upstreamId: 'rec', state: undefined, round: 1 },
        'no upstream state; any instance'
    );
    assert.equal(states.open(sealed, { ...binding, scope: 'bob' }, 'G1', now), 'invalid', 'another caller');
    assert.equal(states.open(sealed, { ...binding, holder: '127.0.0.3' }, 'G1', now), 'invalid', 'another address');
    assert.equal(states.open(sealed, { ...binding, name: 'rec__other' }, 'G1', now), 'invalid', 'another prompt');
    assert.equal(states.open(sealed, { ...binding, args: { who: 'bob', when: 'now' } }, 'G1', now), 'invalid', 'a changed value');
    assert.equal(states.open(sealed, { ...binding, args: { who: 'alice' } }, 'G1', now), 'invalid', 'an argument left out');
    assert.equal(states.open(sealed, { ...binding, args: undefined }, 'G1', now), 'invalid', 'no arguments');
    assert.equal(states.open(sealed, binding, 'G1', now + 10 * 60_000 + 1), 'expired', 'too late');
    assert.equal(states.open(sealed, { ...binding, scope: 'bob' }, 'G1', now + 10 * 60_000 + 1), 'invalid', 'too late for someone else tells nothing');
    assert.equal(new RequestStates('another-secret-of-16-chars').open(sealed, binding, 'G1', now), 'invalid', 'another key');
});

test('no arguments and empty arguments are the same arguments', () => {
    const states = new RequestStates(SECRET);
    const sealed = states.sealUpstream('s', 'rec', 1, { ...binding, args: undefined }, now);
    assert.deepEqual(states.open(sealed, { ...binding, args: {} }, 'G1', now), { kind: 'u', upstreamId: 'rec', state: 's', round: 1 });
});

test('kind h opens on the instance holding it, in time; on another instance it is "elsewhere"', () => {
    const states = new RequestStates(SECRET);
    const sealed = states.sealHeld('G1', 'held-7', 3, binding, now + 60_000);
    assert.deepEqual(states.open(sealed, binding, 'G1', now), { kind: 'h', heldId: 'held-7', round: 3 });
    assert.equal(states.open(sealed, binding, 'G2', now), 'elsewhere');
    assert.equal(states.open(sealed, binding, 'G1', now + 60_001), 'expired');
    assert.equal(states.open(sealed, binding, 'G2', now + 60_001), 'expired', 'expired wins: asking again anywhere is the fix');
    assert.equal(states.open(sealed, { ...binding, holder: '127.0.0.2' }, 'G2', now), 'invalid', 'another address learns nothing of where');
});

test('garbage, FORMAT 1 states and malformed plaintexts are invalid', () => {
    const states = new RequestStates(SECRET);
    const sealed = states.sealUpstream('s', 'rec', 1, binding, now);
    for (const garbage of ['', 'x', `${sealed}=`, sealed.replace(/.$/, sealed.endsWith('A') ? 'B' : 'A'), 'A'.repeat(200_000)]) {
        assert.equal(states.open(garbage, binding, 'G1', now), 'invalid', garbage.slice(0, 20));
    }
    // Sealed as lib/sealed.ts does, with the same key: only the plaintext is wrong.
    const key = Buffer.from(hkdfSync('sha256', Buffer.from(SECRET), Buffer.alloc(0), 'mcp-prompt-gateway request-state v1', 32));
    const sealPlain = (value: unknown) => {
        const iv = randomBytes(12);
        const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
        const body = Buffer.concat([cipher.update(JSON.stringify(value)), cipher.final()]);
        return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    };
    assert.equal(states.open(sealPlain([1, 'alice', 'rec__ask', 'rec', now + 1000, 's']), binding, 'G1', now), 'invalid', 'FORMAT 1');
    assert.equal(states.open(sealPlain([2, 'u', 'alice', '', 'rec__ask', null, 1, 'rec', now + 1000, 's']), binding, 'G1', now), 'invalid', 'no digest');
    assert.equal(states.open(sealPlain(['x']), binding, 'G1', now), 'invalid', 'no format');
    assert.equal(states.open(sealPlain({ format: 2 }), binding, 'G1', now), 'invalid', 'not an array');
});
