/**
 * auth.jwksUrl against a real JWKS server on 127.0.0.1 that counts its fetches: a body over the bound is refused
 * without being read whole, a failing endpoint is not fetched once per request, and a key rotated right after a fetch
 * is found by one more fetch, while made-up kids do not make more. The tests of time windows freeze the clock (Date,
 * which jose's cache reads too) and move it themselves, so how long the requests take does not matter.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { parseConfig } from '../src/config/load.js';
import { createAuthenticator, type Authenticator, type AuthOutcome } from '../src/policy/authenticator.js';
import { ClientDirectory } from '../src/policy/clients.js';
import { FAILURE_CACHE_MS, JWKS_MAX_BYTES, UNKNOWN_KID_COOLDOWN_MS } from '../src/policy/remote-keys.js';

const MIB = 1024 * 1024;

interface KeyPair {
    privateKey: CryptoKey;
    publicKey: CryptoKey;
}

interface JwksServer {
    url: string;
    fetches: number;
    /** How each fetch is answered: a status and body, or a handler of its own. */
    answer: (res: ServerResponse) => void;
}

async function startJwksServer(t: TestContext, answer: (res: ServerResponse) => void): Promise<JwksServer> {
    const server = createServer((_req, res) => {
        state.fetches++;
        state.answer(res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => {
        server.closeAllConnections();
        return new Promise(resolve => server.close(resolve));
    });
    const state: JwksServer = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`, fetches: 0, answer };
    return state;
}

const keySet = async (keys: [KeyPair, string][]) =>
    JSON.stringify({ keys: await Promise.all(keys.map(async ([pair, kid]) => ({ ...(await exportJWK(pair.publicKey)), kid, alg: 'ES256', use: 'sig' }))) });

const serve = (body: string) => (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);

function authenticatorFor(jwksUrl: string): Authenticator {
    const config = parseConfig(
        JSON.stringify({ auth: { mode: 'jwt', jwksUrl }, clients: [{ id: 'team-a' }], upstreams: [{ id: 'u', transport: 'stdio', command: 'node' }] }),
        'jwks.test.json',
        {}
    );
    return createAuthenticator(config.auth, new ClientDirectory(config));
}

async function token(pair: KeyPair, kid: string): Promise<string> {
    return new SignJWT({ sub: 'team-a' }).setProtectedHeader({ alg: 'ES256', kid }).setExpirationTime('5m').sign(pair.privateKey);
}

const verify = (authenticator: Authenticator, jwt: string): Promise<AuthOutcome> => authenticator.authenticate({ authorization: [`Bearer ${jwt}`] });

const newPair = (): Promise<KeyPair> => generateKeyPair('ES256');

/** Stops the clock at the current time: it moves only by `t.mock.timers.tick` (timers stay real: jose's fetch timeout runs). */
const freezeClock = (t: TestContext): void => t.mock.timers.enable({ apis: ['Date'], now: Date.now() });

test('a JWKS body over the bound is refused without being read whole: the server sees its connection closed early', { timeout: 60_000 }, async t => {
    const total = 64 * MIB;
    const written = { bytes: 0 };
    const chunk = Buffer.alloc(64 * 1024, ' ');
    let closed!: (early: boolean) => void;
    const hungUp = new Promise<boolean>(resolve => (closed = resolve));
    const server = await startJwksServer(t, res => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.on('close', () => closed(!res.writableFinished));
        // As fast as the reader takes it, without a Content-Length: only reading tells how big it is.
        const pump = () => {
            while (written.bytes < total) {
                written.bytes += chunk.length;
                if (!res.write(chunk)) return void res.once('drain', pump);
            }
            res.end();
        };
        pump();
    });
    const outcome = await verify(authenticatorFor(server.url), await token(await newPair(), 'k1'));
    assert.equal(await hungUp, true, 'the connection was closed before the body ended');
    // The bound, plus what sockets buffer on the way.
    assert.ok(written.bytes < 16 * MIB, `${written.bytes} bytes written before the gateway hung up`);
    assert.equal(server.fetches, 1);
    assert.deepEqual(outcome, { ok: false, failure: 'unavailable', reason: `response larger than ${JWKS_MAX_BYTES} bytes` });
});

test('a declared Content-Length over the bound is refused before reading the body', { timeout: 30_000 }, async t => {
    const server = await startJwksServer(t, res => res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(2 * MIB) }).write('{"keys":'));
    const outcome = await verify(authenticatorFor(server.url), await token(await newPair(), 'k1'));
    assert.deepEqual(outcome, { ok: false, failure: 'unavailable', reason: `response larger than ${JWKS_MAX_BYTES} bytes` });
});

test('while the JWKS endpoint answers 500, 100 requests make one fetch, not 100 (failures are cached)', { timeout: 60_000 }, async t => {
    const server = await startJwksServer(t, res => res.writeHead(500).end('internal error'));
    const authenticator = authenticatorFor(server.url);
    const pair = await newPair();
    freezeClock(t);
    const outcomes: AuthOutcome[] = [];
    for (let i = 0; i < 100; i++) outcomes.push(await verify(authenticator, await token(pair, `unknown-${i}`)));
    t.mock.timers.tick(FAILURE_CACHE_MS - 1);
    outcomes.push(await verify(authenticator, await token(pair, 'unknown-last-moment')));
    assert.equal(server.fetches, 1);
    for (const outcome of outcomes) assert.deepEqual(outcome, { ok: false, failure: 'unavailable', reason: 'HTTP 500' });
    t.mock.timers.tick(1);
    assert.deepEqual(await verify(authenticator, await token(pair, 'unknown-after')), { ok: false, failure: 'unavailable', reason: 'HTTP 500' });
    assert.equal(server.fetches, 2, 'once the failure is stale, the next request fetches again');
});

test('a failing endpoint after keys were fetched: unknown kids make at most one fetch; known keys still verify', { timeout: 60_000 }, async t => {
    const pair = await newPair();
    const server = await startJwksServer(t, serve(await keySet([[pair, 'k1']])));
    const authenticator = authenticatorFor(server.url);
    freezeClock(t);
    assert.equal((await verify(authenticator, await token(pair, 'k1'))).ok, true);
    server.answer = res => res.writeHead(500).end();
    const outcomes = await Promise.all(Array.from({ length: 100 }, async (_, i) => verify(authenticator, await token(pair, `unknown-${i}`))));
    assert.ok(outcomes.every(outcome => !outcome.ok));
    assert.ok(server.fetches <= 2, `${server.fetches} fetches: the first, then at most one for the unknown kids`);
    assert.equal((await verify(authenticator, await token(pair, 'k1'))).ok, true);
});

test('a key rotated just after a fetch is accepted after one more fetch; more unknown kids in the cooldown fetch nothing', { timeout: 60_000 }, async t => {
    const [first, second, stranger] = await Promise.all([newPair(), newPair(), newPair()]);
    const server = await startJwksServer(t, serve(await keySet([[first, 'k1']])));
    const authenticator = authenticatorFor(server.url);
    // Rotated in the very millisecond of the first fetch, well within any cooldown after it.
    freezeClock(t);
    assert.equal((await verify(authenticator, await token(first, 'k1'))).ok, true);
    assert.equal(server.fetches, 1);
    server.answer = serve(
        await keySet([
            [first, 'k1'],
            [second, 'k2']
        ])
    );
    const rotated = await verify(authenticator, await token(second, 'k2'));
    assert.equal(rotated.ok, true, JSON.stringify(rotated));
    assert.equal(server.fetches, 2);
    for (let i = 0; i < 20; i++) assert.deepEqual(await verify(authenticator, await token(stranger, `made-up-${i}`)), { ok: false, failure: 'invalid' });
    t.mock.timers.tick(UNKNOWN_KID_COOLDOWN_MS - 1);
    assert.deepEqual(await verify(authenticator, await token(stranger, 'made-up-last-moment')), { ok: false, failure: 'invalid' });
    assert.equal(server.fetches, 2, 'made-up kids within the cooldown fetch nothing');
    assert.equal((await verify(authenticator, await token(second, 'k2'))).ok, true);
    t.mock.timers.tick(1);
    assert.deepEqual(await verify(authenticator, await token(stranger, 'made-up-after')), { ok: false, failure: 'invalid' });
    assert.equal(server.fetches, 3, 'after the cooldown, an unknown kid fetches again');
});

test('concurrent tokens with a newly rotated kid share one fetch and are all accepted', { timeout: 60_000 }, async t => {
    const [first, second] = await Promise.all([newPair(), newPair()]);
    const server = await startJwksServer(t, serve(await keySet([[first, 'k1']])));
    const authenticator = authenticatorFor(server.url);
    freezeClock(t);
    assert.equal((await verify(authenticator, await token(first, 'k1'))).ok, true);
    server.answer = serve(await keySet([[second, 'k2']]));
    const jwt = await token(second, 'k2');
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => verify(authenticator, jwt)));
    assert.ok(
        outcomes.every(outcome => outcome.ok),
        JSON.stringify(outcomes.find(outcome => !outcome.ok))
    );
    assert.equal(server.fetches, 2);
});
