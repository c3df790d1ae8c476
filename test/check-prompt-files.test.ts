/**
 * `--check` reads every `files` upstream's folder as the gateway would (issue 26): the built CLI, as a prompt
 * repository's CI runs it, over copies of test/fixtures/prompt-formats. A file with an error fails the check
 * naming file:line (exit 2); warnings are printed and do not fail it; a missing folder fails it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { before, describe, test, type TestContext } from 'node:test';
import { CLI_RUN_BOUND_MS, ROOT } from './helpers.js';

const CLI = path.join(ROOT, 'dist/cli.js');
const FIXTURES = path.join(ROOT, 'test/fixtures/prompt-formats');

/** A repository holding Claude Code commands and Gemini CLI commands, with its gateway.json. */
async function repository(t: TestContext): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'check-prompts-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await cp(path.join(FIXTURES, 'claude-commands'), path.join(dir, '.claude/commands'), { recursive: true });
    await cp(path.join(FIXTURES, 'gemini-commands'), path.join(dir, '.gemini/commands'), { recursive: true });
    await writeFile(
        path.join(dir, 'gateway.json'),
        JSON.stringify({
            upstreams: [
                { id: 'claude', transport: 'files', path: '.claude/commands', format: 'claude-commands' },
                { id: 'gemini', transport: 'files', path: '.gemini/commands', format: 'gemini-commands' }
            ]
        })
    );
    return dir;
}

function check(cwd: string) {
    const result = spawnSync(process.execPath, [CLI, '--config', 'gateway.json', '--check'], { cwd, encoding: 'utf8', timeout: CLI_RUN_BOUND_MS });
    return { status: result.status, lines: result.stderr.split('\n').filter(line => line !== ''), stderr: result.stderr };
}

describe('--check reads prompt files', () => {
    before(() => assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)'));

    test('a file with an error fails the check naming file:line; warnings are printed; the other files count', async t => {
        const dir = await repository(t);
        await writeFile(path.join(dir, '.gemini/commands/broken.toml'), 'description = "Broken"\nprompt = "unclosed\n');
        const { status, lines, stderr } = check(dir);
        assert.equal(status, 2, stderr);
        const errors = lines.filter(line => line.startsWith('error: '));
        assert.deepEqual(
            errors.map(line => line.split(': ')[1]),
            ['.claude/commands/optimize.md', '.gemini/commands/broken.toml:2', '.gemini/commands/hostile/no-prompt.toml']
        );
        assert.match(errors[0]!, /prompt name "optimize" is already taken by backend\/optimize\.md, which is served .* \(upstream "claude"\)$/);
        assert.match(errors[1]!, /^error: \.gemini\/commands\/broken\.toml:2: not valid TOML: .* \(upstream "gemini"\)$/);
        assert.ok(
            lines.includes(
                'warning: .claude/commands/hostile/exfiltrate.md:6: @/etc/passwd inlines this file in Claude Code; the gateway never runs or reads it: served as written (upstream "claude")'
            ),
            stderr
        );
        assert.ok(lines.includes('upstream "claude": 5 prompt(s) from .claude/commands (claude-commands)'), stderr);
        assert.ok(lines.includes('upstream "gemini": 5 prompt(s) from .gemini/commands (gemini-commands)'), stderr);
        assert.equal(lines.at(-1), 'config gateway.json: 3 prompt file error(s) above; fix them (the gateway serves the other files and leaves these out)');
    });

    test('with the errors fixed the check passes, warnings still printed', async t => {
        const dir = await repository(t);
        await rm(path.join(dir, '.claude/commands/optimize.md'));
        await rm(path.join(dir, '.gemini/commands/hostile/no-prompt.toml'));
        const { status, lines, stderr } = check(dir);
        assert.equal(status, 0, stderr);
        assert.deepEqual(
            lines.filter(line => line.startsWith('error: ')),
            []
        );
        assert.ok(
            lines.some(line => line.startsWith('warning: .gemini/commands/git/commit.toml:11: !{git diff --staged} runs this shell command')),
            stderr
        );
        assert.equal(lines.at(-1), 'config gateway.json is valid (2 upstream(s))');
    });

    test('a prompt folder that is not there fails the check, naming it', async t => {
        const dir = await repository(t);
        await rm(path.join(dir, '.gemini'), { recursive: true });
        const { status, lines, stderr } = check(dir);
        assert.equal(status, 2, stderr);
        assert.deepEqual(
            lines.filter(line => line.startsWith('error: upstream')),
            [`error: upstream "gemini": folder not found: ${path.join(dir, '.gemini/commands')}`]
        );
    });
});
