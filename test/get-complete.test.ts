/** prompts/get and completion/complete routed through the gateway, and every error case. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import {
    connectHttp,
    connectStdio,
    EVERYTHING,
    everythingUpstream,
    FIXTURE,
    rpcError,
    startHttpFixture,
    startTestGateway,
    stdioFixture,
    waitFor,
    upstreamsReady,
    type HttpFixture
} from './helpers.js';

const BRIEF_TIMEOUT_MS = 1500;

describe('prompts/get and completion/complete through the gateway', () => {
    let docs: HttpFixture;
    let gateway: RunningGateway;
    let client: Client;
    let directFixture: Client;
    let directEverything: Client;

    before(async () => {
        docs = await startHttpFixture('streamable-http', { name: 'docs' });
        gateway = await startTestGateway({
            upstreams: [
                stdioFixture('local'),
                { id: 'docs', transport: 'streamable-http', url: docs.url },
                everythingUpstream(),
                stdioFixture('nocomplete', { flags: ['--no-completions'] }),
                // The docs fixture again, with a short timeoutMs: over HTTP, connecting takes no start-up of a process.
                { id: 'brief', transport: 'streamable-http', url: docs.url, timeoutMs: BRIEF_TIMEOUT_MS }
            ]
        });
        await upstreamsReady(gateway);
        client = await connectHttp(gateway.url!);
        directFixture = await connectStdio(process.execPath, [FIXTURE]);
        directEverything = await connectStdio(process.execPath, [EVERYTHING, 'stdio']);
    });

    after(async () => {
        await Promise.all([client?.close(), directFixture?.close(), directEverything?.close()]);
        await gateway?.close();
        await docs?.close();
    });

    test('results equal the same call made directly to the upstream', async () => {
        const cases: [string, Client, string, Record<string, string> | undefined][] = [
            ['local__all-content', directFixture, 'all-content', undefined],
            ['docs__all-content', directFixture, 'all-content', undefined],
            ['local__with-required', directFixture, 'with-required', { topic: 'gateways', tone: 'dry' }],
            ['everything__args-prompt', directEverything, 'args-prompt', { city: 'Lyon', state: 'Rhone' }],
            ['everything__resource-prompt', directEverything, 'resource-prompt', { resourceType: 'Text', resourceId: '1' }]
        ];
        // server-everything stamps its text resources with the time of the call, which may differ by a second.
        const timeless = (result: unknown) => JSON.parse(JSON.stringify(result).replace(/created at \d{1,2}:\d{2}:\d{2}\s?[AP]M/g, 'created at <time>')) as unknown;
        for (const [exposed, upstream, name, args] of cases) {
            const viaGateway = await client.getPrompt({ name: exposed, ...(args ? { arguments: args } : {}) });
            const direct = await upstream.getPrompt({ name, ...(args ? { arguments: args } : {}) });
            assert.deepEqual(timeless(viaGateway), timeless(direct), exposed);
        }
    });

    test('every content type, annotations and _meta survive the hop', async () => {
        const result = await client.getPrompt({ name: 'docs__all-content' });
        const types = result.messages.map(message => message.content.type);
        for (const type of ['text', 'image', 'audio', 'resource', 'resource_link']) assert.ok(types.includes(type as never), `missing ${type}`);
        assert.ok(result._meta !== undefined && Object.keys(result._meta).length > 0, '_meta kept');
        assert.ok(
            result.messages.some(message => 'annotations' in message.content),
            'annotations kept'
        );
    });

    test('an unknown prompt is -32602 "Unknown prompt: <name>"', async () => {
        for (const name of ['nope', 'local__nope', 'ghost__with-required', '__proto__', 'local__', '']) {
            const error = await rpcError(client.getPrompt({ name }));
            assert.equal(error.code, -32602, name);
            assert.equal(error.message, `Unknown prompt: ${JSON.stringify(name)}`);
        }
    });

    test('missing required arguments are -32602 naming each, before the upstream is called', async () => {
        const none = await rpcError(client.getPrompt({ name: 'local__with-required' }));
        assert.equal(none.code, -32602);
        assert.match(none.message, /Missing required argument: "topic"/);
        const everything = await rpcError(client.getPrompt({ name: 'everything__completable-prompt', arguments: {} }));
        assert.equal(everything.code, -32602);
        assert.match(everything.message, /"department", "name"/);
        // The fixture words its own check differently ("topic" unquoted): the gateway's words prove it answered first.
        const direct = await rpcError(directFixture.getPrompt({ name: 'with-required' }));
        assert.notEqual(direct.message, none.message);
    });

    test('a non-string argument value is -32602', async () => {
        const error = await rpcError(client.request({ method: 'prompts/get', params: { name: 'local__with-required', arguments: { topic: 42 } } }));
        assert.equal(error.code, -32602);
        assert.match(error.message, /"topic"/);
        const notObject = await rpcError(client.request({ method: 'prompts/get', params: { name: 'local__with-required', arguments: 'x' } }));
        assert.equal(notObject.code, -32602);
    });

    test("an upstream's -32602 passes through with its message", async () => {
        const error = await rpcError(client.getPrompt({ name: 'docs__fail-invalid-params' }));
        assert.equal(error.code, -32602);
        assert.match(error.message, /fixture rejects these arguments/);
    });

    test('any other upstream failure is -32603 "Upstream <id> failed", without its details', async () => {
        const error = await rpcError(client.getPrompt({ name: 'docs__fail-internal' }));
        assert.equal(error.code, -32603);
        assert.match(error.message, /^Upstream docs failed: /);
        assert.doesNotMatch(error.message, /secret|s3cr3t|\/srv|\n/);
    });

    test('a request slower than timeoutMs is -32603 naming the timeout', async () => {
        const error = await rpcError(client.getPrompt({ name: 'brief__slow', arguments: { ms: String(BRIEF_TIMEOUT_MS + 3000) } }));
        assert.equal(error.code, -32603);
        assert.equal(error.message, `Upstream brief failed: timed out after ${BRIEF_TIMEOUT_MS} ms`);
    });

    test('completion/complete is routed with the namespace stripped', async () => {
        const viaGateway = await client.complete({ ref: { type: 'ref/prompt', name: 'docs__with-required' }, argument: { name: 'topic', value: 'm' } });
        const direct = await directFixture.complete({ ref: { type: 'ref/prompt', name: 'with-required' }, argument: { name: 'topic', value: 'm' } });
        assert.deepEqual(viaGateway, direct);
        assert.ok(viaGateway.completion.values.length > 0);
        const everything = await client.complete({
            ref: { type: 'ref/prompt', name: 'everything__completable-prompt' },
            argument: { name: 'department', value: 'E' }
        });
        assert.deepEqual(everything.completion.values, ['Engineering']);
    });

    test('completion for an upstream without completions is empty; unknown prompt is -32602', async () => {
        const empty = await client.complete({ ref: { type: 'ref/prompt', name: 'nocomplete__with-required' }, argument: { name: 'topic', value: 'm' } });
        assert.deepEqual(empty.completion.values, []);
        const error = await rpcError(client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'a', value: '' } }));
        assert.equal(error.code, -32602);
        assert.equal(error.message, 'Unknown prompt: "nope"');
    });

    test('an upstream that crashes fails its request with -32603, does not hurt the others, and comes back', async () => {
        const error = await rpcError(client.getPrompt({ name: 'local__crash' }));
        assert.equal(error.code, -32603);
        assert.match(error.message, /^Upstream local failed: /);
        // The other upstreams keep working while it is down.
        const fromDocs = await client.getPrompt({ name: 'docs__with-required', arguments: { topic: 'x' } });
        assert.ok(fromDocs.messages.length > 0);
        await waitFor(() => gateway.upstreams[0]!.state === 'ready', 60_000, 'local to reconnect');
        const back = await client.getPrompt({ name: 'local__with-required', arguments: { topic: 'x' } });
        assert.ok(back.messages.length > 0);
    });
});
