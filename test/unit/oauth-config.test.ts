/** The OAuth fields of auth (mode jwt): what is accepted, defaults, and errors that name the field and the fix. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { missingResource } from '../../src/config/oauth-schema.js';
import { parseConfig } from '../../src/config/load.js';
import type { GatewayConfig } from '../../src/config/schema.js';
import { configError, lineFor } from './config-assert.js';

const UPSTREAMS = [{ id: 'u', transport: 'stdio', command: 'node' }];
const AS = 'https://auth.example.com/realms/mcp';
const CURSOR_SECRET = 'a-cursor-secret-of-some-length';

function parse(auth: Record<string, unknown>, extra: Record<string, unknown> = {}): GatewayConfig {
    return parseConfig(JSON.stringify({ auth: { mode: 'jwt', jwksUrl: `${AS}/certs`, ...auth }, clients: [{ id: 'a' }], upstreams: UPSTREAMS, ...extra }), 'oauth.test.json', {});
}

const rejects = (auth: Record<string, unknown>, extra: Record<string, unknown> = {}) => configError(() => parse(auth, extra));

function jwtAuth(config: GatewayConfig): Extract<GatewayConfig['auth'], { mode: 'jwt' }> {
    if (config.auth.mode !== 'jwt') assert.fail(`auth.mode is ${config.auth.mode}`);
    return config.auth;
}

describe('oauth config: resource', () => {
    test("on loopback the resource may be left out (the listener's URL is the default); the fields keep their spelling", () => {
        const auth = jwtAuth(parse({ authorizationServers: [AS], scopesSupported: ['prompts:read'], resourceName: 'Prompts' }));
        assert.equal(auth.resource, undefined);
        assert.deepEqual(auth.authorizationServers, [AS]);
        assert.deepEqual(auth.requiredScopes, []);
    });

    test('off loopback, authorizationServers need the resource: the error names auth.resource and shows a URL', () => {
        const error = rejects({ authorizationServers: [AS] }, { listen: { host: '0.0.0.0', path: '/prompts' }, cursorSecret: CURSOR_SECRET });
        assert.match(lineFor(error, 'auth.resource'), /is required with authorizationServers when listen.host \(0\.0\.0\.0\).*"https:\/\/gw\.example\.com\/prompts"/);
        const ok = parse(
            { authorizationServers: [AS], resource: 'https://gw.example.com/prompts' },
            { listen: { host: '0.0.0.0', path: '/prompts' }, cursorSecret: CURSOR_SECRET }
        );
        assert.equal(jwtAuth(ok).resource, 'https://gw.example.com/prompts');
    });

    test('behind a proxy (listen.trustProxy) even on loopback the resource is required: clients would be told a loopback URL', () => {
        const error = rejects({ authorizationServers: [AS] }, { listen: { trustProxy: ['loopback'] } });
        assert.match(lineFor(error, 'auth.resource'), /is required with authorizationServers when listen.trustProxy is set.*"https:\/\/gw\.example\.com\/mcp"/);
        const ok = parse({ authorizationServers: [AS], resource: 'https://gw.example.com/mcp' }, { listen: { trustProxy: ['loopback'] } });
        assert.equal(jwtAuth(ok).resource, 'https://gw.example.com/mcp');
        assert.equal(jwtAuth(parse({}, { listen: { trustProxy: ['loopback'] } })).resource, undefined, 'without authorizationServers nothing is defaulted');
    });

    test('off loopback without authorizationServers the jwt mode of before needs no resource', () => {
        assert.equal(jwtAuth(parse({}, { listen: { host: '0.0.0.0' }, cursorSecret: CURSOR_SECRET })).resource, undefined);
    });

    test('--host moving a config off loopback is checked too (missingResource)', () => {
        const config = parse({ authorizationServers: [AS] });
        assert.equal(missingResource(config), undefined);
        assert.match(missingResource({ ...config, listen: { ...config.listen, host: '10.0.0.5' } }) ?? '', /is required with authorizationServers/);
    });

    test('a resource with a fragment, a query, credentials, or plain http off loopback is refused', () => {
        for (const [resource, why] of [
            ['https://gw.example.com/mcp#x', /fragment/],
            ['https://gw.example.com/mcp?tenant=1', /query/],
            ['https://user:pw@gw.example.com/mcp', /user or password/],
            ['http://gw.example.com/mcp', /must use https:\/\//],
            ['gw.example.com/mcp', /absolute https:\/\/ URL/]
        ] as const) {
            assert.match(lineFor(rejects({ resource }), 'auth.resource'), why, resource);
        }
        assert.equal(jwtAuth(parse({ resource: 'http://127.0.0.1:8080/mcp' })).resource, 'http://127.0.0.1:8080/mcp');
    });
});

describe('oauth config: authorization servers and scopes', () => {
    test('authorization servers must be https (http only on loopback), and there must be one if the field is there', () => {
        assert.match(lineFor(rejects({ authorizationServers: ['http://auth.example.com'] }), 'auth.authorizationServers[0]'), /must use https/);
        assert.match(lineFor(rejects({ authorizationServers: [] }), 'auth.authorizationServers'), /add at least one issuer URL/);
        assert.deepEqual(jwtAuth(parse({ authorizationServers: ['http://127.0.0.1:9000'] })).authorizationServers, ['http://127.0.0.1:9000']);
    });

    test('scopes are single RFC 6749 tokens, listed once, never offline_access', () => {
        assert.match(lineFor(rejects({ requiredScopes: ['prompts read'] }), 'auth.requiredScopes[0]'), /one scope token/);
        assert.match(lineFor(rejects({ scopesSupported: ['say"hi"'] }), 'auth.scopesSupported[0]'), /one scope token/);
        assert.match(lineFor(rejects({ requiredScopes: ['offline_access'] }), 'auth.requiredScopes[0]'), /refresh tokens/);
        assert.match(lineFor(rejects({ requiredScopes: ['a', 'a'] }), 'auth.requiredScopes'), /twice/);
        assert.deepEqual(jwtAuth(parse({ requiredScopes: ['prompts:read', 'api://gw/.default'] })).requiredScopes, ['prompts:read', 'api://gw/.default']);
    });

    test("a client's requiredScopes apply in jwt mode only", () => {
        const document = { auth: { mode: 'apiKey' }, clients: [{ id: 'a', apiKey: 'key-of-a-0123456789abcdef', requiredScopes: ['x'] }], upstreams: UPSTREAMS };
        const error = configError(() => parseConfig(JSON.stringify(document), 'oauth.test.json', {}));
        assert.match(lineFor(error, 'clients[0].requiredScopes'), /only with auth.mode "jwt"/);
        assert.deepEqual(parse({}, { clients: [{ id: 'a', requiredScopes: ['x'] }] }).clients[0]?.requiredScopes, ['x']);
    });
});
