/** Which clients a reload takes away: removed, or admitted another way (key, token rules, required scopes). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { parseConfig } from '../../src/config/load.js';
import { compilePolicy, revokedClients, type GatewayPolicy } from '../../src/policy/policy.js';

const SECRET = 'a-test-secret-of-at-least-32-characters!';
const UPSTREAMS = [{ id: 'u', transport: 'stdio', command: 'true' }];
const keyOf = (id: string, generation = 0) => `key-${generation}-of-${id}-0123456789abcdef`;

function policy(document: Record<string, unknown>): GatewayPolicy {
    return compilePolicy(parseConfig(JSON.stringify({ upstreams: UPSTREAMS, ...document }), 'revoked-clients.test.json', {}));
}

const revoked = (before: Record<string, unknown>, after: Record<string, unknown>) => [...revokedClients(policy(before), policy(after))].sort();

describe('revokedClients', () => {
    test('apiKey: a removed client and a re-keyed one; what it may see, its limits and other clients do not count', () => {
        const clients = [
            { id: 'alice', apiKey: keyOf('alice') },
            { id: 'bob', apiKey: keyOf('bob') },
            { id: 'carol', apiKey: keyOf('carol') }
        ];
        const auth = { mode: 'apiKey' };
        assert.deepEqual(revoked({ auth, clients }, { auth, clients }), []);
        assert.deepEqual(
            revoked(
                { auth, clients },
                {
                    auth,
                    clients: [
                        { id: 'alice', apiKey: keyOf('alice', 1) },
                        { id: 'carol', apiKey: keyOf('carol'), prompts: { allow: ['u__x'] }, maxSessions: 1 }
                    ]
                }
            ),
            ['alice', 'bob']
        );
        // The same key given as its digest is the same credential.
        const digest = policy({ auth, clients }).credentials.get('bob')!.slice('apiKey:'.length);
        assert.deepEqual(revoked({ auth, clients }, { auth, clients: [clients[0], { id: 'bob', apiKeySha256: digest }, clients[2]] }), []);
    });

    test('jwt: a removed client, its required scopes changed, or any rule tokens are checked by changed (all clients)', () => {
        const auth = { mode: 'jwt', secret: SECRET };
        const clients = [{ id: 'dave' }, { id: 'erin' }];
        assert.deepEqual(revoked({ auth, clients }, { auth, clients: [{ id: 'erin' }] }), ['dave']);
        assert.deepEqual(revoked({ auth, clients }, { auth, clients: [{ id: 'dave', requiredScopes: ['prompts'] }, { id: 'erin' }] }), ['dave']);
        assert.deepEqual(revoked({ auth, clients }, { auth: { ...auth, audience: 'gateway' }, clients }), ['dave', 'erin']);
        assert.deepEqual(
            revoked({ auth, clients }, { auth: { ...auth, clockToleranceSec: 5 }, clients: [...clients, { id: 'frank' }] }),
            [],
            'a new client and the leeway revoke nothing'
        );
    });

    test('jwt with inline keys (jwks, jwksFile): adding keys revokes nothing; removing or changing one revokes every client', async () => {
        const publicJwk = async (kid: string) => ({ ...(await exportJWK((await generateKeyPair('ES256', { extractable: true })).publicKey)), kid, alg: 'ES256' });
        const [k1, k2, k3, k1Again] = await Promise.all([publicJwk('k1'), publicJwk('k2'), publicJwk('k3'), publicJwk('k1')]);
        const clients = [{ id: 'dave' }, { id: 'erin' }];
        const withKeys = (...keys: object[]) => ({ auth: { mode: 'jwt', jwks: { keys } }, clients });
        assert.deepEqual(revoked(withKeys(k1, k2), withKeys(k1, k2, k3)), [], 'a key added (a rotation begins)');
        assert.deepEqual(revoked(withKeys(k1, k2), withKeys(k3, k2, k1)), [], 'the same keys in another order');
        const reordered = Object.fromEntries(Object.entries(k1).reverse());
        assert.deepEqual(revoked(withKeys(k1, k2), withKeys(reordered, k2)), [], 'the same key, its members in another order');
        assert.deepEqual(revoked(withKeys(k1, k2), withKeys(k2, k3)), ['dave', 'erin'], 'a key removed (a rotation ends)');
        assert.deepEqual(revoked(withKeys(k1, k2), withKeys(k1Again, k2)), ['dave', 'erin'], 'a key of the same kid replaced');
        assert.deepEqual(revoked(withKeys(k1, k2), withKeys({ ...k1, alg: 'ES384' }, k2)), ['dave', 'erin'], 'what a key verifies changed');
        assert.deepEqual(revoked(withKeys(k1), { auth: { mode: 'jwt', secret: SECRET }, clients }), ['dave', 'erin'], 'keys given up for a secret');
    });

    test('another mode: every client admitted before (anonymous callers included) is admitted another way', () => {
        assert.deepEqual(revoked({ auth: { mode: 'none' } }, { auth: { mode: 'apiKey' }, clients: [{ id: 'alice', apiKey: keyOf('alice') }] }), ['anonymous']);
        assert.deepEqual(
            revoked({ auth: { mode: 'apiKey' }, clients: [{ id: 'alice', apiKey: keyOf('alice') }] }, { auth: { mode: 'jwt', secret: SECRET }, clients: [{ id: 'alice' }] }),
            ['alice']
        );
    });
});
