/**
 * Hostile nesting and failed handshakes over real HTTP: an upstream listing a prompt nested 10,000 deep beside
 * normal ones, initialize requests that do not succeed, and client messages nested deeper than
 * limits.maxJsonDepth. No session is left behind, no client is locked out, and no answer carries exception text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { parseConfig } from '../src/config/load.js';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, listAllPages, rawStdio, startTestGateway, stdioFixture, upstreamsReady, waitFor } from './helpers.js';
import { scrape, value } from './prometheus.js';
import { call, deleteSession, initializeBody, messagesOf, openRawSession, post } from './raw-http.js';

/** What exception text looks like in an answer: error names, stack frames, internals. */
const EXCEPTION_TEXT = /RangeError|TypeError|Maximum call stack|\bat \S+ \(|node_modules|\.[jt]s:\d+/;

/** An object `levels` deep: `{"level":{"level":...{}}}` (a flat object is 1). Built as text: JSON.stringify overflows first. */
function nestedJson(levels: number): string {
    return `${'{"level":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
}

/** A prompts/list whose params carry `_meta` nested so that the whole message is `depth` deep. */
function listNested(depth: number, id = 7): string {
    return `{"jsonrpc":"2.0","id":${id},"method":"prompts/list","params":{"_meta":${nestedJson(depth - 2)}}}`;
}

const MAX_SESSIONS = 3;
const BASE = {
    log: { level: process.env.TEST_LOG_LEVEL ?? 'silent' },
    limits: { maxSessionsPerClient: MAX_SESSIONS },
    notifications: { debounceMs: 20, maxDelayMs: 100 },
    upstreams: [stdioFixture('good', { prompts: 2 })]
};
const WITH_DEEP = { ...BASE, upstreams: [...BASE.upstreams, rawStdio('deep', ['--prompts', '2', '--deep-prompt', '10000'])] };

const parse = (config: Record<string, unknown>) => parseConfig(JSON.stringify({ listen: { port: 0 }, ...config }), 'test config', process.env);

async function openHttpSessions(gateway: RunningGateway): Promise<number> {
    return value(await scrape(gateway.operatorUrls.metrics!), 'mcp_gateway_sessions', { transport: 'http' });
}

describe('an upstream prompt nested 10,000 levels deep', () => {
    let gateway: RunningGateway;
    let early: Client | undefined;

    before(async () => {
        gateway = await startTestGateway(BASE);
        // Opened before the deep upstream arrives: it must keep listing afterwards.
        early = await connectHttp(gateway.url!);
        await gateway.reload(parse(WITH_DEEP));
        await upstreamsReady(gateway);
        const published = () => gateway.catalog.publishedView?.segments.find(segment => segment.upstreamId === 'deep')?.entries.some(entry => entry !== undefined);
        await waitFor(() => published() === true, 10_000, "the deep upstream's prompts published");
    });

    after(async () => {
        await early?.close();
        await gateway?.close();
    });

    const expected = ['good__prompt-000', 'good__prompt-001', 'deep__ok-0', 'deep__ok-1'];

    test('is left out of every list, its siblings stay; a session opened earlier still lists', { timeout: 30_000 }, async () => {
        const { names } = await listAllPages(early!);
        for (const name of expected) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
        assert.ok(!names.includes('deep__deep'), 'the deep prompt is not listed');
        assert.equal(gateway.faults.of('deep').oversized_prompt, 1, 'counted as a fault of its upstream');
        const result = await early!.getPrompt({ name: 'deep__ok-1', arguments: { topic: 'siblings' } });
        assert.match(JSON.stringify(result.messages), /ok-1: tell me about siblings/);
    });

    test('initialize keeps working, more often than maxSessionsPerClient, with no exception text', { timeout: 30_000 }, async () => {
        for (let round = 0; round < MAX_SESSIONS + 2; round++) {
            const response = await post(gateway.url!, initializeBody());
            const text = await response.text();
            assert.equal(response.status, 200, text);
            assert.doesNotMatch(text, EXCEPTION_TEXT);
            const id = response.headers.get('mcp-session-id');
            assert.ok(id !== null);
            assert.equal((await deleteSession(gateway.url!, { 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' })).status, 200);
        }
        const session = await openRawSession(gateway.url!);
        const listed = await call(gateway.url!, session, 'prompts/list');
        const names = (listed.response?.result?.prompts as { name: string }[]).map(prompt => prompt.name);
        for (const name of expected) assert.ok(names.includes(name), name);
        assert.ok(!names.includes('deep__deep'));
        assert.equal((await deleteSession(gateway.url!, session.headers)).status, 200);
    });

    test('once the upstream is removed again, the client opens sessions up to its limit', { timeout: 30_000 }, async () => {
        await gateway.reload(parse(BASE));
        // The session opened first holds one of the client's slots.
        const sessions = [];
        for (let index = 0; index < MAX_SESSIONS - 1; index++) sessions.push(await openRawSession(gateway.url!));
        const listed = await call(gateway.url!, sessions[0]!, 'prompts/list');
        assert.equal(listed.status, 200);
        assert.deepEqual(
            (listed.response?.result?.prompts as { name: string }[]).map(prompt => prompt.name).filter(name => name.startsWith('good__prompt')),
            ['good__prompt-000', 'good__prompt-001']
        );
        for (const session of sessions) assert.equal((await deleteSession(gateway.url!, session.headers)).status, 200);
    });
});

describe('failed initialize requests', () => {
    let gateway: RunningGateway;

    before(async () => {
        gateway = await startTestGateway(BASE);
    });

    after(async () => {
        await gateway?.close();
    });

    test('an initialize that gets no result leaves no session behind and does not lock the client out', { timeout: 30_000 }, async () => {
        const before = await openHttpSessions(gateway);
        // Sent without an id, initialize is a notification: nothing answers it, so no session may come of it.
        const { id: _id, ...notification } = initializeBody();
        for (let round = 0; round < MAX_SESSIONS + 1; round++) {
            const response = await post(gateway.url!, notification);
            const text = await response.text();
            assert.ok(response.status === 202 || response.status === 400, `HTTP ${response.status}: ${text}`);
            assert.equal(response.headers.get('mcp-session-id'), null);
            assert.doesNotMatch(text, EXCEPTION_TEXT);
        }
        await waitFor(async () => (await openHttpSessions(gateway)) === before, 5000, 'no session left behind');
        const sessions = [];
        for (let index = 0; index < MAX_SESSIONS; index++) sessions.push(await openRawSession(gateway.url!));
        for (const session of sessions) assert.equal((await deleteSession(gateway.url!, session.headers)).status, 200);
    });
});

describe('client messages nested deeper than limits.maxJsonDepth', () => {
    let gateway: RunningGateway;

    before(async () => {
        gateway = await startTestGateway({ ...BASE, limits: {} });
    });

    after(async () => {
        await gateway?.close();
    });

    test('a message nested deeper than limits.maxJsonDepth is HTTP 400 -32600, not echoed; one at the limit is served', { timeout: 30_000 }, async () => {
        const session = await openRawSession(gateway.url!);
        const atLimit = await post(gateway.url!, listNested(64), session.headers);
        const [answer] = await messagesOf(atLimit);
        assert.equal(atLimit.status, 200);
        assert.ok(Array.isArray((answer?.result as { prompts?: unknown[] } | undefined)?.prompts), JSON.stringify(answer));

        for (const depth of [65, 10_000, 100_000]) {
            const response = await post(gateway.url!, listNested(depth, 8), session.headers);
            const text = await response.text();
            assert.equal(response.status, 400, `depth ${depth}: ${text.slice(0, 300)}`);
            const body = JSON.parse(text) as { id: unknown; error: { code: number; message: string; data?: unknown } };
            assert.equal(body.error.code, -32600);
            assert.equal(body.id, null, 'the id is not echoed either');
            assert.equal(body.error.data, undefined);
            assert.match(body.error.message, /nested deeper than 64/);
            assert.doesNotMatch(text, /"level"/, 'the message is not echoed');
        }
        // The session is unharmed.
        const listed = await call(gateway.url!, session, 'prompts/list', {}, 9);
        assert.equal(listed.status, 200);
        assert.ok(Array.isArray(listed.response?.result?.prompts));
        assert.equal((await deleteSession(gateway.url!, session.headers)).status, 200);
    });

    test('an initialize nested too deep is refused the same way and opens no session', { timeout: 30_000 }, async () => {
        const before = await openHttpSessions(gateway);
        const body = JSON.stringify({ ...initializeBody(), params: { ...initializeBody().params, capabilities: { experimental: { x: '@' } } } }).replace('"@"', nestedJson(10_000));
        const response = await post(gateway.url!, body);
        const text = await response.text();
        assert.equal(response.status, 400, text.slice(0, 300));
        assert.equal(response.headers.get('mcp-session-id'), null);
        assert.match(text, /"code":-32600/);
        assert.doesNotMatch(text, EXCEPTION_TEXT);
        assert.equal(await openHttpSessions(gateway), before);
    });
});
