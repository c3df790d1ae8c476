/**
 * The worked 2026-07-28 example of docs/protocol-revisions.md is what the gateway does: every block marked
 * `<!-- worked-example: <name> <part> -->` is read from the page, each documented request is sent to a real gateway
 * (real HTTP on 127.0.0.1, API keys on, a recording upstream over HTTP serving `summarize` as the page's `docs`),
 * and the answer, what the upstream received (2026-07-28 and 2025-era upstreams), and the stdio exchange must be
 * the documented ones: status, headers, and bodies whole but for what changes from run to run (the gateway's own
 * request ids, its version, ttlMs values).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, test } from 'node:test';
import { closeAfter, ROOT, startTestGateway, stopChild, upstreamsReady, waitFor, type TeardownScope } from './helpers.js';
import { SseReader } from './raw-http.js';

const PAGE = 'docs/protocol-revisions.md';
const API_KEY = 'alice-key-0123456789abcdef';

/** The examples the page must hold, with the parts each has. */
const EXPECTED_EXAMPLES: Record<string, string[]> = {
    'prompts-get': ['request', 'response', 'upstream-2026', 'upstream-2025', 'stdio'],
    'header-mismatch': ['request', 'response'],
    'unsupported-version': ['request', 'response'],
    'missing-meta': ['request', 'response'],
    'unknown-method': ['request', 'response'],
    'unknown-prompt': ['request', 'response'],
    discover: ['request', 'response'],
    listen: ['request', 'response']
};

/** Each marked block of the page: example name -> part -> the block's text. */
function workedExamples(markdown: string): Map<string, Map<string, string>> {
    const examples = new Map<string, Map<string, string>>();
    const marked = /<!-- worked-example: (\S+) (\S+) -->\s*\n(`{3,})[^\n]*\n([\s\S]*?)\n\3[ \t]*(?:\n|$)/g;
    for (const [, name, part, , text] of markdown.matchAll(marked)) {
        const parts = examples.get(name!) ?? new Map<string, string>();
        assert.ok(!parts.has(part!), `${name} ${part} is marked twice`);
        examples.set(name!, parts.set(part!, text!));
    }
    return examples;
}

interface HttpMessage {
    startLine: string;
    /** Lower-case names, in order. */
    headers: [string, string][];
    body: string;
}

/** A request or response as the page writes it: a start line, headers, a blank line, the body. */
function parseHttp(text: string): HttpMessage {
    const [head = '', ...rest] = text.split(/\n\n/);
    const [startLine = '', ...lines] = head.split('\n');
    const headers = lines.map(line => {
        const colon = line.indexOf(':');
        assert.ok(colon > 0, `not a header: ${line}`);
        return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as [string, string];
    });
    return { startLine, headers, body: rest.join('\n\n') };
}

/**
 * A JSON value with what changes from run to run (or release to release) replaced by its type: the version in
 * serverInfo and clientInfo, ttlMs values, and the ids in `masked` (the gateway's own request ids upstream).
 */
function stable(value: unknown, masked: ReadonlySet<string> = new Set()): unknown {
    if (Array.isArray(value)) return value.map(item => stable(item, masked));
    if (value === null || typeof value !== 'object') return value;
    const record = value as Record<string, unknown>;
    const entries = Object.entries(record).map(([key, inner]) => {
        const volatile = masked.has(key) || key === 'ttlMs' || (key === 'version' && 'name' in record);
        return [key, volatile ? `<${typeof inner}>` : stable(inner, masked)] as const;
    });
    return Object.fromEntries(entries);
}

const examples = workedExamples(readFileSync(path.join(ROOT, PAGE), 'utf8'));

function part(name: string, which: string): string {
    const text = examples.get(name)?.get(which);
    assert.ok(text !== undefined, `${PAGE} has no worked-example ${name} ${which}`);
    return text;
}

/** Sends a documented request to the gateway: its method, path, headers (but Host: the gateway's own) and body. */
async function send(gatewayUrl: string, request: HttpMessage): Promise<Response> {
    const [method = '', target = ''] = request.startLine.split(' ');
    const headers = request.headers.filter(([name]) => name !== 'host');
    return fetch(new URL(target, gatewayUrl), { method, headers, body: request.body });
}

/** The documented response's status and headers (X-Request-Id: present, its value the gateway's own). */
function assertHead(actual: Response, documented: HttpMessage, what: string): void {
    const [, status = ''] = documented.startLine.split(' ');
    assert.equal(actual.status, Number(status), `${what}: status`);
    for (const [name, value] of documented.headers) {
        const got = actual.headers.get(name);
        if (name === 'x-request-id') assert.ok(got !== null && got !== '', `${what}: ${name}`);
        else assert.equal(got, value, `${what}: ${name}`);
    }
}

/** The answer, whole: a JSON body, or the first event of an SSE one (the stream stays open: it is cancelled). */
async function assertAnswer(t: TeardownScope, actual: Response, documented: HttpMessage, what: string): Promise<void> {
    assertHead(actual, documented, what);
    if ((actual.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        const reader = new SseReader(actual);
        closeAfter(t, () => reader.cancel());
        const data = /^data: (.*)$/m.exec(documented.body)?.[1];
        assert.ok(data !== undefined, `${what}: the documented stream has no data line`);
        assert.deepEqual(stable(await reader.next()), stable(JSON.parse(data)), `${what}: first event`);
        return;
    }
    assert.deepEqual(stable(await actual.json()), stable(JSON.parse(documented.body)), `${what}: body`);
}

interface Recorded {
    method: string;
    url: string;
    headers: IncomingHttpHeaders;
    body: string;
}

interface RecordingUpstream {
    url: string;
    received: Recorded[];
    /** The session id it gave the gateway (2025 era). */
    sessionId: string;
}

const SUMMARIZE = { name: 'summarize', description: 'Summarizes a text', arguments: [{ name: 'text', description: 'The text to summarize', required: true }] };

/** The upstream's answer to one JSON-RPC request, in its era: `summarize` listed and rendered. */
function upstreamResult(era: '2026-07-28' | '2025', method: string, params: { arguments?: { text?: string } } | undefined): unknown {
    const modern = era === '2026-07-28';
    const complete = modern ? { resultType: 'complete' } : {};
    const caching = modern ? { ttlMs: 0, cacheScope: 'public' } : {};
    const serverInfo = { name: 'docs-server', version: '1.0.0' };
    if (method === 'server/discover' && modern) {
        return { ...complete, ...caching, supportedVersions: [era], capabilities: { prompts: {} }, _meta: { 'io.modelcontextprotocol/serverInfo': serverInfo } };
    }
    if (method === 'initialize' && !modern) return { protocolVersion: '2025-11-25', capabilities: { prompts: {} }, serverInfo };
    if (method === 'prompts/list') return { ...complete, ...caching, prompts: [SUMMARIZE] };
    if (method === 'prompts/get') {
        return { ...complete, description: SUMMARIZE.description, messages: [{ role: 'user', content: { type: 'text', text: `Summarize: ${params?.arguments?.text}` } }] };
    }
    return undefined;
}

/** An upstream over Streamable HTTP, by hand, of either era; it records every request it gets. */
async function startRecordingUpstream(t: TeardownScope, era: '2026-07-28' | '2025'): Promise<RecordingUpstream> {
    const received: Recorded[] = [];
    const sessionId = 'recording-upstream-session';
    const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
            const body = Buffer.concat(chunks).toString();
            received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
            if (req.method === 'DELETE') return void res.writeHead(200).end();
            if (req.method !== 'POST') return void res.writeHead(405).end();
            const message = JSON.parse(body) as { id?: number; method: string; params?: { arguments?: { text?: string } } };
            if (message.id === undefined) return void res.writeHead(202).end();
            const result = upstreamResult(era, message.method, message.params);
            const answer = result === undefined ? { error: { code: -32601, message: 'Method not found' } } : { result };
            const session = era === '2025' ? { 'mcp-session-id': sessionId } : {};
            res.writeHead(200, { 'content-type': 'application/json', ...session }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...answer }));
        });
    });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    closeAfter(t, () => {
        server.closeAllConnections();
        return new Promise(resolve => server.close(resolve));
    });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, received, sessionId };
}

/** The page's configuration: API keys on, the client `alice`, the upstream `docs`. */
function pageConfig(upstreamUrl: string): Record<string, unknown> {
    return { auth: { mode: 'apiKey' }, clients: [{ id: 'alice', apiKey: API_KEY }], upstreams: [{ id: 'docs', transport: 'http', url: upstreamUrl }] };
}

async function gatewayBefore(t: TeardownScope, era: '2026-07-28' | '2025'): Promise<{ url: string; upstream: RecordingUpstream }> {
    const upstream = await startRecordingUpstream(t, era);
    const gateway = await startTestGateway(pageConfig(upstream.url));
    closeAfter(t, () => gateway.close());
    await upstreamsReady(gateway);
    return { url: gateway.url!, upstream };
}

/**
 * What the upstream got for the documented prompts/get: the documented path, exactly the documented headers (no
 * other: the client's Authorization never goes on), X-Request-Id the one the client was answered with, the session
 * id the upstream gave; the documented body but for the gateway's own request id.
 */
function assertUpstreamGot(got: Recorded, documented: HttpMessage, context: { requestId: string | null; sessionId: string }, what: string): void {
    const [method, target] = documented.startLine.split(' ');
    assert.equal(`${got.method} ${new URL(got.url, 'http://upstream').pathname}`, `${method} ${target}`, `${what}: request line`);
    const transport = new Set(['host', 'connection', 'content-length']);
    const names = (headers: string[]) => headers.filter(name => !transport.has(name)).sort();
    assert.deepEqual(names(Object.keys(got.headers)), names(documented.headers.map(([name]) => name)), `${what}: the header names`);
    for (const [name, value] of documented.headers) {
        if (transport.has(name)) continue;
        const expected = name === 'x-request-id' ? context.requestId : name === 'mcp-session-id' ? context.sessionId : value;
        assert.equal(got.headers[name], expected, `${what}: ${name}`);
    }
    const masked = new Set(['id']);
    assert.deepEqual(stable(JSON.parse(got.body), masked), stable(JSON.parse(documented.body), masked), `${what}: body`);
}

async function assertUpstreamSide(t: TeardownScope, era: '2026-07-28' | '2025'): Promise<void> {
    const { url, upstream } = await gatewayBefore(t, era);
    const request = parseHttp(part('prompts-get', 'request'));
    const answer = await send(url, request);
    await assertAnswer(t, answer, parseHttp(part('prompts-get', 'response')), `prompts-get via a ${era} upstream`);
    const gets = upstream.received.filter(({ body }) => body.includes('"prompts/get"'));
    assert.equal(gets.length, 1, 'one prompts/get reached the upstream');
    const context = { requestId: answer.headers.get('x-request-id'), sessionId: upstream.sessionId };
    assertUpstreamGot(gets[0]!, parseHttp(part('prompts-get', `upstream-${era === '2025' ? '2025' : '2026'}`)), context, `the ${era} upstream`);
}

/** The gateway over --stdio (the built CLI) with the page's upstream; lines in, answers out by id. */
async function startStdioGateway(t: TeardownScope, upstreamUrl: string) {
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-worked-example-'));
    closeAfter(t, () => rm(dir, { recursive: true, force: true }));
    const config = path.join(dir, 'gateway.json');
    await writeFile(config, JSON.stringify({ upstreams: [{ id: 'docs', transport: 'http', url: upstreamUrl }] }));
    const child = spawn(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--stdio', '--config', config], { cwd: ROOT, stdio: ['pipe', 'pipe', 'ignore'] });
    closeAfter(t, () => stopChild(child));
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', line => lines.push(line));
    const answerTo = async (line: string, id: unknown): Promise<string> => {
        child.stdin.write(`${line}\n`);
        let answer: string | undefined;
        await waitFor(() => (answer = lines.find(text => (JSON.parse(text) as { id?: unknown }).id === id)) !== undefined, 20_000, `the answer to ${String(id)}`);
        lines.splice(lines.indexOf(answer!), 1);
        return answer!;
    };
    return { answerTo };
}

describe(`the worked 2026-07-28 example of ${PAGE}`, () => {
    test('the page holds every example, each with its parts', () => {
        assert.deepEqual(
            [...examples].map(([name, parts]) => [name, [...parts.keys()].sort()]).sort(),
            Object.entries(EXPECTED_EXAMPLES)
                .map(([name, parts]) => [name, [...parts].sort()])
                .sort()
        );
    });

    test('every documented request gets the documented answer', { timeout: 60_000 }, async t => {
        const { url } = await gatewayBefore(t, '2026-07-28');
        for (const [name, parts] of examples) {
            const request = parts.get('request');
            const response = parts.get('response');
            if (request === undefined || response === undefined) continue;
            await assertAnswer(t, await send(url, parseHttp(request)), parseHttp(response), name);
        }
    });

    test('a 2026-07-28 upstream gets the documented request', { timeout: 60_000 }, async t => {
        await assertUpstreamSide(t, '2026-07-28');
    });

    test('a 2025-era upstream gets the documented session request', { timeout: 60_000 }, async t => {
        await assertUpstreamSide(t, '2025');
    });

    test('over stdio, the documented line gets the documented line', { timeout: 60_000 }, async t => {
        const upstream = await startRecordingUpstream(t, '2026-07-28');
        const gateway = await startStdioGateway(t, upstream.url);
        const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
        let probe = 0;
        await waitFor(
            async () => {
                const id = `ready-${++probe}`;
                const list = await gateway.answerTo(JSON.stringify({ jsonrpc: '2.0', id, method: 'prompts/list', params: { _meta: meta } }), id);
                return list.includes('"docs__summarize"');
            },
            20_000,
            "the upstream's prompt listed"
        );
        const [line = '', answer = ''] = part('prompts-get', 'stdio').split('\n');
        const id = (JSON.parse(line) as { id: unknown }).id;
        assert.deepEqual(stable(JSON.parse(await gateway.answerTo(line, id))), stable(JSON.parse(answer)));
    });
});
