/**
 * Overrides end to end (docs/overrides.md): a real fixture upstream behind the gateway, clients over a 2025 session,
 * 2026-07-28 stateless requests and stdio. The fixture's extra prompts echo the name and arguments they received, so
 * the tests see what reached the upstream, not what the gateway meant to send.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { Client, Prompt } from '@modelcontextprotocol/client';
import { parseConfig } from '../src/config/load.js';
import type { RunningGateway } from '../src/gateway.js';
import {
    capturingLogger,
    closeAfter,
    connectHttp,
    connectModernHttp,
    connectStdio,
    listAllPages,
    notificationsSettled,
    ROOT,
    rpcError,
    startHttpFixture,
    startTestGateway,
    stdioFixture,
    waitFor,
    type FixtureOptions
} from './helpers.js';

const TIMEOUT = { timeout: 120_000 };
const NOTIFY = { debounceMs: 50, maxDelayMs: 300 };

const FIXTURE: FixtureOptions = {
    prompts: 2,
    extraPrompts: [
        {
            name: 'echo',
            arguments: [
                { name: 'topic', required: true },
                { name: 'tone', required: false }
            ]
        }
    ]
};

const OVERRIDES = {
    echo: {
        name: 'brief',
        title: 'Team brief',
        description: 'Writes a brief the way the team likes it',
        arguments: { topic: { description: 'What the brief is about', default: 'gateways' }, tone: { description: 'How it sounds' }, length: { default: 'short' } }
    },
    'with-required': { name: 'write' },
    retired: { title: 'Gone since 2.0' }
};

const EXPECTED_BRIEF: Prompt = {
    name: 'team__brief',
    title: 'Team brief',
    description: 'Writes a brief the way the team likes it',
    arguments: [
        { name: 'topic', description: 'What the brief is about', required: false },
        { name: 'tone', description: 'How it sounds', required: false }
    ]
};

/** What the echo prompt received: its own name and arguments. */
async function echoed(client: Client, name: string, args?: Record<string, string>): Promise<{ name: string; arguments: Record<string, string> }> {
    const result = await client.getPrompt(args === undefined ? { name } : { name, arguments: args });
    const content = result.messages[0]!.content;
    assert.equal(content.type, 'text');
    return JSON.parse(content.type === 'text' ? content.text : '') as { name: string; arguments: Record<string, string> };
}

async function healthOf(gateway: RunningGateway, id: string): Promise<Record<string, unknown> | undefined> {
    const response = await fetch(new URL('/healthz', gateway.url));
    const body = (await response.json()) as { upstreams: { id: string }[] };
    return body.upstreams.find(upstream => upstream.id === id);
}

/** The same checks for any client: the listed prompt shows the overrides, a default fills, a rename reaches the upstream. */
async function checkClient(client: Client): Promise<void> {
    const { prompts } = await client.listPrompts();
    const names = prompts.map(prompt => prompt.name);
    assert.deepEqual(
        prompts.find(prompt => prompt.name === 'team__brief'),
        EXPECTED_BRIEF
    );
    assert.ok(names.includes('team__write') && !names.includes('team__echo') && !names.includes('team__with-required'), names.join(', '));
    assert.deepEqual(await echoed(client, 'team__brief'), { name: 'echo', arguments: { topic: 'gateways' } }, 'the default filled the omitted argument');
    assert.deepEqual(await echoed(client, 'team__brief', { topic: 'cursors', tone: 'dry' }), { name: 'echo', arguments: { topic: 'cursors', tone: 'dry' } });
    const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'team__write' }, argument: { name: 'topic', value: 'm' } });
    assert.deepEqual(completion.completion.values, ['mcp', 'music', 'math'], 'the completion reached the upstream under its own name');
    const written = await client.getPrompt({ name: 'team__write', arguments: { topic: 'renames' } });
    assert.match(JSON.stringify(written.messages), /Write about renames/);
    assert.equal((await rpcError(client.getPrompt({ name: 'team__echo' }))).code, -32602, 'the old name is gone');
}

test('overrides over a 2025 session, 2026-07-28 requests and stdio; what does not apply is reported once', TIMEOUT, async t => {
    const fixture = await startHttpFixture('streamable-http', FIXTURE);
    closeAfter(t, () => fixture.close());
    const { logger, lines } = capturingLogger();
    const upstream = { id: 'team', transport: 'streamable-http', url: fixture.url, overrides: OVERRIDES };
    const gateway = await startTestGateway({ upstreams: [upstream] }, logger);
    closeAfter(t, () => gateway.close());

    const session = await connectHttp(gateway.url!);
    closeAfter(t, () => session.close());
    await checkClient(session);
    const modern = await connectModernHttp(gateway.url!);
    closeAfter(t, () => modern.close());
    await checkClient(modern);

    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-overrides-'));
    closeAfter(t, () => rm(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'gateway.json');
    await writeFile(file, JSON.stringify({ upstreams: [upstream] }));
    const stdio = await connectStdio(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--config', file, '--stdio']);
    closeAfter(t, () => stdio.close());
    await checkClient(stdio);

    const expectedReport = { unmatched: ['retired'], unknownArguments: ['echo.length'], clashes: [] };
    assert.deepEqual((await healthOf(gateway, 'team'))?.overrides, expectedReport);
    const dashboard = (await (await fetch(new URL('/dashboard/data', gateway.url))).json()) as { upstreams: { id: string; overrides?: unknown }[] };
    assert.deepEqual(dashboard.upstreams.find(upstream => upstream.id === 'team')?.overrides, expectedReport);
    const reports = lines().filter(line => line.upstream === 'team' && Array.isArray(line.unmatched));
    assert.equal(reports.length, 1, 'reported once, not on every list');
    assert.equal(reports[0]!.level, 'warn');
    assert.deepEqual({ unmatched: reports[0]!.unmatched, unknownArguments: reports[0]!.unknownArguments }, { unmatched: ['retired'], unknownArguments: ['echo.length'] });
});

test("the upstream's prompt filter matches its own names, client policies the exposed names", TIMEOUT, async t => {
    const fixture = await startHttpFixture('streamable-http', FIXTURE);
    closeAfter(t, () => fixture.close());
    const gateway = await startTestGateway({
        upstreams: [{ id: 'team', transport: 'streamable-http', url: fixture.url, overrides: OVERRIDES, prompts: { deny: ['with-required'] } }],
        anonymous: { prompts: { allow: ['team__brief', 'team__write', 'team__prompt-*'] } }
    });
    closeAfter(t, () => gateway.close());
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    assert.deepEqual((await listAllPages(client)).names, ['team__prompt-000', 'team__prompt-001', 'team__brief']);
    assert.equal((await rpcError(client.getPrompt({ name: 'team__write', arguments: { topic: 'x' } }))).code, -32602);
});

test('a reload that changes only overrides keeps the upstream, notifies once; clashes and list changes are reported', TIMEOUT, async t => {
    const { logger, lines } = capturingLogger();
    const base = { listen: { port: 0 }, notifications: NOTIFY };
    const upstream = (overrides: Record<string, unknown>) => stdioFixture('team', FIXTURE, { overrides });
    const gateway = await startTestGateway({ ...base, upstreams: [upstream({ echo: { title: 'First' } })] }, logger);
    closeAfter(t, () => gateway.close());
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    let notifications = 0;
    client.setNotificationHandler('notifications/prompts/list_changed', () => void notifications++);
    const titleOf = async (name: string) => (await client.listPrompts()).prompts.find(prompt => prompt.name === name)?.title;
    assert.equal(await titleOf('team__echo'), 'First');
    const connection = gateway.upstreams[0];

    const reload = (overrides: Record<string, unknown>) => gateway.reload(parseConfig(JSON.stringify({ ...base, upstreams: [upstream(overrides)] }), 'test config', process.env));
    const change = await reload({ echo: { title: 'Second' } });
    assert.deepEqual({ unchanged: change.unchanged, restarted: change.restarted }, { unchanged: ['team'], restarted: [] });
    assert.equal(gateway.upstreams[0], connection, 'the connection was kept');
    await waitFor(() => notifications === 1, 20_000, 'the override change to be announced');
    assert.equal(await titleOf('team__echo'), 'Second');
    await notificationsSettled(gateway, () => notifications);
    assert.equal(notifications, 1, 'one notification for the reload');

    // A rename onto a name the upstream lists for another prompt: the upstream's own prompt keeps it.
    await reload({ echo: { name: 'prompt-000' } });
    await waitFor(() => notifications === 2, 20_000, 'the rename to be announced');
    const listed = (await client.listPrompts()).prompts;
    assert.equal(listed.find(prompt => prompt.name === 'team__prompt-000')?.description, 'Generic fixture prompt prompt-000');
    assert.ok(!listed.some(prompt => prompt.name === 'team__echo'));
    assert.deepEqual((await healthOf(gateway, 'team'))?.overrides, { unmatched: [], unknownArguments: [], clashes: [{ prompt: 'echo', name: 'prompt-000' }] });

    // The upstream stops listing a prompt an override names: reported when its list changes.
    await reload({ echo: { title: 'Third' } });
    await waitFor(() => notifications === 3, 20_000, 'the change back to be announced');
    assert.equal((await healthOf(gateway, 'team'))?.overrides, undefined, 'every override applies');
    await client.getPrompt({ name: 'team__mutate', arguments: { remove: 'echo' } });
    await waitFor(() => lines().some(line => line.upstream === 'team' && Array.isArray(line.unmatched) && (line.unmatched as string[]).includes('echo')), 20_000, 'the report');
    assert.deepEqual((await healthOf(gateway, 'team'))?.overrides, { unmatched: ['echo'], unknownArguments: [], clashes: [] });
});
