/** The security half of the config: auth modes, clients and their keys, JWT key sources; and ClientDirectory. */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../src/config/issues.js';
import { loadConfigFile, parseConfig } from '../../src/config/load.js';
import { ANONYMOUS_CLIENT_ID, sha256 } from '../../src/config/policy-schema.js';
import type { GatewayConfig } from '../../src/config/schema.js';
import { ClientDirectory } from '../../src/policy/clients.js';
import { configError, lineFor } from './config-assert.js';

const SOURCE = 'policy.test.json';
const UPSTREAMS = [{ id: 'u', transport: 'stdio', command: 'node' }];
const KEY_A = 'key-of-team-a-0123456789abcdef';
const KEY_B = 'key-of-team-b-fedcba9876543210';
const SECRET = 'a-hmac-secret-of-at-least-32-characters!';

const hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

function parse(document: Record<string, unknown>, env: Record<string, string> = {}): GatewayConfig {
    return parseConfig(JSON.stringify({ upstreams: UPSTREAMS, ...document }), SOURCE, env);
}

const rejects = (document: Record<string, unknown>, env: Record<string, string> = {}): ConfigError => configError(() => parse(document, env));

describe('policy config: auth modes and clients', () => {
    test('auth defaults to mode "none" with no clients', () => {
        const config = parse({});
        assert.deepEqual(config.auth, { mode: 'none' });
        assert.deepEqual(config.clients, []);
    });

    test('apiKey mode without clients is an error on "clients"', () => {
        assert.match(lineFor(rejects({ auth: { mode: 'apiKey' } }), 'clients'), /at least one client.*"apiKey"/);
    });

    test('jwt mode without clients is an error on "clients"', () => {
        assert.match(lineFor(rejects({ auth: { mode: 'jwt', secret: SECRET } }), 'clients'), /at least one client.*"jwt"/);
    });

    test('a client without a key in apiKey mode is an error naming that client', () => {
        const error = rejects({ auth: { mode: 'apiKey' }, clients: [{ id: 'ok', apiKeySha256: hex(KEY_A) }, { id: 'keyless' }] });
        assert.match(lineFor(error, 'clients[1]'), /needs "apiKeySha256" or "apiKey"/);
        assert.ok(!error.message.includes('clients[0]'), error.message);
    });

    test('clients without keys are fine in jwt mode (the token names them)', () => {
        const config = parse({ auth: { mode: 'jwt', secret: SECRET }, clients: [{ id: 'a' }] });
        assert.equal(config.clients[0]?.id, 'a');
    });

    test('both "apiKey" and "apiKeySha256" is an error', () => {
        const error = rejects({ auth: { mode: 'apiKey' }, clients: [{ id: 'a', apiKey: KEY_A, apiKeySha256: hex(KEY_A) }] });
        assert.match(lineFor(error, 'clients[0].apiKey'), /not both/);
        assert.ok(!error.message.includes(KEY_A), 'the plain key is not echoed');
    });

    test('duplicate client ids are an error naming both entries', () => {
        const error = rejects({
            auth: { mode: 'apiKey' },
            clients: [
                { id: 'team', apiKeySha256: hex(KEY_A) },
                { id: 'team', apiKeySha256: hex(KEY_B) }
            ]
        });
        assert.match(lineFor(error, 'clients[1].id'), /duplicate id "team" \(also clients\[0\]\.id\)/);
    });

    test('two clients with the same key are an error, without echoing the key or its digest', () => {
        const error = rejects({
            auth: { mode: 'apiKey' },
            clients: [
                { id: 'a', apiKeySha256: hex(KEY_A) },
                { id: 'b', apiKeySha256: hex(KEY_B) },
                { id: 'c', apiKeySha256: hex(KEY_A) }
            ]
        });
        assert.match(lineFor(error, 'clients[2]'), /same API key as clients\[0\]/);
        assert.ok(!error.message.includes(hex(KEY_A)), error.message);
    });

    test('the same key as plain "apiKey" on one client and as upper-case hex on another is caught', () => {
        const error = rejects(
            {
                auth: { mode: 'apiKey' },
                clients: [
                    { id: 'a', apiKey: '${KEY}' },
                    { id: 'b', apiKeySha256: hex(KEY_A).toUpperCase() }
                ]
            },
            { KEY: KEY_A }
        );
        assert.match(lineFor(error, 'clients[1]'), /same API key as clients\[0\]/);
        assert.ok(!error.message.includes(KEY_A), 'the plain key is not echoed');
    });

    test('"anonymous" is a reserved client id', () => {
        const error = rejects({ auth: { mode: 'apiKey' }, clients: [{ id: ANONYMOUS_CLIENT_ID, apiKeySha256: hex(KEY_A) }] });
        assert.match(lineFor(error, 'clients[0].id'), /"anonymous" is reserved/);
    });

    test('"anonymous" is reserved in jwt and none modes too', () => {
        assert.match(lineFor(rejects({ auth: { mode: 'jwt', secret: SECRET }, clients: [{ id: 'anonymous' }] }), 'clients[0].id'), /reserved/);
        assert.match(lineFor(rejects({ clients: [{ id: 'anonymous' }] }), 'clients[0].id'), /reserved/);
    });

    test('client ids that are not plain names are errors', () => {
        for (const id of ['', '-lead', 'a b', 'a/b', 'x'.repeat(129), 'é', '__proto__']) {
            const error = rejects({ auth: { mode: 'jwt', secret: SECRET }, clients: [{ id }] });
            assert.match(lineFor(error, 'clients[0].id'), /must be 1-128 characters/, `id ${JSON.stringify(id)}`);
        }
    });

    test('an apiKey shorter than 16 characters is an error that does not echo it', () => {
        const short = 'sh0rt-s3cret!';
        const error = rejects({ auth: { mode: 'apiKey' }, clients: [{ id: 'a', apiKey: short }] });
        assert.match(lineFor(error, 'clients[0].apiKey'), /at least 16 characters/);
        assert.ok(!error.message.includes(short), error.message);
    });

    test('an apiKey of exactly 16 characters is accepted', () => {
        const config = parse({ auth: { mode: 'apiKey' }, clients: [{ id: 'a', apiKey: '0123456789abcdef' }] });
        assert.equal(config.clients[0]?.apiKeySha256, hex('0123456789abcdef'));
    });

    test('apiKeySha256 must be exactly 64 hex digits', () => {
        const error = rejects({
            auth: { mode: 'apiKey' },
            clients: [
                { id: 'a', apiKeySha256: 'g'.repeat(64) },
                { id: 'b', apiKeySha256: 'a'.repeat(63) },
                { id: 'c', apiKeySha256: 'a'.repeat(65) },
                { id: 'd', apiKeySha256: ` ${'a'.repeat(64)}` },
                { id: 'e', apiKeySha256: KEY_A }
            ]
        });
        for (let i = 0; i < 5; i++) assert.match(lineFor(error, `clients[${i}].apiKeySha256`), /64 hex digits/);
        assert.ok(!error.message.includes(KEY_A), 'a plain key put in the digest field is not echoed');
    });

    test('apiKeySha256 is normalised to lower case', () => {
        const config = parse({ auth: { mode: 'apiKey' }, clients: [{ id: 'a', apiKeySha256: hex(KEY_A).toUpperCase() }] });
        assert.equal(config.clients[0]?.apiKeySha256, hex(KEY_A));
    });

    test('an unknown auth mode and unknown auth keys are errors', () => {
        assert.ok(lineFor(rejects({ auth: { mode: 'oauth' } }), 'auth.mode'));
        assert.match(lineFor(rejects({ auth: { mode: 'apiKey', keys: [] }, clients: [{ id: 'a', apiKey: KEY_A }] }), 'auth'), /unknown key "keys"/);
        assert.match(lineFor(rejects({ auth: { mode: 'jwt', secret: SECRET, issuers: 'x' }, clients: [{ id: 'a' }] }), 'auth'), /unknown key "issuers"/);
        assert.match(lineFor(rejects({ clients: [{ id: 'a', key: KEY_A }] }), 'clients[0]'), /unknown key "key"/);
    });
});

describe('policy config: plain apiKey is hashed at load', () => {
    test('the parsed config holds the digest only, with no trace of the plain key', () => {
        const config = parse({ auth: { mode: 'apiKey' }, clients: [{ id: 'bot', apiKey: '${BOT_KEY}' }] }, { BOT_KEY: KEY_B });
        const client = config.clients[0]!;
        assert.equal(client.apiKeySha256, hex(KEY_B));
        assert.equal(client.apiKeySha256, sha256(KEY_B));
        assert.ok(!Object.hasOwn(client, 'apiKey'), 'no apiKey property at all');
        assert.ok(!JSON.stringify(config).includes(KEY_B), 'the plain key is nowhere in the parsed config');
        // Nor any long piece of it.
        assert.ok(!JSON.stringify(config).includes(KEY_B.slice(4, 20)));
    });

    test('a literal plain key (no env var) is hashed the same way', () => {
        const config = parse({ auth: { mode: 'apiKey' }, clients: [{ id: 'bot', apiKey: KEY_A }] });
        assert.equal(config.clients[0]?.apiKeySha256, hex(KEY_A));
        assert.ok(!JSON.stringify(config).includes(KEY_A));
    });

    test('the key is hashed as UTF-8', () => {
        const key = 'clé-très-secrète-ü-ß-🔑';
        const config = parse({ auth: { mode: 'apiKey' }, clients: [{ id: 'bot', apiKey: key }] });
        assert.equal(config.clients[0]?.apiKeySha256, createHash('sha256').update(Buffer.from(key, 'utf8')).digest('hex'));
    });

    test('an unset env var for the key is an error naming the variable, not a silent empty key', () => {
        const error = rejects({ auth: { mode: 'apiKey' }, clients: [{ id: 'bot', apiKey: '${MISSING_BOT_KEY}' }] });
        assert.match(error.message, /MISSING_BOT_KEY/);
    });
});

describe('policy config: jwt', () => {
    test('secret with defaults: sub claim, 30 s tolerance', () => {
        const config = parse({ auth: { mode: 'jwt', secret: SECRET }, clients: [{ id: 'a' }] });
        assert.equal(config.auth.mode, 'jwt');
        if (config.auth.mode !== 'jwt') return;
        assert.equal(config.auth.clientIdClaim, 'sub');
        assert.equal(config.auth.clockToleranceSec, 30);
    });

    test('no key source is an error on "auth"', () => {
        assert.match(lineFor(rejects({ auth: { mode: 'jwt' }, clients: [{ id: 'a' }] }), 'auth'), /needs one of "secret", "jwks", "jwksFile" or "jwksUrl"/);
    });

    test('two key sources are an error naming both', () => {
        const line = lineFor(rejects({ auth: { mode: 'jwt', secret: SECRET, jwksUrl: 'https://idp.example/jwks' }, clients: [{ id: 'a' }] }), 'auth');
        assert.match(line, /set only one of "secret", "jwksUrl"/);
        const three = lineFor(
            rejects({ auth: { mode: 'jwt', jwks: { keys: [{ kty: 'EC' }] }, jwksFile: 'k.json', jwksUrl: 'https://idp.example/jwks' }, clients: [{ id: 'a' }] }),
            'auth'
        );
        assert.match(three, /"jwks", "jwksFile", "jwksUrl"/);
    });

    test('a secret shorter than 32 characters is an error that does not echo it', () => {
        const error = rejects({ auth: { mode: 'jwt', secret: 'only-twenty-chars!!!' }, clients: [{ id: 'a' }] });
        assert.match(lineFor(error, 'auth.secret'), /at least 32 characters/);
        assert.ok(!error.message.includes('only-twenty-chars'));
    });

    test('HS algorithms without a secret are an error', () => {
        const error = rejects({ auth: { mode: 'jwt', jwksUrl: 'https://idp.example/jwks', algorithms: ['RS256', 'HS256'] }, clients: [{ id: 'a' }] });
        assert.match(lineFor(error, 'auth.algorithms'), /HS\* algorithms need "secret"/);
    });

    test('asymmetric algorithms with a secret are an error', () => {
        const error = rejects({ auth: { mode: 'jwt', secret: SECRET, algorithms: ['HS256', 'ES256'] }, clients: [{ id: 'a' }] });
        assert.match(lineFor(error, 'auth.algorithms'), /only HS256, HS384 and HS512/);
    });

    test('"none" is not an algorithm one can allow', () => {
        const error = rejects({ auth: { mode: 'jwt', secret: SECRET, algorithms: ['none'] }, clients: [{ id: 'a' }] });
        assert.ok(lineFor(error, 'auth.algorithms[0]'));
    });

    test('an empty algorithms list is an error', () => {
        assert.ok(lineFor(rejects({ auth: { mode: 'jwt', secret: SECRET, algorithms: [] }, clients: [{ id: 'a' }] }), 'auth.algorithms'));
    });

    test('jwksUrl must be http(s)', () => {
        for (const url of ['ftp://idp.example/jwks', 'file:///etc/passwd', 'not a url']) {
            assert.ok(lineFor(rejects({ auth: { mode: 'jwt', jwksUrl: url }, clients: [{ id: 'a' }] }), 'auth.jwksUrl'), url);
        }
    });

    test('inline jwks must be a JWKS document with at least one key', () => {
        assert.ok(lineFor(rejects({ auth: { mode: 'jwt', jwks: { keys: [] } }, clients: [{ id: 'a' }] }), 'auth.jwks.keys'));
        assert.ok(lineFor(rejects({ auth: { mode: 'jwt', jwks: { keys: [{ x: 1 }] } }, clients: [{ id: 'a' }] }), 'auth.jwks.keys[0].kty'));
    });

    test('clockToleranceSec is bounded', () => {
        assert.ok(lineFor(rejects({ auth: { mode: 'jwt', secret: SECRET, clockToleranceSec: -1 }, clients: [{ id: 'a' }] }), 'auth.clockToleranceSec'));
        assert.ok(lineFor(rejects({ auth: { mode: 'jwt', secret: SECRET, clockToleranceSec: 601 }, clients: [{ id: 'a' }] }), 'auth.clockToleranceSec'));
    });

    test('an empty clientIdClaim or issuer is an error', () => {
        assert.ok(lineFor(rejects({ auth: { mode: 'jwt', secret: SECRET, clientIdClaim: '' }, clients: [{ id: 'a' }] }), 'auth.clientIdClaim'));
        assert.ok(lineFor(rejects({ auth: { mode: 'jwt', secret: SECRET, issuer: '' }, clients: [{ id: 'a' }] }), 'auth.issuer'));
    });
});

describe('policy config: jwksFile, read by loadConfigFile', () => {
    let dir: string;
    const JWKS = { keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' }] };

    before(async () => {
        dir = await mkdtemp(path.join(tmpdir(), 'policy-config-'));
    });

    after(async () => {
        await rm(dir, { recursive: true, force: true });
    });

    /** Writes gateway.json (and optionally the JWKS file) into a fresh sub-folder and loads it. */
    async function load(name: string, jwksFile: string, contents: string | undefined): Promise<GatewayConfig> {
        const folder = path.join(dir, name);
        await mkdir(path.join(folder, 'keys'), { recursive: true });
        if (contents !== undefined) await writeFile(path.join(folder, jwksFile), contents);
        const file = path.join(folder, 'gateway.json');
        await writeFile(file, JSON.stringify({ auth: { mode: 'jwt', jwksFile }, clients: [{ id: 'a' }], upstreams: UPSTREAMS }));
        return loadConfigFile(file, {});
    }

    async function loadRejects(name: string, jwksFile: string, contents: string | undefined): Promise<ConfigError> {
        try {
            await load(name, jwksFile, contents);
        } catch (error) {
            assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
            return error;
        }
        assert.fail('config was accepted');
    }

    test('a JWKS file next to the config (relative path) becomes the inline jwks', async () => {
        const config = await load('ok', 'keys/jwks.json', JSON.stringify(JWKS));
        assert.equal(config.auth.mode, 'jwt');
        if (config.auth.mode !== 'jwt') return;
        assert.deepEqual(config.auth.jwks, JWKS);
        assert.equal(config.auth.jwksFile, path.join(dir, 'ok', 'keys/jwks.json'));
    });

    test('the path is relative to the config file, not to the working directory', async () => {
        // The working directory of the test run has no keys/jwks.json; only the config's folder does.
        const config = await load('relative', 'keys/jwks.json', JSON.stringify(JWKS));
        assert.ok(config.auth.mode === 'jwt' && config.auth.jwks !== undefined);
        assert.notEqual(path.dirname(path.dirname(config.auth.jwksFile ?? '')), process.cwd());
    });

    test('a missing file is an error on auth.jwksFile', async () => {
        const error = await loadRejects('missing', 'keys/nope.json', undefined);
        assert.match(lineFor(error, 'auth.jwksFile'), /file not found/);
        assert.match(error.message, /gateway\.json/, 'the error names the config file');
    });

    test('a folder instead of a file is an error on auth.jwksFile', async () => {
        const error = await loadRejects('folder', 'keys', undefined);
        assert.match(lineFor(error, 'auth.jwksFile'), /is a folder .*; point it at a JWKS JSON file/);
    });

    test('invalid JSON is an error on auth.jwksFile that does not echo the contents', async () => {
        const error = await loadRejects('invalid', 'keys/jwks.json', '{"keys": [ {"kty": "oct", "k": "c2VjcmV0LWluLWZpbGU"} ');
        assert.match(lineFor(error, 'auth.jwksFile'), /not valid JSON/);
        assert.ok(!error.message.includes('c2VjcmV0LWluLWZpbGU'));
    });

    test('JSON that is not a JWKS document is an error on auth.jwksFile', async () => {
        for (const [index, contents] of ['{}', '[]', 'null', '{"keys": []}', '{"keys": [{"crv": "P-256"}]}', '{"keys": "EC"}', JSON.stringify(JWKS.keys[0])].entries()) {
            const error = await loadRejects(`not-jwks-${index}`, 'keys/jwks.json', contents);
            assert.match(lineFor(error, 'auth.jwksFile'), /not a JWKS document/, contents);
        }
    });

    test('without jwksFile, loadConfigFile touches no key file (secret mode)', async () => {
        const folder = path.join(dir, 'secret');
        await mkdir(folder, { recursive: true });
        const file = path.join(folder, 'gateway.json');
        await writeFile(file, JSON.stringify({ auth: { mode: 'jwt', secret: '${S}' }, clients: [{ id: 'a' }], upstreams: UPSTREAMS }));
        const config = await loadConfigFile(file, { S: SECRET });
        assert.ok(config.auth.mode === 'jwt' && config.auth.secret === SECRET && config.auth.jwks === undefined);
    });
});

describe('ClientDirectory', () => {
    const config = parse(
        {
            auth: { mode: 'apiKey' },
            limits: { maxSessionsPerClient: 7, rateLimit: { requestsPerSecond: 5, burst: 9 } },
            clients: [
                { id: 'team-a', apiKeySha256: hex(KEY_A).toUpperCase(), maxSessions: 2 },
                { id: 'bot', apiKey: '${BOT_KEY}', rateLimit: { burst: 1 } }
            ]
        },
        { BOT_KEY: KEY_B }
    );
    const clients = new ClientDirectory(config);

    test('byApiKey finds the client whose key it is (digest and plain-key clients alike)', () => {
        assert.equal(clients.byApiKey(KEY_A)?.id, 'team-a');
        assert.equal(clients.byApiKey(KEY_B)?.id, 'bot');
    });

    test('byApiKey finds nothing for a wrong, empty, near-miss or case-changed key', () => {
        for (const key of ['', 'wrong', KEY_A.slice(0, -1), `${KEY_A}x`, ` ${KEY_A}`, KEY_A.toUpperCase(), `${KEY_A}\n`, KEY_A + KEY_B]) {
            assert.equal(clients.byApiKey(key), undefined, JSON.stringify(key));
        }
    });

    test('knowing the stored digest does not help: the digest itself is not a key', () => {
        assert.equal(clients.byApiKey(hex(KEY_A)), undefined);
        assert.equal(clients.byApiKey(hex(KEY_A).toUpperCase()), undefined);
    });

    test('no key leads to the anonymous client', () => {
        for (const key of ['anonymous', '', ANONYMOUS_CLIENT_ID]) assert.notEqual(clients.byApiKey(key)?.id, ANONYMOUS_CLIENT_ID);
    });

    test('very long and odd keys are just misses', () => {
        assert.equal(clients.byApiKey('k'.repeat(100_000)), undefined);
        assert.equal(clients.byApiKey('\u0000'.repeat(64)), undefined);
        assert.equal(clients.byApiKey('__proto__'), undefined);
    });

    test('get: configured clients and "anonymous"; nothing for other names, including prototype names', () => {
        assert.equal(clients.get('team-a')?.id, 'team-a');
        assert.equal(clients.get(ANONYMOUS_CLIENT_ID), clients.anonymous);
        for (const id of ['TEAM-A', 'team-a ', '__proto__', 'constructor', 'toString', 'hasOwnProperty', '']) {
            assert.equal(clients.get(id), undefined, id);
        }
    });

    test('limits: per-client overrides merge over the global ones', () => {
        assert.equal(clients.get('team-a')?.maxSessions, 2);
        assert.deepEqual(clients.get('team-a')?.rateLimit, { requestsPerSecond: 5, burst: 9 });
        assert.equal(clients.get('bot')?.maxSessions, 7);
        assert.deepEqual(clients.get('bot')?.rateLimit, { requestsPerSecond: 5, burst: 1 });
        assert.equal(clients.anonymous.maxSessions, 7);
    });

    test('a directory without keyed clients finds nothing for any key', () => {
        const none = new ClientDirectory(parse({}));
        assert.equal(none.byApiKey(''), undefined);
        assert.equal(none.byApiKey(KEY_A), undefined);
        assert.equal(none.anonymous.id, ANONYMOUS_CLIENT_ID);
    });
});
