/**
 * The same odd messages through both downstream transports: one gateway over HTTP and one `--stdio` child per context
 * (the built CLI), in front of the same fixture upstream. Each row is sent as raw text; the JSON-RPC outcome (error
 * code, id, result or none) must be the one the row names on both, and the HTTP status the one HTTP adds. "No answer"
 * on stdio is seen, never waited out: a ping sentinel follows each row, and whatever came before its answer is the
 * row's. A row a transport rule sets apart (HTTP needs a session, stdio is one) names what stdio gets on its own.
 * Contexts: S a 2025-11-25 session, B 2025-03-26 (batches), O 2024-11-05, M stateless 2026-07-28 (HTTP with the
 * headers a client mirrors from the body), N nothing yet (no initialize, no session).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../src/gateway.js';
import { closeAfter, ROOT, startHttpFixture, startTestGateway, stopChild, upstreamsReady, waitFor } from './helpers.js';
import { initializeBody, messagesOf, modernHeaders, modernMeta, modernRequest, openRawSession, post, type JsonRpcMessage } from './raw-http.js';

const CLI = path.join(ROOT, 'dist/cli.js');
const MAX_JSON_DEPTH = 16;
const MAX_BODY_BYTES = 4096;
const MODERN = '2026-07-28';

type Context = 'S' | 'B' | 'O' | 'M' | 'N';
const SESSION_REVISIONS = { S: '2025-11-25', B: '2025-03-26', O: '2024-11-05' } as const;

type Id = string | number | null;
/** One answer reduced to what is compared: an error's code, or `result`, with the id it names. */
interface Answered {
    id: Id;
    code?: number;
}
/** What a message gets: nothing, one answer, or a batch's answers (in id order: JSON-RPC lets them come in any). */
type Outcome = 'none' | Answered | { batch: Answered[] };

interface Row {
    name: string;
    context: Context;
    text: string;
    expect: Outcome;
    status: number;
    /** Where a transport rule makes stdio differ (the plan's "T" rows): its own expectation. */
    stdio?: Outcome;
    /** Why the error messages differ though the outcome is the same (compared otherwise). */
    messagesDiffer?: string;
    /** HTTP headers of its own, in place of its context's. */
    headers?: Record<string, string>;
}

const json = (value: unknown) => JSON.stringify(value);
const ping = (id: unknown = 1) => json({ jsonrpc: '2.0', id, method: 'ping' });
const error = (code: number, id: Id = null): Answered => ({ code, id });
const result = (id: Id): Answered => ({ id });
/** A session id no gateway opened (or one whose session has ended): unknown. */
const STALE_SESSION_ID = 'a-session-this-gateway-never-opened';
const modern = (method: string, params: Record<string, unknown> = {}, id: Id = 1) => modernRequest(method, params, id as string | number);

const ROWS: Row[] = [
    { name: '1 malformed JSON: -32700', context: 'S', text: '{"jsonrpc":', expect: error(-32700), status: 400 },
    ...['42', '"x"', 'null', 'true'].map(text => ({ name: `2 a JSON scalar ${text}: -32600, no id`, context: 'S' as const, text, expect: error(-32600), status: 400 })),
    { name: '3 an empty batch: -32600, no id', context: 'B', text: '[]', expect: error(-32600), status: 400 },
    { name: '4 jsonrpc "1.0": -32600 with its id', context: 'S', text: json({ jsonrpc: '1.0', id: 1, method: 'ping' }), expect: error(-32600, 1), status: 400 },
    { name: '5 no method: -32600 with its id', context: 'S', text: json({ jsonrpc: '2.0', id: 1 }), expect: error(-32600, 1), status: 400 },
    { name: '5 a method that is no string: -32600 with its id', context: 'S', text: json({ jsonrpc: '2.0', id: 1, method: 5 }), expect: error(-32600, 1), status: 400 },
    ...(
        [
            ['null', null],
            ['an object', {}],
            ['true', true],
            ['1.5', 1.5],
            ['an unsafe integer', '9007199254740993'],
            ['a 300-byte string', 'x'.repeat(300)]
        ] as const
    ).map(([what, id]) => ({
        name: `6 id ${what}: -32600, no id`,
        context: 'S' as const,
        // The unsafe integer as JSON text: JavaScript cannot hold it to write it.
        text: what === 'an unsafe integer' ? `{"jsonrpc":"2.0","id":${id},"method":"ping"}` : ping(id),
        expect: error(-32600),
        status: 400
    })),
    {
        name: "7 an extra member: -32600 with its id (closed envelope, as the SDK's)",
        context: 'S',
        text: json({ jsonrpc: '2.0', id: 1, method: 'ping', foo: 1 }),
        expect: error(-32600, 1),
        status: 400
    },
    ...(['[]', 'null'] as const).flatMap(params => [
        {
            name: `8 params ${params} in a session: -32602 with its id`,
            context: 'S' as const,
            text: `{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":${params}}`,
            expect: error(-32602, 1),
            status: 200
        },
        {
            name: `8 params ${params} stateless: -32602 with its id`,
            context: 'M' as const,
            text: `{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":${params}}`,
            expect: error(-32602, 1),
            status: 400
        }
    ]),
    ...(['S', 'M'] as const).map(context => ({
        name: `9 params [1] on a notification (${context}): no answer`,
        context,
        text: json({ jsonrpc: '2.0', method: 'notifications/roots/list_changed', params: [1] }),
        expect: 'none' as const,
        status: 202
    })),
    { name: '10 a method that is no string, no id: -32600, no id', context: 'S', text: json({ jsonrpc: '2.0', method: 5 }), expect: error(-32600), status: 400 },
    {
        name: '11 notifications/initialized sent as a request, in a session: -32601',
        context: 'S',
        text: json({ jsonrpc: '2.0', id: 1, method: 'notifications/initialized' }),
        expect: error(-32601, 1),
        status: 200
    },
    {
        name: '11 notifications/initialized sent as a request, stateless: -32601',
        context: 'M',
        text: json(modern('notifications/initialized')),
        expect: error(-32601, 1),
        status: 404
    },
    {
        name: '12 an unknown method in a session: -32601',
        context: 'S',
        text: json({ jsonrpc: '2.0', id: 1, method: 'foo/bar', params: {} }),
        expect: error(-32601, 1),
        status: 200
    },
    { name: '12 an unknown method stateless: -32601', context: 'M', text: json(modern('foo/bar')), expect: error(-32601, 1), status: 404 },
    { name: '13 an unknown notification in a session: no answer', context: 'S', text: json({ jsonrpc: '2.0', method: 'notifications/foo' }), expect: 'none', status: 202 },
    {
        name: '13 an unknown notification stateless: no answer',
        context: 'M',
        text: json({ jsonrpc: '2.0', method: 'notifications/foo', params: { _meta: modernMeta() } }),
        expect: 'none',
        status: 202
    },
    {
        name: '14 a response the gateway never asked for: HTTP cannot accept it (400 -32600, no id); stdio ignores it (T)',
        context: 'S',
        text: json({ jsonrpc: '2.0', id: 5, result: {} }),
        expect: error(-32600),
        status: 400,
        stdio: 'none'
    },
    { name: '15 a batch in a 2024-11-05 session: -32600, no id', context: 'O', text: `[${ping(1)},${ping(2)}]`, expect: error(-32600), status: 400 },
    { name: '16 a batch in a 2025-03-26 session: an answer each', context: 'B', text: `[${ping(1)},${ping(2)}]`, expect: { batch: [result(1), result(2)] }, status: 200 },
    {
        name: '16 a batch of notifications only: no answer',
        context: 'B',
        text: json([
            { jsonrpc: '2.0', method: 'notifications/foo' },
            { jsonrpc: '2.0', method: 'notifications/bar' }
        ]),
        expect: 'none',
        status: 202
    },
    {
        name: '17 a batch with one invalid item: -32600 for it, a result for the other',
        context: 'B',
        text: `[${json({ jsonrpc: '1.0', id: 1, method: 'ping' })},${ping(2)}]`,
        expect: { batch: [error(-32600, 1), result(2)] },
        status: 200
    },
    {
        name: '17 a batch holding initialize: -32600 for it, a result for the other',
        context: 'B',
        text: `[${json(initializeBody('2025-03-26', 1))},${ping(2)}]`,
        expect: { batch: [error(-32600, 1), result(2)] },
        status: 200
    },
    { name: '18 a batch in a 2025-11-25 session: -32600, no id', context: 'S', text: `[${ping(1)},${ping(2)}]`, expect: error(-32600), status: 400 },
    {
        name: '18 a stateless batch: -32600, no id',
        context: 'M',
        text: json([modern('prompts/list', {}, 1), modern('prompts/list', {}, 2)]),
        expect: error(-32600),
        status: 400,
        messagesDiffer: 'the stdio channel is a 2025-11-25 session until initialize, and the message names the revision'
    },
    {
        name: '18 a batch before initialize: -32600, no id',
        context: 'N',
        text: `[${ping(1)},${ping(2)}]`,
        expect: error(-32600),
        status: 400,
        messagesDiffer: 'the stdio channel is a 2025-11-25 session until initialize, and the message names the revision'
    },
    {
        name: '20 initialize with bad params: -32602 with its id',
        context: 'N',
        text: json({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 5 } }),
        expect: error(-32602, 1),
        status: 200
    },
    {
        name: '22 a request before initialize: HTTP needs a session, stdio serves it as the newest revision (T)',
        context: 'N',
        text: json({ jsonrpc: '2.0', id: 1, method: 'prompts/list', params: {} }),
        expect: error(-32000),
        status: 400,
        stdio: result(1)
    },
    { name: '21 a second initialize: -32600 with its id', context: 'S', text: json(initializeBody('2025-11-25', 1)), expect: error(-32600, 1), status: 400 },
    {
        name: '23 an unsupported _meta version: -32022 with its id',
        context: 'M',
        text: json(modernRequest('prompts/list', {}, 1, '1900-01-01')),
        expect: error(-32022, 1),
        status: 400
    },
    {
        name: '24 _meta without clientCapabilities: -32602 with its id',
        context: 'M',
        text: json({ jsonrpc: '2.0', id: 1, method: 'prompts/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } } }),
        expect: error(-32602, 1),
        status: 400
    },
    {
        name: '24 a _meta version that is no string: -32602 with its id',
        context: 'M',
        text: json({ jsonrpc: '2.0', id: 1, method: 'prompts/list', params: { _meta: { ...modernMeta(), 'io.modelcontextprotocol/protocolVersion': 5 } } }),
        expect: error(-32602, 1),
        status: 400
    },
    { name: '25 ping stateless: -32601', context: 'M', text: json(modern('ping')), expect: error(-32601, 1), status: 404 },
    {
        name: '25 server/discover in a session: -32601',
        context: 'S',
        text: json({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} }),
        expect: error(-32601, 1),
        status: 200
    },
    {
        name: '26 a stateless body on a live session without the 2026-07-28 headers: its headers are checked (-32020); stdio serves it (T)',
        context: 'S',
        text: json(modern('prompts/list')),
        expect: error(-32020, 1),
        status: 400,
        stdio: result(1)
    },
    {
        name: '27 subscriptions/listen with notifications that are no object: -32602 with its id',
        context: 'M',
        text: json(modern('subscriptions/listen', { notifications: 1 })),
        expect: error(-32602, 1),
        status: 200
    },
    {
        name: '28 nested deeper than limits.maxJsonDepth: -32600, no id',
        context: 'S',
        text: json({ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { deep: JSON.parse(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`) as unknown } } }),
        expect: error(-32600),
        status: 400
    },
    {
        name: '28 larger than limits.maxBodyBytes: -32600, no id',
        context: 'S',
        text: json({ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { pad: 'x'.repeat(MAX_BODY_BYTES) } } }),
        expect: error(-32600),
        status: 413
    },
    { name: '29 a byte order mark before the JSON: served', context: 'S', text: `\uFEFF${ping(1)}`, expect: result(1), status: 200 },
    {
        name: '30 a batch item whose _meta claims a version: served in the session (a batch is never stateless)',
        context: 'B',
        text: json([modernRequest('prompts/list', {}, 1, '1900-01-01'), { jsonrpc: '2.0', id: 2, method: 'ping' }]),
        expect: { batch: [result(1), result(2)] },
        status: 200
    },
    {
        name: '31 a batch cancelling its own request: the same outcome on both (messages taken in order)',
        context: 'B',
        text: json([
            { jsonrpc: '2.0', id: 5, method: 'prompts/get', params: { name: 'up__slow', arguments: { ms: '1000' } } },
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } },
            { jsonrpc: '2.0', id: 6, method: 'ping' }
        ]),
        expect: { batch: [result(6)] },
        status: 200
    },
    {
        name: '32 a stateless body with an unknown Mcp-Session-Id and no 2026-07-28 header: the id ignored, its headers checked (-32020); stdio serves it (T)',
        context: 'S',
        headers: { 'mcp-session-id': STALE_SESSION_ID },
        text: json(modern('prompts/list')),
        expect: error(-32020, 1),
        status: 400,
        stdio: result(1)
    },
    {
        name: '32 a handshake-era body with an unknown Mcp-Session-Id: 404 -32001, no id; stdio is its session (T)',
        context: 'S',
        headers: { 'mcp-session-id': STALE_SESSION_ID, 'mcp-protocol-version': SESSION_REVISIONS.S },
        text: ping(1),
        expect: error(-32001),
        status: 404,
        stdio: result(1)
    }
];

function outcomeOf(answers: JsonRpcMessage[], batch: boolean): Outcome {
    const reduced = answers.map(answer => ({ id: answer.id ?? null, ...(answer.error === undefined ? {} : { code: answer.error.code }) }));
    if (batch) return { batch: reduced.sort((a, b) => String(a.id).localeCompare(String(b.id))) };
    if (reduced.length === 0) return 'none';
    assert.equal(reduced.length, 1, `one answer, not ${json(answers)}`);
    return reduced[0]!;
}

/** Each error's message and `data`, compared across the transports as they are (the -32022's supported and requested versions). */
const errorsOf = (answers: JsonRpcMessage[]) => answers.map(answer => ({ message: answer.error?.message, data: answer.error?.data }));

/** A `--stdio` gateway: a line in, its answers (if any) out, read up to the answer of the ping sent after it. */
class StdioGateway {
    #lines: AsyncIterator<string>;
    #sentinels = 0;

    constructor(private readonly child: ChildProcessWithoutNullStreams) {
        this.#lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    }

    async #next(): Promise<JsonRpcMessage | JsonRpcMessage[]> {
        const line = await this.#lines.next();
        assert.equal(line.done, false, 'the gateway answers');
        return JSON.parse(String(line.value)) as JsonRpcMessage | JsonRpcMessage[];
    }

    /** The answers to `text` (a batch's array spread, `batch` set), or none if its sentinel came back first with nothing before it. */
    async exchange(text: string, answerDue: boolean): Promise<{ answers: JsonRpcMessage[]; batch: boolean }> {
        const sentinel = `sentinel-${++this.#sentinels}`;
        this.child.stdin.write(`${text}\n${ping(sentinel)}\n`);
        const answers: JsonRpcMessage[] = [];
        let batch = false;
        let sentinelSeen = false;
        // An answer the gateway gives asynchronously (served, not refused) may follow the sentinel's.
        while (!sentinelSeen || (answerDue && answers.length === 0 && !batch)) {
            const received = await this.#next();
            if (!Array.isArray(received) && received.id === sentinel) {
                assert.ok(received.result !== undefined, `the sentinel is answered: ${json(received)}`);
                sentinelSeen = true;
            } else if (Array.isArray(received)) {
                batch = true;
                answers.push(...received);
            } else answers.push(received);
        }
        return { answers, batch };
    }

    /** initialize and notifications/initialized, as a client does it. */
    async initialize(protocolVersion: string): Promise<void> {
        const { answers } = await this.exchange(json(initializeBody(protocolVersion, 'init')), true);
        assert.equal((answers[0]?.result as { protocolVersion?: string } | undefined)?.protocolVersion, protocolVersion);
        assert.equal((await this.exchange(json({ jsonrpc: '2.0', method: 'notifications/initialized' }), false)).answers.length, 0);
    }
}

/** The headers an HTTP client sends with `text` in a context: its session's, or those a 2026-07-28 client mirrors from the body. */
function httpHeaders(context: Context, text: string, sessions: Partial<Record<Context, Record<string, string>>>): Record<string, string> {
    if (context === 'N') return {};
    if (context !== 'M') return sessions[context]!;
    let body: unknown;
    try {
        body = JSON.parse(text);
    } catch {
        return { 'mcp-protocol-version': MODERN };
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
        return { 'mcp-protocol-version': MODERN, ...(Array.isArray(body) ? { 'mcp-method': 'prompts/list' } : {}) };
    const { method, params } = body as { method?: unknown; params?: unknown };
    if (typeof method !== 'string') return { 'mcp-protocol-version': MODERN };
    const record = typeof params === 'object' && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : undefined;
    const claimed = (record?._meta as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/protocolVersion'];
    return modernHeaders({ method, ...(record === undefined ? {} : { params: record }) }, typeof claimed === 'string' ? claimed : MODERN);
}

describe('the same message gets the same JSON-RPC outcome over HTTP and stdio', () => {
    const closers: (() => unknown)[] = [];
    const suite = { after: (close: () => unknown) => closers.push(close) };
    after(async () => {
        for (const close of closers) await close();
    });

    let gateway: RunningGateway;
    const stdio: Partial<Record<Context, StdioGateway>> = {};
    const sessions: Partial<Record<Context, Record<string, string>>> = {};

    before(async () => {
        assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)');
        const fixture = await startHttpFixture('streamable-http', { prompts: 2 });
        closeAfter(suite, () => fixture.close());
        const config = {
            limits: { maxJsonDepth: MAX_JSON_DEPTH, maxBodyBytes: MAX_BODY_BYTES },
            upstreams: [{ id: 'up', transport: 'streamable-http', url: fixture.url, pingIntervalMs: 0, timeoutMs: 120_000 }]
        };
        const dir = await mkdtemp(path.join(tmpdir(), 'gateway-differential-'));
        closeAfter(suite, () => rm(dir, { recursive: true, force: true }));
        const file = path.join(dir, 'gateway.json');
        await writeFile(file, json(config));
        gateway = await startTestGateway(config);
        closeAfter(suite, () => gateway.close());
        const children = (['N', 'S', 'B', 'O'] as const).map(context => {
            const child = spawn(process.execPath, [CLI, '--stdio', '--config', file], {
                cwd: ROOT,
                stdio: ['pipe', 'pipe', 'ignore']
            }) as unknown as ChildProcessWithoutNullStreams;
            closeAfter(suite, () => stopChild(child));
            // One child serves N first and M after: a stateless request is served beside whatever session there is.
            stdio[context] = new StdioGateway(child);
            return context;
        });
        stdio.M = stdio.N;
        await upstreamsReady(gateway);
        await Promise.all(
            children.map(async context => {
                if (context === 'N') return;
                const revision = SESSION_REVISIONS[context];
                await stdio[context]!.initialize(revision);
                sessions[context] = (await openRawSession(gateway.url!, revision)).headers;
            })
        );
    });

    for (const row of ROWS) {
        test(row.name, { timeout: 60_000 }, async () => {
            const response = await post(gateway.url!, row.text, row.headers ?? httpHeaders(row.context, row.text, sessions));
            const body = await response.text();
            const parsed: unknown = body === '' ? [] : JSON.parse(body);
            const httpAnswers = [parsed as JsonRpcMessage | JsonRpcMessage[]].flat();
            const overHttp = outcomeOf(httpAnswers, Array.isArray(parsed) && body !== '');
            const stdioExpected = row.stdio ?? row.expect;
            const overStdio = await stdio[row.context]!.exchange(row.text, stdioExpected !== 'none');
            assert.deepEqual({ http: overHttp, stdio: outcomeOf(overStdio.answers, overStdio.batch) }, { http: row.expect, stdio: stdioExpected }, body);
            assert.equal(response.status, row.status, body);
            if (row.stdio === undefined) {
                const data = (answers: JsonRpcMessage[]) => errorsOf(answers).map(error => (row.messagesDiffer === undefined ? error : error.data));
                assert.deepEqual(data(overStdio.answers), data(httpAnswers), 'the same error messages and data');
            }
        });
    }

    test('19 the same id twice in flight in a session (a slow prompt): the second -32600 with its id, the first untouched', { timeout: 120_000 }, async () => {
        const slow = json({ jsonrpc: '2.0', id: 'dup', method: 'prompts/get', params: { name: 'up__slow', arguments: { ms: '60000' } } });
        const again = json({ jsonrpc: '2.0', id: 'dup', method: 'ping' });
        const cancel = json({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'dup' } });
        const headers = sessions.S!;
        const slowStarted = async () => {
            const stats = await post(gateway.url!, { jsonrpc: '2.0', id: 'stats', method: 'prompts/get', params: { name: 'up__stats' } }, headers);
            const [answer] = await messagesOf(stats);
            return (JSON.parse((answer?.result as { messages: { content: { text: string } }[] }).messages[0]!.content.text) as { slowStarted: number }).slowStarted;
        };
        const before = await slowStarted();
        const controller = new AbortController();
        const first = post(gateway.url!, slow, headers, { signal: controller.signal }).then(response => response.text());
        first.catch(() => {});
        await waitFor(async () => (await slowStarted()) === before + 1, 30_000, 'the first request to reach the upstream over HTTP');
        const overHttp = await post(gateway.url!, again, headers);
        const httpAnswers = await messagesOf(overHttp);
        assert.equal((await post(gateway.url!, cancel, headers)).status, 202);
        controller.abort();

        const channel = stdio.S!;
        assert.deepEqual((await channel.exchange(slow, false)).answers, [], 'in flight: no answer yet');
        await waitFor(async () => (await slowStarted()) === before + 2, 30_000, 'the first request to reach the upstream over stdio');
        const overStdio = await channel.exchange(again, true);
        assert.deepEqual((await channel.exchange(cancel, false)).answers, [], 'a cancelled request is not answered');
        assert.deepEqual({ http: outcomeOf(httpAnswers, false), stdio: outcomeOf(overStdio.answers, false) }, { http: error(-32600, 'dup'), stdio: error(-32600, 'dup') });
        assert.equal(overHttp.status, 200);
        assert.deepEqual(errorsOf(overStdio.answers), errorsOf(httpAnswers));
    });
});
