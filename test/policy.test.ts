/**
 * Prompt policy over real transports: which prompts each client sees, gets and
 * completes, that a hidden prompt is indistinguishable from a missing one and
 * never reaches its upstream, per-client notifications and cursors, live policy
 * reloads, and the --client of the stdio CLI.
 *
 * Every expected set below is derived by hand from the fixture's prompt list
 * (test/fixtures/fixture-prompts.ts) and the policies in the config.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client, GetPromptResult, ListPromptsResult } from '@modelcontextprotocol/client';
import { parseConfig } from '../src/config/load.js';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, connectStdio, fixtureStats, listAllPages, notificationsSettled, ROOT, rpcError, startTestGateway, stdioFixture, waitFor } from './helpers.js';

/** The fixture's prompts after its generic and extra ones, in list order. */
const SPECIALS = ['with-required', 'all-content', 'fail-invalid-params', 'fail-internal', 'slow', 'stats', 'big', 'set-list-delay', 'emit-list-changed', 'mutate', 'crash'];
const generic = (count: number) => Array.from({ length: count }, (_, i) => `prompt-${String(i).padStart(3, '0')}`);
const prefixed = (id: string, names: readonly string[]) => names.map(name => `${id}__${name}`);

const NO_RATE_LIMIT = { rateLimit: { requestsPerSecond: 0, burst: 1 } };
/** A burst ends after debounceMs without an event: wide enough that one upstream's events, sent at once, stay one burst on a loaded machine. */
const NOTIFY = { debounceMs: 250, maxDelayMs: 1000 };

const keyOf = (clientId: string) => `key-of-${clientId}-0123456789abcdef`;
const bearer = (clientId: string) => ({ authorization: `Bearer ${keyOf(clientId)}` });

interface ErrorShape {
    code: number;
    message: string;
}

/** The error for `name`, as the error for the missing name `missing` would read with `name` in its place. */
function asIfMissing(missingError: ErrorShape, missing: string, name: string): ErrorShape {
    assert.ok(missingError.message.includes(JSON.stringify(missing)), `the missing prompt's error names it: ${missingError.message}`);
    return { code: missingError.code, message: missingError.message.replace(JSON.stringify(missing), JSON.stringify(name)) };
}

/** Walks every page and checks its shape: full pages of `pageSize` but the last, no page after the last visible prompt. */
async function listChecked(client: Client, pageSize: number): Promise<string[]> {
    const { names, pages } = await listAllPages(client);
    const expectedPages = Math.max(1, Math.ceil(names.length / pageSize));
    assert.equal(pages.length, expectedPages, `pages ${JSON.stringify(pages)} for ${names.length} prompts`);
    pages.slice(0, -1).forEach(size => assert.equal(size, pageSize));
    assert.equal(new Set(names).size, names.length, 'no prompt twice');
    return names;
}

function textOf(result: GetPromptResult): string {
    const content = result.messages[0]?.content;
    return content?.type === 'text' ? content.text : '';
}

// ---------------------------------------------------------------------------------------------
// The matrix: three upstreams, policies at every level, five clients.

const MATRIX_PAGE = 3;

/** `alpha`: 3 generic prompts and an admin one; its own policy drops the dangerous fixture prompts. */
const ALPHA_OWN = [...generic(3), 'admin-reset', ...SPECIALS];
const ALPHA_POLICY = { deny: ['fail-*', 'crash', 'slow', 'big', 'set-list-delay', 'mutate'] };
/** After alpha's own policy and the global deny of "*__admin-*". */
const ALPHA_VISIBLE = prefixed('alpha', ['prompt-000', 'prompt-001', 'prompt-002', 'with-required', 'all-content', 'stats', 'emit-list-changed']);

/** `beta`: paginates its own list; its allow list is on its own names, so "beta__all-content" in it matches nothing. */
const BETA_OWN = [...generic(2), ...SPECIALS];
const BETA_POLICY = { allow: ['prompt-*', 'with-required', 'stats', 'emit-list-changed', 'beta__all-content'] };
const BETA_VISIBLE = prefixed('beta', ['prompt-000', 'prompt-001', 'with-required', 'stats', 'emit-list-changed']);

/** `solo`: not namespaced, with names that a path matcher or an object lookup would get wrong. */
const SOLO_EXTRAS = ['solo-a', 'solo-b', 'x/../y__admin-z', '.secret', 'a/b', '__proto__', 'constructor', 'ünï-😀'];
const SOLO_OWN = [...SOLO_EXTRAS, ...SPECIALS];
const SOLO_POLICY = { allow: ['solo-*', 'x/*', '.*', 'a/b', '__proto__', 'constructor', 'ünï-*', 'stats'] };
/** "x/../y__admin-z" and "constructor" fall to the global deny. */
const SOLO_VISIBLE = ['solo-a', 'solo-b', '.secret', 'a/b', '__proto__', 'ünï-😀', 'stats'];

const GLOBAL_POLICY = { deny: ['*__admin-*', 'constructor'] };

/** Every exposed name some upstream offers, hidden or not. */
const UNIVERSE = [...prefixed('alpha', ALPHA_OWN), ...prefixed('beta', BETA_OWN), ...SOLO_OWN];
const ALL_VISIBLE = [...ALPHA_VISIBLE, ...BETA_VISIBLE, ...SOLO_VISIBLE];

interface MatrixClient {
    id: string;
    prompts?: { allow?: string[]; deny?: string[] };
    /** What it sees, in list order. */
    visible: string[];
    headers: Record<string, string>;
}

const MATRIX_CLIENTS: MatrixClient[] = [
    { id: 'all', visible: ALL_VISIBLE, headers: bearer('all') },
    { id: 'alpha-only', prompts: { allow: ['alpha__*'] }, visible: ALPHA_VISIBLE, headers: bearer('alpha-only') },
    {
        id: 'no-alpha',
        prompts: { deny: ['alpha__*', 'solo-*'] },
        visible: [...BETA_VISIBLE, '.secret', 'a/b', '__proto__', 'ünï-😀', 'stats'],
        headers: { 'x-api-key': keyOf('no-alpha') }
    },
    {
        id: 'mixed',
        prompts: {
            // "alpha__admin-reset" is allowed here, but the global deny wins.
            allow: ['beta__*', 'solo-[a-z]', 'alpha__prompt-*', 'alpha__admin-reset', '{a/b,.secret}'],
            deny: ['beta__prompt-*', 'alpha__prompt-001', 'solo-b']
        },
        visible: ['alpha__prompt-000', 'alpha__prompt-002', 'beta__with-required', 'beta__stats', 'beta__emit-list-changed', 'solo-a', '.secret', 'a/b'],
        headers: bearer('mixed')
    },
    { id: 'nobody', prompts: { allow: [] }, visible: [], headers: bearer('nobody') }
];

/** The name the upstream knows a prompt by. */
function ownName(exposed: string): string {
    return exposed.replace(/^(alpha|beta)__/, '');
}

/** Arguments that make a visible prompt answer: only with-required needs one. */
function argumentsFor(exposed: string): Record<string, string> | undefined {
    return ownName(exposed) === 'with-required' ? { topic: 'policy' } : undefined;
}

function completionFor(exposed: string) {
    const argument = ownName(exposed) === 'with-required' ? { name: 'topic', value: 'm' } : { name: 'note', value: 'm' };
    return { ref: { type: 'ref/prompt' as const, name: exposed }, argument };
}

describe('policy matrix (apiKey mode)', () => {
    let gateway: RunningGateway;
    const clients = new Map<string, Client>();

    before(async () => {
        gateway = await startTestGateway({
            auth: { mode: 'apiKey' },
            pagination: { pageSize: MATRIX_PAGE },
            limits: NO_RATE_LIMIT,
            prompts: GLOBAL_POLICY,
            clients: MATRIX_CLIENTS.map(client =>
                // One client's key is given as its digest, the others in plain.
                client.id === 'mixed'
                    ? { id: client.id, apiKeySha256: createHash('sha256').update(keyOf(client.id)).digest('hex'), prompts: client.prompts }
                    : { id: client.id, apiKey: keyOf(client.id), ...(client.prompts === undefined ? {} : { prompts: client.prompts }) }
            ),
            upstreams: [
                stdioFixture('alpha', { prompts: 3, extraPrompts: ['admin-reset'] }, { prompts: ALPHA_POLICY }),
                stdioFixture('beta', { prompts: 2, pageSize: 3 }, { prompts: BETA_POLICY }),
                stdioFixture('solo', { prompts: 0, extraPrompts: SOLO_EXTRAS }, { namespace: false, prompts: SOLO_POLICY })
            ]
        });
        for (const client of MATRIX_CLIENTS) clients.set(client.id, await connectHttp(gateway.url!, { headers: client.headers }));
    });

    after(async () => {
        await Promise.all([...clients.values()].map(client => client.close()));
        await gateway?.close();
    });

    const clientOf = (id: string) => clients.get(id)!;

    for (const spec of MATRIX_CLIENTS) {
        const hidden = UNIVERSE.filter(name => !spec.visible.includes(name));

        describe(`client "${spec.id}"`, () => {
            test('prompts/list, walked page by page, is exactly its visible set', async () => {
                assert.deepEqual(await listChecked(clientOf(spec.id), MATRIX_PAGE), spec.visible);
            });

            test('prompts/get of each visible prompt reaches the right prompt', async () => {
                for (const name of spec.visible) {
                    const args = argumentsFor(name);
                    const result = await clientOf(spec.id).getPrompt({ name, ...(args === undefined ? {} : { arguments: args }) });
                    assert.ok(result.messages.length > 0, name);
                    const own = ownName(name);
                    if (!SPECIALS.includes(own)) assert.ok(textOf(result).includes(own), `${name} answered by its own prompt: ${textOf(result)}`);
                }
            });

            test('prompts/get of each hidden prompt fails exactly like a missing one', async () => {
                const missing = 'alpha__no-such-prompt';
                const missingError = await rpcError(clientOf(spec.id).getPrompt({ name: missing }));
                assert.deepEqual(missingError, { code: -32602, message: `Unknown prompt: ${JSON.stringify(missing)}` });
                for (const name of hidden) {
                    const args = argumentsFor(name);
                    const error = await rpcError(clientOf(spec.id).getPrompt({ name, ...(args === undefined ? {} : { arguments: args }) }));
                    assert.deepEqual(error, asIfMissing(missingError, missing, name), name);
                }
            });

            test('completion/complete: visible prompts complete, hidden ones fail like a missing one', async () => {
                for (const name of spec.visible) {
                    const result = await clientOf(spec.id).complete(completionFor(name));
                    // The fixture completes only with-required's topic ("mcp", "music", "math", "gateways").
                    assert.deepEqual(result.completion.values, ownName(name) === 'with-required' ? ['mcp', 'music', 'math'] : [], name);
                }
                const missing = 'nope';
                const missingError = await rpcError(clientOf(spec.id).complete(completionFor(missing)));
                assert.deepEqual(missingError, { code: -32602, message: 'Unknown prompt: "nope"' });
                for (const name of hidden) {
                    assert.deepEqual(await rpcError(clientOf(spec.id).complete(completionFor(name))), asIfMissing(missingError, missing, name), name);
                }
            });
        });
    }

    test('a hidden prompt with malformed arguments still fails like a missing one, not with an argument error', async () => {
        const client = clientOf('alpha-only');
        const missingError = await rpcError(client.request({ method: 'prompts/get', params: { name: 'beta__nope', arguments: { topic: 42 } } }));
        for (const name of ['beta__with-required', 'alpha__fail-internal', 'alpha__admin-reset']) {
            const error = await rpcError(client.request({ method: 'prompts/get', params: { name, arguments: { topic: 42 } } }));
            assert.deepEqual(error, asIfMissing(missingError, 'beta__nope', name));
        }
        // Control: the same malformed arguments on a visible prompt are an argument error.
        const visible = await rpcError(client.request({ method: 'prompts/get', params: { name: 'alpha__with-required', arguments: { topic: 42 } } }));
        assert.equal(visible.code, -32602);
        assert.doesNotMatch(visible.message, /Unknown prompt/);
    });

    test('hidden prompts never reach their upstream', async () => {
        const reader = clientOf('all');
        const statsPrompts = ['alpha__stats', 'beta__stats', 'stats'];
        const read = async () => Promise.all(statsPrompts.map(async prompt => (await fixtureStats(reader, prompt)).requests));
        const before = await read();
        for (const spec of MATRIX_CLIENTS) {
            const client = clientOf(spec.id);
            for (const name of UNIVERSE.filter(name => !spec.visible.includes(name))) {
                await rpcError(client.getPrompt({ name, arguments: { topic: 'x' } }));
                await rpcError(client.complete(completionFor(name)));
            }
        }
        const afterHidden = await read();
        assert.deepEqual(
            afterHidden.map(({ get, complete }) => ({ get, complete })),
            before.map(({ get, complete }) => ({ get, complete }))
        );

        // Control: the counters do move for a visible prompt, one request each.
        await clientOf('mixed').getPrompt({ name: 'alpha__prompt-000' });
        await clientOf('mixed').complete(completionFor('solo-a'));
        const afterVisible = await read();
        assert.equal(afterVisible[0]!.get, before[0]!.get + 1);
        assert.equal(afterVisible[2]!.complete, before[2]!.complete + 1);
    });
});

// ---------------------------------------------------------------------------------------------

const UNIVERSE_OF_ONE = prefixed('one', [...generic(3), ...SPECIALS]);

describe('auth mode none: the anonymous policy', () => {
    let gateway: RunningGateway;

    before(async () => {
        gateway = await startTestGateway({
            pagination: { pageSize: 2 },
            limits: NO_RATE_LIMIT,
            anonymous: { prompts: { allow: ['one__prompt-*', 'one__with-required'], deny: ['one__prompt-001'] } },
            // A configured client's key proves nothing when nobody is asked for one.
            clients: [{ id: 'vip', apiKey: keyOf('vip') }],
            upstreams: [stdioFixture('one', { prompts: 3 })]
        });
    });

    after(async () => {
        await gateway?.close();
    });

    const expected = ['one__prompt-000', 'one__prompt-002', 'one__with-required'];

    for (const [what, headers] of [
        ['without credentials', undefined],
        ["with a configured client's key", bearer('vip')]
    ] as const) {
        test(`every caller, ${what}, sees the anonymous view`, async () => {
            const client = await connectHttp(gateway.url!, headers === undefined ? {} : { headers });
            try {
                assert.deepEqual(await listChecked(client, 2), expected);
                assert.equal(textOf(await client.getPrompt({ name: 'one__prompt-002' })), 'This is prompt-002');
                const missingError = await rpcError(client.getPrompt({ name: 'one__nope' }));
                for (const name of UNIVERSE_OF_ONE.filter(name => !expected.includes(name))) {
                    assert.deepEqual(await rpcError(client.getPrompt({ name })), asIfMissing(missingError, 'one__nope', name), name);
                    assert.deepEqual(await rpcError(client.complete(completionFor(name))), asIfMissing(missingError, 'one__nope', name), name);
                }
            } finally {
                await client.close();
            }
        });
    }
});

// ---------------------------------------------------------------------------------------------
// Notifications, cursors and reloads, per client.

interface Observed {
    client: Client;
    count: number;
}

async function observe(url: string, headers: Record<string, string>): Promise<Observed> {
    const client = await connectHttp(url, { headers });
    const observed: Observed = { client, count: 0 };
    client.setNotificationHandler('notifications/prompts/list_changed', () => {
        observed.count++;
    });
    // No wait for the client's standalone GET stream: a notification sent before it opens is held for it.
    return observed;
}

describe('per-client notifications, cursors and reloads', () => {
    const PAGE = 2;
    /** Prompts added to alpha and beta by the tests, in order (the fixture lists them after its generic ones). */
    const added: Record<'alpha' | 'beta', string[]> = { alpha: [], beta: [] };
    const listOf = (id: 'alpha' | 'beta') => prefixed(id, [...generic(3), ...added[id], ...SPECIALS]);

    const baseClients = [
        { id: 'team-a', apiKey: keyOf('team-a'), prompts: { allow: ['alpha__*'] } },
        { id: 'team-b', apiKey: keyOf('team-b'), prompts: { allow: ['beta__*'] } },
        { id: 'watcher', apiKey: keyOf('watcher'), prompts: { allow: ['alpha__prompt-000'] } }
    ];
    const configWith = (clients: unknown[], prompts: unknown = {}) => ({
        auth: { mode: 'apiKey' },
        pagination: { pageSize: PAGE },
        notifications: NOTIFY,
        limits: NO_RATE_LIMIT,
        // Served (so counted) beside an apiKey endpoint only behind a token: notificationsSettled reads the count.
        metrics: { bearerToken: 'operator-token-0123456789abcdef' },
        prompts,
        clients,
        // alpha's own policy hides its "secret-*" prompts from everyone.
        upstreams: [stdioFixture('alpha', { prompts: 3 }, { prompts: { deny: ['secret-*'] } }), stdioFixture('beta', { prompts: 3 })]
    });
    /** Applies a config as a reload, parsed exactly as startTestGateway parses its own. */
    const reload = (config: Record<string, unknown>) => gateway.reload(parseConfig(JSON.stringify({ listen: { port: 0 }, ...config }), 'reload', process.env));

    let gateway: RunningGateway;
    let a: Observed;
    let b: Observed;
    let watcher: Observed;
    const counts = () => [a.count, b.count, watcher.count];

    before(async () => {
        gateway = await startTestGateway(configWith(baseClients));
        a = await observe(gateway.url!, bearer('team-a'));
        b = await observe(gateway.url!, bearer('team-b'));
        watcher = await observe(gateway.url!, bearer('watcher'));
    });

    after(async () => {
        await Promise.all([a, b, watcher].map(observed => observed?.client.close()));
        await gateway?.close();
    });

    test('each client starts with its own view', async () => {
        assert.deepEqual(await listChecked(a.client, PAGE), listOf('alpha'));
        assert.deepEqual(await listChecked(b.client, PAGE), listOf('beta'));
        assert.deepEqual(await listChecked(watcher.client, PAGE), ['alpha__prompt-000']);
    });

    test('a change only client A can see notifies A once, and not B', async () => {
        const [a0, b0, w0] = counts();
        await a.client.getPrompt({ name: 'alpha__emit-list-changed', arguments: { count: '5', add: 'fresh-a' } });
        added.alpha.push('fresh-a');
        await waitFor(() => a.count > a0!, 20_000, 'the notification to A');
        await notificationsSettled(gateway, () => a.count + b.count + watcher.count);
        assert.deepEqual(counts(), [a0! + 1, b0, w0]);
        assert.deepEqual(await listChecked(a.client, PAGE), listOf('alpha'));
        assert.deepEqual(await listChecked(b.client, PAGE), listOf('beta'));

        // And the other way round, so B's silence above was not a broken stream.
        await b.client.getPrompt({ name: 'beta__emit-list-changed', arguments: { add: 'fresh-b' } });
        added.beta.push('fresh-b');
        await waitFor(() => b.count > b0!, 20_000, 'the notification to B');
        await notificationsSettled(gateway, () => a.count + b.count + watcher.count);
        assert.deepEqual(counts(), [a0! + 1, b0! + 1, w0]);
        assert.ok((await listChecked(b.client, PAGE)).includes('beta__fresh-b'));
    });

    test('a change no client may see notifies nobody', async () => {
        const before = counts();
        await a.client.getPrompt({ name: 'alpha__emit-list-changed', arguments: { count: '3', add: 'secret-1' } });
        await notificationsSettled(gateway, () => a.count + b.count + watcher.count);
        assert.deepEqual(counts(), before);
        assert.deepEqual(await listChecked(a.client, PAGE), listOf('alpha'));
        assert.deepEqual(await rpcError(a.client.getPrompt({ name: 'alpha__secret-1' })), { code: -32602, message: 'Unknown prompt: "alpha__secret-1"' });
    });

    test('a cursor issued to one client is rejected for another, like a forged one, and still works for its owner', async () => {
        const first = await a.client.request({ method: 'prompts/list', params: {} });
        const cursor = first.nextCursor;
        assert.ok(cursor !== undefined, 'A has more than one page');
        const forged = await rpcError(b.client.request({ method: 'prompts/list', params: { cursor: `${cursor}x` } }));
        assert.deepEqual(forged, { code: -32602, message: 'Invalid cursor' });
        assert.deepEqual(await rpcError(b.client.request({ method: 'prompts/list', params: { cursor } })), forged);
        assert.deepEqual(await rpcError(watcher.client.request({ method: 'prompts/list', params: { cursor } })), forged);
        // B's cursor is no good to A either.
        const bCursor = (await b.client.request({ method: 'prompts/list', params: {} })).nextCursor;
        assert.ok(bCursor !== undefined);
        assert.deepEqual(await rpcError(a.client.request({ method: 'prompts/list', params: { cursor: bCursor } })), forged);

        const second = await a.client.request({ method: 'prompts/list', params: { cursor } });
        assert.deepEqual(
            second.prompts.map(prompt => prompt.name),
            listOf('alpha').slice(PAGE, 2 * PAGE)
        );
    });

    test("a reload that changes one client's policy: its list follows, it alone hears one list_changed", async () => {
        const [a0, b0, w0] = counts();
        const clients = baseClients.map(client =>
            client.id === 'team-a' ? { ...client, prompts: { allow: ['alpha__*', 'beta__prompt-000'], deny: ['alpha__prompt-001'] } } : client
        );
        await reload(configWith(clients));
        await waitFor(() => a.count > a0!, 20_000, 'the notification to A');
        await notificationsSettled(gateway, () => a.count + b.count + watcher.count);
        assert.deepEqual(counts(), [a0! + 1, b0, w0]);
        assert.deepEqual(await listChecked(a.client, PAGE), [...listOf('alpha').filter(name => name !== 'alpha__prompt-001'), 'beta__prompt-000']);
        assert.deepEqual(await listChecked(b.client, PAGE), listOf('beta'));
        const error = await rpcError(a.client.getPrompt({ name: 'alpha__prompt-001' }));
        assert.deepEqual(error, { code: -32602, message: 'Unknown prompt: "alpha__prompt-001"' });
        assert.equal(textOf(await a.client.getPrompt({ name: 'beta__prompt-000' })), 'This is prompt-000');
    });

    test('a reload of the global policy notifies only the clients whose view it changed', async () => {
        const [a0, b0, w0] = counts();
        const clients = baseClients.map(client =>
            client.id === 'team-a' ? { ...client, prompts: { allow: ['alpha__*', 'beta__prompt-000'], deny: ['alpha__prompt-001'] } } : client
        );
        // beta__prompt-002 is in B's view only; A sees just beta__prompt-000 of beta.
        await reload(configWith(clients, { deny: ['beta__prompt-002'] }));
        await waitFor(() => b.count > b0!, 20_000, 'the notification to B');
        await notificationsSettled(gateway, () => a.count + b.count + watcher.count);
        assert.deepEqual(counts(), [a0, b0! + 1, w0]);
        assert.deepEqual(
            await listChecked(b.client, PAGE),
            listOf('beta').filter(name => name !== 'beta__prompt-002')
        );
    });

    test('a cursor issued before a reload that narrows the view reveals nothing the new policy hides', async () => {
        const cursor = (await a.client.request({ method: 'prompts/list', params: {} })).nextCursor;
        assert.ok(cursor !== undefined);
        // The first page was alpha__prompt-000 and alpha__prompt-002; of what follows, only alpha__stats stays visible.
        const narrowed = baseClients.map(client => (client.id === 'team-a' ? { ...client, prompts: { allow: ['alpha__prompt-00[02]', 'alpha__stats'] } } : client));
        await reload(configWith(narrowed, { deny: ['beta__prompt-002'] }));
        const seen: string[] = [];
        let refused: ErrorShape | undefined;
        try {
            for (let next: string | undefined = cursor; next !== undefined;) {
                const page: ListPromptsResult = await a.client.request({ method: 'prompts/list', params: { cursor: next } });
                seen.push(...page.prompts.map(prompt => prompt.name));
                next = page.nextCursor;
            }
        } catch (error) {
            refused = { code: (error as ErrorShape).code, message: (error as ErrorShape).message };
        }
        // Refusing the old cursor would be fine too, as long as it is the ordinary invalid-cursor error.
        if (refused !== undefined) assert.deepEqual(refused, { code: -32602, message: 'Invalid cursor' });
        else assert.deepEqual(seen, ['alpha__stats']);
        assert.deepEqual(await listChecked(a.client, PAGE), ['alpha__prompt-000', 'alpha__prompt-002', 'alpha__stats']);
    });
});

// ---------------------------------------------------------------------------------------------

describe('--stdio --client (the built CLI)', () => {
    const CLI = path.join(ROOT, 'dist/cli.js');
    let file: string;

    before(async () => {
        assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)');
        const dir = await mkdtemp(path.join(tmpdir(), 'gateway-policy-'));
        file = path.join(dir, 'gateway.json');
        await writeFile(
            file,
            JSON.stringify({
                log: { level: 'warn' },
                auth: { mode: 'apiKey' },
                anonymous: { prompts: { allow: ['alpha__with-required'] } },
                clients: [
                    { id: 'team-a', apiKey: keyOf('team-a'), prompts: { allow: ['alpha__prompt-00[02]'] } },
                    { id: 'team-b', apiKey: keyOf('team-b'), prompts: { deny: ['alpha__*'] } }
                ],
                upstreams: [stdioFixture('alpha', { prompts: 3 })]
            })
        );
    });

    async function viewOver(args: string[]): Promise<{ names: string[]; hidden: ErrorShape }> {
        const client = await connectStdio(process.execPath, [CLI, '--config', file, '--stdio', ...args]);
        try {
            const { names } = await listAllPages(client);
            return { names, hidden: await rpcError(client.getPrompt({ name: 'alpha__prompt-001' })) };
        } finally {
            await client.close();
        }
    }

    const HIDDEN = { code: -32602, message: 'Unknown prompt: "alpha__prompt-001"' };

    test("--client <id> sees only that client's prompts", async () => {
        assert.deepEqual(await viewOver(['--client', 'team-a']), { names: ['alpha__prompt-000', 'alpha__prompt-002'], hidden: HIDDEN });
        assert.deepEqual(await viewOver(['--client', 'team-b']), { names: [], hidden: HIDDEN });
    });

    test('without --client (or with --client anonymous) the anonymous policy applies', async () => {
        const anonymous = { names: ['alpha__with-required'], hidden: HIDDEN };
        assert.deepEqual(await viewOver([]), anonymous);
        assert.deepEqual(await viewOver(['--client', 'anonymous']), anonymous);
    });

    test('an unknown --client, or --client without --stdio, exits 2 naming the problem', () => {
        const run = (args: string[]) => spawnSync(process.execPath, [CLI, '--config', file, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
        const unknown = run(['--stdio', '--client', 'no-such-team']);
        assert.equal(unknown.status, 2, unknown.stderr);
        assert.match(unknown.stderr, /--client "no-such-team" is not in the config's "clients"/);
        assert.equal(unknown.stdout, '', 'nothing on the MCP channel');
        const withoutStdio = run(['--client', 'team-a', '--port', '0']);
        assert.equal(withoutStdio.status, 2, withoutStdio.stderr);
        assert.match(withoutStdio.stderr, /--client applies to --stdio only/);
        assert.doesNotMatch(unknown.stderr + withoutStdio.stderr, /\n\s+at /, 'no stack trace');
    });
});
