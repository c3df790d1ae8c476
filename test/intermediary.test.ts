/**
 * The gateway as a 2026-07-28 intermediary: what a stateless upstream is told its client can do is what that client
 * declared, per request (limited to what the gateway can carry back), and an upstream's errors about the client's
 * request reach the client with their code and message, bounded; -32603 is for the gateway's own failures.
 *
 * Upstreams: the conformance fixture at 2026-07-28 (the SDK v2's createMcpHandler, whose capability check answers
 * -32021), and a raw 2026-07-28 upstream over HTTP that records what each prompts/get carried and answers chosen errors.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, test } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { connectHttp, ROOT, rpcError, startTestGateway, stopChild, upstreamsReady, waitFor } from './helpers.js';
import { postModern, type JsonRpcMessage } from './raw-http.js';

type Scope = { after(fn: () => unknown): void };

const CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

/** test/fixtures/conformance-server.ts at 2026-07-28, over HTTP. */
async function startModernConformanceFixture(t: Scope): Promise<string> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/fixtures/conformance-server.ts'), '--era', '2026-07-28'], {
        cwd: ROOT,
        stdio: ['pipe', 'ignore', 'pipe']
    });
    t.after(() => stopChild(child));
    return new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stderr }).on('line', line => {
            const match = /^FIXTURE_URL=(\S+)/.exec(line);
            if (match) resolve(match[1]!);
        });
        child.once('exit', code => reject(new Error(`the fixture exited with ${code}`)));
    });
}

async function gatewayInFront(t: Scope, url: string, id = 'up') {
    const gateway = await startTestGateway({ upstreams: [{ id, transport: 'http', url }] });
    t.after(() => gateway.close());
    await upstreamsReady(gateway);
    return gateway;
}

/** A 2026-07-28 SDK client declaring `capabilities`; with elicitation, it answers every form with `context`. */
async function modernClient(t: Scope, url: string, capabilities: Record<string, unknown>): Promise<Client> {
    const client = new Client({ name: 'intermediary-test', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    if (capabilities.elicitation !== undefined) {
        client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { context: 'from the client' } }));
    }
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    t.after(() => client.close());
    return client;
}

async function json(response: Response): Promise<JsonRpcMessage> {
    return (await response.json()) as JsonRpcMessage;
}

describe('what a stateless upstream is told about the client', () => {
    test('a 2026-07-28 client declaring elicitation gets the upstream input_required and completes the retry through the gateway', { timeout: 60_000 }, async t => {
        const gateway = await gatewayInFront(t, await startModernConformanceFixture(t));
        const client = await modernClient(t, gateway.url!, { elicitation: {} });
        const result = await client.getPrompt({ name: 'up__test_input_required_result_prompt' });
        assert.deepEqual(result.messages, [{ role: 'user', content: { type: 'text', text: 'Prompt with context: from the client' } }]);
    });

    test('over stdio (--stdio) too: a 2026-07-28 client declaring elicitation completes the round trip', { timeout: 60_000 }, async t => {
        const upstream = await startModernConformanceFixture(t);
        const dir = await mkdtemp(path.join(tmpdir(), 'gateway-intermediary-'));
        t.after(() => rm(dir, { recursive: true, force: true }));
        const config = path.join(dir, 'gateway.json');
        await writeFile(config, JSON.stringify({ upstreams: [{ id: 'up', transport: 'http', url: upstream }] }));
        const client = new Client({ name: 'intermediary-test', version: '1.0.0' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
        client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { context: 'over stdio' } }));
        await client.connect(
            new StdioClientTransport({ command: process.execPath, args: [path.join(ROOT, 'dist/cli.js'), '--stdio', '--config', config], cwd: ROOT, stderr: 'pipe' })
        );
        t.after(() => client.close());
        await waitFor(async () => (await client.listPrompts()).prompts.length > 0, 20_000, "the upstream's prompts");
        const result = await client.getPrompt({ name: 'up__test_input_required_result_prompt' });
        assert.deepEqual(result.messages, [{ role: 'user', content: { type: 'text', text: 'Prompt with context: over stdio' } }]);
    });

    test('a 2026-07-28 client not declaring it gets the upstream -32021 with its message and required capabilities, not -32603', { timeout: 60_000 }, async t => {
        const gateway = await gatewayInFront(t, await startModernConformanceFixture(t));
        const response = await postModern(gateway.url!, 'prompts/get', { name: 'up__test_input_required_result_prompt' });
        const body = await json(response);
        assert.equal(body.error?.code, -32021, JSON.stringify(body));
        assert.equal(response.status, 400, 'over HTTP, MissingRequiredClientCapability is 400 (2026-07-28)');
        // In the gateway's words (issue 28): the upstream's own text never reaches the client.
        assert.equal(body.error?.message, 'The upstream asks for elicitation, which this client did not declare');
        assert.deepEqual(body.error?.data, { requiredCapabilities: { elicitation: { form: {} } } });
    });

    test('a 2025 session declaring elicitation is asked on its own request and completes the prompt through the gateway (row B)', { timeout: 60_000 }, async t => {
        const gateway = await gatewayInFront(t, await startModernConformanceFixture(t));
        const legacy = new Client({ name: 'intermediary-test-2025', version: '1.0.0' }, { capabilities: { elicitation: {} } });
        legacy.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { context: 'asked over 2025' } }));
        await legacy.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
        t.after(() => legacy.close());
        const result = await legacy.getPrompt({ name: 'up__test_input_required_result_prompt' });
        assert.deepEqual(result.messages, [{ role: 'user', content: { type: 'text', text: 'Prompt with context: asked over 2025' } }]);
    });

    test('each request carries its own client capabilities, limited to elicitation, sampling and roots; list reads carry none', { timeout: 60_000 }, async t => {
        const upstream = await startRawModernUpstream(t);
        const gateway = await gatewayInFront(t, upstream.url, 'raw');
        const declared = { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true }, experimental: { x: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } };
        await (await postModern(gateway.url!, 'prompts/get', { name: 'raw__p', _meta: { [CAPABILITIES]: declared } })).body?.cancel();
        await (await postModern(gateway.url!, 'prompts/get', { name: 'raw__p' })).body?.cancel();
        await (await postModern(gateway.url!, 'prompts/get', { name: 'raw__p', _meta: { [CAPABILITIES]: { elicitation: 'yes', sampling: [] } } })).body?.cancel();
        const legacy = await connectHttp(gateway.url!);
        t.after(() => legacy.close());
        await legacy.getPrompt({ name: 'raw__p' });
        assert.deepEqual(upstream.capabilities.get('prompts/get'), [{ elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } }, {}, {}, {}]);
        assert.ok(
            (upstream.capabilities.get('prompts/list') ?? []).every(capabilities => Object.keys(capabilities).length === 0),
            'list reads are shared: nothing of a client'
        );
    });
});

describe("an upstream's errors", () => {
    test("about the client's request pass with their code and message (bounded, data dropped); -32002 is -32602 for a 2026-07-28 client", { timeout: 60_000 }, async t => {
        const upstream = await startRawModernUpstream(t);
        const gateway = await gatewayInFront(t, upstream.url, 'raw');
        const modern = async (name: string) => (await json(await postModern(gateway.url!, 'prompts/get', { name: `raw__${name}` }))).error;
        assert.deepEqual(await modern('invalid'), { code: -32602, message: 'Argument topic must be one of: a, b' });
        assert.deepEqual(await modern('gone'), { code: -32602, message: 'Resource not found: file:///gone' }, '2026-07-28 MUST NOT emit -32002');
        assert.deepEqual(await modern('application'), { code: 4242, message: 'Quota exceeded for this prompt' });
        const long = await modern('long');
        assert.equal(long?.code, -32602);
        assert.equal(long?.message.length, 512, 'an upstream message is cut');
        assert.equal((long as { data?: unknown } | undefined)?.data, undefined, "an upstream's data is dropped");
        const legacy = await connectHttp(gateway.url!);
        t.after(() => legacy.close());
        assert.deepEqual(await rpcError(legacy.getPrompt({ name: 'raw__gone' })), { code: -32002, message: 'Resource not found: file:///gone' }, 'a 2025 client knows -32002');
    });

    test("the gateway's own failures, and an upstream's failures of its own, stay -32603 without the upstream's text", { timeout: 60_000 }, async t => {
        const upstream = await startRawModernUpstream(t);
        const gateway = await gatewayInFront(t, upstream.url, 'raw');
        for (const name of ['internal', 'not-found-method', 'invalid-request']) {
            const error = (await json(await postModern(gateway.url!, 'prompts/get', { name: `raw__${name}` }))).error;
            assert.equal(error?.code, -32603, name);
            assert.match(error?.message ?? '', /^Upstream raw failed: error -326\d\d$/, name);
        }
        const oversized = (await json(await postModern(gateway.url!, 'prompts/get', { name: 'raw__huge-state' }))).error;
        assert.equal(oversized?.code, -32603);
    });
});

interface RawUpstream {
    url: string;
    /** The clientCapabilities each request carried, by method. */
    capabilities: Map<string, Record<string, unknown>[]>;
}

/** The error each prompt answers with (the upstream's own words, a secret in `data`); `p` is a plain prompt. */
const ERRORS: Record<string, { code: number; message: string; data?: unknown }> = {
    invalid: { code: -32602, message: 'Argument topic must be one of: a, b', data: { secret: 'upstream-internal' } },
    gone: { code: -32002, message: 'Resource not found: file:///gone', data: { uri: 'file:///gone' } },
    application: { code: 4242, message: 'Quota exceeded for this prompt' },
    long: { code: -32602, message: `Too long: ${'x'.repeat(4000)}`, data: { secret: 'upstream-internal' } },
    internal: { code: -32603, message: 'stack trace at /srv/upstream/secret.js:12' },
    'not-found-method': { code: -32601, message: 'Method not found' },
    'invalid-request': { code: -32600, message: 'Invalid request: something of the gateway' }
};

/** A 2026-07-28 upstream over HTTP, by hand: it answers server/discover, prompts/list and prompts/get. */
async function startRawModernUpstream(t: Scope): Promise<RawUpstream> {
    const capabilities = new Map<string, Record<string, unknown>[]>();
    const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
            const message = JSON.parse(Buffer.concat(chunks).toString()) as { id?: number; method: string; params?: { name?: string; _meta?: Record<string, unknown> } };
            if (message.id === undefined) return void res.writeHead(202).end();
            const declared = message.params?._meta?.[CAPABILITIES] as Record<string, unknown> | undefined;
            if (declared !== undefined) capabilities.set(message.method, [...(capabilities.get(message.method) ?? []), declared]);
            const name = message.params?.name ?? '';
            const results: Record<string, unknown> = {
                'server/discover': { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { prompts: {} }, ttlMs: 0, cacheScope: 'public' },
                'prompts/list': { resultType: 'complete', prompts: ['p', 'huge-state', ...Object.keys(ERRORS)].map(prompt => ({ name: prompt })), ttlMs: 0, cacheScope: 'public' },
                'prompts/get':
                    name === 'huge-state'
                        ? { resultType: 'input_required', inputRequests: {}, requestState: 's'.repeat(70_000) }
                        : { resultType: 'complete', messages: [{ role: 'user', content: { type: 'text', text: 'p' } }] }
            };
            const error = message.method === 'prompts/get' ? ERRORS[name] : undefined;
            const result = results[message.method];
            const body =
                error !== undefined
                    ? { jsonrpc: '2.0', id: message.id, error }
                    : result === undefined
                      ? { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } }
                      : { jsonrpc: '2.0', id: message.id, result };
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        });
    });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    t.after(() => {
        server.closeAllConnections();
        return new Promise(resolve => server.close(resolve));
    });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, capabilities };
}
