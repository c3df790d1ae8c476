/**
 * Clients that ask for what the gateway does not serve: some (Codex) send `tools/list` whatever the capabilities
 * say, and take -32601 as a failed server. The gateway answers the three list methods of tools and resources with
 * empty lists in every revision, still declaring neither capability; calls of tools and resources stay -32601.
 * SDK clients of both eras over HTTP, and over stdio (the built CLI with --stdio); raw 2026-07-28 requests with their
 * headers, validated against the revision's schema.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { before, describe, test, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { closeAfter, connectHttp, connectModernHttp, connectModernStdio, connectStdio, ROOT, rpcError, startTestGateway, upstreamsReady } from './helpers.js';
import { postModern, type JsonRpcMessage } from './raw-http.js';
import { MODERN_REVISION, SpecSchema } from './spec-schema.js';

const EMPTY_LISTS = { 'tools/list': 'tools', 'resources/list': 'resources', 'resources/templates/list': 'resourceTemplates' } as const;
const STILL_NOT_FOUND = [
    ['tools/call', { name: 'anything', arguments: {} }],
    ['resources/read', { uri: 'file:///etc/hostname' }]
] as const;

const LIST_TTL_MS = 1234;
const CLI = path.join(ROOT, 'dist/cli.js');
/** A plain JavaScript upstream with one prompt: quick to start, also on a loaded machine. */
const UPSTREAM = { id: 'local', transport: 'stdio', command: process.execPath, args: [path.join(ROOT, 'test/fixtures/echo-argv-server.mjs')] };
const TIMEOUT = { timeout: 180_000 };

async function gatewayUrl(t: TestContext): Promise<string> {
    const gateway = await startTestGateway({ caching: { listTtlMs: LIST_TTL_MS }, upstreams: [UPSTREAM] });
    closeAfter(t, () => gateway.close());
    await upstreamsReady(gateway);
    return gateway.url!;
}

/**
 * Empty lists, capabilities unchanged, calls still -32601: what every client of every era and transport gets. (A
 * 2026-07-28 HTTP client sees the -32601 as the HTTP 404 the revision prescribes: checked raw.)
 */
async function assertServedEmpty(client: Client, calls: 'json-rpc' | 'http' = 'json-rpc'): Promise<void> {
    const capabilities = client.getServerCapabilities() ?? {};
    assert.equal(capabilities.tools, undefined, 'tools are not declared');
    assert.equal(capabilities.resources, undefined, 'resources are not declared');
    for (const [method, key] of Object.entries(EMPTY_LISTS)) {
        const result = (await client.request({ method, params: {} } as never)) as Record<string, unknown>;
        assert.deepEqual(result[key], [], method);
        assert.equal(result.nextCursor, undefined, method);
    }
    for (const [method, params] of calls === 'json-rpc' ? STILL_NOT_FOUND : []) {
        assert.equal((await rpcError(client.request({ method, params } as never))).code, -32601, method);
    }
    assert.ok((await client.listPrompts()).prompts.length > 0, 'prompts are served as before');
}

describe('tools and resources lists a client asks for anyway', () => {
    before(() => assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)'));
    test('over HTTP: a 2025-06-18 session and a 2026-07-28 client get empty lists', TIMEOUT, async t => {
        const url = await gatewayUrl(t);
        const legacy = await connectHttp(url, { protocolVersion: '2025-06-18' });
        closeAfter(t, () => legacy.close());
        await assertServedEmpty(legacy);
        const modern = await connectModernHttp(url);
        closeAfter(t, () => modern.close());
        await assertServedEmpty(modern, 'http');
    });

    test('over HTTP, raw 2026-07-28: results fit the schema with caching hints, a cursor it never gave is -32602, calls are 404 with -32601', TIMEOUT, async t => {
        const url = await gatewayUrl(t);
        const schema = new SpecSchema(MODERN_REVISION);
        for (const method of Object.keys(EMPTY_LISTS)) {
            const response = await postModern(url, method);
            assert.equal(response.status, 200, method);
            const message = (await response.json()) as JsonRpcMessage;
            assert.deepEqual(schema.problems(message, method), [], method);
            assert.deepEqual(message.result?.[EMPTY_LISTS[method as keyof typeof EMPTY_LISTS]], [], method);
            // The same for every caller, fresh as long as the prompt lists are (caching.listTtlMs).
            assert.deepEqual([message.result?.ttlMs, message.result?.cacheScope], [LIST_TTL_MS, 'public'], method);
            const withCursor = await postModern(url, method, { cursor: 'not-one-of-ours' });
            assert.equal(((await withCursor.json()) as JsonRpcMessage).error?.code, -32602, `${method} with a cursor`);
        }
        const mismatched = await postModern(url, 'tools/list', {}, { 'mcp-method': 'prompts/list' });
        assert.equal(mismatched.status, 400, 'Mcp-Method must still match the body');
        const call = await postModern(url, 'tools/call', { name: 'anything', arguments: {} }, { 'mcp-name': 'anything' });
        assert.equal(call.status, 404);
        assert.equal(((await call.json()) as JsonRpcMessage).error?.code, -32601);
    });

    test('over stdio (--stdio): clients of both eras get empty lists', TIMEOUT, async t => {
        const dir = await mkdtemp(path.join(tmpdir(), 'gateway-unserved-'));
        closeAfter(t, () => rm(dir, { recursive: true, force: true }));
        const config = path.join(dir, 'gateway.json');
        await writeFile(config, JSON.stringify({ upstreams: [UPSTREAM] }));
        const args = [CLI, '--stdio', '--config', config];
        const legacy = await connectStdio(process.execPath, args);
        closeAfter(t, () => legacy.close());
        await assertServedEmpty(legacy);
        const modern = await connectModernStdio(process.execPath, args);
        closeAfter(t, () => modern.close());
        await assertServedEmpty(modern);
    });
});
