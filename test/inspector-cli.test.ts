/**
 * The gateway driven by a third-party client: the MCP Inspector CLI
 * (`@modelcontextprotocol/inspector-cli`, its `mcp-inspector-cli --cli` bin), over
 * Streamable HTTP (the built gateway started as `node dist/cli.js --config ...`)
 * and as a stdio command it spawns itself (`node dist/cli.js --stdio --config ...`).
 * Expected values come from direct SDK calls to the same upstreams, not from the gateway.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { Client, GetPromptResult, Prompt } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { connectStdio, everythingUpstream, processesWith, ROOT, startTestGateway, stdioFixture, stopChild, waitFor } from './helpers.js';

const CLI = path.join(ROOT, 'dist/cli.js');
const INSPECTOR_PACKAGE = path.join(ROOT, 'node_modules/@modelcontextprotocol/inspector-cli');
const INSPECTOR_BIN = path.join(
    INSPECTOR_PACKAGE,
    (JSON.parse(readFileSync(path.join(INSPECTOR_PACKAGE, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin['mcp-inspector-cli']!
);
/**
 * inspector-cli 1.0.3 reads its own package.json as `../package.json` if that path exists relative to the
 * working directory, else `../../package.json` relative to its file, which is not there: from the repository
 * root it dies with "Cannot find module .../@modelcontextprotocol/package.json". Its build directory works.
 */
const INSPECTOR_CWD = path.dirname(INSPECTOR_BIN);
const API_KEY = 'inspector-test-key-0123456789abcdef';

interface Run {
    code: number | null;
    stdout: string;
    stderr: string;
}

/**
 * Each run starts the inspector (and, as a stdio command, a gateway and its upstreams): seconds on a loaded machine.
 * A hang is bounded by the test's timeout, not by a fixed time per run, which a slow but progressing run can outlast.
 */
const TIMEOUT = { timeout: 180_000 };

/** Runs `mcp-inspector-cli --cli <args>` to the end; killed when the test ends first (it timed out or failed). */
function inspector(t: TestContext, args: string[]): Promise<Run> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [INSPECTOR_BIN, '--cli', ...args], {
            cwd: INSPECTOR_CWD,
            stdio: ['ignore', 'pipe', 'pipe'],
            signal: t.signal,
            killSignal: 'SIGKILL'
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', chunk => (stdout += chunk));
        child.stderr.on('data', chunk => (stderr += chunk));
        child.once('error', reject);
        child.once('close', code => resolve({ code, stdout, stderr }));
    });
}

/** The JSON result a successful run printed. */
function result<T>(run: Run): T {
    assert.equal(run.code, 0, `inspector failed: ${run.stderr}`);
    return JSON.parse(run.stdout) as T;
}

/** Every prompt of an upstream, page by page, renamed as the gateway exposes it. */
async function namespacedPrompts(client: Client, id: string): Promise<Prompt[]> {
    const prompts: Prompt[] = [];
    let cursor: string | undefined;
    do {
        const page = await client.listPrompts(cursor === undefined ? {} : { cursor });
        prompts.push(...page.prompts.map(prompt => ({ ...prompt, name: `${id}__${prompt.name}` })));
        cursor = page.nextCursor;
    } while (cursor !== undefined);
    return prompts;
}

const byName = (a: Prompt, b: Prompt) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Starts `node dist/cli.js --config <file> --port 0` and resolves with its URL. */
async function startCliGateway(configFile: string): Promise<{ url: string; child: ChildProcess }> {
    const child = spawn(process.execPath, [CLI, '--config', configFile, '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stderr }).on('line', line => {
            const match = /^listening on (http:\/\/\S+)$/.exec(line);
            if (match) resolve(match[1]!);
        });
        child.once('exit', code => reject(new Error(`gateway exited with ${code}`)));
    });
    return { url, child };
}

describe('MCP Inspector CLI against the gateway', () => {
    const local = stdioFixture('local');
    const everything = everythingUpstream();
    let dir: string;
    let configFile: string;
    let gateway: { url: string; child: ChildProcess };
    let directLocal: Client;
    let directEverything: Client;
    /** What a client of the gateway should list: both upstreams' own lists, namespaced. */
    let expected: Prompt[];

    before(async () => {
        assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)');
        dir = await mkdtemp(path.join(tmpdir(), 'gateway-inspector-'));
        configFile = path.join(dir, 'gateway.json');
        // The inspector asks for one page and does not follow nextCursor: one page must hold everything.
        await writeFile(configFile, JSON.stringify({ pagination: { pageSize: 1000 }, upstreams: [local, everything] }));
        [gateway, directLocal, directEverything] = await Promise.all([
            startCliGateway(configFile),
            connectStdio(local.command, local.args),
            connectStdio(everything.command, everything.args)
        ]);
        expected = [...(await namespacedPrompts(directLocal, 'local')), ...(await namespacedPrompts(directEverything, 'everything'))].sort(byName);
        assert.ok(expected.some(prompt => prompt.name === 'everything__args-prompt') && expected.some(prompt => prompt.name === 'local__with-required'));
    });

    after(async () => {
        await Promise.all([directLocal?.close(), directEverything?.close()]);
        if (gateway) await stopChild(gateway.child);
        if (dir) await rm(dir, { recursive: true, force: true });
    });

    const gets: [string, Record<string, string>, () => Client, string][] = [
        ['everything__args-prompt', { city: 'Lyon', state: 'Auvergne-Rhone-Alpes' }, () => directEverything, 'args-prompt'],
        ['local__with-required', { topic: 'inspectors', tone: 'dry' }, () => directLocal, 'with-required'],
        ['local__all-content', {}, () => directLocal, 'all-content']
    ];

    describe('over Streamable HTTP', () => {
        test('prompts/list shows the prompts of both upstreams, namespaced, as the upstreams describe them', TIMEOUT, async t => {
            const listed = result<{ prompts: Prompt[]; nextCursor?: string }>(await inspector(t, [gateway.url, '--transport', 'http', '--method', 'prompts/list']));
            assert.equal(listed.nextCursor, undefined);
            assert.deepEqual([...listed.prompts].sort(byName), expected);
        });

        for (const [name, args, upstream, original] of gets) {
            test(`prompts/get ${name} with --prompt-args returns what the upstream returns`, TIMEOUT, async t => {
                const promptArgs = Object.entries(args).map(([key, value]) => `${key}=${value}`);
                const run = await inspector(t, [
                    gateway.url,
                    '--transport',
                    'http',
                    '--method',
                    'prompts/get',
                    '--prompt-name',
                    name,
                    ...(promptArgs.length > 0 ? ['--prompt-args', ...promptArgs] : [])
                ]);
                assert.deepEqual(result<GetPromptResult>(run), await upstream().getPrompt({ name: original, arguments: args }));
            });
        }

        test('an unknown prompt exits 1 with -32602 "Unknown prompt" on stderr and nothing on stdout', TIMEOUT, async t => {
            const run = await inspector(t, [gateway.url, '--transport', 'http', '--method', 'prompts/get', '--prompt-name', 'everything__no-such-prompt']);
            assert.equal(run.code, 1);
            assert.match(run.stderr, /-32602/);
            assert.match(run.stderr, /Unknown prompt: "everything__no-such-prompt"/);
            assert.equal(run.stdout, '');
        });

        test('a missing required argument exits 1 with -32602 naming the argument', TIMEOUT, async t => {
            const run = await inspector(t, [
                gateway.url,
                '--transport',
                'http',
                '--method',
                'prompts/get',
                '--prompt-name',
                'everything__args-prompt',
                '--prompt-args',
                'state=Bavaria'
            ]);
            assert.equal(run.code, 1);
            assert.match(run.stderr, /-32602/);
            assert.match(run.stderr, /Missing required argument: "city"/);
            assert.equal(run.stdout, '');
        });
    });

    describe('over HTTP with auth.mode apiKey: credentials passed with --header', () => {
        let secured: RunningGateway;

        before(async () => {
            secured = await startTestGateway({ auth: { mode: 'apiKey' }, clients: [{ id: 'inspector', apiKey: API_KEY }], upstreams: [local] });
        });

        after(async () => {
            await secured?.close();
        });

        test('"Authorization: Bearer <key>" and "X-API-Key: <key>" are accepted; no or a wrong key exits 1 with 401', TIMEOUT, async t => {
            const want = (await namespacedPrompts(directLocal, 'local')).sort(byName);
            for (const header of [`Authorization: Bearer ${API_KEY}`, `X-API-Key: ${API_KEY}`]) {
                const listed = result<{ prompts: Prompt[] }>(await inspector(t, [secured.url!, '--transport', 'http', '--method', 'prompts/list', '--header', header]));
                assert.deepEqual([...listed.prompts].sort(byName), want, header);
            }
            const got = await inspector(t, [
                secured.url!,
                '--transport',
                'http',
                '--header',
                `Authorization: Bearer ${API_KEY}`,
                '--method',
                'prompts/get',
                '--prompt-name',
                'local__with-required',
                '--prompt-args',
                'topic=keys'
            ]);
            assert.deepEqual(result<GetPromptResult>(got), await directLocal.getPrompt({ name: 'with-required', arguments: { topic: 'keys' } }));

            for (const header of [[], ['--header', 'Authorization: Bearer wrong-key-0123456789abcdef']]) {
                const refused = await inspector(t, [secured.url!, '--transport', 'http', '--method', 'prompts/list', ...header]);
                assert.equal(refused.code, 1, refused.stdout);
                assert.match(refused.stderr, /401|Unauthorized/);
                assert.equal(refused.stdout, '');
            }
        });
    });

    describe('as a stdio command the inspector starts', () => {
        /** The gateway command line, as given to a client that starts the gateway itself. */
        const gatewayCommand = () => [process.execPath, CLI, '--stdio', '--config', configFile];

        test('prompts/list, from an mcpServers config file (the Claude Desktop format)', TIMEOUT, async t => {
            const [command, ...args] = gatewayCommand();
            const servers = path.join(dir, 'mcp-servers.json');
            await writeFile(servers, JSON.stringify({ mcpServers: { prompts: { command, args } } }));
            const listed = result<{ prompts: Prompt[] }>(await inspector(t, ['--config', servers, '--server', 'prompts', '--method', 'prompts/list']));
            assert.deepEqual([...listed.prompts].sort(byName), expected);
        });

        test('prompts/get with --prompt-args, the command given on the command line', TIMEOUT, async t => {
            // The wrapper bin takes --config for itself: the gateway's -c short form passes through.
            const [command, ...rest] = gatewayCommand().map(arg => (arg === '--config' ? '-c' : arg));
            await Promise.all(
                gets.slice(0, 2).map(async ([name, args, upstream, original]) => {
                    const promptArgs = Object.entries(args).map(([key, value]) => `${key}=${value}`);
                    const run = await inspector(t, [command!, ...rest, '--method', 'prompts/get', '--prompt-name', name, '--prompt-args', ...promptArgs]);
                    assert.deepEqual(result<GetPromptResult>(run), await upstream().getPrompt({ name: original, arguments: args }), name);
                })
            );
        });

        test('an unknown prompt and a missing required argument exit 1 with -32602; no gateway process is left behind', TIMEOUT, async t => {
            const [command, ...rest] = gatewayCommand().map(arg => (arg === '--config' ? '-c' : arg));
            const [unknown, missing] = await Promise.all([
                inspector(t, [command!, ...rest, '--method', 'prompts/get', '--prompt-name', 'local__nope']),
                inspector(t, [command!, ...rest, '--method', 'prompts/get', '--prompt-name', 'local__with-required', '--prompt-args', 'tone=dry'])
            ]);
            assert.equal(unknown.code, 1);
            assert.match(unknown.stderr, /-32602/);
            assert.match(unknown.stderr, /Unknown prompt: "local__nope"/);
            assert.equal(missing.code, 1);
            assert.match(missing.stderr, /-32602/);
            assert.match(missing.stderr, /Missing required argument: "topic"/);
            // Every gateway the inspector started ends with it (the HTTP one was started with --port, not --stdio).
            const stdioGateways = () =>
                processesWith(configFile).filter(pid => {
                    try {
                        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('--stdio');
                    } catch {
                        return false; // ended while we looked
                    }
                });
            await waitFor(() => stdioGateways().length === 0, 60_000, 'the stdio gateways to exit');
        });
    });
});
