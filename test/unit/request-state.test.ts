/** requestState as the gateway seals it: bound to the caller, the prompt and the upstream, for a while only. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestStates } from '../../src/catalog/request-state.js';

const binding = { scope: 'alice', name: 'rec__ask' };

test('opens for the same caller and prompt, in time, with the upstream that gave it; never otherwise', () => {
    const states = new RequestStates('a-secret-of-at-least-16-chars');
    const now = 1_000_000;
    const sealed = states.seal('opaque upstream state', 'rec', binding, now);
    assert.doesNotMatch(sealed, /opaque|rec__ask|alice/, 'nothing of it is readable');
    assert.deepEqual(states.open(sealed, binding, now + 1000), { upstreamId: 'rec', state: 'opaque upstream state' });
    assert.equal(states.open(sealed, { ...binding, scope: 'bob' }, now), undefined, 'another caller');
    assert.equal(states.open(sealed, { ...binding, name: 'rec__other' }, now), undefined, 'another prompt');
    assert.equal(states.open(sealed, binding, now + 10 * 60_000 + 1), undefined, 'too late');
    assert.equal(new RequestStates('another-secret-of-16-chars').open(sealed, binding, now), undefined, 'another key');
    for (const garbage of ['', 'x', `${sealed}=`, sealed.replace(/.$/, sealed.endsWith('A') ? 'B' : 'A'), 'A'.repeat(200_000)]) {
        assert.equal(states.open(garbage, binding, now), undefined, garbage.slice(0, 20));
    }
});
