/**
 * `mcp-prompt-gateway prompts list|get` (issue 26): the built CLI over a real config, its upstreams started in the
 * command's own process (a stdio fixture server, prompt folders in two formats) and stopped after; and with --url, a
 * running gateway asked over HTTP with an API key, its allow-list applied.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { before, describe, test, type TestContext } from 'node:test';
import { sha256 } from '../src/config/policy-schema.js';
import { allContentResult } from './fixtures/fixture-prompts.js';
import { CLI_RUN_BOUND_MS, closeAfter, processesWith, ROOT, startTestGateway, stdioFixture, stopChild, waitFor } from './helpers.js';

const CLI = path.join(ROOT, 'dist/cli.js');
const KEY_VARIABLE = 'MCP_PROMPT_GATEWAY_API_KEY';

interface Run {
    status: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
}

/** Runs the CLI without blocking this process (a --url test's gateway runs here); killed if it outlives the bound. */
function runCli(args: string[], options: { cwd: string; env?: Record<string, string | undefined>; onSpawn?: (child: ChildProcess) => void }): Promise<Run> {
    const env = { ...process.env, LOG_LEVEL: undefined, [KEY_VARIABLE]: undefined, ...options.env };
    const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const bound = setTimeout(() => child.kill('SIGKILL'), CLI_RUN_BOUND_MS);
    options.onSpawn?.(child);
    return new Promise((resolve, reject) => {
        child.once('error', reject);
        child.once('close', (status, signal) => {
            clearTimeout(bound);
            resolve({ status, signal, stdout, stderr });
        });
    });
}

/** test/fixtures/conformance-server.ts at 2026-07-28 over HTTP (its prompt that asks for input first included). */
async function modernConformanceFixture(t: TestContext): Promise<string> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/fixtures/conformance-server.ts'), '--era', '2026-07-28'], {
        cwd: ROOT,
        stdio: ['pipe', 'ignore', 'pipe']
    });
    closeAfter(t, () => stopChild(child));
    return new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stderr }).on('line', line => {
            const match = /^FIXTURE_URL=(\S+)/.exec(line);
            if (match) resolve(match[1]!);
        });
        child.once('exit', code => reject(new Error(`the fixture exited with ${code}`)));
    });
}

const REVIEW = `---
description: Review a change the way our team does.
arguments:
  - name: diff
    description: The change to review
    required: true
  - name: language
---
Review the following {{language}} change:

{{diff}}
`;

const FIX = `---
description: Fix an issue
argument-hint: [issue] [priority]
---
Fix issue #$1 with priority $2.
`;

/** A prompt repository: markdown prompts and Claude Code commands, beside the fixture server, with its gateway.json. */
async function repository(t: TestContext, extra: Record<string, unknown> = {}, fixtureName = 'cli-prompts'): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'prompts-command-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await mkdir(path.join(dir, 'prompts'));
    await writeFile(path.join(dir, 'prompts/review.md'), REVIEW);
    await mkdir(path.join(dir, '.claude/commands'), { recursive: true });
    await writeFile(path.join(dir, '.claude/commands/fix.md'), FIX);
    const config = {
        upstreams: [
            stdioFixture('fix', { prompts: 1, name: fixtureName }, { overrides: { 'with-required': { name: 'write', arguments: { tone: { default: 'calm' } } } } }),
            { id: 'team', transport: 'files', path: 'prompts' },
            { id: 'claude', transport: 'files', path: '.claude/commands', format: 'claude-commands' }
        ],
        ...extra
    };
    await writeFile(path.join(dir, 'gateway.json'), JSON.stringify(config));
    return dir;
}

/** Only prompt folders: nothing to start, so quick. */
async function filesOnly(t: TestContext, config: Record<string, unknown>): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'prompts-command-files-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await mkdir(path.join(dir, 'prompts'));
    await writeFile(path.join(dir, 'prompts/review.md'), REVIEW);
    await writeFile(path.join(dir, 'gateway.json'), JSON.stringify(config));
    return dir;
}

const team = { id: 'team', transport: 'files', path: 'prompts' };

function lines(text: string): string[] {
    return text.split('\n').filter(line => line !== '');
}

describe('prompts list and get, from the config in this process', () => {
    before(() => assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)'));

    test('list prints one exposed name a line with its description, from every upstream, overrides applied; the children are stopped', async t => {
        const marker = 'cli-prompts-list';
        const cwd = await repository(t, {}, marker);
        const { status, stdout, stderr } = await runCli(['prompts', 'list'], { cwd });
        assert.equal(status, 0, stderr);
        const listed = lines(stdout);
        for (const line of [
            'fix__prompt-000  Generic fixture prompt prompt-000',
            'fix__write  Has a required topic and an optional tone',
            'team__review  Review a change the way our team does.',
            'claude__fix  Fix an issue'
        ]) {
            assert.ok(listed.includes(line), `${line} in:\n${stdout}`);
        }
        assert.ok(!listed.some(line => line.startsWith('fix__with-required')), 'the override renamed it');
        assert.doesNotMatch(stderr, /warning|error/, stderr);
        assert.deepEqual(processesWith(marker), [], 'the fixture server was stopped with the command');
    });

    test('list --json prints the merged prompts array', async t => {
        const cwd = await repository(t);
        const { status, stdout, stderr } = await runCli(['prompts', 'list', '--json', '--config', 'gateway.json'], { cwd });
        assert.equal(status, 0, stderr);
        const prompts = JSON.parse(stdout) as { name: string; arguments?: { name: string; required?: boolean }[] }[];
        const byName = new Map(prompts.map(prompt => [prompt.name, prompt]));
        assert.deepEqual(byName.get('team__review')?.arguments, [{ name: 'diff', description: 'The change to review', required: true }, { name: 'language' }]);
        assert.equal(byName.get('fix__write')?.arguments?.find(argument => argument.name === 'tone')?.required, false);
        assert.ok(byName.has('claude__fix') && byName.has('fix__all-content'), stdout);
    });

    test("get prints the rendered messages, from each kind of upstream, through the gateway's own get path", async t => {
        const cwd = await repository(t);
        const review = await runCli(['prompts', 'get', 'team__review', 'diff=a = b; x==y', 'language=go'], { cwd });
        assert.equal(review.status, 0, review.stderr);
        assert.equal(review.stdout, 'user:\nReview the following go change:\n\na = b; x==y\n');

        const fix = await runCli(['prompts', 'get', 'claude__fix', 'issue=42', 'priority=high'], { cwd });
        assert.equal(fix.status, 0, fix.stderr);
        assert.equal(fix.stdout, 'user:\nFix issue #42 with priority high.\n');

        // Renamed by an override, the left-out argument filled from its default.
        const write = await runCli(['prompts', 'get', 'fix__write', 'topic=cats'], { cwd });
        assert.equal(write.status, 0, write.stderr);
        assert.equal(write.stdout, 'user:\nWrite about cats in a calm tone\n');
    });

    test('get --json prints the GetPromptResult as MCP sends it; without it, what a terminal cannot show is a line naming it', async t => {
        const cwd = await repository(t);
        const json = await runCli(['prompts', 'get', 'fix__all-content', '--json'], { cwd });
        assert.equal(json.status, 0, json.stderr);
        assert.deepEqual(JSON.parse(json.stdout), allContentResult());

        const text = await runCli(['prompts', 'get', 'fix__all-content'], { cwd });
        assert.equal(text.status, 0, text.stderr);
        const shown = lines(text.stdout);
        const [, image] = allContentResult().messages;
        const pngBytes = Buffer.from(image!.content.type === 'image' ? image!.content.data : '', 'base64').length;
        assert.deepEqual(
            shown.filter(line => line.startsWith('[')),
            [
                `[image image/png, ${pngBytes} bytes]`,
                '[audio audio/wav, 12 bytes]',
                '[resource file:///a.txt (text/plain)]',
                '[resource file:///c.bin (application/octet-stream), 4 bytes]',
                '[resource link file:///b.txt (text/plain)]'
            ]
        );
        assert.deepEqual(
            shown.filter(line => line.endsWith(':')),
            ['user:', 'assistant:', 'user:', 'assistant:', 'user:', 'assistant:']
        );
    });

    test("an unknown prompt, and a required argument left out, exit 1 with the gateway's own answer", async t => {
        const cwd = await filesOnly(t, { upstreams: [team] });
        const unknown = await runCli(['prompts', 'get', 'team__nope'], { cwd });
        assert.equal(unknown.status, 1);
        assert.equal(unknown.stdout, '');
        assert.equal(
            unknown.stderr
                .split('\n')
                .filter(line => !line.startsWith('no --config given'))
                .join('\n'),
            'mcp-prompt-gateway prompts get: Unknown prompt: "team__nope"\n'
        );

        const missing = await runCli(['prompts', 'get', 'team__review', 'language=go'], { cwd });
        assert.equal(missing.status, 1);
        assert.match(missing.stderr, /^mcp-prompt-gateway prompts get: Missing required argument: "diff"$/m);
        assert.doesNotMatch(missing.stderr, /\n\s+at /, 'no stack trace');
    });

    test('--client answers as that client; without it, the config\'s own "prompts" filter still applies', async t => {
        const cwd = await filesOnly(t, {
            prompts: { deny: ['team__secret'] },
            upstreams: [team],
            auth: { mode: 'apiKey' },
            clients: [{ id: 'ci', apiKeySha256: sha256('a-key-that-is-long-enough'), prompts: { allow: ['team__other'] } }]
        });
        await writeFile(path.join(cwd, 'prompts/secret.md'), 'Hidden from everyone.\n');
        await writeFile(path.join(cwd, 'prompts/other.md'), 'Another.\n');
        const operator = await runCli(['prompts', 'list'], { cwd });
        assert.equal(operator.status, 0, operator.stderr);
        assert.deepEqual(
            lines(operator.stdout).map(line => line.split('  ')[0]),
            ['team__other', 'team__review']
        );
        const ci = await runCli(['prompts', 'list', '--client', 'ci'], { cwd });
        assert.equal(ci.status, 0, ci.stderr);
        assert.deepEqual(
            lines(ci.stdout).map(line => line.split('  ')[0]),
            ['team__other']
        );
        const hidden = await runCli(['prompts', 'get', 'team__review', 'diff=x', '--client', 'ci'], { cwd });
        assert.equal(hidden.status, 1);
        assert.match(hidden.stderr, /Unknown prompt: "team__review"/);
        const unknownClient = await runCli(['prompts', 'list', '--client', 'nobody'], { cwd });
        assert.equal(unknownClient.status, 2);
        assert.match(unknownClient.stderr, /--client "nobody" is not in the config's "clients"/);
    });

    test('an upstream not available is named on stderr; a required one fails list (exit 1), what answered is still listed', async t => {
        const optional = await filesOnly(t, { upstreams: [team, { id: 'gone', transport: 'files', path: 'no-such-folder' }] });
        const warned = await runCli(['prompts', 'list'], { cwd: optional });
        assert.equal(warned.status, 0, warned.stderr);
        assert.match(warned.stderr, /^warning: upstream "gone" is not available \(.*no-such-folder.*\); its prompts are not listed$/m);
        assert.match(warned.stdout, /^team__review {2}/m);

        const required = await filesOnly(t, { upstreams: [team, { id: 'gone', transport: 'files', path: 'no-such-folder', required: true }] });
        const failed = await runCli(['prompts', 'list'], { cwd: required });
        assert.equal(failed.status, 1, failed.stderr);
        assert.match(failed.stderr, /^error: required upstream "gone" is not available/m);
        assert.match(failed.stdout, /^team__review {2}/m);

        const unknown = await runCli(['prompts', 'get', 'gone__x'], { cwd: optional });
        assert.equal(unknown.status, 1);
        assert.match(unknown.stderr, /Unknown prompt: "gone__x"\nnote: not available, so not asked: upstream "gone"\n/);
    });

    test("an upstream not available is named without the config's secrets", async t => {
        const secret = 'very-secret-token-0123456789';
        const cwd = await filesOnly(t, {
            upstreams: [
                team,
                { id: 'remote', transport: 'streamable-http', url: `http://user:${secret}@127.0.0.1:1/mcp`, timeoutMs: 1000 },
                { id: 'local', transport: 'stdio', command: `/no/such/${secret}`, env: { TOKEN: secret } }
            ]
        });
        const { status, stdout, stderr } = await runCli(['prompts', 'list'], { cwd });
        assert.equal(status, 0, stderr);
        assert.equal(stdout, 'team__review  Review a change the way our team does.\n');
        assert.match(stderr, /^warning: upstream "remote" is not available \(.+\); its prompts are not listed$/m);
        assert.match(stderr, /^warning: upstream "local" is not available \(command "\/no\/such\/\[redacted\]" not found\); its prompts are not listed$/m);
        assert.ok(!stderr.includes(secret), stderr);
    });

    test("a file's name on stderr is one line, its terminal escapes written out, not sent to the terminal", async t => {
        const cwd = await filesOnly(t, { upstreams: [team] });
        // Retitles the terminal window, clears the screen, then forges a line of its own.
        await writeFile(path.join(cwd, 'prompts', '\u001b]0;owned\u0007\u001b[2Jx\nerror: forged.md'), 'Named to attack a terminal.\n');
        const { status, stdout, stderr } = await runCli(['prompts', 'list'], { cwd });
        assert.equal(status, 0, stderr);
        assert.equal(stdout, 'team__review  Review a change the way our team does.\n');
        assert.match(stderr, /^warning: upstream "team": \\u001b\]0;owned\\u0007\\u001b\[2Jx\\nerror: forged\.md: /m);
        // eslint-disable-next-line no-control-regex -- no control character but the line feeds that end the lines
        assert.doesNotMatch(stderr, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
        assert.ok(!stderr.split('\n').some(line => line.startsWith('error: forged')), stderr);
    });

    test('--json escapes the C1 controls JSON.stringify leaves as they are (U+009B is CSI to some terminals); the JSON is the same', async t => {
        const cwd = await filesOnly(t, { upstreams: [team] });
        const written = 'Clear \u009b2J the screen, retitle \u009d0;owned\u009c it.';
        await writeFile(path.join(cwd, 'prompts/c1.md'), `---\ndescription: ${written}\n---\n${written}\n`);
        for (const args of [['list'], ['get', 'team__c1']]) {
            const { status, stdout, stderr } = await runCli(['prompts', ...args, '--json'], { cwd });
            assert.equal(status, 0, stderr);
            assert.doesNotMatch(stdout, /[\u0080-\u009f]/, args.join(' '));
            assert.ok(stdout.includes(String.raw`\u009b2J`), stdout);
            const parsed = JSON.parse(stdout) as { description?: string; messages?: { content: { text: string } }[] }[] & { messages?: { content: { text: string } }[] };
            const text = args[0] === 'list' ? parsed.find(prompt => prompt.description === written)?.description : parsed.messages?.[0]?.content.text;
            assert.equal(text, written);
        }
    });

    test('an upstream that never answers holds the command no longer than its timeoutMs', async t => {
        const silent = { id: 'silent', transport: 'stdio', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], timeoutMs: 500 };
        const cwd = await filesOnly(t, { upstreams: [team, silent] });
        const { status, stdout, stderr } = await runCli(['prompts', 'list'], { cwd });
        assert.equal(status, 0, stderr);
        assert.match(stderr, /^warning: upstream "silent" is not available \(.*\); its prompts are not listed$/m);
        assert.equal(stdout, 'team__review  Review a change the way our team does.\n');
    });

    test('SIGINT stops the upstreams and exits 130, without a stack trace', async t => {
        const marker = 'cli-prompts-sigint';
        const cwd = await repository(t, {}, marker);
        let command: ChildProcess | undefined;
        const running = runCli(['prompts', 'get', 'fix__slow', 'ms=600000'], { cwd, onSpawn: spawned => (command = spawned) });
        // Should the test fail half-way: neither the command nor its fixture outlives it.
        closeAfter(t, () => {
            if (command?.exitCode === null && command.signalCode === null) command.kill('SIGKILL');
            for (const left of processesWith(marker)) process.kill(left, 'SIGKILL');
        });
        // The fixture server is up: the command is connecting to it or waiting for its answer.
        await waitFor(() => processesWith(marker).length > 0, 60_000, 'the fixture server started');
        command!.kill('SIGINT');
        const { status, stderr } = await running;
        assert.equal(status, 130, stderr);
        assert.doesNotMatch(stderr, /\n\s+at /);
        assert.deepEqual(processesWith(marker), [], 'the fixture server was stopped');
    });

    test("a prompt that asks its user first (2026-07-28 input_required) fails with the upstream's answer and why", async t => {
        const url = await modernConformanceFixture(t);
        const cwd = await filesOnly(t, { upstreams: [team, { id: 'up', transport: 'http', url }] });
        const { status, stdout, stderr } = await runCli(['prompts', 'get', 'up__test_input_required_result_prompt'], { cwd });
        assert.equal(status, 1);
        assert.equal(stdout, '');
        assert.match(stderr, /^mcp-prompt-gateway prompts get: .*The upstream asks for elicitation, which this client did not declare/m);
        assert.match(stderr, /^note: the command line cannot answer a prompt's questions/m);
    });

    const usage: [string, string[], RegExp][] = [
        ['no action', ['prompts'], /say what to do: list or get/],
        ['get without a name', ['prompts', 'get'], /get needs the name of a prompt/],
        ['an argument given twice', ['prompts', 'get', 'team__review', 'diff=a', 'diff=b'], /argument "diff" is given twice/],
        ['an unknown flag', ['prompts', 'list', '--bogus'], /Unknown option '--bogus'/]
    ];
    for (const [what, args, message] of usage) {
        test(`bad usage exits 2 with the usage: ${what}`, async t => {
            const cwd = await filesOnly(t, { upstreams: [team] });
            const { status, stdout, stderr } = await runCli(args, { cwd });
            assert.equal(status, 2);
            assert.equal(stdout, '');
            assert.match(stderr, message);
            assert.match(stderr, /Usage: mcp-prompt-gateway prompts list/);
        });
    }

    test('a bad config exits 2 with one message naming the field; no config at all says what to do', async t => {
        const cwd = await filesOnly(t, { upstreams: [{ ...team, pth: 'prompts' }] });
        const bad = await runCli(['prompts', 'list'], { cwd });
        assert.equal(bad.status, 2);
        assert.match(bad.stderr, /upstreams\[0\]: unknown key "pth"/);

        await rm(path.join(cwd, 'gateway.json'));
        const none = await runCli(['prompts', 'list'], { cwd });
        assert.equal(none.status, 2);
        assert.match(none.stderr, /no --config given and no gateway\.json/);
    });

    test('a pattern naming a prompt file by its folder is warned of, as the gateway warns at its start and in --check', async t => {
        const cwd = await filesOnly(t, { prompts: { deny: ['team__ops/review'] }, upstreams: [team] });
        const { status, stdout, stderr } = await runCli(['prompts', 'list'], { cwd });
        assert.equal(status, 0, stderr);
        assert.equal(stdout, 'team__review  Review a change the way our team does.\n', 'the deny-list hides it no more');
        assert.match(
            stderr,
            /^warning: prompts\.deny\[0\]: "team__ops\/review" names a prompt of files upstream "team" with its folder, .*: what it hid is shown now; use "team__review"$/m
        );
    });

    test('--help prints the usage on stdout', async t => {
        const cwd = await filesOnly(t, { upstreams: [team] });
        const { status, stdout } = await runCli(['prompts', '--help'], { cwd });
        assert.equal(status, 0);
        assert.match(stdout, /^Usage: mcp-prompt-gateway prompts list/);
        assert.match(stdout, new RegExp(KEY_VARIABLE));
    });
});

describe('prompts list and get --url: a running gateway, its policy applied to the key', () => {
    const KEY_ALL = 'key-for-everything-0123456789';
    const KEY_LIMITED = 'key-for-review-only-0123456789';

    async function gatewayWithKeys(t: TestContext): Promise<{ url: string; cwd: string }> {
        const cwd = await filesOnly(t, { upstreams: [team] });
        await writeFile(path.join(cwd, 'prompts/hidden.md'), 'Not for the limited key.\n');
        const gateway = await startTestGateway({
            auth: { mode: 'apiKey' },
            clients: [
                { id: 'all', apiKeySha256: sha256(KEY_ALL) },
                { id: 'limited', apiKeySha256: sha256(KEY_LIMITED), prompts: { allow: ['team__review'] } }
            ],
            upstreams: [{ ...team, path: path.join(cwd, 'prompts') }]
        });
        closeAfter(t, () => gateway.close());
        return { url: gateway.url!, cwd };
    }

    test('list and get with the key from --api-key: what that client sees, rendered as in-process', async t => {
        const { url, cwd } = await gatewayWithKeys(t);
        const listed = await runCli(['prompts', 'list', '--url', url, '--api-key', KEY_ALL], { cwd });
        assert.equal(listed.status, 0, listed.stderr);
        assert.deepEqual(
            lines(listed.stdout).map(line => line.split('  ')[0]),
            ['team__hidden', 'team__review']
        );

        const limited = await runCli(['prompts', 'list', '--url', url, '--api-key', KEY_LIMITED, '--json'], { cwd });
        assert.equal(limited.status, 0, limited.stderr);
        assert.deepEqual(
            (JSON.parse(limited.stdout) as { name: string }[]).map(prompt => prompt.name),
            ['team__review']
        );

        const remote = await runCli(['prompts', 'get', 'team__review', 'diff=x', 'language=go', '--url', url, '--api-key', KEY_LIMITED], { cwd });
        const local = await runCli(['prompts', 'get', 'team__review', 'diff=x', 'language=go'], { cwd });
        assert.equal(remote.status, 0, remote.stderr);
        assert.equal(remote.stdout, local.stdout);
    });

    test('a hidden prompt is "Unknown prompt", exactly as a missing one; a required argument left out is named', async t => {
        const { url, cwd } = await gatewayWithKeys(t);
        const hidden = await runCli(['prompts', 'get', 'team__hidden', '--url', url, '--api-key', KEY_LIMITED], { cwd });
        const missing = await runCli(['prompts', 'get', 'team__absent', '--url', url, '--api-key', KEY_LIMITED], { cwd });
        assert.equal(hidden.status, 1);
        assert.equal(missing.status, 1);
        assert.equal(hidden.stderr, 'mcp-prompt-gateway prompts get: Unknown prompt: "team__hidden"\n');
        assert.equal(missing.stderr, hidden.stderr.replace('team__hidden', 'team__absent'));

        const noDiff = await runCli(['prompts', 'get', 'team__review', '--url', url, '--api-key', KEY_LIMITED], { cwd });
        assert.equal(noDiff.status, 1);
        assert.match(noDiff.stderr, /Missing required argument: "diff"/);
    });

    test('the key from MCP_PROMPT_GATEWAY_API_KEY; a wrong or missing key is a clear error that never shows the key', async t => {
        const { url, cwd } = await gatewayWithKeys(t);
        const fromEnv = await runCli(['prompts', 'list', '--url', url], { cwd, env: { [KEY_VARIABLE]: KEY_LIMITED } });
        assert.equal(fromEnv.status, 0, fromEnv.stderr);
        assert.equal(fromEnv.stdout, 'team__review  Review a change the way our team does.\n');

        const wrongKey = 'a-wrong-key-of-some-length-42';
        const wrong = await runCli(['prompts', 'list', '--url', url], { cwd, env: { [KEY_VARIABLE]: wrongKey } });
        assert.equal(wrong.status, 1);
        assert.equal(wrong.stdout, '');
        assert.match(wrong.stderr, /^mcp-prompt-gateway prompts: the gateway at \S+ did not answer \(HTTP 401\); .*pass --api-key, or set MCP_PROMPT_GATEWAY_API_KEY\n$/);
        assert.ok(!wrong.stderr.includes(wrongKey));

        const none = await runCli(['prompts', 'get', 'team__review', 'diff=x', '--url', url], { cwd });
        assert.equal(none.status, 1);
        assert.match(none.stderr, /did not answer \(HTTP 401\)/);
    });

    test('a gateway not there: exit 1, naming the URL', async t => {
        const cwd = await filesOnly(t, { upstreams: [team] });
        const { status, stderr } = await runCli(['prompts', 'list', '--url', 'http://127.0.0.1:1/mcp'], { cwd });
        assert.equal(status, 1);
        assert.match(stderr, /^mcp-prompt-gateway prompts: the gateway at http:\/\/127\.0\.0\.1:1\/mcp did not answer \(.+\)\n$/);
    });
});
