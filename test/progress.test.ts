/**
 * Progress of long requests: a client that sends `_meta.progressToken` with prompts/get or completion/complete gets
 * the upstream's notifications/progress under its own token, on its own request only; the upstream's timeoutMs then
 * restarts on each notification, bounded in all by maxTotalTimeoutMs. A request without a token sees none of it.
 *
 * The fixture's `progress` prompt (listed with --progress-prompt) sends `steps` notifications, one every
 * `intervalMs`, for the token it received, and answers "progressToken: yes <its token as JSON>; sent: <n>" or
 * "progressToken: no; sent: 0". Its `settleMs` pauses between the last notification and the answer: the SDK client
 * drops a notification that arrives together with its response (it dispatches notifications a microtask late), so
 * tests that listen through an SDK client give it a moment; the raw-wire tests use no pause and see everything.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { Client, GetPromptResult, Progress } from '@modelcontextprotocol/client';
import { parseConfig } from '../src/config/load.js';
import { maxTotalTimeout, type StdioUpstreamConfig } from '../src/config/schema.js';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, connectStdio, ROOT, rpcError, startHttpFixture, startTestGateway, stdioFixture, waitFor, type HttpFixture } from './helpers.js';
import { call, deleteSession, openRawSession, type JsonRpcMessage, type RawSession } from './raw-http.js';
import { configError, lineFor } from './unit/config-assert.js';

const CLI = path.join(ROOT, 'dist/cli.js');
const WITH_PROGRESS = { flags: ['--progress-prompt'] };

type Json = Record<string, unknown>;

interface ProgressStats {
    calls: { method: 'get' | 'complete'; token: string | number | null }[];
    sent: number;
    cancelled: number;
    completed: number;
}

/** The `progress` part of the fixture's stats, read through the gateway. */
async function progressStats(client: Client, upstream: string): Promise<ProgressStats> {
    const result = await client.getPrompt({ name: `${upstream}__stats` });
    const stats = JSON.parse(textOf(result)) as { progress?: ProgressStats };
    assert.ok(stats.progress, 'the fixture runs with --progress-prompt');
    return stats.progress;
}

function textOf(result: GetPromptResult): string {
    const content = result.messages[0]?.content;
    assert.ok(content?.type === 'text', 'a text answer');
    return content.text;
}

/** The token the upstream saw, from the fixture's answer; undefined for "progressToken: no". */
function upstreamToken(text: string): string | number | undefined {
    const match = /^progressToken: (?:no|yes (.+)); sent: \d+$/.exec(text);
    assert.ok(match, `fixture answer: ${text}`);
    return match[1] === undefined ? undefined : (JSON.parse(match[1]) as string | number);
}

/** What the fixture sends for steps 1..n: `{ progress: i, total, message: "<message> i" }`, without what it leaves out. */
function expected(steps: number, total: number | undefined, message: string | undefined): Progress[] {
    return Array.from({ length: steps }, (_, index) => ({
        progress: index + 1,
        ...(total === undefined ? {} : { total }),
        ...(message === undefined ? {} : { message: `${message} ${index + 1}` })
    }));
}

/** A prompts/get of the fixture's progress prompt through an SDK client that listens to progress. */
async function getWithProgress(client: Client, name: string, args: Record<string, string>, signal?: AbortSignal) {
    const seen: Progress[] = [];
    const result = await client.getPrompt({ name, arguments: args }, { onprogress: progress => seen.push(progress), ...(signal ? { signal } : {}) });
    return { seen, text: textOf(result) };
}

/** Splits a raw response into its progress notifications' params and the final response, checking nothing else came. */
function splitResponse(messages: JsonRpcMessage[], id: number): { progress: Json[]; response: JsonRpcMessage } {
    const response = messages.at(-1);
    assert.ok(response && response.id === id, `the response comes last: ${JSON.stringify(messages)}`);
    const before = messages.slice(0, -1);
    for (const message of before) assert.equal(message.method, 'notifications/progress', JSON.stringify(message));
    return { progress: before.map(message => message.params!), response };
}

function resultText(response: JsonRpcMessage): string {
    assert.ok(response.result, `a result: ${JSON.stringify(response)}`);
    return textOf(response.result as GetPromptResult);
}

/**
 * The short timeouts of the progress tests. Notifications come every STEP_MS, well within FAST_TIMEOUT_MS even on
 * a loaded machine, and the whole request takes several timeouts; a pause of PAUSE_MS is well beyond it.
 */
const FAST_TIMEOUT_MS = 2000;
const STEP_MS = 400;
const STEPS = 10;
const PAUSE_MS = 3 * FAST_TIMEOUT_MS;
const CAP_MS = 5000;

describe('progress of long requests', () => {
    let http: HttpFixture;
    let sse: HttpFixture;
    let gateway: RunningGateway;
    let client: Client;

    before(async () => {
        [http, sse] = await Promise.all([startHttpFixture('streamable-http', { name: 'timing', ...WITH_PROGRESS }), startHttpFixture('sse', WITH_PROGRESS)]);
        gateway = await startTestGateway({
            upstreams: [
                stdioFixture('local', WITH_PROGRESS),
                // The same HTTP fixture process twice: its stats are shared, its connections are not.
                { id: 'fast', transport: 'streamable-http', url: http.url, timeoutMs: FAST_TIMEOUT_MS },
                { id: 'capped', transport: 'streamable-http', url: http.url, timeoutMs: FAST_TIMEOUT_MS, maxTotalTimeoutMs: CAP_MS },
                { id: 'legacy', transport: 'sse', url: sse.url }
            ]
        });
        client = await connectHttp(gateway.url!);
    });

    after(async () => {
        await client?.close();
        await gateway?.close();
        await Promise.all([http?.close(), sse?.close()]);
    });

    const upstream = (id: string) => gateway.upstreams.find(connection => connection.id === id)!;

    /** Every JSON-RPC message of one request's answer on a session spoken by hand, in order. */
    async function rawRequest(session: RawSession, id: number, method: string, params: Json): Promise<JsonRpcMessage[]> {
        const { status, messages } = await call(gateway.url!, session, method, params, id);
        assert.equal(status, 200);
        return messages;
    }
    const closeRaw = (session: RawSession) => deleteSession(gateway.url!, session.headers).catch(() => undefined);

    test('every notification reaches the client, in order, with the progress, total and message the upstream sent', async () => {
        // stdio, Streamable HTTP and legacy SSE (v1 SDK) upstreams.
        for (const id of ['local', 'fast', 'legacy']) {
            const { seen, text } = await getWithProgress(client, `${id}__progress`, { steps: '5', intervalMs: '40', total: '5', message: `via ${id}`, settleMs: '100' });
            assert.deepEqual(seen, expected(5, 5, `via ${id}`), id);
            assert.match(text, /^progressToken: yes .+; sent: 5$/, id);
        }
        // A total other than the step count, and no total or message at all: passed on as they are, nothing added.
        const other = await getWithProgress(client, 'local__progress', { steps: '3', intervalMs: '20', total: '1000', settleMs: '100' });
        assert.deepEqual(other.seen, expected(3, 1000, undefined));
        const bare = await getWithProgress(client, 'local__progress', { steps: '3', intervalMs: '20', total: 'none', settleMs: '100' });
        assert.deepEqual(bare.seen, expected(3, undefined, undefined));
    });

    test('on the wire: notifications carry exactly the client token (string, number, 0, ""), the upstream saw its own', async () => {
        const session = await openRawSession(gateway.url!);
        try {
            let id = 10;
            for (const token of ['client-token-42', 987654321, 0, '']) {
                id++;
                const messages = await rawRequest(session, id, 'prompts/get', {
                    name: 'local__progress',
                    arguments: { steps: '4', intervalMs: '30', total: '4', message: 'raw', settleMs: '100' },
                    _meta: { progressToken: token }
                });
                const { progress, response } = splitResponse(messages, id);
                assert.deepEqual(
                    progress,
                    expected(4, 4, 'raw').map(params => ({ progressToken: token, ...params })),
                    `token ${JSON.stringify(token)}`
                );
                const seenUpstream = upstreamToken(resultText(response));
                assert.notEqual(seenUpstream, undefined, 'the upstream got a progressToken');
                assert.notDeepEqual(seenUpstream, token, "the upstream got the gateway's token, not the client's");
                const stats = await progressStats(client, 'local');
                assert.deepEqual(stats.calls.at(-1), { method: 'get', token: seenUpstream });
            }
        } finally {
            await closeRaw(session);
        }
    });

    test('a notification sent right before the answer is not lost (nor any read together with the answer)', async () => {
        const session = await openRawSession(gateway.url!);
        try {
            // stdio, Streamable HTTP and legacy SSE upstreams; no settleMs: the answer follows the last notification at once.
            const upstreams = ['local', 'fast', 'legacy', 'local', 'fast', 'legacy'];
            const received: Record<string, number[][]> = {};
            for (const [index, id] of upstreams.entries()) {
                const messages = await rawRequest(session, 100 + index, 'prompts/get', {
                    name: `${id}__progress`,
                    arguments: { steps: '4', intervalMs: '20', total: '4', message: 'last' },
                    _meta: { progressToken: `last-${index}` }
                });
                const { progress } = splitResponse(messages, 100 + index);
                (received[id] ??= []).push(progress.map(params => params['progress'] as number));
            }
            const all = [1, 2, 3, 4];
            assert.deepEqual(
                received,
                { local: [all, all], fast: [all, all], legacy: [all, all] },
                `each upstream sent 1..4, then its answer; the client got ${JSON.stringify(received)}`
            );
        } finally {
            await closeRaw(session);
        }
    });

    test('without a progressToken: no notification reaches the client and the upstream gets no token', async () => {
        const session = await openRawSession(gateway.url!);
        try {
            const started = Date.now();
            const messages = await rawRequest(session, 2, 'prompts/get', { name: 'local__progress', arguments: { steps: '4', intervalMs: '50', message: 'x' } });
            assert.ok(Date.now() - started >= 180, 'the fixture did its work');
            assert.equal(messages.length, 1, `only the response: ${JSON.stringify(messages)}`);
            assert.equal(resultText(messages[0]!), 'progressToken: no; sent: 0');
            assert.deepEqual((await progressStats(client, 'local')).calls.at(-1), { method: 'get', token: null });
        } finally {
            await closeRaw(session);
        }
        // Through an SDK client without onprogress too: nothing is sent for it, nothing unexpected arrives.
        const errors: Error[] = [];
        client.onerror = error => errors.push(error);
        try {
            const result = await client.getPrompt({ name: 'local__progress', arguments: { steps: '3', intervalMs: '30' } });
            assert.equal(textOf(result), 'progressToken: no; sent: 0');
            assert.deepEqual((await progressStats(client, 'local')).calls.at(-1), { method: 'get', token: null });
            // Whatever the gateway sends for a request travels on that request's stream ahead of its answer, so
            // anything unexpected would have reached onerror by now.
            assert.deepEqual(errors, []);
        } finally {
            client.onerror = undefined;
        }
    });

    test('completion/complete: progress passes the same way, and not without a token', async () => {
        const seen: Progress[] = [];
        const ref = { type: 'ref/prompt' as const, name: 'local__progress' };
        const result = await client.complete({ ref, argument: { name: 'steps', value: '3' } }, { onprogress: progress => seen.push(progress) });
        assert.deepEqual(seen, expected(3, 3, 'complete'));
        assert.match(result.completion.values[0] ?? '', /^progressToken: yes .+; sent: 3$/);
        const session = await openRawSession(gateway.url!);
        try {
            const messages = await rawRequest(session, 3, 'completion/complete', { ref, argument: { name: 'steps', value: '2' }, _meta: { progressToken: 'c-1' } });
            const { progress } = splitResponse(messages, 3);
            assert.deepEqual(
                progress,
                expected(2, 2, 'complete').map(params => ({ progressToken: 'c-1', ...params }))
            );
            const none = await rawRequest(session, 4, 'completion/complete', { ref, argument: { name: 'steps', value: '2' } });
            assert.equal(none.length, 1, `only the response: ${JSON.stringify(none)}`);
            assert.deepEqual((none[0]!.result as { completion: { values: string[] } }).completion.values, ['progressToken: no; sent: 0']);
        } finally {
            await closeRaw(session);
        }
    });

    test(`with a progressToken each notification restarts timeoutMs: ${STEPS} x ${STEP_MS} ms passes a ${FAST_TIMEOUT_MS} ms timeout`, async () => {
        const started = Date.now();
        const { seen, text } = await getWithProgress(client, 'fast__progress', { steps: String(STEPS), intervalMs: String(STEP_MS), message: 'slow', settleMs: '50' });
        assert.ok(Date.now() - started >= STEPS * STEP_MS, 'it took longer than timeoutMs');
        assert.deepEqual(seen, expected(STEPS, STEPS, 'slow'));
        assert.match(text, new RegExp(`; sent: ${STEPS}$`));
    });

    test('without a progressToken the same request fails at timeoutMs', async () => {
        const started = Date.now();
        const error = await rpcError(client.getPrompt({ name: 'fast__progress', arguments: { steps: String(STEPS), intervalMs: String(STEP_MS) } }));
        const elapsed = Date.now() - started;
        assert.equal(error.code, -32603);
        assert.equal(error.message, `Upstream fast failed: timed out after ${FAST_TIMEOUT_MS} ms`);
        assert.ok(elapsed >= FAST_TIMEOUT_MS - 50, `failed after ${elapsed} ms, before its timeout`);
    });

    test('with a progressToken, a pause between notifications longer than timeoutMs still times out', async () => {
        const started = Date.now();
        const seen: Progress[] = [];
        const error = await rpcError(
            client.getPrompt({ name: 'fast__progress', arguments: { steps: '2', intervalMs: String(PAUSE_MS) } }, { onprogress: progress => seen.push(progress) })
        );
        const elapsed = Date.now() - started;
        assert.equal(error.code, -32603);
        assert.match(error.message, new RegExp(`^Upstream fast failed: timed out after ${FAST_TIMEOUT_MS} ms`));
        assert.deepEqual(seen, [], `it failed before the first notification at ${PAUSE_MS} ms`);
        assert.ok(elapsed >= FAST_TIMEOUT_MS - 50, `failed after ${elapsed} ms, before its timeout`);
    });

    test('maxTotalTimeoutMs bounds a request whose progress never ends; the upstream is told to stop', async () => {
        // Under the cap, progress works as without it.
        const quick = await getWithProgress(client, 'capped__progress', { steps: '3', intervalMs: String(STEP_MS), settleMs: '50' });
        assert.deepEqual(quick.seen, expected(3, 3, undefined));

        const before = await progressStats(client, 'capped');
        const seen: Progress[] = [];
        const started = Date.now();
        const error = await rpcError(
            client.getPrompt({ name: 'capped__progress', arguments: { steps: 'forever', intervalMs: String(STEP_MS) } }, { onprogress: progress => seen.push(progress) })
        );
        const elapsed = Date.now() - started;
        assert.equal(error.code, -32603);
        assert.match(error.message, /^Upstream capped failed: /);
        assert.match(error.message, new RegExp(String(CAP_MS)), 'names the limit');
        assert.match(error.message, /timed out|maxTotalTimeoutMs/);
        assert.ok(elapsed >= CAP_MS - 50, `failed after ${elapsed} ms, before maxTotalTimeoutMs`);
        assert.ok(seen.length >= 3, `progress flowed until then (${seen.length} notifications)`);
        assert.deepEqual(seen, expected(seen.length, undefined, undefined), 'in order, no total');
        await waitFor(async () => (await progressStats(client, 'capped')).cancelled === before.cancelled + 1, 20_000, 'the upstream to see the cancellation');
        assert.equal(upstream('capped').state, 'ready', 'a request cut off by the cap says nothing bad about the upstream');
    });

    test('two sessions, and two requests of one session, each get only their own notifications', async () => {
        const other = await connectHttp(gateway.url!);
        try {
            const args = (message: string) => ({ steps: '5', intervalMs: '60', message, settleMs: '100' });
            const [a1, a2, b] = await Promise.all([
                getWithProgress(client, 'local__progress', args('A1')),
                getWithProgress(client, 'local__progress', args('A2')),
                getWithProgress(other, 'local__progress', args('B'))
            ]);
            assert.deepEqual(a1.seen, expected(5, 5, 'A1'));
            assert.deepEqual(a2.seen, expected(5, 5, 'A2'));
            assert.deepEqual(b.seen, expected(5, 5, 'B'));
            const tokens = [a1, a2, b].map(({ text }) => upstreamToken(text));
            assert.equal(new Set(tokens).size, 3, `distinct upstream tokens: ${JSON.stringify(tokens)}`);
        } finally {
            await other.close();
        }
        // On the wire, two sessions using the same token at once, and a request without one beside them.
        const [one, two] = await Promise.all([openRawSession(gateway.url!), openRawSession(gateway.url!)]);
        try {
            const request = (session: RawSession, id: number, message: string, token?: string) =>
                rawRequest(session, id, 'prompts/get', {
                    name: 'local__progress',
                    arguments: { steps: '5', intervalMs: '60', message, settleMs: '100' },
                    ...(token === undefined ? {} : { _meta: { progressToken: token } })
                });
            const [s1, s2, plain] = await Promise.all([request(one, 5, 'S1', 'shared'), request(two, 5, 'S2', 'shared'), request(one, 6, 'P')]);
            assert.deepEqual(
                splitResponse(s1, 5).progress,
                expected(5, 5, 'S1').map(params => ({ progressToken: 'shared', ...params }))
            );
            assert.deepEqual(
                splitResponse(s2, 5).progress,
                expected(5, 5, 'S2').map(params => ({ progressToken: 'shared', ...params }))
            );
            assert.equal(plain.length, 1, `only the response: ${JSON.stringify(plain)}`);
        } finally {
            await Promise.all([closeRaw(one), closeRaw(two)]);
        }
    });

    test('cancelling a request while its progress flows cancels it upstream, and the progress stops', async () => {
        const before = await progressStats(client, 'local');
        const controller = new AbortController();
        const seen: Progress[] = [];
        const request = client.getPrompt(
            { name: 'local__progress', arguments: { steps: 'forever', intervalMs: '50' } },
            { signal: controller.signal, onprogress: progress => seen.push(progress) }
        );
        request.catch(() => {});
        await waitFor(() => seen.length >= 3, 20_000, 'progress to flow');
        controller.abort('user gave up');
        await assert.rejects(request);
        await waitFor(async () => (await progressStats(client, 'local')).cancelled === before.cancelled + 1, 20_000, 'the upstream to see the cancellation');
        await waitFor(() => upstream('local').load.active === 0, 20_000, 'the upstream slot to be freed');
        // The fixture counts a cancellation when its loop throws out of its wait: the loop is over, so it sends no more.
        assert.equal((await progressStats(client, 'local')).completed, before.completed, 'the loop ended by the cancellation, not by finishing');
    });
});

describe('progress over a stdio downstream', () => {
    test('`cli.js --stdio`: the client gets every notification', async () => {
        assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build`');
        const dir = await mkdtemp(path.join(tmpdir(), 'gateway-progress-'));
        const file = path.join(dir, 'stdio.json');
        await writeFile(file, JSON.stringify({ upstreams: [stdioFixture('local', WITH_PROGRESS)] }));
        const client = await connectStdio(process.execPath, [CLI, '--config', file, '--stdio']);
        try {
            const { seen, text } = await getWithProgress(client, 'local__progress', { steps: '4', intervalMs: '30', total: '4', message: 'stdio', settleMs: '100' });
            assert.deepEqual(seen, expected(4, 4, 'stdio'));
            assert.match(text, /^progressToken: yes .+; sent: 4$/);
            const none = await client.getPrompt({ name: 'local__progress', arguments: { steps: '2', intervalMs: '20' } });
            assert.equal(textOf(none), 'progressToken: no; sent: 0');
        } finally {
            await client.close();
        }
    });
});

describe('maxTotalTimeoutMs in the config', () => {
    const STDIO = { id: 'local', transport: 'stdio', command: 'node' };
    const parse = (upstream: Json) => parseConfig(JSON.stringify({ upstreams: [upstream] }), 'progress.json', {});

    test('defaults to 300000 and may equal timeoutMs', () => {
        assert.equal(maxTotalTimeout(parse(STDIO).upstreams[0] as StdioUpstreamConfig), 300_000);
        assert.equal(maxTotalTimeout(parse({ ...STDIO, timeoutMs: 2000, maxTotalTimeoutMs: 2000 }).upstreams[0] as StdioUpstreamConfig), 2000);
    });

    test('a timeoutMs above the default total (valid before the field existed) still gives a valid config', () => {
        const config = parse({ ...STDIO, timeoutMs: 400_000 });
        assert.equal(maxTotalTimeout(config.upstreams[0] as StdioUpstreamConfig), 400_000, 'the default total is at least timeoutMs');
    });

    test('less than timeoutMs (given or default) is a config error naming the field', () => {
        const given = configError(() => parse({ ...STDIO, timeoutMs: 1000, maxTotalTimeoutMs: 500 }));
        assert.match(lineFor(given, 'upstreams[0].maxTotalTimeoutMs'), /timeoutMs/);
        const byDefault = configError(() => parse({ ...STDIO, maxTotalTimeoutMs: 5000 }));
        assert.match(lineFor(byDefault, 'upstreams[0].maxTotalTimeoutMs'), /timeoutMs/);
        configError(() => parse({ ...STDIO, maxTotalTimeoutMs: '5000' }));
    });

    test('the CLI exits 2 naming the field', async () => {
        assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build`');
        const dir = await mkdtemp(path.join(tmpdir(), 'gateway-progress-'));
        const file = path.join(dir, 'bad.json');
        await writeFile(file, JSON.stringify({ upstreams: [{ ...STDIO, timeoutMs: 1000, maxTotalTimeoutMs: 999 }] }));
        const result = spawnSync(process.execPath, [CLI, '--config', file, '--check'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
        assert.equal(result.status, 2, result.stderr);
        assert.match(result.stderr, /upstreams\[0\]\.maxTotalTimeoutMs: .*timeoutMs/);
        assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
    });
});
