/**
 * The catalog page's MCP client (src/downstream/http/catalog-page/mcp-client.js) against a real gateway in this
 * process: files upstreams in a temporary folder, API keys with allow-lists and a rate-limited client. What it
 * reads must be what an SDK client of the same gateway reads, and each refusal the gateway makes must reach the page
 * as the kind the page acts on. Answers no gateway gives (torn streams, oversized bodies, the listen loop's timing)
 * are in test/unit/catalog-client.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../src/gateway.js';
import { CatalogRequestError, createCatalogClient } from '../src/downstream/http/catalog-page/mcp-client.js';
import { connectModernHttp, startTestGateway, upstreamsReady, waitFor } from './helpers.js';
import { modernHeaders, modernMeta, post } from './raw-http.js';

const keyOf = (clientId: string) => `key-of-${clientId}-0123456789abcdef`;

const CODE_REVIEW = `---
title: Code review
description: Review a change the way our team does.
arguments:
  - name: diff
    description: The change to review
    required: true
  - name: language
    values: [typescript, python, go]
---
Review the following {{language}} change:

{{diff}}
`;

/** A prompt file with a title and one optional argument. */
const plainPrompt = (title: string) => `---\ntitle: ${title}\narguments:\n  - name: topic\n---\nAbout {{topic}}\n`;

async function promptFolder(files: Record<string, string>): Promise<string> {
    const folder = await mkdtemp(path.join(tmpdir(), 'catalog-client-'));
    for (const [name, text] of Object.entries(files)) await writeFile(path.join(folder, name), text);
    return folder;
}

async function rejection(promise: Promise<unknown>): Promise<CatalogRequestError> {
    try {
        await promise;
    } catch (error) {
        if (error instanceof CatalogRequestError) return error;
        throw error;
    }
    assert.fail('expected a CatalogRequestError');
}

/** A fetch that sets (or replaces) `headers` on every request, then goes over real HTTP. */
function fetchWith(headers: Record<string, string>): typeof fetch {
    return (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } });
}

describe('catalog client against a gateway with API keys', () => {
    let gateway: RunningGateway;
    let url: string;
    let folder: string;
    const folders: string[] = [];
    const client = (id: string | undefined, extra: Partial<Parameters<typeof createCatalogClient>[0]> = {}) =>
        createCatalogClient({ endpoint: url, clientVersion: '9.9.9', credential: () => (id === undefined ? undefined : keyOf(id)), ...extra });

    before(async () => {
        const prompts: Record<string, string> = { 'code-review.md': CODE_REVIEW, 'secret-plan.md': plainPrompt('Secret plan') };
        for (let i = 0; i < 5; i++) prompts[`note-${i}.md`] = plainPrompt(`Note ${i}`);
        folder = await promptFolder(prompts);
        folders.push(folder, await promptFolder({ 'handover.md': plainPrompt('Handover') }));
        gateway = await startTestGateway({
            auth: { mode: 'apiKey' },
            clients: [
                { id: 'alice', apiKey: keyOf('alice') },
                { id: 'bob', apiKey: keyOf('bob'), prompts: { deny: ['team__secret-*'] } },
                { id: 'carol', apiKey: keyOf('carol'), rateLimit: { requestsPerSecond: 0.001, burst: 2 } },
                { id: 'dave', apiKey: keyOf('dave') }
            ],
            pagination: { pageSize: 3 },
            subscriptions: { maxPerClient: 1 },
            notifications: { debounceMs: 20, maxDelayMs: 100 },
            upstreams: [
                { id: 'team', transport: 'files', path: folder },
                { id: 'ops', transport: 'files', path: folders[1] }
            ]
        });
        url = gateway.url!;
        await upstreamsReady(gateway);
    });

    after(async () => {
        await gateway?.close();
        for (const dir of folders) await rm(dir, { recursive: true, force: true });
    });

    test("the list walk reads every page, as an SDK client's walk does; each client its own view", { timeout: 30_000 }, async t => {
        const sdk = await connectModernHttp(url, { headers: { authorization: `Bearer ${keyOf('alice')}` } });
        t.after(() => sdk.close());
        // The SDK walks every page of a listPrompts itself.
        const expected = (await sdk.listPrompts()).prompts;

        let pages = 0;
        const counting: typeof fetch = (input, init) => {
            pages++;
            return fetch(input, init);
        };
        const alice = await client('alice', { fetch: counting }).listPrompts();
        assert.equal(pages, 3, 'eight prompts in pages of three');
        assert.equal(alice.truncated, false);
        assert.equal(typeof alice.ttlMs, 'number');
        assert.deepEqual(alice.prompts, expected);
        const names = alice.prompts.map(prompt => prompt.name);
        assert.ok(names.includes('team__secret-plan') && names.includes('ops__handover'));

        const bob = await client('bob').listPrompts();
        assert.deepEqual(
            bob.prompts.map(prompt => prompt.name),
            names.filter(name => name !== 'team__secret-plan')
        );
    });

    test('completion and get: the values the upstream offers, the messages an SDK client gets', { timeout: 30_000 }, async t => {
        const alice = client('alice');
        assert.deepEqual(await alice.complete({ prompt: 'team__code-review', argument: 'language', value: 'py', context: { diff: 'x' } }), {
            values: ['python'],
            hasMore: false,
            total: 1
        });
        const sdk = await connectModernHttp(url, { headers: { authorization: `Bearer ${keyOf('alice')}` } });
        t.after(() => sdk.close());
        const args = { diff: '- a\n+ b', language: 'go' };
        const rendered = await alice.getPrompt({ name: 'team__code-review', arguments: args });
        assert.equal(rendered.resultType, 'complete');
        assert.deepEqual(rendered.messages, (await sdk.getPrompt({ name: 'team__code-review', arguments: args })).messages);
    });

    test("a JSON-RPC error reaches the page with the gateway's message; hidden and missing prompts read the same", { timeout: 30_000 }, async () => {
        const missingArgument = await rejection(client('alice').getPrompt({ name: 'team__code-review', arguments: { language: 'go' } }));
        assert.deepEqual([missingArgument.kind, missingArgument.status, missingArgument.code, missingArgument.message], ['rpc', 200, -32602, 'Missing required argument: "diff"']);

        const hidden = await rejection(client('bob').getPrompt({ name: 'team__secret-plan' }));
        const missing = await rejection(client('bob').getPrompt({ name: 'team__no-such-prompt' }));
        assert.deepEqual([hidden.kind, hidden.code], ['rpc', -32602]);
        assert.equal(hidden.message.replace('team__secret-plan', '<name>'), missing.message.replace('team__no-such-prompt', '<name>'));
    });

    test('a name that is not plain ASCII goes in Mcp-Name as base64, which the gateway matches to the body', { timeout: 30_000 }, async () => {
        // No such prompt: an unknown prompt (200, -32602) proves the header matched; a wrong one is 400 -32020.
        const error = await rejection(client('alice').getPrompt({ name: 'team__café ☕' }));
        assert.deepEqual([error.kind, error.status, error.code, error.message], ['rpc', 200, -32602, 'Unknown prompt: "team__café ☕"']);
    });

    test('refusals: 401 with and without a credential, 403 for a foreign Origin, 429 with Retry-After, 400 HeaderMismatch', { timeout: 30_000 }, async () => {
        const anonymous = await rejection(client(undefined).discover());
        assert.deepEqual([anonymous.kind, anonymous.status, anonymous.message], ['unauthorized', 401, 'The gateway asks for a credential']);
        const wrong = await rejection(createCatalogClient({ endpoint: url, clientVersion: '1', credential: () => 'not-a-key-0123456789' }).discover());
        assert.deepEqual([wrong.kind, wrong.status, wrong.message], ['unauthorized', 401, 'The gateway did not accept this credential']);

        const foreign = await rejection(client('alice', { fetch: fetchWith({ Origin: 'http://evil.example' }) }).discover());
        assert.deepEqual(
            [foreign.kind, foreign.status, foreign.message],
            ['forbidden-origin', 403, "The gateway refused this page's origin: add 127.0.0.1 to listen.allowedOrigins"]
        );

        const carol = client('carol');
        await carol.discover();
        await carol.discover();
        const limited = await rejection(carol.discover());
        assert.equal(limited.kind, 'rate-limited');
        assert.equal(limited.status, 429);
        assert.ok(limited.retryAfterMs !== undefined && limited.retryAfterMs >= 1000, `Retry-After: ${limited.retryAfterMs}`);
        assert.match(limited.message, /^Too many requests; retry after \d+ s$/);

        const mismatch = await rejection(client('alice', { fetch: fetchWith({ 'Mcp-Name': 'team__other' }) }).getPrompt({ name: 'team__code-review' }));
        assert.deepEqual([mismatch.kind, mismatch.status, mismatch.code, mismatch.message], ['rpc', 400, -32020, 'Header mismatch: Mcp-Name header does not match the body']);

        for (const error of [anonymous, wrong, foreign, limited, mismatch]) {
            for (const id of ['alice', 'carol']) assert.equal(JSON.stringify({ ...error, message: error.message }).includes(keyOf(id)), false);
        }
    });

    test('listen: acknowledged, a list change delivered, an abort frees the subscription at once', { timeout: 30_000 }, async t => {
        const controller = new AbortController();
        t.after(() => controller.abort());
        const states: string[] = [];
        let acknowledged!: () => void;
        let changed!: () => void;
        const ack = new Promise<void>(resolve => (acknowledged = resolve));
        const change = new Promise<void>(resolve => (changed = resolve));
        const done = client('dave').listen({
            signal: controller.signal,
            onState: state => states.push(state),
            onAcknowledged: () => acknowledged(),
            onListChanged: () => changed()
        });
        await ack;
        assert.deepEqual(states, ['connecting', 'listening']);
        await writeFile(path.join(folder, 'brand-new.md'), plainPrompt('Brand new'));
        await change;
        assert.ok((await client('dave').listPrompts()).prompts.some(prompt => prompt.name === 'team__brand-new'));

        controller.abort();
        await done;
        assert.deepEqual(states, ['connecting', 'listening'], 'an abort reports no state');
        // subscriptions.maxPerClient is 1: dave listens again once the gateway has let the aborted stream go.
        const body = { jsonrpc: '2.0', id: 'again', method: 'subscriptions/listen', params: { notifications: { promptsListChanged: true }, _meta: modernMeta() } };
        await waitFor(async () => {
            const response = await post(url, body, { ...modernHeaders(body), authorization: `Bearer ${keyOf('dave')}` });
            await response.body?.cancel();
            return response.status === 200;
        });
    });
});

describe('catalog client when the gateway ends the stream', () => {
    test('a gateway shutting down ends the subscription; the client reconnects to the next one on the same port', { timeout: 60_000 }, async t => {
        const folder = await promptFolder({ 'a.md': plainPrompt('A') });
        t.after(() => rm(folder, { recursive: true, force: true }));
        const config = { upstreams: [{ id: 'team', transport: 'files', path: folder }] };
        const first = await startTestGateway(config);
        let firstClosed = false;
        t.after(() => (firstClosed ? undefined : first.close()));
        const { port } = new URL(first.url!);

        const controller = new AbortController();
        t.after(() => controller.abort());
        const seen: string[] = [];
        const waiters: [string, () => void][] = [];
        const next = (what: string) => new Promise<void>(resolve => waiters.push([what, resolve]));
        const report = (what: string) => {
            seen.push(what);
            for (const [i, [wanted, resolve]] of [...waiters.entries()].reverse()) {
                if (wanted !== what) continue;
                waiters.splice(i, 1);
                resolve();
            }
        };
        const listening = next('listening');
        // Random 0: the shortest waits (0.75, 1.5, 3 s ...).
        const done = createCatalogClient({ endpoint: first.url!, clientVersion: '1', random: () => 0 }).listen({
            signal: controller.signal,
            onState: state => report(state),
            onAcknowledged: () => report('ack')
        });
        await listening;

        const reconnecting = next('reconnecting');
        await first.close();
        firstClosed = true;
        await reconnecting;
        const again = next('listening');
        const second = await startTestGateway({ ...config, listen: { port: Number(port) } });
        t.after(() => second.close());
        await again;
        assert.deepEqual(seen.slice(0, 4), ['connecting', 'listening', 'ack', 'reconnecting']);
        assert.deepEqual(seen.slice(-2), ['listening', 'ack']);
        controller.abort();
        await done;
    });
});
