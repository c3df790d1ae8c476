/**
 * A value that came from a secret expansion stays a secret wherever it goes: `${env:X}` of a VS Code file,
 * `${X}` of a Claude Code file, and the gateway config's own `${X}` when it lands in a secret field, expanded into a
 * stdio server's command, args or cwd. The real CLI, real client config files, a real child that prints its argv
 * and working directory on stderr (test/fixtures/echo-argv-server.mjs), and servers whose command or working
 * directory is missing (so their errors name them): the values appear in no log line, not in /healthz, /readyz or
 * the dashboard's data, and not in what --check prints.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { before, describe, test, type TestContext } from 'node:test';
import { closeAfter, ROOT, stopChild, waitFor } from './helpers.js';

const CLI = [path.join(ROOT, 'dist/cli.js')];
const ECHO_SERVER = path.join(ROOT, 'test/fixtures/echo-argv-server.mjs');
const TIMEOUT = { timeout: 180_000 };

interface Setup {
    config: string;
    env: Record<string, string>;
    /** Every secret value, by what it stands for. */
    secrets: Record<string, string>;
}

/**
 * A gateway config with a VS Code file and a Claude Code file in upstreamsFrom, and a stdio upstream of its own;
 * the secrets in the environment.
 */
async function setUp(t: TestContext): Promise<Setup> {
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-secret-expansions-'));
    closeAfter(t, () => rm(dir, { recursive: true, force: true }));
    const unique = () => randomUUID().slice(0, 8);
    const secrets = {
        arg: `arg-token-${unique()}`,
        serverDir: path.join(dir, `server-dir-${unique()}`),
        cwd: path.join(dir, `cwd-${unique()}`),
        missingCwd: path.join(dir, `missing-cwd-${unique()}`),
        claudeArg: `claude-token-${unique()}`,
        gatewayKey: `gateway-key-${unique()}`
    };
    await mkdir(secrets.serverDir);
    await mkdir(secrets.cwd);
    await copyFile(ECHO_SERVER, path.join(secrets.serverDir, 'echo-argv-server.mjs'));
    const vscode = {
        servers: {
            echo: {
                type: 'stdio',
                command: '${env:ECHO_SERVER_DIR}/echo-argv-server.mjs',
                args: ['--token=${env:ECHO_TOKEN}', '--short=${env:SHORT_VALUE}'],
                cwd: '${env:ECHO_CWD}'
            },
            gone: { type: 'stdio', command: '${env:ECHO_SERVER_DIR}/not-here', args: [] },
            nowhere: { type: 'stdio', command: process.execPath, args: [ECHO_SERVER], cwd: '${env:MISSING_CWD}' }
        }
    };
    const claudeCode = { mcpServers: { 'claude-echo': { command: process.execPath, args: [ECHO_SERVER, '--token=${CLAUDE_TOKEN}'] } } };
    await mkdir(path.join(dir, 'project/.vscode'), { recursive: true });
    await writeFile(path.join(dir, 'project/.vscode/mcp.json'), JSON.stringify(vscode));
    await writeFile(path.join(dir, 'project/.mcp.json'), JSON.stringify(claudeCode));
    const config = path.join(dir, 'gateway.json');
    await writeFile(
        config,
        JSON.stringify({
            listen: { port: 0 },
            reconnect: { initialMs: 60_000, maxMs: 60_000 },
            upstreams: [
                // In env (a secret field) inside a longer value, and alone in args: a secret there too.
                { id: 'gateway-echo', transport: 'stdio', command: process.execPath, args: [ECHO_SERVER, '--key=${GATEWAY_KEY}'], env: { AUTH_LINE: 'key ${GATEWAY_KEY}' } }
            ],
            upstreamsFrom: [
                { file: 'project/.vscode/mcp.json', defaults: { timeoutMs: 30_000 } },
                { file: 'project/.mcp.json', format: 'claude-code', defaults: { timeoutMs: 30_000 } }
            ]
        })
    );
    const env = {
        ECHO_TOKEN: secrets.arg,
        ECHO_SERVER_DIR: secrets.serverDir,
        ECHO_CWD: secrets.cwd,
        MISSING_CWD: secrets.missingCwd,
        CLAUDE_TOKEN: secrets.claudeArg,
        GATEWAY_KEY: secrets.gatewayKey,
        // Under the minimum length of a secret: redacting it would blank every "argv" of the log.
        SHORT_VALUE: 'argv'
    };
    return { config, env, secrets };
}

function assertNoSecret(text: string, secrets: Record<string, string>, where: string): void {
    for (const [what, value] of Object.entries(secrets)) assert.ok(!text.includes(value), `${what} (${value}) in ${where}:\n${text}`);
}

async function read(url: string): Promise<string> {
    const response = await fetch(url);
    return response.text();
}

describe('values of secret expansions stay secret', () => {
    before(() => assert.ok(existsSync(CLI[0]!), 'dist/cli.js is missing: run `npm run build` (npm test does)'));
    test("in the log (the child's echoed argv and cwd included), /healthz, /readyz and the dashboard data", TIMEOUT, async t => {
        const { config, env, secrets } = await setUp(t);
        const child = spawn(process.execPath, [...CLI, '--config', config], {
            cwd: ROOT,
            stdio: ['ignore', 'ignore', 'pipe'],
            env: { ...process.env, ...env, LOG_LEVEL: 'debug', LOG_FORMAT: 'json' }
        });
        closeAfter(t, () => stopChild(child));
        const stderr: string[] = [];
        const url = await new Promise<string>((resolve, reject) => {
            createInterface({ input: child.stderr }).on('line', line => {
                stderr.push(line);
                const match = /^listening on (\S+)$/.exec(line);
                if (match) resolve(match[1]!);
            });
            child.once('exit', code => reject(new Error(`gateway exited with ${code}:\n${stderr.join('\n')}`)));
        });
        const origin = new URL(url).origin;
        const echoes = () => stderr.filter(line => line.includes('started with'));
        await waitFor(() => new Set(echoes().map(line => (JSON.parse(line) as { upstream?: string }).upstream)).size === 3, 60_000, "the three echoing servers' first lines");
        const health = async () => JSON.parse(await read(`${origin}/healthz`)) as { upstreams: { id: string; error?: string }[] };
        const errorOf = async (id: string) => (await health()).upstreams.find(upstream => upstream.id === id)?.error;
        await waitFor(async () => (await errorOf('gone')) !== undefined && (await errorOf('nowhere')) !== undefined, 60_000, 'the missing command and cwd reported');

        const outputs = {
            healthz: await read(`${origin}/healthz`),
            readyz: await read(`${origin}/readyz`),
            dashboard: await read(`${origin}/dashboard/data`)
        };
        for (const [where, text] of Object.entries(outputs)) assertNoSecret(text, secrets, where);
        assertNoSecret(stderr.join('\n'), secrets, 'the log');
        // What was masked is there, masked: the errors and the echoes name the paths and values.
        assert.match((await errorOf('gone')) ?? '', /command "\[redacted\]\/not-here" not found/);
        assert.match((await errorOf('nowhere')) ?? '', /working directory "\[redacted\]" not found/);
        assert.match(outputs.dashboard, /\[redacted\]\/not-here/);
        for (const line of echoes()) assert.match(line, /started with argv .*\[redacted\]/, line);
        assert.ok(
            echoes().some(line => line.includes('--short=argv')),
            'a value under the minimum length is left alone'
        );
    });

    test('in what --check prints about a missing command or working directory', TIMEOUT, async t => {
        const { config, env, secrets } = await setUp(t);
        const result = spawnSync(process.execPath, [...CLI, '--config', config, '--check'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
        assert.equal(result.status, 0, result.stderr);
        assertNoSecret(result.stderr, secrets, '--check');
        assert.match(result.stderr, /servers\.gone\.command: command "\[redacted\]\/not-here" not found/);
        assert.match(result.stderr, /servers\.nowhere\.cwd: working directory "\[redacted\]" not found/);
    });
});
