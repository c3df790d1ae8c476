/**
 * A first run as a newcomer makes it, with the built CLI in an empty folder: `init`, `--check`, then the gateway with
 * no --config, reached by an SDK client over HTTP and through the printed Claude Desktop snippet over stdio. The
 * starter's upstreams are a prompt folder that init makes with one example prompt, and the example server shipped in
 * the package, so all of it runs offline, unchanged. A user's files (a prompt folder, its prompts) are never touched.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { before, describe, test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { CLI_RUN_BOUND_MS, closeAfter, connectHttp, connectStdio, listAllPages, ROOT, stopChild } from './helpers.js';

const CLI = path.join(ROOT, 'dist/cli.js');
const EXAMPLE_PROMPTS = ['examples__code-review', 'examples__commit-message', 'examples__summarize'];
/** The example prompt init writes into the starter's prompt folder. */
const STARTER_PROMPT = 'team__explain';
const TIMEOUT = { timeout: 90_000 };

function runCli(args: string[], cwd: string) {
    return spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: CLI_RUN_BOUND_MS });
}

/** An empty folder, removed after the test; by its real path, as the gateway sees its working directory. */
async function emptyFolder(t: TestContext): Promise<string> {
    const dir = realpathSync(await mkdtemp(path.join(tmpdir(), 'gateway-init-')));
    closeAfter(t, () => rm(dir, { recursive: true, force: true }));
    return dir;
}

/** The starter's example prompt, listed, rendered and completed as a client sees it. */
async function assertExamplePromptServed(client: Client): Promise<void> {
    const listed = (await client.listPrompts()).prompts.find(prompt => prompt.name === STARTER_PROMPT);
    assert.equal(listed?.title, 'Explain');
    assert.deepEqual(
        listed.arguments?.map(argument => [argument.name, argument.required ?? false]),
        [
            ['audience', true],
            ['subject', false]
        ]
    );
    const got = await client.getPrompt({ name: STARTER_PROMPT, arguments: { audience: 'newcomer', subject: 'what a race condition is' } });
    assert.equal(got.messages.length, 1);
    const text = (got.messages[0]!.content as { text: string }).text;
    assert.match(text, /^Explain the subject below to a newcomer;/);
    assert.match(text, /\n\nSubject: what a race condition is\n?$/);
    const completed = await client.complete({ ref: { type: 'ref/prompt', name: STARTER_PROMPT }, argument: { name: 'audience', value: 'te' } });
    assert.deepEqual(completed.completion.values, ['teammate']);
}

/** Runs `init` in `dir` and returns its output, failing unless it succeeded. */
function init(dir: string, args: string[] = []): string {
    const result = runCli(['init', ...args], dir);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr, '');
    return result.stdout;
}

describe('first run: init, then the gateway with no --config', () => {
    before(() => assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)'));

    test('init writes gateway.json, which --check finds and accepts, with $schema at the real schema file', TIMEOUT, async t => {
        const dir = await emptyFolder(t);
        const printed = init(dir);
        const file = path.join(dir, 'gateway.json');
        assert.match(printed, new RegExp(`^Wrote ${file}: the gateway in front of your prompt files in ${path.join(dir, 'prompts')} and one example MCP server`));
        assert.match(printed, new RegExp(`^Wrote ${path.join(dir, 'prompts', 'explain.md')}: an example prompt, served as ${STARTER_PROMPT};`, 'm'));
        assert.doesNotMatch(printed, /is there: to serve it/, 'no .claude/commands here');
        assert.match(printed, /\(in .*, where it finds gateway\.json\)/);
        assert.deepEqual(await readdir(path.join(dir, 'prompts')), ['explain.md']);
        const schema = /"\$schema": "([^"]+)"/.exec(await readFile(file, 'utf8'))?.[1];
        assert.ok(schema !== undefined);
        assert.equal(fileURLToPath(schema), realpathSync(path.join(ROOT, 'config/gateway.schema.json')));

        const check = runCli(['--check'], dir);
        assert.equal(check.status, 0, check.stderr);
        assert.equal(check.stderr, `no --config given: using ${file}\nupstream "team": 1 prompt(s) from prompts (markdown)\nconfig ${file} is valid (2 upstream(s))\n`);
    });

    test('the printed snippet for Claude Code commands, added to the starter, serves .claude/commands as they are', TIMEOUT, async t => {
        const dir = await emptyFolder(t);
        await mkdir(path.join(dir, '.claude/commands/frontend'), { recursive: true });
        await writeFile(path.join(dir, '.claude/commands/frontend/review-pr.md'), '---\nargument-hint: [pr-number] [focus]\n---\nReview PR #$1, looking hardest at $2.\n');
        const printed = init(dir);
        const config = path.join(dir, 'gateway.json');
        assert.ok(printed.endsWith(`\n${path.join(dir, '.claude/commands')} is there: to serve it, uncomment the "claude" upstream in ${config}.\n`), printed);
        const lines = printed.split('\n');
        const heading = lines.findIndex(line => line.startsWith("Serve a repository's Claude Code commands (.claude/commands/*.md) as they are"));
        assert.ok(heading > 0, printed);
        const snippet = lines[heading + 1]!.trim();
        assert.deepEqual(JSON.parse(snippet), { id: 'claude', transport: 'files', path: '.claude/commands', format: 'claude-commands' });
        assert.match(printed, /docs\/prompt-files\.md/);
        const formats = /one example of each in\n\s+(\S+),/.exec(printed)?.[1];
        assert.ok(formats !== undefined && existsSync(path.join(formats, 'claude-commands')), printed);

        const starter = await readFile(config, 'utf8');
        assert.ok(starter.includes(`    // ${snippet},\n`), 'the starter shows the same entry, commented out');
        await writeFile(config, starter.replace(`// ${snippet},`, `${snippet},`));
        const check = runCli(['--check'], dir);
        assert.equal(check.status, 0, check.stderr);
        assert.match(check.stderr, /upstream "claude": 1 prompt\(s\) from \.claude\/commands \(claude-commands\)/);

        const client = await connectStdio(process.execPath, [CLI, '--stdio'], { cwd: dir });
        closeAfter(t, () => client.close());
        assert.deepEqual((await listAllPages(client)).names.sort(), ['claude__review-pr', ...EXAMPLE_PROMPTS, STARTER_PROMPT].sort());
        const got = await client.getPrompt({ name: 'claude__review-pr', arguments: { 'pr-number': '42', focus: 'errors' } });
        assert.deepEqual(got.messages, [{ role: 'user', content: { type: 'text', text: 'Review PR #42, looking hardest at errors.' } }]);
    });

    test('the gateway started with no --config serves the starter over HTTP to an SDK client', TIMEOUT, async t => {
        const dir = await emptyFolder(t);
        init(dir);
        const gateway = spawn(process.execPath, [CLI, '--port', '0'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
        closeAfter(t, () => stopChild(gateway));
        const stderr: string[] = [];
        const url = await new Promise<string>((resolve, reject) => {
            createInterface({ input: gateway.stderr }).on('line', line => {
                stderr.push(line);
                const match = /^listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/.exec(line);
                if (match) resolve(match[1]!);
            });
            gateway.once('exit', code => reject(new Error(`gateway exited with ${code}:\n${stderr.join('\n')}`)));
        });
        assert.equal(stderr[0], `no --config given: using ${path.join(dir, 'gateway.json')}`);
        const client = await connectHttp(url);
        closeAfter(t, () => client.close());
        assert.deepEqual((await listAllPages(client)).names.sort(), [...EXAMPLE_PROMPTS, STARTER_PROMPT]);
        await assertExamplePromptServed(client);
    });

    test('the printed Claude Desktop entry starts the gateway over stdio for an SDK client', TIMEOUT, async t => {
        const dir = await emptyFolder(t);
        const printed = init(dir);
        const line = printed.split('\n').find(candidate => candidate.trimStart().startsWith('{ "mcpServers": { "prompts": { "command"'));
        assert.ok(line !== undefined, printed);
        const entry = (JSON.parse(line) as { mcpServers: { prompts: { command: string; args: string[] } } }).mcpServers.prompts;
        assert.deepEqual(entry.args.slice(1), ['--stdio', '-c', path.join(dir, 'gateway.json')]);
        const client = await connectStdio(entry.command, entry.args);
        closeAfter(t, () => client.close());
        assert.deepEqual((await listAllPages(client)).names.sort(), [...EXAMPLE_PROMPTS, STARTER_PROMPT]);
        await assertExamplePromptServed(client);
        assert.match(printed, new RegExp(`then type: /mcp__prompts__${STARTER_PROMPT} newcomer `), 'the Claude Code command, one-word argument first');
    });

    test('init refuses to overwrite a file without --force, and overwrites it with --force', TIMEOUT, async t => {
        const dir = await emptyFolder(t);
        const file = path.join(dir, 'mine.json');
        await writeFile(file, '{ "hand": "written" }');
        const refused = runCli(['init', '--output', 'mine.json'], dir);
        assert.equal(refused.status, 2);
        assert.equal(refused.stderr, `mcp-prompt-gateway init: ${file} already exists; pass --force to overwrite it, or --output <file> to write elsewhere\n`);
        assert.equal(refused.stdout, '');
        assert.equal(await readFile(file, 'utf8'), '{ "hand": "written" }');
        assert.equal(existsSync(path.join(dir, 'prompts')), false, 'refused: not even the prompt folder is made');

        const printed = init(dir, ['-o', 'mine.json', '--force']);
        assert.match(printed, /--config .*mine\.json$/m, 'not gateway.json: the start command names the file');
        assert.equal(runCli(['--config', file, '--check'], dir).status, 0);

        const example = path.join(dir, 'prompts', 'explain.md');
        const edited = (await readFile(example, 'utf8')).replace('title: Explain', 'title: Explain it');
        await writeFile(example, edited);
        const again = init(dir, ['-o', 'mine.json', '--force']);
        assert.ok(again.includes(`\nKept ${path.join(dir, 'prompts')} as it was: `), again);
        assert.equal(await readFile(example, 'utf8'), edited, '--force overwrites the config only, never a prompt file');
        assert.doesNotMatch(again, /then type:/);
    });

    test("a prompt folder that exists is the user's: init adds nothing to it and the starter serves its files", TIMEOUT, async t => {
        const dir = await emptyFolder(t);
        const mine = '---\ndescription: Mine\n---\nMy prompt.\n';
        await mkdir(path.join(dir, 'prompts'));
        await writeFile(path.join(dir, 'prompts', 'mine.md'), mine);
        const printed = init(dir);
        assert.ok(printed.includes(`\nKept ${path.join(dir, 'prompts')} as it was: its .md files are served as team__<name>`), printed);
        assert.deepEqual(await readdir(path.join(dir, 'prompts')), ['mine.md']);
        assert.equal(await readFile(path.join(dir, 'prompts', 'mine.md'), 'utf8'), mine);

        const client = await connectStdio(process.execPath, [CLI, '--stdio'], { cwd: dir });
        closeAfter(t, () => client.close());
        assert.deepEqual((await listAllPages(client)).names.sort(), [...EXAMPLE_PROMPTS, 'team__mine']);
    });

    test('the prompt folder is made beside the config file, wherever --output puts it', TIMEOUT, async t => {
        const dir = await emptyFolder(t);
        await mkdir(path.join(dir, 'conf'));
        init(dir, ['--output', 'conf/gw.json']);
        assert.deepEqual(await readdir(path.join(dir, 'conf', 'prompts')), ['explain.md']);
        assert.equal(existsSync(path.join(dir, 'prompts')), false);
        const check = runCli(['--config', 'conf/gw.json', '--check'], dir);
        assert.equal(check.status, 0, check.stderr);
        assert.match(check.stderr, /upstream "team": 1 prompt\(s\) from conf\/prompts \(markdown\)/);
    });

    test('something other than a folder where the prompt folder goes: init says so and writes nothing', TIMEOUT, async t => {
        const dir = await emptyFolder(t);
        await writeFile(path.join(dir, 'prompts'), 'a file');
        const refused = runCli(['init'], dir);
        assert.equal(refused.status, 2);
        assert.equal(
            refused.stderr,
            `mcp-prompt-gateway init: ${path.join(dir, 'prompts')} exists and is not a folder: the starter serves the prompt files of a folder there; ` +
                'move it, or write the config elsewhere with --output <file>\nNothing was written.\n'
        );
        assert.deepEqual(await readdir(dir), ['prompts']);
    });

    test('init with a bad option or an --output in a missing folder exits 2', TIMEOUT, async t => {
        const dir = await emptyFolder(t);
        const unknown = runCli(['init', '--from-nowhere'], dir);
        assert.equal(unknown.status, 2);
        assert.match(unknown.stderr, /^mcp-prompt-gateway init: Unknown option '--from-nowhere'.*\n\nUsage: mcp-prompt-gateway init /);
        const missing = runCli(['init', '--output', 'no/such/folder.json'], dir);
        assert.equal(missing.status, 2);
        assert.match(missing.stderr, /cannot write .*folder\.json: folder .*no\/such does not exist/);
        assert.match(runCli(['init', '--help'], dir).stdout, /^Usage: mcp-prompt-gateway init \[--from <file>\]\.\.\. \[--output <file>\] \[--force\]/);
    });

    test('init --from a Claude Desktop file: the starter serves its servers, found with no --config', TIMEOUT, async t => {
        const dir = await emptyFolder(t);
        const desktop = path.join(dir, 'claude_desktop_config.json');
        const server = { command: process.execPath, args: [path.join(ROOT, 'examples/prompt-server.mjs')] };
        await writeFile(desktop, JSON.stringify({ mcpServers: { 'team prompts': server, other: server } }));
        const printed = init(dir, ['--from', 'claude_desktop_config.json']);
        assert.ok(
            printed.includes(`: the gateway in front of your prompt files in ${path.join(dir, 'prompts')} and the 2 MCP server(s) of ${desktop}: team-prompts, other.\n`),
            printed
        );
        const written = await readFile(path.join(dir, 'gateway.json'), 'utf8');
        assert.ok(written.includes(`{ "file": ${JSON.stringify(desktop)}, "format": "auto" }`), written);

        const client = await connectStdio(process.execPath, [CLI, '--stdio'], { cwd: dir });
        closeAfter(t, () => client.close());
        const names = (await listAllPages(client)).names.sort();
        assert.deepEqual(names, [
            ...EXAMPLE_PROMPTS.map(name => name.replace('examples__', 'other__')),
            ...EXAMPLE_PROMPTS.map(name => name.replace('examples__', 'team-prompts__')),
            STARTER_PROMPT
        ]);
    });

    test('init --from a file the gateway cannot use says why and writes nothing', TIMEOUT, async t => {
        const dir = await emptyFolder(t);
        const missing = runCli(['init', '--from', 'nowhere.json'], dir);
        assert.equal(missing.status, 2);
        assert.match(missing.stderr, /nowhere\.json.*\nNothing was written\.\n$/s);
        await writeFile(
            path.join(dir, 'mcp.json'),
            '{ "servers": { "api": { "type": "http", "url": "https://x.example/mcp", "headers": { "Authorization": "Bearer ${input:token}" } } } }'
        );
        const unresolved = runCli(['init', '--from', 'mcp.json'], dir);
        assert.equal(unresolved.status, 2);
        assert.match(unresolved.stderr, /token/);
        assert.match(unresolved.stderr, /MCP_INPUT_TOKEN/);
        assert.equal(existsSync(path.join(dir, 'gateway.json')), false);
        assert.equal(existsSync(path.join(dir, 'prompts')), false);
    });

    test('with no --config and no gateway.json, the gateway exits 2 saying what to do in three lines', TIMEOUT, async t => {
        const dir = await emptyFolder(t);
        for (const args of [[], ['--check'], ['--stdio']]) {
            const result = runCli(args, dir);
            assert.equal(result.status, 2, result.stderr);
            const lines = result.stderr.trimEnd().split('\n');
            assert.equal(lines.length, 3, result.stderr);
            assert.equal(lines[0], `mcp-prompt-gateway: no --config given and no gateway.json in ${dir}.`);
            assert.match(lines[1]!, /mcp-prompt-gateway init.*--config FILE/);
            assert.match(lines[2]!, /--from FILE/);
            assert.doesNotMatch(result.stderr, /Usage:/);
        }
    });

    test('a config with comments and trailing commas is valid; a syntax error is located', TIMEOUT, async t => {
        const dir = await emptyFolder(t);
        const commented = ['{', '  // the one upstream', '  "upstreams": [', '    { "id": "a", "transport": "stdio", "command": "node", }, /* more later */', '  ],', '}'];
        await writeFile(path.join(dir, 'gateway.json'), commented.join('\n'));
        const valid = runCli(['--check'], dir);
        assert.equal(valid.status, 0, valid.stderr);

        commented[3] = '    { "id": "a" "transport": "stdio" }';
        await writeFile(path.join(dir, 'gateway.json'), commented.join('\n'));
        const broken = runCli(['--check'], dir);
        assert.equal(broken.status, 2);
        assert.match(broken.stderr, /\(top level\): not valid JSON at line 4, column 17: expected ","; fix the syntax there/);
    });
});
