/**
 * completion/complete beyond routing (see get-complete.test.ts): when the gateway declares `completions`, what it
 * forwards, and how it answers for upstreams that cannot complete, complete too much, or for resources.
 * Expected values come from the upstreams themselves, called directly.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, connectStdio, EVERYTHING, everythingUpstream, RAW_SERVER, rawStdio, ROOT, rpcError, startTestGateway, stdioFixture, waitFor } from './helpers.js';
import { call, openRawSession, type JsonRpcMessage } from './raw-http.js';

/** The answers of the raw fixture itself (no gateway, no SDK: it needs no initialize) to requests, in order. */
async function rawDirect(flags: string[], method: string, params: Record<string, unknown>[]): Promise<JsonRpcMessage[]> {
    const child = spawn(process.execPath, [RAW_SERVER, ...flags], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    const answers: JsonRpcMessage[] = [];
    createInterface({ input: child.stdout }).on('line', line => answers.push(JSON.parse(line) as JsonRpcMessage));
    const exited = once(child, 'exit');
    // It answers what it has read before it exits at the end of its input.
    child.stdin.end(params.map((one, id) => `${JSON.stringify({ jsonrpc: '2.0', id, method, params: one })}\n`).join(''));
    await exited;
    return params.map((_, id) => answers.find(answer => answer.id === id)!);
}

const MANY = ['--completion-values', '250'];

describe('completion/complete', () => {
    let gateway: RunningGateway;
    let client: Client;
    let directEverything: Client;

    before(async () => {
        gateway = await startTestGateway({
            upstreams: [everythingUpstream(), rawStdio('nomethod', ['--completion', 'method-not-found']), rawStdio('many', MANY), rawStdio('echo', ['--completion', 'echo'])]
        });
        [client, directEverything] = await Promise.all([connectHttp(gateway.url!), connectStdio(process.execPath, [EVERYTHING, 'stdio'])]);
    });

    after(async () => {
        await Promise.all([client?.close(), directEverything?.close()]);
        await gateway?.close();
    });

    test('`completions` is declared when an upstream offers it', () => {
        assert.deepEqual(client.getServerCapabilities()?.completions, {});
    });

    test('argument and context.arguments reach the upstream unchanged: each department completes its own names', async () => {
        const seen = new Set<string>();
        for (const department of ['Engineering', 'Sales', 'Marketing', 'Support', 'Nowhere']) {
            for (const value of ['', 'A', 'D', 'G', 'K']) {
                const params = { argument: { name: 'name', value }, context: { arguments: { department } } };
                const viaGateway = await client.complete({ ref: { type: 'ref/prompt', name: 'everything__completable-prompt' }, ...params });
                const direct = await directEverything.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, ...params });
                assert.deepEqual(viaGateway, direct, `${department}/${value}`);
                seen.add(JSON.stringify(direct.completion.values));
            }
        }
        // The answers depend on the context: a gateway dropping it would get [] for every department.
        const departments = await directEverything.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: '' } });
        assert.equal(departments.completion.values.length, 4);
        assert.ok(seen.size >= 5, `different departments give different names: ${[...seen].join(' ')}`);
        const noContext = await client.complete({ ref: { type: 'ref/prompt', name: 'everything__completable-prompt' }, argument: { name: 'name', value: '' } });
        assert.deepEqual(noContext.completion.values, []);
    });

    test('an upstream that declares completions but answers -32601 gives an empty completion, and stays connected', async () => {
        const [direct] = await rawDirect(['--completion', 'method-not-found'], 'completion/complete', [
            { ref: { type: 'ref/prompt', name: 'ok-0' }, argument: { name: 'topic', value: '' } }
        ]);
        assert.equal(direct?.error?.code, -32601, 'the upstream really answers method-not-found');
        const result = await client.complete({ ref: { type: 'ref/prompt', name: 'nomethod__ok-0' }, argument: { name: 'topic', value: '' } });
        assert.deepEqual(result.completion.values, []);
        assert.equal(result.completion.hasMore, false);
        const upstream = gateway.upstreams.find(connection => connection.id === 'nomethod')!;
        assert.equal(upstream.state, 'ready');
        assert.deepEqual(gateway.faults.of('nomethod'), {});
        // Its prompts still work.
        const got = await client.getPrompt({ name: 'nomethod__ok-0', arguments: { topic: 'x' } });
        assert.match(JSON.stringify(got.messages), /ok-0: tell me about x/);
    });

    test('more than 100 values from an upstream: the first 100, hasMore true, the upstream total kept; 100 exactly pass as they are', async () => {
        const cases = [
            ['', true],
            ['value-0', true],
            ['value-00', false],
            ['value-01', false],
            ['value-024', false]
        ] as const;
        const paramsOf = (value: string) => ({ ref: { type: 'ref/prompt', name: 'ok-0' }, argument: { name: 'topic', value } });
        const answers = await rawDirect(
            MANY,
            'completion/complete',
            cases.map(([value]) => paramsOf(value))
        );
        for (const [index, [value, truncated]] of cases.entries()) {
            const params = paramsOf(value);
            const direct = answers[index]!.result!.completion as { values: string[]; total?: number; hasMore?: boolean };
            assert.equal(direct.values.length > 100, truncated, `the upstream offers ${direct.values.length} for ${JSON.stringify(value)}`);
            const { completion } = await client.complete({ ...params, ref: { type: 'ref/prompt', name: 'many__ok-0' } });
            assert.ok(completion.values.length <= 100, `${completion.values.length} values for ${JSON.stringify(value)}`);
            assert.deepEqual(completion.values, direct.values.slice(0, 100), value);
            assert.equal(completion.hasMore, truncated ? true : direct.hasMore, value);
            assert.equal(completion.total, direct.total, value);
        }
    });

    test('ref/resource is an empty completion and never reaches an upstream', async () => {
        // The echo upstream would answer anything forwarded to it with one value.
        const viaEcho = await client.complete({ ref: { type: 'ref/prompt', name: 'echo__ok-0' }, argument: { name: 'topic', value: 'v' } });
        assert.equal(viaEcho.completion.values.length, 1);
        for (const uri of ['file:///etc/hosts', 'echo__ok-0', 'test://static/resource/1']) {
            const result = await client.complete({ ref: { type: 'ref/resource', uri }, argument: { name: 'topic', value: 'v' } });
            assert.deepEqual(result.completion, { values: [], hasMore: false }, uri);
        }
    });

    test('a prompt the gateway does not expose is -32602 "Unknown prompt"', async () => {
        for (const name of ['echo__nope', 'echo__', 'ghost__ok-0', 'ok-0', 'completable-prompt']) {
            const error = await rpcError(client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: 'topic', value: '' } }));
            assert.equal(error.code, -32602, name);
            assert.equal(error.message, `Unknown prompt: ${JSON.stringify(name)}`);
        }
    });
});

describe('a gateway whose upstreams all lack completions', () => {
    let gateway: RunningGateway;

    before(async () => {
        gateway = await startTestGateway({ upstreams: [stdioFixture('plain', { flags: ['--no-completions'] })] });
        // An upstream not connected yet may still offer completions: the gateway would declare them meanwhile.
        await waitFor(() => gateway.upstreams[0]!.state === 'ready', 10_000, 'the upstream to connect');
    });

    after(async () => {
        await gateway?.close();
    });

    test('does not declare `completions`, and completion/complete is -32601 method not found', async () => {
        const client = await connectHttp(gateway.url!);
        try {
            assert.equal(client.getServerCapabilities()?.completions, undefined);
            assert.deepEqual(client.getServerCapabilities()?.prompts, { listChanged: true });
        } finally {
            await client.close();
        }
        // Raw: the SDK client would refuse to send a request for a capability the server lacks.
        const url = gateway.url!;
        const session = await openRawSession(url);
        const { status, response } = await call(url, session, 'completion/complete', {
            ref: { type: 'ref/prompt', name: 'plain__with-required' },
            argument: { name: 'topic', value: 'm' }
        });
        assert.equal(status, 200);
        assert.equal(response?.error?.code, -32601, JSON.stringify(response));
        // The prompt itself is there: the error is about the method, not the prompt.
        const got = await call(url, session, 'prompts/get', { name: 'plain__with-required', arguments: { topic: 'm' } }, 3);
        assert.ok(got.response?.result, JSON.stringify(got.response));
    });
});
