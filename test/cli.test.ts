/** The built CLI (`dist/cli.js`, the package's bin): config checking, exit codes, HTTP and stdio serving. */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { before, describe, test } from 'node:test';
import { CLI_RUN_BOUND_MS, connectHttp, connectStdio, listAllPages, ROOT, sleep, stdioFixture, stopChild, waitFor } from './helpers.js';

const CLI = path.join(ROOT, 'dist/cli.js');
let dir: string;

async function configFile(name: string, config: unknown): Promise<string> {
    const file = path.join(dir, name);
    await writeFile(file, typeof config === 'string' ? config : JSON.stringify(config));
    return file;
}

function runCli(args: string[], env: Record<string, string> = {}) {
    return spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env }, timeout: CLI_RUN_BOUND_MS });
}

const upstream = { id: 'local', transport: 'stdio', command: 'node', args: ['x.js'] };

describe('CLI', () => {
    before(async () => {
        assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)');
        dir = await mkdtemp(path.join(tmpdir(), 'gateway-cli-'));
    });

    test('--check accepts gateway.example.json', () => {
        const result = runCli(['--config', 'gateway.example.json', '--check']);
        assert.equal(result.status, 0, result.stderr);
        assert.match(result.stderr, /valid/);
        assert.doesNotMatch(result.stderr, /warning/, 'its commands exist');
    });

    test('--check warns about each stdio command it cannot find, and still exits 0', async () => {
        const bin = await mkdtemp(path.join(tmpdir(), 'gateway-cli-bin-'));
        const file = await configFile('missing-commands.json', {
            upstreams: [
                { ...upstream, id: 'present' },
                { id: 'absent', transport: 'stdio', command: 'mcp-no-such-server', env: { PATH: bin } },
                { id: 'remote', transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp' },
                { id: 'relative', transport: 'stdio', command: './server.sh' },
                { id: 'nowhere', transport: 'stdio', command: 'node', cwd: 'no-such-folder' }
            ]
        });
        const result = runCli(['--config', file, '--check']);
        assert.equal(result.status, 0, result.stderr);
        const warnings = result.stderr.split('\n').filter(line => line.startsWith('warning: '));
        assert.equal(warnings.length, 3, result.stderr);
        assert.match(warnings[0]!, new RegExp(`^warning: upstreams\\[1\\]\\.command: command "mcp-no-such-server" not found \\(searched PATH: ${bin}\\); install it`));
        assert.match(warnings[1]!, new RegExp(`^warning: upstreams\\[3\\]\\.command: command "./server.sh" not found in ${dir}; fix the path`));
        assert.match(warnings[2]!, new RegExp(`^warning: upstreams\\[4\\]\\.cwd: working directory "${path.join(dir, 'no-such-folder')}" not found; create it`));
        for (const warning of warnings) assert.match(warning, /the command may exist where the gateway will run/);
        assert.match(result.stderr, /is valid \(5 upstream\(s\)\)/);
    });

    const invalid: [string, unknown, RegExp][] = [
        ['bad upstream id', { upstreams: [{ ...upstream, id: 'Bad_Id' }] }, /upstreams\[0\]\.id: must be 1-63 characters of lowercase letters/],
        ['unknown key', { upstreams: [upstream], listen: { port: 1, hots: 'x' } }, /listen: unknown key "hots"; did you mean "host"\?/],
        ['unknown key in an upstream', { upstreams: [{ ...upstream, commmand: 'x' }] }, /upstreams\[0\]: unknown key "commmand"/],
        ['duplicate ids', { upstreams: [upstream, upstream] }, /upstreams\[1\]\.id: duplicate id "local"/],
        ['separator in an id', { namespace: { separator: '-' }, upstreams: [{ ...upstream, id: 'my-server' }] }, /upstreams\[0\]\.id: contains the namespace separator "-"/],
        [
            'unknown transport',
            { upstreams: [{ ...upstream, transport: 'carrier-pigeon' }] },
            /upstreams\[0\]\.transport: .*use "stdio", "streamable-http", "sse", "http" or "files"/
        ],
        ['page size out of range', { pagination: { pageSize: 0 }, upstreams: [upstream] }, /pagination\.pageSize: must be at least 1/],
        ['no upstreams', { upstreams: [] }, /upstreams: add at least one upstream/],
        ['not JSON', '{"upstreams": [', /not valid JSON/]
    ];
    for (const [what, config, message] of invalid) {
        test(`a config with ${what} exits 2 naming the field`, async () => {
            const result = runCli(['--config', await configFile(`${what.replaceAll(' ', '-')}.json`, config), '--check']);
            assert.equal(result.status, 2, result.stderr);
            assert.match(result.stderr, message);
            assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
        });
    }

    test('an unset variable exits 2 naming the variable and the field, and no other value leaks', async () => {
        const file = await configFile('unset.json', {
            upstreams: [{ id: 'docs', transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer ${DOCS_TOKEN_UNSET}' } }],
            listen: { host: '${SECRET_HOST}', port: '${SECRET_PORT}' }
        });
        const result = runCli(['--config', file, '--check'], { SECRET_HOST: '127.0.0.1', SECRET_PORT: 'hunter2-port' });
        assert.equal(result.status, 2);
        assert.match(result.stderr, /upstreams\[0\]\.headers\.Authorization: environment variable DOCS_TOKEN_UNSET is not set/);
        const typed = runCli(['--config', file, '--check'], { DOCS_TOKEN_UNSET: 'tok', SECRET_HOST: '127.0.0.1', SECRET_PORT: 'hunter2-port' });
        assert.equal(typed.status, 2);
        assert.match(typed.stderr, /listen\.port: expected number/);
        assert.doesNotMatch(typed.stderr, /hunter2/);
    });

    test('--host off loopback without a cursorSecret exits 2 naming the field and the fix; with one it is valid', async () => {
        const file = await configFile('exposed.json', { upstreams: [upstream] });
        const refused = runCli(['--config', file, '--host', '0.0.0.0', '--check']);
        assert.equal(refused.status, 2, refused.stderr);
        assert.match(refused.stderr, /cursorSecret: is required when listen\.host \(0\.0\.0\.0\) is not a loopback address.*\$\{CURSOR_SECRET\}/);
        const secret = await configFile('exposed-with-secret.json', { cursorSecret: 'a shared secret of 32 characters', upstreams: [upstream] });
        assert.equal(runCli(['--config', secret, '--host', '0.0.0.0', '--check']).status, 0);
    });

    test('a missing config file and bad flags exit 2', () => {
        assert.equal(runCli(['--config', path.join(dir, 'nope.json'), '--check']).status, 2);
        assert.equal(runCli(['--config', 'gateway.example.json', '--port', 'eighty']).status, 2);
        assert.equal(runCli(['--config', 'gateway.example.json', '--bogus']).status, 2);
    });

    test('a port already in use exits 1 at once with a short message instead of hanging on its started upstreams', async () => {
        const blocker = createServer();
        await new Promise<void>(resolve => blocker.listen(0, '127.0.0.1', resolve));
        const { port } = blocker.address() as { port: number };
        try {
            const file = await configFile('busy.json', { listen: { port }, upstreams: [stdioFixture('local')] });
            const result = runCli(['--config', file]);
            assert.equal(result.status, 1, 'exits instead of hanging on the started upstream');
            assert.match(result.stderr, /EADDRINUSE/);
            assert.doesNotMatch(result.stderr, /\n\s+at /);
        } finally {
            blocker.close();
        }
    });

    test('serves HTTP, prints "listening on http://HOST:PORT/PATH" to stderr, and exits 0 on SIGTERM', async () => {
        const file = await configFile('http.json', { listen: { path: '/gw' }, upstreams: [stdioFixture('local')] });
        const child = spawn(process.execPath, [CLI, '--config', file, '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        child.stdout.on('data', chunk => (stdout += chunk));
        try {
            const url = await new Promise<string>((resolve, reject) => {
                createInterface({ input: child.stderr }).on('line', line => {
                    const match = /^listening on (http:\/\/127\.0\.0\.1:\d+\/gw)$/.exec(line);
                    if (match) resolve(match[1]!);
                });
                child.once('exit', code => reject(new Error(`gateway exited with ${code}`)));
            });
            const client = await connectHttp(url);
            assert.ok((await listAllPages(client)).names.includes('local__with-required'));
            await client.close();
            const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)));
            child.kill('SIGTERM');
            assert.equal(await exited, 0);
            assert.equal(stdout, '', 'nothing on stdout in HTTP mode either');
        } finally {
            await stopChild(child);
        }
    });

    test('--stdio serves MCP on stdin/stdout with logs on stderr only', async () => {
        const file = await configFile('stdio.json', {
            log: { level: 'debug' },
            // The burst of 100 stays one burst however the pipe splits it on a loaded machine.
            notifications: { debounceMs: 250, maxDelayMs: 1000 },
            upstreams: [stdioFixture('local', { pageSize: 2 })]
        });
        const client = await connectStdio(process.execPath, [CLI, '--config', file, '--stdio']);
        let notifications = 0;
        client.setNotificationHandler('notifications/prompts/list_changed', () => {
            notifications++;
        });
        try {
            const { names } = await listAllPages(client);
            assert.ok(names.includes('local__all-content'));
            const result = await client.getPrompt({ name: 'local__with-required', arguments: { topic: 'stdio' } });
            assert.match(JSON.stringify(result), /Write about stdio/);
            await client.getPrompt({ name: 'local__emit-list-changed', arguments: { count: '100', add: 'stdio-new' } });
            await waitFor(() => notifications > 0, 20_000, 'list_changed over stdio');
            // A second notification for the burst would come within maxDelayMs.
            await sleep(2000);
            assert.equal(notifications, 1, 'one notification for the burst of 100');
        } finally {
            await client.close();
        }
    });
});
