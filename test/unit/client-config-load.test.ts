/**
 * upstreamsFrom and --from through loadGatewayConfig, on real files: paths, env files, the upstream schema's
 * defaults, ids checked against every other id, include/exclude, inputs kept out of logs, and the files a reload
 * must watch.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { resolveUserPath } from '../../src/config/client-config/load.js';
import { loadGatewayConfig } from '../../src/config/load.js';
import { configSecrets } from '../../src/config/secrets.js';
import { configFailure as failure, lineFor } from './config-assert.js';
import { folder as tempFolder, write } from './files-on-disk.js';

const folder = (t: TestContext) => tempFolder(t, 'gateway-client-config-');

const desktop = {
    mcpServers: { github: { command: 'docker', args: ['run', '-i', 'ghcr.io/github/github-mcp-server'] }, 'Brave Search': { command: 'npx', args: ['-y', 'brave'] } }
};

describe('upstreamsFrom', () => {
    test('relative to the gateway config; imported upstreams follow "upstreams" and get every default of an upstream', async t => {
        const dir = await folder(t);
        await write(path.join(dir, 'clients/claude_desktop_config.json'), desktop);
        const gateway = await write(path.join(dir, 'gateway.json'), {
            upstreams: [{ id: 'local', transport: 'stdio', command: 'node' }],
            upstreamsFrom: [{ file: 'clients/claude_desktop_config.json' }]
        });
        const touched = new Set<string>();
        const { config, notes, origins } = await loadGatewayConfig({ file: gateway }, {}, touched);
        assert.deepEqual(
            config.upstreams.map(upstream => upstream.id),
            ['local', 'github', 'brave-search']
        );
        const github = config.upstreams[1]!;
        assert.equal(github.transport, 'stdio');
        assert.deepEqual(
            { timeoutMs: github.timeoutMs, namespace: github.namespace, maxConcurrency: github.maxConcurrency, pingIntervalMs: github.pingIntervalMs, required: github.required },
            { timeoutMs: 10_000, namespace: true, maxConcurrency: 16, pingIntervalMs: 30_000, required: false }
        );
        assert.equal(config.upstreamsFrom[0]?.file, path.join(dir, 'clients/claude_desktop_config.json'));
        assert.deepEqual([...touched].sort(), [gateway, path.join(dir, 'clients/claude_desktop_config.json')].sort());
        assert.deepEqual(notes, []);
        assert.equal(origins.get('brave-search'), `${path.join(dir, 'clients/claude_desktop_config.json')}: mcpServers["Brave Search"]`);
    });

    test('defaults: settings every upstream of the file gets, over the usual defaults; checked like those of an upstream', async t => {
        const dir = await folder(t);
        await write(path.join(dir, 'claude_desktop_config.json'), desktop);
        const gateway = await write(path.join(dir, 'gateway.json'), {
            upstreamsFrom: [{ file: 'claude_desktop_config.json', defaults: { timeoutMs: 60_000, required: true, prompts: { deny: ['admin-*'] } } }]
        });
        const { config } = await loadGatewayConfig({ file: gateway }, {});
        for (const upstream of config.upstreams) {
            assert.notEqual(upstream.transport, 'files');
            if (upstream.transport === 'files') continue;
            assert.deepEqual(
                { timeoutMs: upstream.timeoutMs, required: upstream.required, prompts: upstream.prompts, pingIntervalMs: upstream.pingIntervalMs },
                { timeoutMs: 60_000, required: true, prompts: { deny: ['admin-*'] }, pingIntervalMs: 30_000 }
            );
        }
        const broken = await write(path.join(dir, 'broken.json'), {
            reconnect: { initialMs: 1000 },
            upstreamsFrom: [{ file: 'claude_desktop_config.json', defaults: { id: 'x', timeoutMs: 5000, maxTotalTimeoutMs: 100, reconnect: { maxMs: 10 } } }]
        });
        const error = await failure(loadGatewayConfig({ file: broken }, {}));
        assert.match(lineFor(error, 'upstreamsFrom[0].defaults'), /unknown key "id"/);
        const backoff = await write(path.join(dir, 'backoff.json'), {
            reconnect: { initialMs: 1000 },
            upstreamsFrom: [{ file: 'claude_desktop_config.json', defaults: { reconnect: { maxMs: 10 } } }]
        });
        assert.match(
            lineFor(await failure(loadGatewayConfig({ file: backoff }, {})), 'upstreamsFrom[0].defaults.reconnect.maxMs'),
            /makes a backoff from 1000 ms to 10 ms; maxMs must be at least initialMs/
        );
        const total = await write(path.join(dir, 'total.json'), { upstreamsFrom: [{ file: 'claude_desktop_config.json', defaults: { timeoutMs: 5000, maxTotalTimeoutMs: 100 } }] });
        assert.match(lineFor(await failure(loadGatewayConfig({ file: total }, {})), 'upstreamsFrom[0].defaults.maxTotalTimeoutMs'), /must be at least timeoutMs \(5000\)/);
    });

    test('"~" is the home folder', () => {
        assert.equal(resolveUserPath('/etc/gateway', '~/.cursor/mcp.json', '/home/me'), '/home/me/.cursor/mcp.json');
        assert.equal(resolveUserPath('/etc/gateway', '~', '/home/me'), '/home/me');
        assert.equal(resolveUserPath('/etc/gateway', 'mcp.json', '/home/me'), '/etc/gateway/mcp.json');
        assert.equal(resolveUserPath('/etc/gateway', '~other/mcp.json', '/home/me'), '/etc/gateway/~other/mcp.json');
    });

    test('an id taken by "upstreams" is an error naming both origins', async t => {
        const dir = await folder(t);
        const client = await write(path.join(dir, 'claude_desktop_config.json'), desktop);
        const gateway = await write(path.join(dir, 'gateway.json'), {
            upstreams: [{ id: 'github', transport: 'stdio', command: 'node' }],
            upstreamsFrom: [{ file: 'claude_desktop_config.json' }]
        });
        const error = await failure(loadGatewayConfig({ file: gateway }, {}));
        assert.equal(error.source, gateway);
        assert.equal(error.issues.length, 1);
        assert.match(
            lineFor(error, 'upstreams[0].id'),
            new RegExp(
                `the upstream id "github" is taken twice: by upstreams\\[0\\] and by server "github" of ${client}; rename one, or leave it out with upstreamsFrom\\[0\\]\\.exclude`
            )
        );
        const excluded = await write(path.join(dir, 'excluded.json'), {
            upstreams: [{ id: 'github', transport: 'stdio', command: 'node' }],
            upstreamsFrom: [{ file: 'claude_desktop_config.json', exclude: ['github'] }]
        });
        assert.deepEqual(
            (await loadGatewayConfig({ file: excluded }, {})).config.upstreams.map(upstream => upstream.id),
            ['github', 'brave-search']
        );
    });

    test('two files making one id, and an id with the namespace separator, are errors', async t => {
        const dir = await folder(t);
        const first = await write(path.join(dir, 'a/mcp.json'), { mcpServers: { docs: { command: 'a' } } });
        const second = await write(path.join(dir, 'b/mcp.json'), { mcpServers: { Docs: { command: 'b' } } });
        const gateway = await write(path.join(dir, 'gateway.json'), { upstreamsFrom: [{ file: 'a/mcp.json' }, { file: 'b/mcp.json' }] });
        const clash = await failure(loadGatewayConfig({ file: gateway }, {}));
        assert.equal(clash.source, first);
        assert.match(
            lineFor(clash, 'mcpServers.docs'),
            new RegExp(`taken twice: by server "docs" of ${first} and by server "Docs" of ${second}; rename one, or leave it out with upstreamsFrom\\[1\\]\\.exclude`)
        );
        const dashed = await write(path.join(dir, 'dashed.json'), { namespace: { separator: '-' }, upstreamsFrom: [{ file: 'c/mcp.json' }] });
        const third = await write(path.join(dir, 'c/mcp.json'), { mcpServers: { 'my server': { command: 'c' } } });
        const separator = await failure(loadGatewayConfig({ file: dashed }, {}));
        assert.equal(separator.source, third);
        assert.match(lineFor(separator, 'mcpServers["my server"]'), /its upstream id "my-server" contains the namespace separator "-"; change namespace\.separator/);
    });

    test('include naming no server is an error; exclude naming none a warning', async t => {
        const dir = await folder(t);
        const client = await write(path.join(dir, 'claude_desktop_config.json'), desktop);
        const wrongInclude = await write(path.join(dir, 'include.json'), { upstreamsFrom: [{ file: 'claude_desktop_config.json', include: ['github', 'githb'] }] });
        const error = await failure(loadGatewayConfig({ file: wrongInclude }, {}));
        assert.match(lineFor(error, 'upstreamsFrom[0].include[1]'), new RegExp(`no server "githb" in ${client} \\(its servers: "github", "Brave Search"\\); fix the name`));
        const wrongExclude = await write(path.join(dir, 'exclude.json'), { upstreamsFrom: [{ file: 'claude_desktop_config.json', exclude: ['brave'] }] });
        const { notes } = await loadGatewayConfig({ file: wrongExclude }, {});
        assert.deepEqual(notes, [{ level: 'warning', message: `upstreamsFrom[0].exclude: no server "brave" in ${client} (its servers: "github", "Brave Search")` }]);
    });

    test('no server left at all is an error', async t => {
        const dir = await folder(t);
        await write(path.join(dir, 'mcp.json'), { mcpServers: { off: { command: 'x', disabled: true } } });
        const gateway = await write(path.join(dir, 'gateway.json'), { upstreamsFrom: [{ file: 'mcp.json' }] });
        assert.match(lineFor(await failure(loadGatewayConfig({ file: gateway }, {})), 'upstreamsFrom'), /no servers to put behind the gateway/);
    });

    test('a missing file is an error at its entry', async t => {
        const dir = await folder(t);
        const gateway = await write(path.join(dir, 'gateway.json'), { upstreamsFrom: [{ file: 'nowhere/mcp.json' }] });
        const touched = new Set<string>();
        const error = await failure(loadGatewayConfig({ file: gateway }, {}, touched));
        assert.match(lineFor(error, 'upstreamsFrom[0].file'), new RegExp(`file not found \\(${path.join(dir, 'nowhere/mcp.json')}\\); fix the path`));
        assert.ok(touched.has(path.join(dir, 'nowhere/mcp.json')), 'a reload watches the file it could not read, to see it appear');
    });

    test("env files are read under env, the entry's own env winning; a missing one is an error at envFile", async t => {
        const dir = await folder(t);
        await write(path.join(dir, 'project/servers.env'), 'REGION=eu\nTOKEN=from-file\n# comment\nQUOTED="a b"\n');
        const client = await write(path.join(dir, 'project/.cursor/mcp.json'), {
            mcpServers: { docs: { command: 'node', env: { TOKEN: 'from-entry' }, envFile: '${workspaceFolder}/servers.env' } }
        });
        const touched = new Set<string>();
        const { config } = await loadGatewayConfig({ from: [client] }, {}, touched);
        const docs = config.upstreams[0]!;
        assert.equal(docs.transport, 'stdio');
        assert.deepEqual(docs.transport === 'stdio' ? docs.env : undefined, { REGION: 'eu', TOKEN: 'from-entry', QUOTED: 'a b' });
        assert.ok(touched.has(path.join(dir, 'project/servers.env')));
        await write(client, { mcpServers: { docs: { command: 'node', envFile: 'missing.env' } } });
        const error = await failure(loadGatewayConfig({ from: [client] }, {}));
        assert.equal(error.source, client);
        assert.match(lineFor(error, 'mcpServers.docs.envFile'), /file not found .*missing\.env\); fix envFile/);
    });

    test('what the upstream schema refuses points into the client file', async t => {
        const dir = await folder(t);
        const client = await write(path.join(dir, '.mcp.json'), { mcpServers: { ftp: { type: 'http', url: 'ftp://files.example.com/mcp' }, blank: { command: '' } } });
        const error = await failure(loadGatewayConfig({ from: [client] }, {}));
        assert.equal(error.source, client);
        assert.match(lineFor(error, 'mcpServers.ftp.url'), /must be an http:\/\/ or https:\/\/ URL/);
        assert.match(lineFor(error, 'mcpServers.blank.command'), /must name the program to start/);
    });

    test('inputs from the gateway config take ${ENV} like every value and are kept out of logs, as are those from MCP_INPUT_*', async t => {
        const dir = await folder(t);
        await write(path.join(dir, '.vscode/mcp.json'), {
            inputs: [
                { type: 'promptString', id: 'api-key', password: true },
                { type: 'promptString', id: 'other-key', password: true }
            ],
            servers: { api: { type: 'http', url: 'https://api.example.com/mcp?key=${input:api-key}&other=${input:other-key}' } }
        });
        const gateway = await write(path.join(dir, 'gateway.json'), { upstreamsFrom: [{ file: '.vscode/mcp.json', inputs: { 'api-key': '${API_KEY}' } }] });
        const { config } = await loadGatewayConfig({ file: gateway }, { API_KEY: 'api-key-from-env-0123', MCP_INPUT_OTHER_KEY: 'other-key-from-env-0123' });
        const api = config.upstreams[0]!;
        assert.equal(api.transport === 'http' ? api.url : undefined, 'https://api.example.com/mcp?key=api-key-from-env-0123&other=other-key-from-env-0123');
        const secrets = configSecrets(config);
        assert.ok(secrets.includes('api-key-from-env-0123') && secrets.includes('other-key-from-env-0123'), 'both inputs are redacted in logs');
    });
});

describe('--from', () => {
    test("alone: the default settings with the files' servers, relative to the working directory", async t => {
        const dir = await folder(t);
        const client = await write(path.join(dir, 'claude_desktop_config.json'), desktop);
        const { config } = await loadGatewayConfig({ from: [path.relative(process.cwd(), client)] }, {});
        assert.deepEqual(config.listen, { host: '127.0.0.1', port: 8080, path: '/mcp' });
        assert.deepEqual(
            config.upstreams.map(upstream => upstream.id),
            ['github', 'brave-search']
        );
        assert.equal(config.upstreamsFrom[0]?.file, client);
    });

    test('with --config: added to its upstreamsFrom; a "${" in the path is not a placeholder', async t => {
        const dir = await folder(t);
        const listed = await write(path.join(dir, 'listed/mcp.json'), { mcpServers: { listed: { command: 'a' } } });
        const given = await write(path.join(dir, '${odd}/mcp.json'), { mcpServers: { given: { command: 'b' } } });
        const gateway = await write(path.join(dir, 'gateway.json'), { upstreamsFrom: [{ file: 'listed/mcp.json' }] });
        const { config } = await loadGatewayConfig({ file: gateway, from: [given] }, {});
        assert.deepEqual(
            config.upstreamsFrom.map(from => from.file),
            [listed, given]
        );
        assert.deepEqual(
            config.upstreams.map(upstream => upstream.id),
            ['listed', 'given']
        );
    });

    test('a file that is not there is an error naming it and the flag', async t => {
        const dir = await folder(t);
        const missing = path.join(dir, 'nope.json');
        const error = await failure(loadGatewayConfig({ from: [missing] }, {}));
        assert.equal(error.source, missing);
        assert.match(error.message, /file not found .*; fix the path given to --from/);
    });
});

test('a folder where a file should be: the same words for the gateway config, a client config file, an env file and a JWKS file', async t => {
    const dir = await folder(t);
    const sub = path.join(dir, 'folder');
    await mkdir(sub);
    const isAFolder = (fix: string) => new RegExp(`is a folder \\(${sub.replaceAll(/[\\^$.*+?()[\]{}|]/g, '\\$&')}\\); ${fix}`);
    assert.match(lineFor(await failure(loadGatewayConfig({ file: sub }, {})), '(top level)'), isAFolder('pass an existing JSON file with --config'));
    const listing = await write(path.join(dir, 'listing.json'), { upstreamsFrom: [{ file: 'folder' }] });
    assert.match(lineFor(await failure(loadGatewayConfig({ file: listing }, {})), 'upstreamsFrom[0].file'), isAFolder('fix the path'));
    const client = await write(path.join(dir, 'mcp.json'), { mcpServers: { docs: { command: 'node', envFile: sub } } });
    assert.match(lineFor(await failure(loadGatewayConfig({ from: [client] }, {})), 'mcpServers.docs.envFile'), isAFolder('fix envFile'));
    const jwt = await write(path.join(dir, 'jwt.json'), {
        auth: { mode: 'jwt', jwksFile: 'folder' },
        clients: [{ id: 'a' }],
        upstreams: [{ id: 'a', transport: 'stdio', command: 'node' }]
    });
    assert.match(lineFor(await failure(loadGatewayConfig({ file: jwt }, {})), 'auth.jwksFile'), isAFolder('point it at a JWKS JSON file'));
});
