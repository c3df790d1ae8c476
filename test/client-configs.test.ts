/**
 * MCP client config files behind the built gateway (dist/cli.js): `--from` a Claude Desktop file, `upstreamsFrom`
 * with a VS Code file and its inputs, hot reload of an imported file, and what --check and bad files print.
 * Real files, a real gateway process, real upstream servers, the SDK client.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { before, describe, test, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { CLI_RUN_BOUND_MS, closeAfter, connectHttp, FIXTURE, listAllPages, ROOT, startGatewayCli, waitFor, type RunningCli } from './helpers.js';

const CLI = path.join(ROOT, 'dist/cli.js');
const EXAMPLE_SERVER = path.join(ROOT, 'examples/prompt-server.mjs');
const CLIENT_CONFIGS = path.join(ROOT, 'test/fixtures/client-configs');
const EXAMPLE_PROMPTS = ['code-review', 'summarize', 'commit-message'];
/** Bounds each test: its waits are on events, this only turns a hang into a failure. */
const TIMEOUT = { timeout: 180_000 };

/** The built gateway on a free port, from the repository's folder. */
const startCli = (t: TestContext, args: string[], env: Record<string, string> = {}): Promise<RunningCli> => startGatewayCli(t, ['--port', '0', ...args], { env });

function runCli(args: string[], env: Record<string, string> = {}) {
    return spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env }, timeout: CLI_RUN_BOUND_MS });
}

async function folder(t: TestContext): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-client-configs-'));
    closeAfter(t, () => rm(dir, { recursive: true, force: true }));
    return dir;
}

/** Writes as editors do: a new file renamed over the old one. */
async function write(file: string, content: unknown): Promise<string> {
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${randomUUID()}.tmp`;
    await writeFile(temporary, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
    await rename(temporary, file);
    return file;
}

async function connect(t: TestContext, url: string): Promise<Client> {
    const client = await connectHttp(url);
    closeAfter(t, () => client.close());
    return client;
}

/** The example prompt server as a client file lists it: node by its absolute path, the script by its own. */
const exampleServer = (extra: Record<string, unknown> = {}) => ({ command: process.execPath, args: [EXAMPLE_SERVER], ...extra });

const prefixed = (id: string) => EXAMPLE_PROMPTS.map(name => `${id}__${name}`);

describe('client config files behind the built gateway', () => {
    before(() => assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)'));

    test('--from a Claude Desktop file: its servers are served with default settings', TIMEOUT, async t => {
        const dir = await folder(t);
        const file = await write(path.join(dir, 'claude_desktop_config.json'), {
            mcpServers: { 'Example Prompts': exampleServer({ env: { EXAMPLE_LOG: '1' } }) },
            globalShortcut: 'Alt+Space'
        });
        const gateway = await startCli(t, ['--from', file]);
        const client = await connect(t, gateway.url);
        await waitFor(async () => (await listAllPages(client)).names.length === 3, 60_000, "the imported server's prompts");
        assert.deepEqual((await listAllPages(client)).names, prefixed('example-prompts'));
        const review = await client.getPrompt({ name: 'example-prompts__code-review', arguments: { code: 'let x = 1' } });
        assert.match(JSON.stringify(review.messages), /let x = 1/);
        assert.ok(!gateway.stderr.some(line => line.startsWith('warning:')), 'nothing in the file is unsupported');
    });

    test('upstreamsFrom with a VS Code file: inputs from the gateway config (${ENV} too) and MCP_INPUT_*, kept out of logs; its warnings printed at start', TIMEOUT, async t => {
        const dir = await folder(t);
        const first = `first-${randomUUID().slice(0, 8)}`;
        const second = `second-${randomUUID().slice(0, 8)}`;
        // As VS Code writes it: comments, trailing commas, inputs the user is asked for.
        await write(
            path.join(dir, 'project/.vscode/mcp.json'),
            `// workspace servers
{
    "inputs": [
        { "type": "promptString", "id": "first-name", "description": "First prompt", "password": true },
        { "type": "promptString", "id": "second-name", "description": "Second prompt", "password": true },
    ],
    "servers": {
        "fixturePrompts": {
            "type": "stdio",
            "command": ${JSON.stringify(process.execPath)},
            "args": [${JSON.stringify(FIXTURE)}, "--prompts", "1", "--extra-prompts", "[\\"\${input:first-name}\\", \\"\${input:second-name}\\"]"],
            "cwd": ${JSON.stringify(ROOT)},
            "dev": { "watch": "test/fixtures/*.ts" },
        },
    },
}
`
        );
        const config = await write(path.join(dir, 'gateway.json'), {
            listen: { port: 0 },
            upstreamsFrom: [{ file: 'project/.vscode/mcp.json', inputs: { 'first-name': '${FIRST_PROMPT}' }, defaults: { timeoutMs: 30_000 } }]
        });
        const gateway = await startCli(t, ['--config', config], { FIRST_PROMPT: first, MCP_INPUT_SECOND_NAME: second, LOG_LEVEL: 'debug' });
        const client = await connect(t, gateway.url);
        const named = [`fixtureprompts__${first}`, `fixtureprompts__${second}`];
        await waitFor(async () => (await listAllPages(client)).names.length > 0, 60_000, "the VS Code server's prompts");
        const names = (await listAllPages(client)).names;
        assert.deepEqual(
            names.filter(name => named.includes(name)),
            named,
            `the prompts named by the inputs, in ${names.join(', ')}`
        );
        assert.ok(!gateway.stderr.some(line => line.includes(first) || line.includes(second)), 'no input value in the log');
        const warning = gateway.stderr.find(line => line.startsWith('warning: '));
        assert.match(
            warning ?? '',
            /^warning: .*\/project\/\.vscode\/mcp\.json: servers\.fixturePrompts\.dev: VS Code's development mode .*\(line 13, column 20\)$/,
            'printed at start'
        );
    });

    test('hot reload follows an imported file: a server added to it is served, with one list_changed; a broken one is rejected; the fix reloads', TIMEOUT, async t => {
        const dir = await folder(t);
        const file = await write(path.join(dir, 'project/.mcp.json'), { mcpServers: { first: exampleServer({ type: 'stdio' }) } });
        const gateway = await startCli(t, ['--from', file]);
        const client = await connect(t, gateway.url);
        let notifications = 0;
        client.setNotificationHandler('notifications/prompts/list_changed', () => void notifications++);
        await waitFor(async () => (await listAllPages(client)).names.length === 3, 60_000, 'the first server');

        await write(file, {
            mcpServers: {
                first: exampleServer({ type: 'stdio' }),
                'Second One': exampleServer({ args: ['${SCRIPT_DIR:-' + path.dirname(EXAMPLE_SERVER) + '}/prompt-server.mjs'] })
            }
        });
        await waitFor(() => notifications >= 1, 60_000, 'notifications/prompts/list_changed');
        await waitFor(async () => (await listAllPages(client)).names.length === 6, 60_000, "the added server's prompts");
        assert.deepEqual((await listAllPages(client)).names, [...prefixed('first'), ...prefixed('second-one')]);
        // Logs are written in batches (at most 250 ms late): the reload's summary line may follow what it summarises.
        await waitFor(() => gateway.logs.some(line => line.msg === 'config reloaded'), 20_000, "the reload's log line");
        const reloaded = gateway.logs.find(line => line.msg === 'config reloaded');
        assert.deepEqual(
            { added: reloaded?.added, unchanged: reloaded?.unchanged, reason: reloaded?.reason },
            { added: ['second-one'], unchanged: ['first'], reason: '.mcp.json changed' }
        );

        await write(file, '{ "mcpServers": { "first": { "command": "node", } ');
        await waitFor(() => gateway.logs.some(line => line.msg === 'config reload rejected; keeping the running config'), 60_000, 'the rejection');
        const rejection = gateway.logs.find(line => line.msg === 'config reload rejected; keeping the running config')!;
        assert.match(String(rejection.problems), new RegExp(`Invalid config ${file}:1:\\d+:\\n  - \\(top level\\): not valid JSON`));
        assert.equal((await listAllPages(client)).names.length, 6, 'still serving the running config');

        // Counted on an event, not after a quiet window: a second notification for the addition, or one for the
        // rejected reload, would travel ahead of the removal's own on the session's one stream and make it a third.
        await write(file, { mcpServers: { first: exampleServer({ type: 'stdio' }) } });
        await waitFor(async () => notifications >= 2 && (await listAllPages(client)).names.length === 3, 60_000, 'the removal to be served and announced');
        assert.equal(notifications, 2, 'one notification for the addition, none for the rejected reload, one for the removal');
    });

    test('--check prints a warning for each client-only field and a notice for each disabled server, and exits 0', () => {
        const file = path.join(CLIENT_CONFIGS, 'cline_mcp_settings.json');
        const result = runCli(['--from', file, '--check']);
        assert.equal(result.status, 0, result.stderr);
        const lines = result.stderr.trim().split('\n');
        assert.deepEqual(
            lines.map(line => line.replace(`${file}: `, '').replace(/:.*/, '')),
            ['warning', 'warning', 'warning', 'notice', `config --from ${file} is valid (1 upstream(s))`]
        );
        assert.match(
            lines[0]!,
            /^warning: .*mcpServers\.weather\.autoApprove: tool calls the client approves without asking: a setting of the client, with no effect in the gateway \(line 8, column 22\)$/
        );
        assert.match(lines[1]!, /mcpServers\.weather\.alwaysAllow: /);
        assert.match(lines[2]!, /mcpServers\.weather\.timeout: the client's own request timeout; the gateway's timeoutMs \(10 s by default\) applies/);
        assert.match(lines[3]!, /^notice: .*mcpServers\.old-server: disabled in the client, so left out/);
    });

    test('--check with a VS Code file and its inputs from the environment', () => {
        const result = runCli(['--from', path.join(CLIENT_CONFIGS, 'vscode-project/.vscode/mcp.json'), '--check'], {
            GITHUB_TOKEN: 'ghp_check',
            MCP_INPUT_PERPLEXITY_KEY: 'pplx-check'
        });
        assert.equal(result.status, 0, result.stderr);
        assert.match(result.stderr, /is valid \(3 upstream\(s\)\)/);
        assert.match(result.stderr, /warning: .*servers\.myServer\.dev: /);
    });

    describe('config errors exit 2 with one message naming the file, the field and the fix', () => {
        const cases: [string, (dir: string) => Promise<string[]>, RegExp][] = [
            [
                'a field that cannot be honoured',
                async dir => [
                    '--from',
                    await write(path.join(dir, '.mcp.json'), { mcpServers: { internal: { type: 'http', url: 'https://mcp.example/mcp', headersHelper: '/bin/get-headers' } } })
                ],
                /^Invalid config .*\/\.mcp\.json:\n {2}- mcpServers\.internal\.headersHelper: runs a command for Claude Code's headers at each connection; give a token in "headers" instead/
            ],
            [
                'an input without a value',
                async dir => [
                    '--from',
                    await write(path.join(dir, '.vscode/mcp.json'), {
                        inputs: [{ type: 'promptString', id: 'api-key', password: true }],
                        servers: { api: { type: 'http', url: 'https://mcp.example/mcp', headers: { 'X-Key': '${input:api-key}' } } }
                    })
                ],
                /servers\.api\.headers\.X-Key: input "api-key" of server "api" has no value: .*set the environment variable MCP_INPUT_API_KEY, or list this file in a gateway config's upstreamsFrom/
            ],
            [
                'a syntax error',
                async dir => ['--from', await write(path.join(dir, 'mcp.json'), '{\n  "mcpServers": {\n    "a": { "command": "x" }}\n  "b": 1\n}')],
                /^Invalid config .*\/mcp\.json:4:3:\n {2}- \(top level\): not valid JSON \(expected ","\)/
            ],
            [
                'an id taken by "upstreams"',
                async dir => {
                    await write(path.join(dir, 'clients/claude_desktop_config.json'), { mcpServers: { Docs: { command: 'node' } } });
                    return [
                        '--config',
                        await write(path.join(dir, 'gateway.json'), {
                            upstreams: [{ id: 'docs', transport: 'stdio', command: 'node' }],
                            upstreamsFrom: [{ file: 'clients/claude_desktop_config.json' }]
                        })
                    ];
                },
                /upstreams\[0\]\.id: the upstream id "docs" is taken twice: by upstreams\[0\] and by server "Docs" of .*claude_desktop_config\.json; rename one, or leave it out with upstreamsFrom\[0\]\.exclude/
            ],
            ['a file that is not there', dir => Promise.resolve(['--from', path.join(dir, 'nope.json')]), /file not found .*nope\.json\); fix the path given to --from/]
        ];
        for (const [what, args, message] of cases) {
            test(what, async t => {
                const result = runCli([...(await args(await folder(t))), '--check']);
                assert.equal(result.status, 2, result.stderr);
                assert.match(result.stderr, message);
                assert.equal(result.stderr.match(/^Invalid config /gm)?.length, 1, result.stderr);
                assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
            });
        }
    });
});
