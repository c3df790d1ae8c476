/**
 * A config written when prompt files were named by their path (`team__ops/incident`), against the built CLI:
 * the gateway still starts; the warning names the field, the old name and the new one, at start (stderr), at a
 * reload (the log) and in `--check`, which still passes.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { before, describe, test, type TestContext } from 'node:test';
import { CLI_RUN_BOUND_MS, closeAfter, connectHttp, listAllPages, ROOT, startGatewayCli, waitFor } from './helpers.js';

const CLI = path.join(ROOT, 'dist/cli.js');

const STALE =
    'anonymous.prompts.allow[0]: "team__ops/incident" names a prompt of files upstream "team" with its folder, but prompt files are named after their file now, without their folders (docs/prompt-files.md, Names): it matches nothing now; use "team__incident"';

/** A prompt repository whose gateway.json lets the anonymous client see `allow`. */
async function repository(t: TestContext, allow: string): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'stale-names-'));
    closeAfter(t, () => rm(dir, { recursive: true, force: true }));
    await mkdir(path.join(dir, 'prompts/ops'), { recursive: true });
    await writeFile(path.join(dir, 'prompts/ops/incident.md'), '---\ndescription: Incident\n---\nSummarise the incident.');
    await configure(dir, allow);
    return dir;
}

/** Written as editors do (a new file renamed over the old), so a watcher never reads half a file. */
async function configure(dir: string, allow: string): Promise<void> {
    const config = { listen: { port: 0 }, upstreams: [{ id: 'team', transport: 'files', path: 'prompts' }], anonymous: { prompts: { allow: [allow] } } };
    await writeFile(path.join(dir, 'gateway.json.tmp'), JSON.stringify(config));
    await rename(path.join(dir, 'gateway.json.tmp'), path.join(dir, 'gateway.json'));
}

describe('a config naming prompt files by their path', { timeout: 180_000 }, () => {
    before(() => assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)'));

    test('--check prints the warning and passes', async t => {
        const dir = await repository(t, 'team__ops/incident');
        const result = spawnSync(process.execPath, [CLI, '--config', 'gateway.json', '--check'], { cwd: dir, encoding: 'utf8', timeout: CLI_RUN_BOUND_MS });
        assert.equal(result.status, 0, result.stderr);
        const lines = result.stderr.split('\n').filter(line => line !== '');
        assert.deepEqual(
            lines.filter(line => line.startsWith('warning: ')),
            [`warning: ${STALE}`]
        );
        assert.equal(lines.at(-1), 'config gateway.json is valid (1 upstream(s))');
    });

    test('the gateway starts and warns; a reload to the new name serves the prompt; a reload back warns in the log', async t => {
        const dir = await repository(t, 'team__ops/incident');
        const { child, url, stderr, logs } = await startGatewayCli(t, ['--config', 'gateway.json'], { cwd: dir });
        assert.ok(stderr.includes(`warning: ${STALE}`), stderr.join('\n'));
        const client = await connectHttp(url);
        closeAfter(t, () => client.close());
        assert.deepEqual((await listAllPages(client)).names, [], 'the old name matches nothing');

        await configure(dir, 'team__incident');
        child.kill('SIGHUP');
        await waitFor(async () => (await listAllPages(client)).names.includes('team__incident'), 60_000, 'the new name to be served');
        assert.ok(!logs.some(line => line.msg === STALE), 'no warning once the name is fixed');

        await configure(dir, 'team__ops/incident');
        child.kill('SIGHUP');
        await waitFor(() => logs.some(line => line.msg === STALE), 60_000, 'the warning of the reload');
    });
});
