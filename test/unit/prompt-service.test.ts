import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ProtocolError, ProtocolErrorCode, type CompleteRequest } from '@modelcontextprotocol/client';
import { Catalog, type CatalogEntry } from '../../src/catalog/catalog.js';
import { CursorCodec } from '../../src/catalog/cursor.js';
import { RequestStates } from '../../src/catalog/request-state.js';
import { PromptService, type Caller, type PromptServiceOptions } from '../../src/catalog/service.js';
import type { UsageEvent } from '../../src/catalog/usage.js';
import { VisibleSlices } from '../../src/catalog/visible-slices.js';
import { UpstreamFailedError, UpstreamRejectedError } from '../../src/catalog/upstream-port.js';
import { FakeUpstream, prompt, RELIST, silentLogger } from './fake-upstream.js';
import { BOUNDS } from './input-ports.js';

const OPTIONS: PromptServiceOptions = {
    pageSize: 2,
    maxArguments: 4,
    maxArgumentBytes: 16,
    maxResultBytes: 1000,
    maxJsonDepth: 8,
    passUnknownArguments: upstreamId => upstreamId === 'open',
    input: BOUNDS
};

const everything: Caller = { scope: 'alice', visible: () => true };
/** Sees nothing of `secret`'s prompts. */
const noSecrets: Caller = { scope: 'bob', visible: (entry: CatalogEntry) => entry.originalName !== 'secret' };

function setup(t: TestContext, upstreams: FakeUpstream[]) {
    const catalog = new Catalog({ naming: { separator: '__' }, logger: silentLogger, notifications: { debounceMs: 10, maxDelayMs: 100 }, relist: () => RELIST });
    t.after(() => catalog.close());
    catalog.setUpstreams(upstreams);
    const service = new PromptService(catalog, new CursorCodec('test secret'), OPTIONS, new VisibleSlices(), new RequestStates('test secret'));
    const usage: UsageEvent[] = [];
    service.usage.subscribe(event => usage.push(event));
    return { service, usage };
}

function twoUpstreams() {
    const docs = new FakeUpstream('docs', [prompt('review', ['file'], true), prompt('secret')]);
    const open = new FakeUpstream('open', [prompt('review', ['file'])]);
    return { docs, open };
}

/** The JSON-RPC error a call failed with: code and message, as a client would receive them. */
async function rpcError(call: Promise<unknown>): Promise<{ code: number; message: string }> {
    const error: unknown = await call.then(
        () => assert.fail('expected an error'),
        (failure: unknown) => failure
    );
    assert.ok(error instanceof ProtocolError, `expected a ProtocolError, got ${String(error)}`);
    return { code: error.code, message: error.message };
}

const completion = (name: string, value = 'x'): CompleteRequest['params'] => ({ ref: { type: 'ref/prompt', name }, argument: { name: 'file', value } });

describe('prompt service', () => {
    test('a get goes to the owning upstream, under its own name, with the arguments and the call control', async t => {
        const { docs, open } = twoUpstreams();
        const { service } = setup(t, [docs, open]);
        docs.getAnswer = { messages: [{ role: 'user', content: { type: 'text', text: 'from docs' } }] };
        const control = { signal: new AbortController().signal };
        const result = await service.get({ name: 'docs__review', args: { file: 'a.md' }, caller: everything, control });
        assert.deepEqual(result, docs.getAnswer);
        assert.deepEqual(docs.gets, [{ name: 'review', args: { file: 'a.md' }, control }]);
        assert.equal(open.gets.length, 0);
        await service.get({ name: 'open__review', args: undefined, caller: everything });
        assert.deepEqual(
            open.gets.map(get => get.name),
            ['review']
        );
    });

    test('a completion goes to the owning upstream under its own name; values past the spec bound are cut', async t => {
        const { docs, open } = twoUpstreams();
        const { service } = setup(t, [docs, open]);
        open.completeAnswer = { completion: { values: Array.from({ length: 150 }, (_, i) => `v${i}`) } };
        const result = await service.complete(completion('open__review'), everything);
        assert.equal(result.completion.values.length, 100);
        assert.equal(result.completion.hasMore, true);
        assert.deepEqual(open.completions, [{ ...completion('review') }]);
        assert.deepEqual(docs.completions, []);

        docs.completeAnswer = undefined;
        assert.deepEqual(await service.complete(completion('docs__review'), everything), { completion: { values: [], hasMore: false } });
        const resource = await service.complete({ ref: { type: 'ref/resource', uri: 'file:///x' }, argument: { name: 'a', value: 'b' } }, everything);
        assert.deepEqual(resource.completion.values, []);
        assert.equal(docs.completions.length + open.completions.length, 2, 'resource templates are not proxied');
    });

    test('onResolved (what names the trace for its prompt) is called once a name resolves to a prompt the caller sees, never for a hidden or missing one', async t => {
        const { docs, open } = twoUpstreams();
        const { service } = setup(t, [docs, open]);
        await service.list(undefined, everything);
        const resolved: string[] = [];
        const onResolved = (name: string) => () => resolved.push(name);
        docs.getAnswer = { messages: [] };
        await service.get({ name: 'docs__review', args: { file: 'a' }, caller: noSecrets, onResolved: onResolved('get docs__review') });
        await service.complete(completion('docs__review'), noSecrets, undefined, undefined, onResolved('complete docs__review'));
        for (const name of ['docs__secret', 'docs__secreu']) {
            await rpcError(service.get({ name, args: undefined, caller: noSecrets, onResolved: onResolved(`get ${name}`) }));
            await rpcError(service.complete(completion(name), noSecrets, undefined, undefined, onResolved(`complete ${name}`)));
        }
        assert.deepEqual(resolved, ['get docs__review', 'complete docs__review']);
    });

    test('a hidden prompt and a missing one give the very same -32602, and neither reaches an upstream', async t => {
        const { docs, open } = twoUpstreams();
        const { service, usage } = setup(t, [docs, open]);
        await service.list(undefined, everything);
        const hidden = await rpcError(service.get({ name: 'docs__secret', args: undefined, caller: noSecrets }));
        const missing = await rpcError(service.get({ name: 'docs__secreu', args: undefined, caller: noSecrets }));
        assert.equal(hidden.code, ProtocolErrorCode.InvalidParams);
        assert.deepEqual({ ...hidden, message: hidden.message.replace('secret', 'NAME') }, { ...missing, message: missing.message.replace('secreu', 'NAME') });
        const hiddenCompletion = await rpcError(service.complete(completion('docs__secret'), noSecrets));
        const missingCompletion = await rpcError(service.complete(completion('docs__secreu'), noSecrets));
        assert.deepEqual(hiddenCompletion, hidden);
        assert.deepEqual(missingCompletion, missing);
        assert.deepEqual([docs.gets, docs.completions], [[], []]);
        assert.deepEqual(
            usage.filter(event => event.operation !== 'list').map(event => event.outcome),
            ['denied', 'invalid_params', 'denied', 'invalid_params'],
            "only the gateway's own records tell them apart"
        );
        assert.deepEqual(
            usage.filter(event => event.operation === 'get').map(event => event.entry?.exposedName),
            ['docs__secret', undefined]
        );
    });

    test('a prompt of an upstream that is not ready is unknown', async t => {
        const { docs, open } = twoUpstreams();
        const { service } = setup(t, [docs, open]);
        await service.list(undefined, everything);
        docs.setState('down');
        assert.equal((await rpcError(service.get({ name: 'docs__review', args: { file: 'a' }, caller: everything }))).code, ProtocolErrorCode.InvalidParams);
        assert.deepEqual(docs.gets, []);
    });

    test('arguments are checked against the prompt before anything is forwarded', async t => {
        const { docs, open } = twoUpstreams();
        const { service } = setup(t, [docs, open]);
        const cases: [string, unknown, RegExp][] = [
            ['docs__review', undefined, /Missing required argument: "file"/],
            ['docs__review', { file: 'a', extra: 'b' }, /Unknown argument: "extra"/],
            ['docs__review', { file: 1 }, /values must be strings/],
            ['docs__review', { file: 'x'.repeat(17) }, /too large/],
            ['docs__review', { file: 'a', b: 'b', c: 'c', d: 'd', e: 'e' }, /Too many arguments/]
        ];
        for (const [name, args, message] of cases) {
            const error = await rpcError(service.get({ name, args, caller: everything }));
            assert.equal(error.code, ProtocolErrorCode.InvalidParams);
            assert.match(error.message, message);
        }
        assert.deepEqual(docs.gets, []);
        await service.get({ name: 'open__review', args: { file: 'a', extra: 'b' }, caller: everything });
        assert.deepEqual(
            open.gets.map(get => get.args),
            [{ file: 'a', extra: 'b' }],
            'this upstream takes undeclared arguments'
        );

        const tooLong = await rpcError(service.complete(completion('docs__review', 'x'.repeat(17)), everything));
        assert.equal(tooLong.code, ProtocolErrorCode.InvalidParams);
        const badContext = await rpcError(service.complete({ ...completion('docs__review'), context: { arguments: { a: 1 } as unknown as Record<string, string> } }, everything));
        assert.equal(badContext.code, ProtocolErrorCode.InvalidParams);
        assert.deepEqual(docs.completions, []);
    });

    test('upstream failures become JSON-RPC errors that say what the client may know, and nothing else', async t => {
        const { docs, open } = twoUpstreams();
        const { service, usage } = setup(t, [docs, open]);
        const failures: [Error, { code: number; message: string }, UsageEvent['outcome']][] = [
            [new UpstreamRejectedError('file must end in .md'), { code: ProtocolErrorCode.InvalidParams, message: 'file must end in .md' }, 'invalid_params'],
            [
                new UpstreamFailedError('docs', 'timed out after 5 ms', 'timeout'),
                { code: ProtocolErrorCode.InternalError, message: 'Upstream docs failed: timed out after 5 ms' },
                'timeout'
            ],
            [new UpstreamFailedError('docs', 'cancelled', undefined), { code: ProtocolErrorCode.InternalError, message: 'Upstream docs failed: cancelled' }, 'cancelled'],
            [new Error('at /home/secret/stack.js:1'), { code: ProtocolErrorCode.InternalError, message: 'Internal error' }, 'upstream_error']
        ];
        for (const [failure, expected, outcome] of failures) {
            docs.getAnswer = failure;
            assert.deepEqual(await rpcError(service.get({ name: 'docs__review', args: { file: 'a' }, caller: everything })), expected);
            assert.equal(usage.at(-1)?.outcome, outcome);
            assert.equal(usage.at(-1)?.entry?.exposedName, 'docs__review');
        }
        docs.completeAnswer = new UpstreamFailedError('docs', 'connection closed', undefined);
        assert.deepEqual(await rpcError(service.complete(completion('docs__review'), everything)), {
            code: ProtocolErrorCode.InternalError,
            message: 'Upstream docs failed: connection closed'
        });
    });

    test('an oversized or overdeep result is not forwarded, and counts as a fault of its upstream', async t => {
        const { docs, open } = twoUpstreams();
        const { service } = setup(t, [docs, open]);
        docs.getAnswer = { messages: [{ role: 'user', content: { type: 'text', text: 'x'.repeat(1000) } }] };
        const large = await rpcError(service.get({ name: 'docs__review', args: { file: 'a' }, caller: everything }));
        assert.equal(large.code, ProtocolErrorCode.InternalError);
        assert.match(large.message, /Upstream docs failed: result larger than 1000 bytes/);
        let deep: Record<string, unknown> = {};
        for (let i = 0; i < 20; i++) deep = { deep };
        docs.getAnswer = { messages: [], _meta: deep };
        assert.match((await rpcError(service.get({ name: 'docs__review', args: { file: 'a' }, caller: everything }))).message, /nested deeper than 8 levels/);
        assert.deepEqual(docs.faults, ['oversized_result', 'oversized_result']);
        assert.deepEqual(open.faults, []);
    });

    test("a list pages through every upstream's visible prompts; a cursor is bound to its caller", async t => {
        const { docs, open } = twoUpstreams();
        const { service } = setup(t, [docs, open]);
        const first = await service.list(undefined, everything);
        assert.deepEqual(
            first.prompts.map(definition => definition.name),
            ['docs__review', 'docs__secret']
        );
        assert.ok(first.nextCursor !== undefined);
        const second = await service.list(first.nextCursor, everything);
        assert.deepEqual(
            second.prompts.map(definition => definition.name),
            ['open__review']
        );
        assert.equal(second.nextCursor, undefined);

        const narrow = await service.list(undefined, noSecrets);
        assert.deepEqual(
            narrow.prompts.map(definition => definition.name),
            ['docs__review', 'open__review']
        );
        assert.deepEqual(await rpcError(service.list(first.nextCursor, noSecrets)), { code: ProtocolErrorCode.InvalidParams, message: 'Invalid cursor' });
        assert.equal((await rpcError(service.list('garbage', everything))).code, ProtocolErrorCode.InvalidParams);
    });
});
