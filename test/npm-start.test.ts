/**
 * `npm start` under a supervisor, and in a terminal: SIGTERM or SIGINT to the npm process, or Ctrl-C (SIGINT to
 * its whole process group), stops the gateway gracefully (exit 0, through npm) and leaves none of its processes
 * behind. npm runs the script with `sh -c` and forwards signals to that shell only, so the script must `exec` the
 * gateway. `--ignore-scripts` skips the prestart build, which would rewrite dist/ under the other test files
 * (`npm test` built it already); the start script itself runs as for anyone.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { test, type TestContext } from 'node:test';
import { descendantsOf, ROOT, stillRunning, waitFor, type ProcessId } from './helpers.js';

const TIMEOUT = { timeout: 60_000 };

/** The upstreams of gateway.example.json, by a piece of their command line. */
const UPSTREAMS = ['server-everything', 'examples/prompt-server.mjs'];

type Stop = (npm: number) => void;

async function stopsCleanly(t: TestContext, stop: Stop): Promise<void> {
    assert.ok(existsSync(path.join(ROOT, 'dist/cli.js')), 'dist/cli.js is missing: run `npm run build` (npm test does)');
    // Its own process group, as a terminal gives a job: Ctrl-C reaches every process of the group.
    const npm = spawn('npm', ['start', '--ignore-scripts', '--', '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    let tree: ProcessId[] = [];
    t.after(() => {
        for (const { pid } of [...stillRunning(tree), ...(npm.exitCode === null ? [{ pid: npm.pid! }] : [])]) {
            try {
                process.kill(pid, 'SIGKILL');
            } catch {
                // gone meanwhile
            }
        }
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(resolve => npm.once('exit', (code, signal) => resolve({ code, signal })));
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
        createInterface({ input: npm.stderr }).on('line', line => {
            stderr += `${line}\n`;
            if (line.startsWith('listening on ')) resolve();
        });
        void exited.then(({ code }) => reject(new Error(`npm start exited with ${code} before listening:\n${stderr}`)));
    });
    await waitFor(() => UPSTREAMS.every(piece => descendantsOf(npm.pid!).some(process => process.cmdline.includes(piece))), 30_000, 'the upstream processes');
    tree = descendantsOf(npm.pid!);
    t.diagnostic(`npm ${npm.pid} runs: ${tree.map(process => `${process.pid} ${process.cmdline.slice(0, 60)}`).join('; ')}`);

    stop(npm.pid!);
    const { code, signal } = await exited;
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, `npm start ended with ${code ?? signal}:\n${stderr}`);
    assert.match(stderr, /shutting down/, 'the gateway stopped itself, gracefully');
    assert.doesNotMatch(stderr, /second stop signal/, 'one stop signal reached the gateway, not two');
    await waitFor(() => stillRunning(tree).length === 0, 10_000, 'every process of npm start to end').catch(() => {
        assert.fail(`left running: ${JSON.stringify(stillRunning(tree))}`);
    });
}

test('SIGTERM to the npm process stops the gateway and its children', TIMEOUT, t => stopsCleanly(t, npm => process.kill(npm, 'SIGTERM')));

test('SIGINT to the npm process stops the gateway and its children', TIMEOUT, t => stopsCleanly(t, npm => process.kill(npm, 'SIGINT')));

test('Ctrl-C (SIGINT to the process group) stops the gateway and its children', TIMEOUT, t => stopsCleanly(t, npm => process.kill(-npm, 'SIGINT')));
