/**
 * Authentication over real HTTP (127.0.0.1, port 0): API keys and JWTs (HS256
 * secret, JWKS file, JWKS URL). Every refused request is answered 401 with a
 * Bearer challenge before any MCP processing (403 for a sound JWT whose client
 * is not configured: a new token would not help), and the fixture upstream's request
 * counters prove that nothing reached it, even for requests that carry
 * well-formed initialize, prompts/list, prompts/get and completion/complete bodies.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request, type IncomingHttpHeaders, type OutgoingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type GenerateKeyPairResult, type JWK, type JWTPayload } from 'jose';
import { pino } from 'pino';
import { loadConfigFile, parseConfig } from '../src/config/load.js';
import { sha256 } from '../src/config/policy-schema.js';
import { startGateway, type RunningGateway } from '../src/gateway.js';
import { capturingLogger, connectHttp, fixtureStats, freePort, startTestGateway, stdioFixture } from './helpers.js';
import { initializeBody, JSON_AND_SSE, openRawSession, parseSse, sessionHeaders } from './raw-http.js';

const CHALLENGE = 'Bearer realm="mcp-prompt-gateway"';
const CHALLENGE_INVALID = 'Bearer realm="mcp-prompt-gateway", error="invalid_token"';
const PROTOCOL = '2025-06-18';

// ---------------------------------------------------------------- raw HTTP

interface Reply {
    status: number;
    headers: IncomingHttpHeaders;
    text: string;
    /** The JSON body, or the first `data:` of an SSE body. */
    message: Record<string, unknown> | undefined;
}

/** Header values; an array sends the header once per value (fetch would join them). */
type RequestHeaders = Record<string, string | string[]>;

interface SendOptions {
    method?: 'POST' | 'GET' | 'DELETE';
    headers?: RequestHeaders;
    /** Serialised as JSON unless already a string. */
    body?: unknown;
}

/** One HTTP request on its own connection, with exactly the headers given (plus content-type and accept). */
function send(url: string, { method = 'POST', headers = {}, body }: SendOptions = {}): Promise<Reply> {
    const target = new URL(url);
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
        const req = request(
            { host: target.hostname, port: target.port, path: target.pathname, method, agent: false, headers: { ...JSON_AND_SSE, ...headers } as OutgoingHttpHeaders },
            res => {
                const status = res.statusCode ?? 0;
                // A standalone GET stream that was let through never ends: take its head and hang up.
                if (status === 200 && method === 'GET') {
                    res.destroy();
                    return resolve({ status, headers: res.headers, text: '', message: undefined });
                }
                let text = '';
                res.setEncoding('utf8');
                res.on('data', (chunk: string) => (text += chunk));
                res.on('end', () => resolve({ status, headers: res.headers, text, message: parseMessage(text) }));
                res.on('error', reject);
            }
        );
        req.on('error', reject);
        req.end(payload);
    });
}

function parseMessage(text: string): Record<string, unknown> | undefined {
    const trimmed = text.trim();
    const json = trimmed.startsWith('{') ? trimmed : parseSse(text)[0];
    if (json === undefined) return undefined;
    try {
        return JSON.parse(json) as Record<string, unknown>;
    } catch {
        return undefined;
    }
}

const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };
const LIST = { jsonrpc: '2.0', id: 2, method: 'prompts/list', params: {} };
const GET_PROMPT = { jsonrpc: '2.0', id: 3, method: 'prompts/get', params: { name: 'up__prompt-000', arguments: { note: 'x' } } };
const COMPLETE = {
    jsonrpc: '2.0',
    id: 4,
    method: 'completion/complete',
    params: { ref: { type: 'ref/prompt', name: 'up__with-required' }, argument: { name: 'topic', value: 'm' } }
};

/** prompts/list by hand on a session; the names listed. */
async function rawList(url: string, credentials: RequestHeaders, sessionId: string): Promise<string[]> {
    const reply = await send(url, { headers: { ...credentials, ...sessionHeaders(sessionId, PROTOCOL) }, body: LIST });
    assert.equal(reply.status, 200, reply.text);
    const result = reply.message?.['result'] as { prompts: { name: string }[] } | undefined;
    assert.ok(result !== undefined, `no result in ${reply.text}`);
    return result.prompts.map(prompt => prompt.name);
}

/**
 * Every kind of request a caller could make with these credentials, on a real
 * session of another client where a session is needed: initialize, the three
 * prompt methods, a notification, a batch, the GET stream, DELETE, and a body
 * that is not even JSON.
 */
async function attack(url: string, credentials: RequestHeaders, sessionId: string): Promise<Reply[]> {
    const onSession = { ...credentials, ...sessionHeaders(sessionId, PROTOCOL) };
    const replies: Reply[] = [];
    replies.push(await send(url, { headers: credentials, body: initializeBody(PROTOCOL) }));
    for (const body of [LIST, GET_PROMPT, COMPLETE, INITIALIZED, [LIST, GET_PROMPT, COMPLETE]]) {
        replies.push(await send(url, { headers: onSession, body }));
    }
    replies.push(await send(url, { headers: credentials, body: LIST }));
    replies.push(await send(url, { method: 'GET', headers: onSession }));
    replies.push(await send(url, { method: 'DELETE', headers: onSession }));
    replies.push(await send(url, { headers: credentials, body: '{"jsonrpc": "2.0", "method": ' }));
    return replies;
}

/**
 * 401 with the right challenge and a JSON-RPC error body; no session, no result. 'unknown_client' (a verified JWT whose
 * client claim names no configured client) is 403 naming the claim instead.
 */
function assertRefused(replies: Reply[], failure: 'missing' | 'invalid' | 'unknown_client', label: string, claim = 'sub', metadata?: string): void {
    const challenge = (failure === 'invalid' ? CHALLENGE_INVALID : CHALLENGE) + (metadata === undefined ? '' : `, resource_metadata="${metadata}"`);
    assert.ok(replies.length > 0);
    for (const [index, reply] of replies.entries()) {
        const where = `${label}, request #${index}: ${reply.status} ${reply.text}`;
        assert.equal(reply.status, failure === 'unknown_client' ? 403 : 401, where);
        assert.equal(reply.headers['www-authenticate'], challenge, where);
        assert.equal(reply.headers['mcp-session-id'], undefined, where);
        assert.equal(reply.message?.['jsonrpc'], '2.0', where);
        assert.equal(reply.message?.['id'], null, where);
        assert.equal(reply.message?.['result'], undefined, where);
        const error = reply.message?.['error'] as { code?: unknown; message?: unknown } | undefined;
        assert.equal(typeof error?.code, 'number', where);
        const expected = failure === 'unknown_client' ? `Forbidden: the token's client (its "${claim}" claim) is not configured on this gateway` : /^Unauthorized/;
        if (typeof expected === 'string') assert.equal(error?.message, expected, where);
        else assert.match(String(error?.message), expected, where);
    }
}

type Counters = Awaited<ReturnType<typeof fixtureStats>>['requests'];

/** What the upstream fixture has received so far (reading it is not counted). */
async function upstreamRequests(stats: Client): Promise<Counters> {
    return (await fixtureStats(stats, 'up__stats')).requests;
}

/** Runs `attempts` and asserts the upstream received nothing meanwhile. */
async function nothingReachesUpstream(stats: Client, attempts: () => Promise<void>): Promise<void> {
    const before = await upstreamRequests(stats);
    await attempts();
    assert.deepEqual(await upstreamRequests(stats), before, 'the upstream received requests from refused callers');
}

async function listNames(client: Client): Promise<string[]> {
    return (await client.listPrompts()).prompts.map(prompt => prompt.name);
}

/** Connects with the SDK client, lists, closes: the credentials work end to end. */
async function listWith(url: string, headers: Record<string, string>): Promise<string[]> {
    const client = await connectHttp(url, { headers });
    try {
        return await listNames(client);
    } finally {
        await client.close();
    }
}

const ALL_PROMPTS = ['up__prompt-000', 'up__prompt-001', 'up__prompt-002', 'up__with-required', 'up__stats'];

function assertSeesEverything(names: string[]): void {
    for (const name of ALL_PROMPTS) assert.ok(names.includes(name), `${name} missing from ${names.join(', ')}`);
}

const secret = (prefix: string) => `${prefix}-${randomBytes(24).toString('hex')}`;

// ---------------------------------------------------------------- API keys

describe('auth over HTTP: apiKey mode', () => {
    const KEY_A = secret('team-a');
    const KEY_BOT = secret('ci-bot');
    const KEY_C = secret('team-c');
    const WRONG = secret('wrong');
    let gateway: RunningGateway;
    let url: string;
    let log: ReturnType<typeof capturingLogger>;
    let stats: Client;
    let sessionA: string;
    const asA = { authorization: `Bearer ${KEY_A}` };

    before(async () => {
        log = capturingLogger();
        const config = parseConfig(
            JSON.stringify({
                listen: { port: 0 },
                auth: { mode: 'apiKey' },
                limits: { maxBodyBytes: 4096 },
                clients: [
                    { id: 'team-a', apiKeySha256: sha256(KEY_A) },
                    { id: 'ci-bot', apiKey: '${CI_BOT_KEY}', prompts: { allow: ['up__prompt-00*'] } },
                    { id: 'team-c', apiKeySha256: sha256(KEY_C).toUpperCase() }
                ],
                upstreams: [stdioFixture('up')]
            }),
            'auth.test.json',
            { CI_BOT_KEY: KEY_BOT }
        );
        gateway = await startGateway(config, { logger: log.logger });
        url = gateway.url!;
        stats = await connectHttp(url, { headers: asA });
        sessionA = (await openRawSession(url, PROTOCOL, asA)).id;
    });

    after(async () => {
        await stats?.close();
        await gateway?.close();
    });

    test('the right key works as Bearer (any case of the scheme) and as X-API-Key', async () => {
        assertSeesEverything(await listWith(url, { authorization: `Bearer ${KEY_A}` }));
        assertSeesEverything(await listWith(url, { authorization: `bearer ${KEY_A}` }));
        assertSeesEverything(await listWith(url, { 'x-api-key': KEY_A }));
        assertSeesEverything(await listWith(url, { authorization: `Bearer ${KEY_A}`, 'x-api-key': KEY_A }));
        assertSeesEverything(await rawList(url, asA, sessionA));
    });

    test('a key configured as upper-case hex digest works', async () => {
        assertSeesEverything(await listWith(url, { 'x-api-key': KEY_C }));
    });

    test("a plain apiKey taken from an env var works, with that client's own policy", async () => {
        const names = await listWith(url, { authorization: `Bearer ${KEY_BOT}` });
        assert.deepEqual(names.sort(), ['up__prompt-000', 'up__prompt-001', 'up__prompt-002', 'up__prompt-003', 'up__prompt-004']);
    });

    test('the upstream counters do move for an authenticated caller, so the checks below can fail', async () => {
        const before = await upstreamRequests(stats);
        for (const body of [GET_PROMPT, COMPLETE]) {
            const reply = await send(url, { headers: { ...asA, ...sessionHeaders(sessionA, PROTOCOL) }, body });
            assert.equal(reply.status, 200, reply.text);
            assert.ok(reply.message?.['result'] !== undefined, reply.text);
        }
        const after = await upstreamRequests(stats);
        assert.equal(after.get, before.get + 1);
        assert.equal(after.complete, before.complete + 1);
    });

    test('no credentials: 401 with a bare Bearer challenge, for every kind of request; nothing reaches the upstream', async () => {
        await nothingReachesUpstream(stats, async () => {
            assertRefused(await attack(url, {}, sessionA), 'missing', 'no credentials');
        });
    });

    test('wrong schemes and malformed Authorization headers: 401 invalid_token', async () => {
        const shapes: RequestHeaders[] = [
            { authorization: `Basic ${Buffer.from(`team-a:${KEY_A}`).toString('base64')}` },
            { authorization: `Basic ${KEY_A}` },
            { authorization: `Token ${KEY_A}` },
            { authorization: KEY_A },
            { authorization: 'Bearer' },
            { authorization: 'Bearer ' },
            { authorization: `Bearer ${KEY_A} ${KEY_A}` },
            { authorization: `Bearer a b` },
            { authorization: `Bearer${KEY_A}` },
            { authorization: `Bearer\t${KEY_A}` },
            { authorization: '' }
        ];
        await nothingReachesUpstream(stats, async () => {
            for (const headers of shapes) assertRefused(await attack(url, headers, sessionA), 'invalid', JSON.stringify(headers));
        });
    });

    test('wrong keys: 401 invalid_token, including the stored digest and near misses of the real key', async () => {
        const keys = [WRONG, sha256(KEY_A), sha256(KEY_A).toUpperCase(), KEY_A.toUpperCase(), KEY_A.slice(0, -1), `${KEY_A}0`, `${KEY_A}${KEY_BOT}`, 'anonymous', '__proto__'];
        await nothingReachesUpstream(stats, async () => {
            for (const key of keys) {
                assertRefused(await attack(url, { authorization: `Bearer ${key}` }, sessionA), 'invalid', `Bearer ${key}`);
                assertRefused(await attack(url, { 'x-api-key': key }, sessionA), 'invalid', `X-API-Key ${key}`);
            }
        });
    });

    test('an empty or blank X-API-Key: 401 invalid_token', async () => {
        await nothingReachesUpstream(stats, async () => {
            assertRefused(await attack(url, { 'x-api-key': '' }, sessionA), 'invalid', 'empty X-API-Key');
            assertRefused(await attack(url, { 'x-api-key': '   ' }, sessionA), 'invalid', 'blank X-API-Key');
            // A good Bearer does not make an empty X-API-Key acceptable.
            assertRefused(await attack(url, { ...asA, 'x-api-key': '' }, sessionA), 'invalid', 'good Bearer, empty X-API-Key');
        });
    });

    test('both headers disagreeing: 401 invalid_token whichever of them holds the right key', async () => {
        await nothingReachesUpstream(stats, async () => {
            assertRefused(await attack(url, { authorization: `Bearer ${KEY_A}`, 'x-api-key': WRONG }, sessionA), 'invalid', 'right Bearer, wrong X-API-Key');
            assertRefused(await attack(url, { authorization: `Bearer ${WRONG}`, 'x-api-key': KEY_A }, sessionA), 'invalid', 'wrong Bearer, right X-API-Key');
            assertRefused(await attack(url, { authorization: `Bearer ${KEY_A}`, 'x-api-key': KEY_C }, sessionA), 'invalid', 'two different valid keys');
        });
    });

    test('a duplicated X-API-Key header: 401 invalid_token, even with the right key twice', async () => {
        await nothingReachesUpstream(stats, async () => {
            assertRefused(await attack(url, { 'x-api-key': [KEY_A, KEY_A] }, sessionA), 'invalid', 'X-API-Key twice');
            assertRefused(await attack(url, { 'x-api-key': [WRONG, KEY_A] }, sessionA), 'invalid', 'X-API-Key wrong then right');
            assertRefused(await attack(url, { 'x-api-key': [KEY_A, WRONG] }, sessionA), 'invalid', 'X-API-Key right then wrong');
        });
    });

    test('a duplicated Authorization header: 401 invalid_token, whichever copy holds the right key', async () => {
        // readCredentials refuses a header sent twice ("which one counts would be ambiguous"); the HTTP layer must not pick one.
        await nothingReachesUpstream(stats, async () => {
            assertRefused(await attack(url, { authorization: [`Bearer ${WRONG}`, `Bearer ${KEY_A}`] }, sessionA), 'invalid', 'Authorization wrong then right');
            assertRefused(await attack(url, { authorization: [`Bearer ${KEY_A}`, `Bearer ${WRONG}`] }, sessionA), 'invalid', 'Authorization right then wrong');
            assertRefused(await attack(url, { authorization: [`Bearer ${KEY_A}`, `Bearer ${KEY_A}`] }, sessionA), 'invalid', 'Authorization right twice');
        });
    });

    test('an over-long key (beyond 8 KiB) is refused with 401, not hashed and not a crash', async () => {
        const long = `${KEY_A}${'x'.repeat(9000)}`;
        await nothingReachesUpstream(stats, async () => {
            assertRefused(await attack(url, { authorization: `Bearer ${long}` }, sessionA), 'invalid', 'long Bearer');
            assertRefused(await attack(url, { 'x-api-key': long }, sessionA), 'invalid', 'long X-API-Key');
        });
        // Still serving.
        assertSeesEverything(await rawList(url, asA, sessionA));
    });

    test('authentication comes before body parsing: bad or oversized bodies from strangers get 401, not 400 or 413', async () => {
        const big = JSON.stringify({ ...LIST, params: { padding: 'p'.repeat(64 * 1024) } });
        await nothingReachesUpstream(stats, async () => {
            for (const headers of [{}, { authorization: `Bearer ${WRONG}` }] as RequestHeaders[]) {
                const failure = Object.keys(headers).length === 0 ? 'missing' : 'invalid';
                assertRefused([await send(url, { headers, body: '{not json' })], failure, 'invalid JSON');
                assertRefused([await send(url, { headers, body: big })], failure, 'oversized body');
                assertRefused([await send(url, { headers: { ...headers, 'content-type': 'text/plain' }, body: 'hello' })], failure, 'not JSON at all');
            }
        });
        // The same bodies with the right key do reach the parser: the limit is real.
        assert.equal((await send(url, { headers: asA, body: big })).status, 413);
        assert.equal((await send(url, { headers: asA, body: '{not json' })).status, 400);
    });

    test('another client\'s valid key on a session is 404 "Session not found", exactly like an unknown session', async () => {
        const unknown = await send(url, { headers: { authorization: `Bearer ${KEY_C}`, ...sessionHeaders('00000000-0000-4000-8000-000000000000', PROTOCOL) }, body: LIST });
        assert.equal(unknown.status, 404);
        await nothingReachesUpstream(stats, async () => {
            for (const credentials of [{ authorization: `Bearer ${KEY_C}` }, { 'x-api-key': KEY_BOT }] as RequestHeaders[]) {
                const onA = { ...credentials, ...sessionHeaders(sessionA, PROTOCOL) };
                for (const body of [LIST, GET_PROMPT, COMPLETE, INITIALIZED, initializeBody(PROTOCOL)]) {
                    const reply = await send(url, { headers: onA, body });
                    assert.equal(reply.status, 404, reply.text);
                    assert.deepEqual(reply.message, unknown.message);
                    assert.equal(reply.headers['www-authenticate'], undefined);
                }
                const stream = await send(url, { method: 'GET', headers: onA });
                assert.equal(stream.status, 404);
                assert.deepEqual(stream.message, unknown.message);
                const deleted = await send(url, { method: 'DELETE', headers: onA });
                assert.equal(deleted.status, 404);
                assert.deepEqual(deleted.message, unknown.message);
            }
        });
        assert.deepEqual(unknown.message, { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
        // The owner's session survived the DELETE attempts and still works.
        assertSeesEverything(await rawList(url, asA, sessionA));
    });

    test("failed credentials on the owner's session id are 401, not 404: session ids are not probed through auth", async () => {
        const reply = await send(url, { headers: { authorization: `Bearer ${WRONG}`, ...sessionHeaders(sessionA, PROTOCOL) }, body: LIST });
        const unknown = await send(url, { headers: { authorization: `Bearer ${WRONG}`, ...sessionHeaders('no-such-session', PROTOCOL) }, body: LIST });
        assert.equal(reply.status, 401);
        assert.equal(unknown.status, 401);
        assert.deepEqual(reply.message, unknown.message);
    });

    test('keys never appear in the logs or in /healthz; failures are logged without header values', async () => {
        const health = await fetch(new URL('/healthz', url));
        assert.equal(health.status, 200);
        const healthText = await health.text();
        const lines = log.lines();
        const logText = JSON.stringify(lines);
        assert.ok(
            lines.some(line => line['msg'] === 'authentication failed'),
            'authentication failures are logged'
        );
        // Refused before MCP, each still names its request (these sent no X-Request-Id: the gateway made one).
        for (const line of lines.filter(line => line['msg'] === 'authentication failed')) assert.match(String(line['requestId']), /^[0-9a-f-]{36}$/);
        for (const key of [KEY_A, KEY_BOT, KEY_C, WRONG]) {
            assert.ok(!logText.includes(key), 'a key appears in a log line');
            assert.ok(!healthText.includes(key), 'a key appears in /healthz');
            // Not even a long piece of it.
            assert.ok(!logText.includes(key.slice(8, 40)), 'part of a key appears in a log line');
        }
        assert.ok(!logText.includes(sha256(KEY_BOT)), 'the digest of the plain key is not logged either');
        assert.ok(!/Bearer [A-Za-z0-9]/.test(logText), 'an Authorization value appears in a log line');
    });
});

// ---------------------------------------------------------------- JWT with a shared secret

const now = () => Math.floor(Date.now() / 1000);
const base64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

async function signHs(payload: JWTPayload, key: string, alg = 'HS256', header: Record<string, unknown> = {}): Promise<string> {
    return new SignJWT(payload).setProtectedHeader({ ...header, alg }).sign(new TextEncoder().encode(key));
}

/** An unsigned token ("alg": "none") made by hand; jose refuses to make one. */
function unsigned(payload: JWTPayload, header: Record<string, unknown> = { alg: 'none', typ: 'JWT' }): string {
    return `${base64url(header)}.${base64url(payload)}.`;
}

/** The header and signature of `token` around another payload. */
function swapPayload(token: string, payload: JWTPayload): string {
    const [header, , signature] = token.split('.');
    return `${header}.${base64url(payload)}.${signature}`;
}

describe('auth over HTTP: jwt with an HS256 secret', () => {
    const SECRET = secret('hs-secret');
    const ISSUER = 'https://issuer.example';
    const AUDIENCE = 'mcp-prompt-gateway';
    let gateway: RunningGateway;
    let url: string;
    let log: ReturnType<typeof capturingLogger>;
    let stats: Client;
    let sessionA: string;
    let bearerA: Record<string, string>;

    const claims = (extra: JWTPayload = {}): JWTPayload => ({ sub: 'team-a', iss: ISSUER, aud: AUDIENCE, iat: now(), exp: now() + 300, ...extra });
    const token = (extra: JWTPayload = {}) => signHs(claims(extra), SECRET);
    // The issuer alone is the authorization server, so every challenge names the metadata document (docs/authorization.md).
    const metadata = () => new URL('/.well-known/oauth-protected-resource/mcp', url).href;

    before(async () => {
        log = capturingLogger();
        const config = parseConfig(
            JSON.stringify({
                listen: { port: 0 },
                auth: { mode: 'jwt', secret: '${JWT_SECRET}', issuer: ISSUER, audience: [AUDIENCE, 'other-audience'] },
                clients: [{ id: 'team-a' }, { id: 'team-b', prompts: { allow: ['up__prompt-001'] } }],
                upstreams: [stdioFixture('up')]
            }),
            'auth.test.json',
            { JWT_SECRET: SECRET }
        );
        gateway = await startGateway(config, { logger: log.logger });
        url = gateway.url!;
        bearerA = { authorization: `Bearer ${await token()}` };
        stats = await connectHttp(url, { headers: bearerA });
        sessionA = (await openRawSession(url, PROTOCOL, bearerA)).id;
    });

    after(async () => {
        await stats?.close();
        await gateway?.close();
    });

    test('a valid token names the client, whose policy applies', async () => {
        assertSeesEverything(await listWith(url, bearerA));
        assert.deepEqual(await listWith(url, { authorization: `Bearer ${await token({ sub: 'team-b' })}` }), ['up__prompt-001']);
    });

    test('any of the configured audiences is accepted, also inside an aud array', async () => {
        assertSeesEverything(await listWith(url, { authorization: `Bearer ${await token({ aud: 'other-audience' })}` }));
        assertSeesEverything(await listWith(url, { authorization: `Bearer ${await token({ aud: ['someone-else', AUDIENCE] })}` }));
    });

    test('a token expired by less than the clock tolerance (30 s) is still accepted', async () => {
        assertSeesEverything(await listWith(url, { authorization: `Bearer ${await token({ exp: now() - 5 })}` }));
    });

    test('missing credentials: 401 with a bare challenge', async () => {
        await nothingReachesUpstream(stats, async () => {
            assertRefused(await attack(url, {}, sessionA), 'missing', 'no token', 'sub', metadata());
        });
    });

    test('bad tokens: all 401 invalid_token, nothing reaches the upstream', async () => {
        const valid = await token();
        const forB = await token({ sub: 'team-b' });
        const bad: Record<string, string> = {
            'expired beyond the tolerance': await token({ exp: now() - 120 }),
            'expired long ago': await token({ iat: now() - 7200, exp: now() - 3600 }),
            'not yet valid (nbf)': await token({ nbf: now() + 120 }),
            'no exp': await token({ exp: undefined }),
            'exp not a number': await signHs({ ...claims(), exp: 'tomorrow' as unknown as number }, SECRET),
            'wrong secret': await signHs(claims(), secret('other-secret')),
            'secret with one character changed': await signHs(claims(), `${SECRET.slice(0, -1)}${SECRET.endsWith('0') ? '1' : '0'}`),
            'HS512 with the right secret (algorithm not allowed)': await signHs(claims(), SECRET, 'HS512'),
            'HS384 with the right secret (algorithm not allowed)': await signHs(claims(), SECRET, 'HS384'),
            'alg none, no signature': unsigned(claims()),
            'alg None, no signature': unsigned(claims(), { alg: 'None' }),
            'alg none with the valid signature kept': `${unsigned(claims()).slice(0, -1)}.${valid.split('.')[2]}`,
            'payload swapped under a valid signature': swapPayload(forB, claims()),
            'signature stripped': valid.split('.').slice(0, 2).join('.') + '.',
            'wrong issuer': await token({ iss: 'https://evil.example' }),
            'no issuer': await token({ iss: undefined }),
            'wrong audience': await token({ aud: 'someone-else' }),
            'no audience': await token({ aud: undefined }),
            'not a JWT': 'not-a-jwt',
            'two parts': valid.split('.').slice(0, 2).join('.'),
            'four parts': `${valid}.x`,
            'JWE-shaped': 'a.b.c.d.e',
            'garbage header': `${base64url('{"alg":')}.${base64url(claims())}.sig`
        };
        await nothingReachesUpstream(stats, async () => {
            for (const [why, jwt] of Object.entries(bad)) assertRefused(await attack(url, { authorization: `Bearer ${jwt}` }, sessionA), 'invalid', why, 'sub', metadata());
        });
    });

    test('sound tokens naming no configured client: all 403 naming the claim, nothing reaches the upstream', async () => {
        const unknown: Record<string, string> = {
            'unknown client': await token({ sub: 'team-z' }),
            'client id of another case': await token({ sub: 'TEAM-A' }),
            'the reserved anonymous id': await token({ sub: 'anonymous' }),
            'no client id claim': await token({ sub: undefined }),
            'client id as a number': await signHs({ ...claims(), sub: 42 as unknown as string }, SECRET),
            'client id as an array': await signHs({ ...claims(), sub: ['team-a'] as unknown as string }, SECRET),
            'client id __proto__': await token({ sub: '__proto__' }),
            'client id constructor': await token({ sub: 'constructor' })
        };
        await nothingReachesUpstream(stats, async () => {
            for (const [why, jwt] of Object.entries(unknown)) {
                const replies = await attack(url, { authorization: `Bearer ${jwt}` }, sessionA);
                assertRefused(replies, 'unknown_client', why);
                assert.ok(
                    replies.every(reply => !reply.text.includes('team-z')),
                    "the claim's value is not echoed"
                );
            }
        });
    });

    test('a valid token sent as X-API-Key is refused: jwt mode takes Bearer only', async () => {
        await nothingReachesUpstream(stats, async () => {
            assertRefused(await attack(url, { 'x-api-key': await token() }, sessionA), 'invalid', 'JWT in X-API-Key', 'sub', metadata());
            assertRefused(
                await attack(url, { ...bearerA, 'x-api-key': await token({ sub: 'team-b' }) }, sessionA),
                'invalid',
                'Bearer and a different X-API-Key',
                'sub',
                metadata()
            );
            assertRefused(await attack(url, { authorization: `Basic ${await token()}` }, sessionA), 'invalid', 'JWT as Basic', 'sub', metadata());
        });
    });

    test('a valid token of another client on a session is 404 "Session not found"; the owner\'s session still works', async () => {
        const asB = { authorization: `Bearer ${await token({ sub: 'team-b' })}` };
        await nothingReachesUpstream(stats, async () => {
            for (const body of [LIST, GET_PROMPT, COMPLETE]) {
                const reply = await send(url, { headers: { ...asB, ...sessionHeaders(sessionA, PROTOCOL) }, body });
                assert.equal(reply.status, 404, reply.text);
                assert.deepEqual(reply.message, { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
            }
            assert.equal((await send(url, { method: 'DELETE', headers: { ...asB, ...sessionHeaders(sessionA, PROTOCOL) } })).status, 404);
        });
        assertSeesEverything(await rawList(url, bearerA, sessionA));
    });

    test('a new token for the same client may continue the session (sessions belong to clients, not tokens)', async () => {
        const fresh = { authorization: `Bearer ${await token({ iat: now() + 1, exp: now() + 600 })}` };
        assertSeesEverything(await rawList(url, fresh, sessionA));
    });

    test('the secret and the tokens never appear in the logs', () => {
        const logText = JSON.stringify(log.lines());
        assert.ok(log.lines().some(line => line['msg'] === 'authentication failed'));
        assert.ok(!logText.includes(SECRET), 'the secret is logged');
        assert.ok(!logText.includes(bearerA.authorization!.slice(7, 60)), 'a token is logged');
    });
});

describe('auth over HTTP: jwt with a custom clientIdClaim', () => {
    const SECRET = secret('claim-secret');
    let gateway: RunningGateway;
    let url: string;
    let stats: Client;
    let sessionA: string;

    const token = (extra: JWTPayload) => signHs({ exp: now() + 300, ...extra }, SECRET);

    before(async () => {
        gateway = await startTestGateway({
            auth: { mode: 'jwt', secret: SECRET, clientIdClaim: 'client_id' },
            clients: [{ id: 'team-a' }, { id: 'team-b', prompts: { allow: ['up__prompt-001'] } }],
            upstreams: [stdioFixture('up')]
        });
        url = gateway.url!;
        const bearerA = { authorization: `Bearer ${await token({ client_id: 'team-a' })}` };
        stats = await connectHttp(url, { headers: bearerA });
        sessionA = (await openRawSession(url, PROTOCOL, bearerA)).id;
    });

    after(async () => {
        await stats?.close();
        await gateway?.close();
    });

    test('the client is the one the configured claim names, not "sub"', async () => {
        assert.deepEqual(await listWith(url, { authorization: `Bearer ${await token({ sub: 'team-a', client_id: 'team-b' })}` }), ['up__prompt-001']);
        assertSeesEverything(await listWith(url, { authorization: `Bearer ${await token({ sub: 'team-b', client_id: 'team-a' })}` }));
    });

    test('without the configured claim, or with a bad value in it, the token is refused 403 naming the claim', async () => {
        const bad: Record<string, string> = {
            'only sub': await token({ sub: 'team-a' }),
            'unknown client': await token({ client_id: 'team-z' }),
            anonymous: await token({ client_id: 'anonymous' }),
            number: await token({ client_id: 7 }),
            'array of the id': await token({ client_id: ['team-a'] }),
            object: await token({ client_id: { id: 'team-a' } }),
            null: await token({ client_id: null }),
            empty: await token({ client_id: '' }),
            'padded id': await token({ client_id: ' team-a' }),
            'prototype name': await token({ client_id: 'hasOwnProperty' })
        };
        await nothingReachesUpstream(stats, async () => {
            for (const [why, jwt] of Object.entries(bad)) assertRefused(await attack(url, { authorization: `Bearer ${jwt}` }, sessionA), 'unknown_client', why, 'client_id');
        });
    });
});

// ---------------------------------------------------------------- JWT with JWKS

type KeyPair = GenerateKeyPairResult;

async function publicJwk(pair: KeyPair, kid: string, alg: string): Promise<JWK> {
    return { ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' };
}

async function signWith(pair: KeyPair, payload: JWTPayload, header: { alg: string; kid?: string; jwk?: JWK }): Promise<string> {
    return new SignJWT(payload).setProtectedHeader(header).sign(pair.privateKey);
}

describe('auth over HTTP: jwt with a JWKS file', () => {
    let dir: string;
    let gateway: RunningGateway;
    let url: string;
    let stats: Client;
    let sessionA: string;
    let ec: KeyPair;
    let rsa: KeyPair;
    let otherEc: KeyPair;
    let otherRsa: KeyPair;
    let ecJwk: JWK;

    const claims = (extra: JWTPayload = {}): JWTPayload => ({ sub: 'team-a', aud: 'gateway', exp: now() + 300, ...extra });

    before(async () => {
        [ec, rsa, otherEc, otherRsa] = await Promise.all([
            generateKeyPair('ES256', { extractable: true }),
            generateKeyPair('RS256', { extractable: true }),
            generateKeyPair('ES256', { extractable: true }),
            generateKeyPair('RS256', { extractable: true })
        ]);
        ecJwk = await publicJwk(ec, 'ec-1', 'ES256');
        dir = await mkdtemp(path.join(tmpdir(), 'auth-jwks-'));
        await mkdir(path.join(dir, 'keys'));
        await writeFile(path.join(dir, 'keys', 'jwks.json'), JSON.stringify({ keys: [ecJwk, await publicJwk(rsa, 'rsa-1', 'RS256')] }));
        await writeFile(
            path.join(dir, 'gateway.json'),
            JSON.stringify({
                listen: { port: 0 },
                auth: { mode: 'jwt', jwksFile: 'keys/jwks.json', audience: 'gateway' },
                clients: [{ id: 'team-a' }],
                upstreams: [stdioFixture('up')]
            })
        );
        const config = await loadConfigFile(path.join(dir, 'gateway.json'), process.env);
        gateway = await startGateway(config, { logger: pino({ level: 'silent' }) });
        url = gateway.url!;
        const bearer = { authorization: `Bearer ${await signWith(ec, claims(), { alg: 'ES256', kid: 'ec-1' })}` };
        stats = await connectHttp(url, { headers: bearer });
        sessionA = (await openRawSession(url, PROTOCOL, bearer)).id;
    });

    after(async () => {
        await stats?.close();
        await gateway?.close();
        if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    test('tokens signed by either key of the file work (ES256 and RS256)', async () => {
        assertSeesEverything(await listWith(url, { authorization: `Bearer ${await signWith(ec, claims(), { alg: 'ES256', kid: 'ec-1' })}` }));
        assertSeesEverything(await listWith(url, { authorization: `Bearer ${await signWith(rsa, claims(), { alg: 'RS256', kid: 'rsa-1' })}` }));
    });

    test('wrongly signed tokens, algorithm confusion and unusable claims: 401 invalid_token', async () => {
        const pem = await exportSPKI(rsa.publicKey);
        const bad: Record<string, string> = {
            'another EC key under the known kid': await signWith(otherEc, claims(), { alg: 'ES256', kid: 'ec-1' }),
            'another EC key without a kid': await signWith(otherEc, claims(), { alg: 'ES256' }),
            'another EC key under an unknown kid': await signWith(otherEc, claims(), { alg: 'ES256', kid: 'ec-2' }),
            'another RSA key under the known kid': await signWith(otherRsa, claims(), { alg: 'RS256', kid: 'rsa-1' }),
            "RSA signature under the EC key's kid": await signWith(rsa, claims(), { alg: 'RS256', kid: 'ec-1' }),
            "the attacker's own key embedded in the header (jwk)": await signWith(otherEc, claims(), { alg: 'ES256', jwk: await publicJwk(otherEc, 'ec-1', 'ES256') }),
            'HS256 with the public EC JWK as the secret': await signHs(claims(), JSON.stringify(ecJwk), 'HS256', { kid: 'ec-1' }),
            'HS256 with the public EC x coordinate as the secret': await signHs(claims(), String(ecJwk.x), 'HS256', { kid: 'ec-1' }),
            'HS256 with the RSA public key PEM as the secret': await signHs(claims(), pem, 'HS256', { kid: 'rsa-1' }),
            'alg none': unsigned(claims(), { alg: 'none', kid: 'ec-1' }),
            'expired, properly signed': await signWith(ec, claims({ exp: now() - 300 }), { alg: 'ES256', kid: 'ec-1' }),
            'no exp, properly signed': await signWith(ec, claims({ exp: undefined }), { alg: 'ES256', kid: 'ec-1' }),
            'wrong audience, properly signed': await signWith(ec, claims({ aud: 'elsewhere' }), { alg: 'ES256', kid: 'ec-1' })
        };
        const unknown: Record<string, string> = {
            'unknown client, properly signed': await signWith(ec, claims({ sub: 'team-z' }), { alg: 'ES256', kid: 'ec-1' }),
            'anonymous, properly signed': await signWith(ec, claims({ sub: 'anonymous' }), { alg: 'ES256', kid: 'ec-1' })
        };
        await nothingReachesUpstream(stats, async () => {
            for (const [why, jwt] of Object.entries(bad)) assertRefused(await attack(url, { authorization: `Bearer ${jwt}` }, sessionA), 'invalid', why);
            for (const [why, jwt] of Object.entries(unknown)) assertRefused(await attack(url, { authorization: `Bearer ${jwt}` }, sessionA), 'unknown_client', why);
        });
        assertSeesEverything(await rawList(url, { authorization: `Bearer ${await signWith(ec, claims(), { alg: 'ES256', kid: 'ec-1' })}` }, sessionA));
    });
});

describe('auth over HTTP: jwt with a JWKS URL', () => {
    let gateway: RunningGateway | undefined;
    let url: string;
    let port: number;
    let keys: KeyPair;
    let other: KeyPair;
    let jwksServer: Server | undefined;
    /** How the JWKS server answers. */
    let mode: 'keys' | 'error' | 'html' | 'not-jwks' | 'reset' = 'keys';
    let fetches = 0;
    let stats: Client | undefined;

    const claims = (extra: JWTPayload = {}): JWTPayload => ({ sub: 'team-a', exp: now() + 300, ...extra });
    const validToken = () => signWith(keys, claims(), { alg: 'ES256', kid: 'url-1' });

    async function startJwksServer(): Promise<void> {
        const jwks = JSON.stringify({ keys: [await publicJwk(keys, 'url-1', 'ES256')] });
        jwksServer = createServer((req, res) => {
            fetches++;
            if (mode === 'reset') return req.socket.destroy();
            if (mode === 'error') return res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
            if (mode === 'html') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
            if (mode === 'not-jwks') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"maintenance"}');
            res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
        });
        await new Promise<void>((resolve, reject) => {
            jwksServer!.once('error', reject);
            jwksServer!.listen(port, '127.0.0.1', resolve);
        });
    }

    /** The answer to an initialize carrying a valid token. */
    async function initializeWithValidToken(): Promise<Reply> {
        return send(url, { headers: { authorization: `Bearer ${await validToken()}` }, body: initializeBody(PROTOCOL) });
    }

    function assertUnavailable(reply: Reply, why: string): void {
        assert.equal(reply.status, 503, `${why}: ${reply.status} ${reply.text}`);
        const retryAfter = Number(reply.headers['retry-after']);
        assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `${why}: Retry-After ${String(reply.headers['retry-after'])}`);
        assert.equal(reply.headers['www-authenticate'], undefined, `${why}: a valid token is not challenged`);
        assert.equal(reply.headers['mcp-session-id'], undefined);
        const error = reply.message?.['error'] as { code?: unknown } | undefined;
        assert.equal(typeof error?.code, 'number', why);
    }

    /**
     * A gateway that has not fetched yet: a failed fetch is remembered for a few seconds (no fetch per request), so each
     * way of failing is seen by a gateway of its own.
     */
    async function startGateway(): Promise<void> {
        await gateway?.close();
        gateway = await startTestGateway({
            auth: { mode: 'jwt', jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json` },
            clients: [{ id: 'team-a' }],
            upstreams: [stdioFixture('up')]
        });
        url = gateway.url!;
    }

    before(async () => {
        [keys, other] = await Promise.all([generateKeyPair('ES256', { extractable: true }), generateKeyPair('ES256', { extractable: true })]);
        // Nothing listens there yet.
        port = await freePort();
        await startGateway();
    });

    after(async () => {
        await stats?.close();
        await gateway?.close();
        if (jwksServer?.listening) await new Promise(resolve => jwksServer!.close(resolve));
    });

    test('JWKS URL refusing connections: a valid token gets 503 with Retry-After, not 401', async () => {
        assertUnavailable(await initializeWithValidToken(), 'connection refused');
        // Still 401 for what is wrong whatever the keys: no credentials, garbage, a disallowed algorithm.
        assertRefused([await send(url, { body: initializeBody(PROTOCOL) })], 'missing', 'no credentials');
        assertRefused([await send(url, { headers: { authorization: 'Bearer garbage' }, body: initializeBody(PROTOCOL) })], 'invalid', 'garbage token');
        assertRefused([await send(url, { headers: { authorization: `Bearer ${unsigned(claims())}` }, body: initializeBody(PROTOCOL) })], 'invalid', 'alg none');
        assertRefused([await send(url, { headers: { authorization: `Bearer ${await signHs(claims(), 'x'.repeat(40))}` }, body: initializeBody(PROTOCOL) })], 'invalid', 'HS256');
    });

    test('JWKS URL resetting connections: 503 with Retry-After', async () => {
        mode = 'reset';
        await startGateway();
        await startJwksServer();
        const before = fetches;
        assertUnavailable(await initializeWithValidToken(), 'connection reset');
        assert.ok(fetches > before, 'the gateway tried to fetch the keys');
    });

    test('JWKS URL answering HTTP 500: 503 with Retry-After (the keys could not be fetched; the token is not at fault)', async () => {
        mode = 'error';
        await startGateway();
        const before = fetches;
        assertUnavailable(await initializeWithValidToken(), 'HTTP 500 from the JWKS URL');
        assert.ok(fetches > before, 'the gateway tried to fetch the keys');
    });

    test('JWKS URL answering 200 with an HTML page instead of keys: 503 with Retry-After', async () => {
        mode = 'html';
        await startGateway();
        const before = fetches;
        assertUnavailable(await initializeWithValidToken(), 'HTML from the JWKS URL');
        assert.ok(fetches > before, 'the gateway tried to fetch the keys');
    });

    test('JWKS URL answering 200 with JSON that is not a key set: 503 with Retry-After', async () => {
        mode = 'not-jwks';
        await startGateway();
        const before = fetches;
        assertUnavailable(await initializeWithValidToken(), 'JSON that is not a JWKS from the JWKS URL');
        assert.ok(fetches > before, 'the gateway tried to fetch the keys');
    });

    test('once the JWKS URL serves keys, a valid token works and wrongly signed ones are 401 with nothing reaching the upstream', async () => {
        mode = 'keys';
        await startGateway();
        const bearer = { authorization: `Bearer ${await validToken()}` };
        assertSeesEverything(await listWith(url, bearer));
        stats = await connectHttp(url, { headers: bearer });
        const sessionA = (await openRawSession(url, PROTOCOL, bearer)).id;
        const fetchesBefore = fetches;
        const bad: Record<string, string> = {
            'another key under the known kid': await signWith(other, claims(), { alg: 'ES256', kid: 'url-1' }),
            'another key under unknown kids': await signWith(other, claims(), { alg: 'ES256', kid: 'url-2' }),
            'another key under yet another kid': await signWith(other, claims(), { alg: 'ES256', kid: 'url-3' }),
            'another key without a kid': await signWith(other, claims(), { alg: 'ES256' }),
            'HS256 with the public JWK as secret': await signHs(claims(), JSON.stringify(await publicJwk(keys, 'url-1', 'ES256')), 'HS256', { kid: 'url-1' }),
            expired: await signWith(keys, claims({ exp: now() - 300 }), { alg: 'ES256', kid: 'url-1' })
        };
        const unknownClient = await signWith(keys, claims({ sub: 'team-z' }), { alg: 'ES256', kid: 'url-1' });
        await nothingReachesUpstream(stats, async () => {
            for (const [why, jwt] of Object.entries(bad)) assertRefused(await attack(url, { authorization: `Bearer ${jwt}` }, sessionA), 'invalid', why);
            assertRefused(await attack(url, { authorization: `Bearer ${unknownClient}` }, sessionA), 'unknown_client', 'unknown client');
        });
        // Unknown kids may make the gateway look for new keys, but a burst of them is not a burst of fetches.
        assert.ok(fetches <= fetchesBefore + 1, `${fetches - fetchesBefore} JWKS fetches for one burst of bad tokens`);
    });

    test('fetched keys are cached: the JWKS server going away does not lock clients out', async () => {
        await new Promise(resolve => jwksServer!.close(resolve));
        assertSeesEverything(await listWith(url, { authorization: `Bearer ${await validToken()}` }));
        assertRefused([await send(url, { headers: { authorization: 'Bearer garbage' }, body: initializeBody(PROTOCOL) })], 'invalid', 'garbage token');
    });
});
