/** resolveCommand and explainSpawnFailure against real files in a temp folder. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { explainSpawnFailure, resolveCommand, type CommandSpec } from '../../src/upstream/command.js';

let root: string;

/** A file under root, executable or not. */
function file(relative: string, executable: boolean, content = '#!/bin/sh\nexit 0\n'): string {
    const full = path.join(root, relative);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, content);
    chmodSync(full, executable ? 0o755 : 0o644);
    return full;
}

const at = (...parts: string[]) => path.join(root, ...parts);
const resolve = (spec: Partial<CommandSpec> & { command: string }) => resolveCommand({ cwd: root, env: {}, ...spec });

describe('resolveCommand', () => {
    before(() => {
        root = mkdtempSync(path.join(tmpdir(), 'command-test-'));
        file('bin1/tool', false);
        file('bin2/tool', true);
        file('bin3/only-readable', false);
        mkdirSync(at('bin3/a-folder'));
        file('local/server', true);
        file('local/notes.txt', false);
        file('here', true);
    });

    after(() => rmSync(root, { recursive: true, force: true }));

    test('a name is searched on the PATH of the child environment, in order, skipping files that are not executable', () => {
        const env = { PATH: [at('missing'), at('bin1'), at('bin2')].join(':') };
        assert.deepEqual(resolve({ command: 'tool', env }), { ok: true, path: at('bin2/tool') });
    });

    test('a name that is nowhere on PATH: not found, naming the PATH searched', () => {
        const env = { PATH: [at('bin1'), at('bin2')].join(':') };
        const resolution = resolve({ command: 'mcp-nowhere', env });
        assert.equal(resolution.ok, false);
        assert.equal(!resolution.ok && resolution.field, 'command');
        assert.equal(!resolution.ok && resolution.problem, `command "mcp-nowhere" not found (searched PATH: ${env.PATH})`);
    });

    test('a name found only as a file that may not run, or a folder: not executable, naming the file', () => {
        const env = { PATH: at('bin3') };
        for (const command of ['only-readable', 'a-folder']) {
            const resolution = resolve({ command, env });
            assert.equal(!resolution.ok && resolution.problem, `command "${command}" is not executable (${at('bin3', command)})`);
        }
    });

    test('without PATH in the environment, the search path is /usr/bin:/bin, like spawn', () => {
        assert.equal(resolve({ command: 'sh' }).ok, true);
        const resolution = resolve({ command: 'mcp-nowhere' });
        assert.equal(!resolution.ok && resolution.problem, 'command "mcp-nowhere" not found (searched PATH: /usr/bin:/bin)');
    });

    test('empty and relative PATH entries are relative to the working directory', () => {
        assert.deepEqual(resolve({ command: 'here', env: { PATH: `${at('missing')}::` } }), { ok: true, path: at('here') });
        assert.deepEqual(resolve({ command: 'server', env: { PATH: 'local' } }), { ok: true, path: at('local/server') });
    });

    test('a path with "/" is taken relative to the working directory, not searched on PATH', () => {
        const env = { PATH: at('bin2') };
        assert.deepEqual(resolve({ command: './local/server', env }), { ok: true, path: at('local/server') });
        assert.deepEqual(resolve({ command: 'local/server', env }), { ok: true, path: at('local/server') });
        const missing = resolve({ command: './tool', env });
        assert.equal(!missing.ok && missing.problem, `command "./tool" not found in ${root}`);
        const absolute = resolve({ command: at('nope/server'), env });
        assert.equal(!absolute.ok && absolute.problem, `command "${at('nope/server')}" not found`);
        const text = resolve({ command: './local/notes.txt', env });
        assert.equal(!text.ok && text.problem, `command "./local/notes.txt" is not executable (${at('local/notes.txt')})`);
        const direct = resolve({ command: at('local/notes.txt'), env });
        assert.equal(!direct.ok && direct.problem, `command "${at('local/notes.txt')}" is not executable`);
    });

    test('a working directory that does not exist is the problem, whatever the command', () => {
        const resolution = resolve({ command: 'sh', cwd: at('gone'), env: { PATH: '/usr/bin:/bin' } });
        assert.equal(!resolution.ok && resolution.field, 'cwd');
        assert.equal(!resolution.ok && resolution.problem, `working directory "${at('gone')}" not found`);
        const notFolder = resolve({ command: 'sh', cwd: at('here') });
        assert.equal(!notFolder.ok && notFolder.problem, `working directory "${at('here')}" is not a directory`);
    });

    test('every failure comes with a fix', () => {
        for (const spec of [{ command: 'mcp-nowhere' }, { command: './local/notes.txt' }, { command: 'sh', cwd: at('gone') }]) {
            const resolution = resolve(spec);
            assert.ok(!resolution.ok && resolution.fix.length > 10, JSON.stringify(resolution));
        }
    });

    test('agrees with spawn itself on every case above', { skip: process.platform === 'win32' }, () => {
        const bins = [at('missing'), at('bin1'), at('bin2'), at('bin3')].join(':');
        const cases: CommandSpec[] = [
            { command: 'tool', env: { PATH: bins } },
            { command: 'tool', env: { PATH: at('bin1') } },
            { command: 'only-readable', env: { PATH: bins } },
            { command: 'a-folder', env: { PATH: bins } },
            { command: 'mcp-nowhere', env: { PATH: bins } },
            { command: 'sh', env: {} },
            { command: 'here', env: { PATH: `${at('missing')}::` } },
            { command: 'server', env: { PATH: 'local' } },
            { command: './local/server', env: {} },
            { command: './local/notes.txt', env: {} },
            { command: './tool', env: { PATH: at('bin2') } },
            { command: 'sh', cwd: at('gone'), env: {} }
        ];
        const specs = cases.map(spec => ({ cwd: root, ...spec }));
        for (const spec of specs) {
            const spawned = spawnSync(spec.command, ['-c', 'exit 0'], { cwd: spec.cwd, env: spec.env });
            assert.equal(resolveCommand(spec).ok, spawned.error === undefined, `${JSON.stringify(spec)}: spawn says ${spawned.error?.message ?? 'ok'}`);
        }
    });

    test('on Windows the command is taken as found (its rules differ)', () => {
        assert.deepEqual(resolveCommand({ command: 'mcp-nowhere', env: {} }, undefined, 'win32'), { ok: true, path: 'mcp-nowhere' });
    });
});

describe('explainSpawnFailure', () => {
    before(() => {
        root = mkdtempSync(path.join(tmpdir(), 'command-test-'));
        file('script', true, '#!/nonexistent/interpreter\n');
    });

    after(() => rmSync(root, { recursive: true, force: true }));

    test('says what resolveCommand found wrong', () => {
        assert.equal(explainSpawnFailure({ command: 'mcp-nowhere', cwd: root, env: { PATH: root } }, 'ENOENT'), `command "mcp-nowhere" not found (searched PATH: ${root})`);
    });

    test('a command that is there but cannot start: a script whose interpreter is missing', () => {
        assert.equal(
            explainSpawnFailure({ command: 'script', cwd: root, env: { PATH: root } }, 'ENOENT'),
            `command "script" (${at('script')}) could not be started (ENOENT): if it is a script, is the interpreter on its #! line installed?`
        );
        assert.equal(explainSpawnFailure({ command: 'script', cwd: root, env: { PATH: root } }, 'EACCES'), `command "script" (${at('script')}) could not be started (EACCES)`);
    });
});
