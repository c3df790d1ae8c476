/**
 * The resource server's decisions alone: the canonical resource and its
 * metadata URL, audience and scope checks, the challenges, and what the JWT
 * authenticator reads of a token's "aud", "scope" and "scp" claims.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { parseConfig } from '../../src/config/load.js';
import { createAuthenticator, type TokenGrant } from '../../src/policy/authenticator.js';
import { ClientDirectory, type ClientProfile } from '../../src/policy/clients.js';
import { bearerChallenge, listenerResource, ResourceServer, resourceServerSettings, type ResourceServerSettings } from '../../src/policy/resource-server.js';

const AS = 'https://auth.example.com';
const SECRET = 'a-hmac-secret-of-at-least-32-characters!';
const CLIENT = { id: 'a', requiredScopes: [] } as unknown as ClientProfile;

function settings(extra: Partial<ResourceServerSettings> = {}): ResourceServerSettings {
    return {
        resource: undefined,
        authorizationServers: [AS],
        bindsAudience: true,
        metadataWithheld: undefined,
        scopesSupported: undefined,
        requiredScopes: [],
        resourceName: undefined,
        resourceDocumentation: undefined,
        ...extra
    };
}

const grant = (audiences: string[], scopes: string[] = []): TokenGrant => ({ audiences, scopes: new Set(scopes) });

describe('resource server: resource and metadata URL', () => {
    test("the default resource is the listener's URL; a configured one wins; the metadata URL inserts the well-known path", () => {
        const defaulted = new ResourceServer(settings(), listenerResource('127.0.0.1', 8080, '/mcp'));
        assert.equal(defaulted.resource, 'http://127.0.0.1:8080/mcp');
        assert.equal(defaulted.metadataUrl, 'http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp');
        const configured = new ResourceServer(settings({ resource: 'https://gw.example.com/team/mcp' }), 'http://127.0.0.1:8080/mcp');
        assert.equal(configured.metadataUrl, 'https://gw.example.com/.well-known/oauth-protected-resource/team/mcp');
        const atRoot = new ResourceServer(settings({ resource: 'https://gw.example.com' }), 'http://127.0.0.1:8080/mcp');
        assert.equal(atRoot.metadataUrl, 'https://gw.example.com/.well-known/oauth-protected-resource');
    });

    test('IPv6 and root paths make valid default URLs', () => {
        assert.equal(listenerResource('::1', 9000, '/mcp'), 'http://[::1]:9000/mcp');
        assert.equal(listenerResource('localhost', 9000, '/'), 'http://localhost:9000');
    });

    test('without authorization servers there is no document; without them and a resource, no audience binding', () => {
        const plain = new ResourceServer(settings({ authorizationServers: [] }), 'http://127.0.0.1:8080/mcp');
        assert.equal(plain.resource, undefined);
        assert.equal(plain.metadata, undefined);
        assert.equal(plain.refusal(grant(['anything']), CLIENT), undefined);
        const bound = new ResourceServer(settings({ authorizationServers: [], resource: 'https://gw.example.com/mcp' }), 'http://127.0.0.1:8080/mcp');
        assert.equal(bound.metadata, undefined);
        assert.deepEqual(bound.refusal(grant(['https://other.example.com/mcp']), CLIENT), { failure: 'wrong_audience' });
    });

    test('the document lists what is configured, scopes_supported defaulting to requiredScopes', () => {
        const server = new ResourceServer(settings({ requiredScopes: ['read'], resourceName: 'Gateway' }), 'http://127.0.0.1:8080/mcp');
        assert.deepEqual(JSON.parse(server.metadata!.body), {
            resource: 'http://127.0.0.1:8080/mcp',
            authorization_servers: [AS],
            scopes_supported: ['read'],
            bearer_methods_supported: ['header'],
            resource_name: 'Gateway'
        });
        assert.match(server.metadata!.etag, /^"[A-Za-z0-9_-]+"$/);
    });
});

describe("resource server: a loopback listener's default resource by any loopback name", () => {
    const server = new ResourceServer(settings({ requiredScopes: ['read'] }), listenerResource('127.0.0.1', 8080, '/mcp'));

    test("the Host header's loopback name spells the resource; port and path stay; other names and none give the bound address", () => {
        const spelled = (host: string | undefined) => server.at(host)?.resource;
        assert.equal(spelled('localhost:8080'), 'http://localhost:8080/mcp');
        assert.equal(spelled('LocalHost'), 'http://localhost:8080/mcp');
        assert.equal(spelled('[::1]:8080'), 'http://[::1]:8080/mcp');
        assert.equal(spelled('127.0.0.2:8080'), 'http://127.0.0.2:8080/mcp');
        assert.equal(spelled('localhost:9999'), 'http://localhost:8080/mcp');
        for (const host of [undefined, '127.0.0.1:8080', 'gw.example.com', 'localhost.evil.example', 'evil.example/x@localhost', '']) {
            assert.equal(spelled(host), 'http://127.0.0.1:8080/mcp', String(host));
        }
        const view = server.at('localhost:8080');
        assert.equal(view?.metadataUrl, 'http://localhost:8080/.well-known/oauth-protected-resource/mcp');
        assert.equal((JSON.parse(view.metadata!.body) as { resource: string }).resource, 'http://localhost:8080/mcp');
        assert.notEqual(view?.metadata?.etag, server.metadata?.etag);
        assert.match(server.challenge('missing', 'localhost:8080'), /resource_metadata="http:\/\/localhost:8080\/\.well-known\/oauth-protected-resource\/mcp"/);
        assert.match(server.insufficientScope(['read'], '[::1]:8080'), /resource_metadata="http:\/\/\[::1\]:8080\/\.well-known\/oauth-protected-resource\/mcp"/);
        const atRoot = new ResourceServer(settings(), listenerResource('127.0.0.1', 8080, '/'));
        assert.equal(atRoot.at('localhost:8080')?.resource, 'http://localhost:8080');
    });

    test('"aud" may name the resource by any loopback name, with the same scheme, port and path', () => {
        for (const aud of ['http://127.0.0.1:8080/mcp', 'http://localhost:8080/mcp', 'http://LOCALHOST:8080/mcp/', 'http://[::1]:8080/mcp', 'http://127.0.0.9:8080/mcp#x']) {
            assert.equal(server.refusal(grant([aud], ['read']), CLIENT), undefined, aud);
        }
        for (const aud of [
            'http://localhost:8081/mcp',
            'http://localhost:8080/mcp2',
            'https://localhost:8080/mcp',
            'http://gw.example.com:8080/mcp',
            'http://localhost.evil.example:8080/mcp',
            'localhost:8080/mcp'
        ]) {
            assert.deepEqual(server.refusal(grant([aud], ['read']), CLIENT), { failure: 'wrong_audience' }, aud);
        }
    });

    test('a configured resource, loopback or not, is exact and never follows Host', () => {
        const configured = new ResourceServer(settings({ resource: 'http://127.0.0.1:8080/mcp' }), listenerResource('127.0.0.1', 8080, '/mcp'));
        assert.equal(configured.at('localhost:8080')?.resource, 'http://127.0.0.1:8080/mcp');
        assert.equal(configured.forThisResource(grant(['http://localhost:8080/mcp'])), false);
        assert.equal(configured.forThisResource(grant(['http://127.0.0.1:8080/mcp'])), true);
    });
});

describe('resource server: audience and scopes', () => {
    const server = new ResourceServer(settings({ resource: 'https://gw.example.com/mcp', requiredScopes: ['read'] }), 'http://127.0.0.1:8080/mcp');

    test('"aud" must contain the resource: case of scheme and host, a fragment and one trailing slash do not matter', () => {
        for (const aud of ['https://gw.example.com/mcp', 'HTTPS://GW.example.com/mcp', 'https://gw.example.com/mcp/', 'https://gw.example.com/mcp#x']) {
            assert.equal(server.refusal(grant(['account', aud], ['read']), CLIENT), undefined, aud);
        }
        for (const aud of [[], ['https://gw.example.com/mcp2'], ['https://gw.example.com'], ['gw.example.com/mcp'], ['https://evil.example/mcp']]) {
            assert.deepEqual(server.refusal(grant(aud, ['read']), CLIENT), { failure: 'wrong_audience' }, JSON.stringify(aud));
        }
    });

    test("missing scopes are named; a client's own required scopes add to the gateway's", () => {
        assert.deepEqual(server.refusal(grant(['https://gw.example.com/mcp']), CLIENT), { failure: 'insufficient_scope', required: ['read'], missing: ['read'] });
        const admin = { ...CLIENT, requiredScopes: ['admin', 'read'] };
        assert.deepEqual(server.refusal(grant(['https://gw.example.com/mcp'], ['read']), admin), {
            failure: 'insufficient_scope',
            required: ['read', 'admin'],
            missing: ['admin']
        });
    });

    test('challenges: 401 with scope and resource_metadata, 403 insufficient_scope, and the plain one without OAuth', () => {
        const metadata = 'resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp"';
        assert.equal(server.challenge('missing'), `Bearer realm="mcp-prompt-gateway", scope="read", ${metadata}`);
        assert.equal(server.challenge('invalid_token'), `Bearer realm="mcp-prompt-gateway", error="invalid_token", scope="read", ${metadata}`);
        assert.equal(server.insufficientScope(['read', 'admin']), `Bearer realm="mcp-prompt-gateway", error="insufficient_scope", scope="read admin", ${metadata}`);
        assert.equal(bearerChallenge(), 'Bearer realm="mcp-prompt-gateway"');
    });
});

describe('resource server: what the authenticator reads of a token', () => {
    const config = parseConfig(
        JSON.stringify({
            auth: { mode: 'jwt', secret: SECRET, authorizationServers: [AS] },
            clients: [{ id: 'a' }],
            upstreams: [{ id: 'u', transport: 'stdio', command: 'node' }]
        }),
        'test.json',
        {}
    );
    const authenticator = createAuthenticator(config.auth, new ClientDirectory(config));
    const sign = (claims: Record<string, unknown>, issuer = AS) =>
        new SignJWT({ sub: 'a', ...claims }).setProtectedHeader({ alg: 'HS256' }).setIssuer(issuer).setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
    const outcome = async (token: string) => authenticator.authenticate({ authorization: `Bearer ${token}` });

    test('"scope" (space separated) and "scp" (array or string) together; "aud" as a string or an array', async () => {
        const first = await outcome(await sign({ aud: 'https://gw.example.com/mcp', scope: 'read  write', scp: ['admin'] }));
        assert.ok(first.ok);
        assert.deepEqual(first.grant?.audiences, ['https://gw.example.com/mcp']);
        assert.deepEqual([...(first.grant?.scopes ?? [])].sort(), ['admin', 'read', 'write']);
        const second = await outcome(await sign({ aud: ['x', 7, 'y'], scp: 'User.Read Mail.Read' }));
        assert.ok(second.ok);
        assert.deepEqual(second.grant?.audiences, ['x', 'y']);
        assert.deepEqual([...(second.grant?.scopes ?? [])].sort(), ['Mail.Read', 'User.Read']);
    });

    test("a sound token naming no configured client is its own failure, with the claim's name and the grant", async () => {
        for (const claims of [{ sub: 'z' }, { sub: undefined }, { sub: 'anonymous' }]) {
            const refused = await outcome(await sign({ ...claims, aud: 'https://gw.example.com/mcp' }));
            assert.ok(!refused.ok && refused.failure === 'unknown_client', JSON.stringify(refused));
            assert.equal(refused.claim, 'sub');
            assert.deepEqual(refused.grant.audiences, ['https://gw.example.com/mcp']);
        }
    });

    test('"iss" must be one of authorizationServers when issuer is not set', async () => {
        assert.deepEqual(await outcome(await sign({}, 'https://elsewhere.example.com')), { ok: false, failure: 'invalid' });
        assert.ok((await outcome(await sign({}))).ok);
    });

    test('outside jwt mode there are no resource-server settings', () => {
        assert.equal(resourceServerSettings({ mode: 'apiKey' }, LOOPBACK), undefined);
        assert.ok(resourceServerSettings(config.auth, LOOPBACK) !== undefined);
    });
});

const LOOPBACK = { host: '127.0.0.1', trustProxy: undefined };

describe('resource server: the issuer is the authorization server unless authorizationServers says otherwise', () => {
    const jwt = (extra: Record<string, unknown>) =>
        parseConfig(
            JSON.stringify({ auth: { mode: 'jwt', secret: SECRET, ...extra }, clients: [{ id: 'a' }], upstreams: [{ id: 'x', transport: 'stdio', command: 'true' }] }),
            'test config',
            {}
        ).auth;

    test('issuer alone: the document names it, the challenge points at it, tokens stay unbound to the resource', () => {
        const settings = resourceServerSettings(jwt({ issuer: AS }), LOOPBACK)!;
        assert.deepEqual(settings.authorizationServers, [AS]);
        const server = new ResourceServer(settings, listenerResource('127.0.0.1', 8080, '/mcp'));
        assert.deepEqual((JSON.parse(server.metadata!.body) as { authorization_servers: string[] }).authorization_servers, [AS]);
        assert.match(server.challenge('missing'), /resource_metadata="http:\/\/127\.0\.0\.1:8080\/\.well-known\/oauth-protected-resource\/mcp"/);
        assert.equal(server.refusal(grant(['https://other.example.com/mcp']), CLIENT), undefined, 'as before: "aud" is checked against audience only');
    });

    test('authorizationServers wins over issuer; a configured resource binds tokens with either', () => {
        assert.deepEqual(resourceServerSettings(jwt({ issuer: AS, authorizationServers: ['https://login.example.com'] }), LOOPBACK)!.authorizationServers, [
            'https://login.example.com'
        ]);
        const bound = new ResourceServer(resourceServerSettings(jwt({ issuer: AS, resource: 'https://gw.example.com/mcp' }), LOOPBACK)!, 'http://127.0.0.1:8080/mcp');
        assert.deepEqual(bound.refusal(grant(['https://other.example.com/mcp']), CLIENT), { failure: 'wrong_audience' });
        assert.equal(bound.metadataUrl, 'https://gw.example.com/.well-known/oauth-protected-resource/mcp');
    });

    test('an issuer that is no secure URL names no authorization server; off loopback without a resource there is no URL to name, and it says why', () => {
        for (const issuer of ['my-issuer', 'http://auth.example.com', 'https://auth.example.com/?realm=x']) {
            const settings = resourceServerSettings(jwt({ issuer }), LOOPBACK)!;
            assert.deepEqual(settings.authorizationServers, [], issuer);
            assert.equal(settings.metadataWithheld, undefined, issuer);
        }
        for (const listen of [
            { host: '0.0.0.0', trustProxy: undefined },
            { host: '127.0.0.1', trustProxy: ['127.0.0.1'] }
        ]) {
            const settings = resourceServerSettings(jwt({ issuer: AS }), listen)!;
            assert.deepEqual(settings.authorizationServers, [], JSON.stringify(listen));
            assert.match(settings.metadataWithheld ?? '', /reach the MCP endpoint.* as auth\.resource$/, JSON.stringify(listen));
            assert.equal(new ResourceServer(settings, 'http://0.0.0.0:8080/mcp').metadata, undefined);
        }
        assert.deepEqual(resourceServerSettings(jwt({ issuer: AS, resource: 'https://gw.example.com/mcp' }), { host: '0.0.0.0', trustProxy: undefined })!.authorizationServers, [
            AS
        ]);
    });
});
