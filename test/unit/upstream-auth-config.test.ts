/** `auth` of an HTTP upstream: its shapes, defaults, conflicts and secrets. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { configSecrets } from '../../src/config/secrets.js';
import { configError, lineFor } from './config-assert.js';

const SOURCE = 'test config';
const CREDENTIALS = { type: 'clientCredentials', tokenUrl: 'https://auth.example/token', clientId: 'gateway', clientSecret: '${CLIENT_SECRET}' };
const ENV = { CLIENT_SECRET: 'client-secret-0123456789' };

function withAuth(auth: unknown, upstream: Record<string, unknown> = {}) {
    return JSON.stringify({ upstreams: [{ id: 'web', transport: 'streamable-http', url: 'https://mcp.example/mcp', auth, ...upstream }] });
}

const parse = (text: string) => parseConfig(text, SOURCE, ENV);
const rejects = (text: string) => configError(() => parse(text));

describe('upstream auth config', () => {
    test('client credentials: the secret from the environment, basic client authentication by default', () => {
        const upstream = parse(withAuth(CREDENTIALS)).upstreams[0]!;
        assert.ok(upstream.transport !== 'stdio' && upstream.transport !== 'files');
        assert.deepEqual(upstream.auth, { ...CREDENTIALS, clientSecret: ENV.CLIENT_SECRET, clientAuth: 'basic' });
    });

    test('on every HTTP transport; not on stdio', () => {
        for (const transport of ['streamable-http', 'sse', 'http']) assert.ok(parse(withAuth(CREDENTIALS, { transport })));
        const error = rejects(JSON.stringify({ upstreams: [{ id: 'x', transport: 'stdio', command: 'true', auth: { type: 'bearer', token: 'abc' } }] }));
        assert.match(error.message, /auth/);
    });

    test('an Authorization header beside auth is an error naming the header', () => {
        const error = rejects(withAuth({ type: 'bearer', token: 'abc' }, { headers: { authorization: 'Bearer other' } }));
        assert.match(lineFor(error, 'upstreams[0].headers.authorization'), /conflicts with auth \(bearer\).*remove one of them/);
    });

    test('a user and password in the url beside auth is an error', () => {
        const error = rejects(withAuth(CREDENTIALS, { url: 'https://user:pass@mcp.example/mcp' }));
        assert.match(lineFor(error, 'upstreams[0].url'), /conflicts with auth \(clientCredentials\)/);
    });

    test('field checks: a bearer with a space, a scope with quotes, a token URL with credentials, an unknown client auth', () => {
        assert.match(lineFor(rejects(withAuth({ type: 'bearer', token: 'a b' })), 'upstreams[0].auth.token'), /without spaces/);
        assert.match(lineFor(rejects(withAuth({ ...CREDENTIALS, scope: 'read "all"' })), 'upstreams[0].auth.scope'), /scope names/);
        assert.match(lineFor(rejects(withAuth({ ...CREDENTIALS, tokenUrl: 'https://id:secret@auth.example/token' })), 'upstreams[0].auth.tokenUrl'), /clientId and clientSecret/);
        assert.ok(rejects(withAuth({ ...CREDENTIALS, clientAuth: 'jwt' })).message.includes('upstreams[0].auth.clientAuth'));
        assert.ok(rejects(withAuth({ ...CREDENTIALS, resource: true })).message.includes('upstreams[0].auth.resource'));
    });

    test('tokenUrl: https://, or http:// to a loopback host only, since the client secret is sent there', () => {
        for (const tokenUrl of [
            'https://auth.example/token',
            'http://127.0.0.1:9000/token',
            'http://localhost/token',
            'http://[::1]:9000/token',
            'https://auth.example/token?p=b2c_policy'
        ]) {
            const upstream = parse(withAuth({ ...CREDENTIALS, tokenUrl })).upstreams[0]!;
            assert.ok(upstream.transport !== 'stdio' && upstream.transport !== 'files' && upstream.auth?.type === 'clientCredentials');
            assert.equal(upstream.auth.tokenUrl, tokenUrl);
        }
        for (const tokenUrl of ['http://auth.example/token', 'http://10.0.0.5/token', 'http://127.0.0.1.example/token']) {
            assert.match(
                lineFor(rejects(withAuth({ ...CREDENTIALS, tokenUrl })), 'upstreams[0].auth.tokenUrl'),
                /must use https:\/\/ \(http:\/\/ only on a loopback host/,
                tokenUrl
            );
        }
        assert.match(lineFor(rejects(withAuth({ ...CREDENTIALS, tokenUrl: 'https://auth.example/token#x' })), 'upstreams[0].auth.tokenUrl'), /fragment/);
        assert.match(lineFor(rejects(withAuth({ ...CREDENTIALS, tokenUrl: 'ftp://auth.example/token' })), 'upstreams[0].auth.tokenUrl'), /https:\/\/ URL/);
    });

    test('resource: a URL, false, or left out', () => {
        for (const resource of ['https://mcp.example/mcp', false]) {
            const upstream = parse(withAuth({ ...CREDENTIALS, resource })).upstreams[0]!;
            assert.ok(upstream.transport !== 'stdio' && upstream.transport !== 'files' && upstream.auth?.type === 'clientCredentials');
            assert.equal(upstream.auth.resource, resource);
        }
    });

    test('the client secret, as sent in the form and in Basic, and a bearer token are in the redaction list', () => {
        const config = parse(
            JSON.stringify({
                upstreams: [
                    { id: 'a', transport: 'http', url: 'https://a.example/mcp', auth: { ...CREDENTIALS, clientSecret: 'secret with spaces&=' } },
                    { id: 'b', transport: 'sse', url: 'https://b.example/sse', auth: { type: 'bearer', token: 'static-bearer-token-0123' } }
                ]
            })
        );
        const secrets = configSecrets(config);
        const basic = Buffer.from('gateway:secret+with+spaces%26%3D').toString('base64');
        for (const expected of ['secret with spaces&=', 'secret+with+spaces%26%3D', basic, `Basic ${basic}`, 'static-bearer-token-0123']) {
            assert.ok(secrets.includes(expected), expected);
        }
    });
});
