/**
 * The client config importer, format by format, on files as the clients write them (test/fixtures/client-configs/):
 * what each server becomes, how each client's placeholders expand, which fields are warned about or refused, and
 * the errors (file, field, line:column, fix).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { importClientConfig, type ImportOptions } from '../../src/config/client-config/import.js';
import { upstreamIdFor } from '../../src/config/client-config/ids.js';
import { inputVariableName } from '../../src/config/client-config/vscode-inputs.js';
import { ROOT } from '../helpers.js';
import { configError, lineFor } from './config-assert.js';

const FIXTURES = path.join(ROOT, 'test/fixtures/client-configs');
const HOME = '/home/tester';

const fixture = (relative: string) => path.join(FIXTURES, relative);

function importFile(file: string, options: Partial<ImportOptions> = {}) {
    return importClientConfig(readFileSync(file, 'utf8'), { file, format: 'auto', env: {}, home: HOME, inputs: {}, exclude: [], ...options });
}

function importText(text: string, options: Partial<ImportOptions> = {}) {
    return importClientConfig(text, { file: '/projects/demo/.vscode/mcp.json', format: 'auto', env: {}, home: HOME, inputs: {}, exclude: [], ...options });
}

const byId = (result: ReturnType<typeof importFile>) => Object.fromEntries(result.servers.map(server => [server.id, server.upstream]));

describe('Claude Desktop (claude_desktop_config.json)', () => {
    const file = fixture('claude_desktop_config.json');

    test("every server becomes a stdio upstream started from the file's folder; other settings of the app are not servers", () => {
        const result = importFile(file, { format: 'claude-desktop' });
        assert.equal(result.format, 'claude-desktop');
        assert.deepEqual(result.names, ['filesystem', 'github', 'Brave Search']);
        assert.deepEqual(byId(result), {
            filesystem: {
                id: 'filesystem',
                transport: 'stdio',
                command: 'npx',
                args: ['-y', '@modelcontextprotocol/server-filesystem', '/Users/me/Desktop', '/Users/me/Downloads'],
                env: {},
                cwd: FIXTURES
            },
            github: {
                id: 'github',
                transport: 'stdio',
                command: 'docker',
                args: ['run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'ghcr.io/github/github-mcp-server'],
                // Claude Desktop expands nothing, and neither does its format.
                env: { GITHUB_PERSONAL_ACCESS_TOKEN: '${GITHUB_TOKEN}' },
                cwd: FIXTURES
            },
            'brave-search': {
                id: 'brave-search',
                transport: 'stdio',
                command: 'npx',
                args: ['-y', '@modelcontextprotocol/server-brave-search'],
                env: { BRAVE_API_KEY: 'BSA-desktop-key-in-the-file' },
                cwd: FIXTURES
            }
        });
        assert.deepEqual(result.notes, []);
    });

    test('auto reads mcpServers with the placeholders of Claude Code and Cursor', () => {
        const result = importFile(file, { env: { GITHUB_TOKEN: 'ghp_from_env' } });
        assert.match(result.format, /^auto: mcpServers/);
        assert.deepEqual(byId(result).github?.env, { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_from_env' });
    });

    test('include and exclude pick servers by their names in the file', () => {
        assert.deepEqual(
            importFile(file, { format: 'claude-desktop', include: ['github', 'Brave Search'], exclude: ['github'] }).servers.map(server => server.id),
            ['brave-search']
        );
    });
});

describe('Cursor (.cursor/mcp.json)', () => {
    const file = fixture('cursor-project/.cursor/mcp.json');
    const project = fixture('cursor-project');
    const env = { DOCS_TOKEN: 'docs-token-0123', LINEAR_API_KEY: 'lin_api_0123456789' };

    test('${env:NAME}, ${userHome} and ${workspaceFolder} (the folder holding .cursor/); url without type tries both HTTP transports', () => {
        const result = importFile(file, { format: 'cursor', env });
        const servers = byId(result);
        assert.deepEqual(servers.docs, {
            id: 'docs',
            transport: 'stdio',
            command: 'node',
            args: [`${project}/tools/docs-server.js`, '--root', project],
            env: { DOCS_TOKEN: 'docs-token-0123', HOME_DIR: HOME },
            cwd: project
        });
        assert.equal(result.servers.find(server => server.id === 'docs')?.envFile, path.join(project, 'servers.env'));
        assert.deepEqual(servers.linear, { id: 'linear', transport: 'http', url: 'https://mcp.linear.app/mcp', headers: { Authorization: 'Bearer lin_api_0123456789' } });
        assert.deepEqual(servers.sentry, { id: 'sentry', transport: 'sse', url: 'https://mcp.sentry.dev/sse', headers: {} });
        assert.deepEqual(result.notes, []);
    });

    test('an unset ${env:NAME} is an error naming the variable, where it stands and the fix (Cursor would send "")', () => {
        const error = configError(() => importFile(file, { format: 'cursor', env: { DOCS_TOKEN: 'x' } }));
        assert.equal(error.source, file);
        assert.match(
            lineFor(error, 'mcpServers.linear.headers.Authorization'),
            /environment variable LINEAR_API_KEY is not set; set it before starting the gateway .*\(line 12, column 37\)$/
        );
        assert.equal(error.issues.length, 1);
    });

    test("Claude Code's ${VAR} means nothing to Cursor: it stays as written", () => {
        const text = JSON.stringify({ mcpServers: { a: { command: 'run', args: ['${PLAIN}'] } } });
        assert.deepEqual(importText(text, { format: 'cursor', env: { PLAIN: 'x' } }).servers[0]?.upstream.args, ['${PLAIN}']);
    });
});

describe('Claude Code (.mcp.json)', () => {
    const file = fixture('claude-code-project/.mcp.json');
    const env = { AIRTABLE_API_KEY: 'pat-airtable-0123', NOTION_TOKEN: 'ntn_0123456789' };

    test('type stdio, http (Streamable HTTP) and sse; ${VAR} and ${VAR:-default} in command, args, env, url and headers', () => {
        const servers = byId(importFile(file, { format: 'claude-code', env }));
        assert.deepEqual(servers.airtable, {
            id: 'airtable',
            transport: 'stdio',
            command: 'npx',
            args: ['-y', 'airtable-mcp-server'],
            env: { AIRTABLE_API_KEY: 'pat-airtable-0123' },
            cwd: fixture('claude-code-project')
        });
        assert.deepEqual(servers.notion, { id: 'notion', transport: 'streamable-http', url: 'https://mcp.notion.com/mcp', headers: { Authorization: 'Bearer ntn_0123456789' } });
        assert.deepEqual(servers.asana, { id: 'asana', transport: 'sse', url: 'https://mcp.asana.com/sse', headers: {} });
        assert.deepEqual(servers['local-prompts'], {
            id: 'local-prompts',
            transport: 'stdio',
            command: 'prompts-server',
            args: ['--profile', 'default'],
            env: {},
            cwd: fixture('claude-code-project')
        });
        const overridden = byId(importFile(file, { format: 'claude-code', env: { ...env, NOTION_MCP_URL: 'http://127.0.0.1:9/mcp', PROMPTS_PROFILE: 'team' } }));
        assert.equal(overridden.notion?.url, 'http://127.0.0.1:9/mcp');
        assert.deepEqual(overridden['local-prompts']?.args, ['--profile', 'team']);
    });

    test('every unset variable without a default is reported, each at its field', () => {
        const error = configError(() => importFile(file, { format: 'claude-code' }));
        assert.match(
            lineFor(error, 'mcpServers.airtable.env.AIRTABLE_API_KEY'),
            /environment variable AIRTABLE_API_KEY is not set; set it, or give a default with \$\{AIRTABLE_API_KEY:-default\} \(line 7, column 36\)/
        );
        assert.match(lineFor(error, 'mcpServers.notion.headers.Authorization'), /NOTION_TOKEN is not set/);
        assert.equal(error.issues.length, 2);
    });

    test('headersHelper and oauth cannot be honoured: an error naming the field and the fix', () => {
        const text = JSON.stringify({
            mcpServers: {
                internal: { type: 'http', url: 'https://mcp.internal.example/mcp', headersHelper: '/opt/bin/get-mcp-headers.sh' },
                signin: { type: 'http', url: 'https://mcp.example.com/mcp', oauth: { clientId: 'abc', callbackPort: 8080 } }
            }
        });
        const error = configError(() => importText(text, { format: 'claude-code' }));
        assert.match(lineFor(error, 'mcpServers.internal.headersHelper'), /runs a command for Claude Code's headers at each connection; give a token in "headers" instead/);
        assert.match(
            lineFor(error, 'mcpServers.signin.oauth'),
            /OAuth sign-in, which needs a user at a browser; give a token in "headers" instead .* or leave the server out with exclude/
        );
    });
});

describe('VS Code (.vscode/mcp.json)', () => {
    const file = fixture('vscode-project/.vscode/mcp.json');
    const project = fixture('vscode-project');
    const env = { GITHUB_TOKEN: 'ghp_vscode_0123' };

    test('JSONC; stdio with envFile and cwd, http with the SSE fallback; inputs from the gateway config, else their default', () => {
        const result = importFile(file, { format: 'vscode', env, inputs: { 'perplexity-key': 'pplx-0123456789' }, entry: 'upstreamsFrom[0]' });
        const servers = byId(result);
        assert.deepEqual(servers.perplexity, {
            id: 'perplexity',
            transport: 'stdio',
            command: 'npx',
            args: ['-y', 'server-perplexity-ask'],
            env: { PERPLEXITY_API_KEY: 'pplx-0123456789', REGION: 'eu', PORT: '3000' },
            cwd: path.join(project, 'tools')
        });
        assert.equal(result.servers[0]?.envFile, path.join(project, '.vscode/perplexity.env'));
        assert.deepEqual(servers.githubmcp, {
            id: 'githubmcp',
            transport: 'http',
            url: 'https://api.githubcopilot.com/mcp/',
            headers: { Authorization: 'Bearer ghp_vscode_0123' }
        });
        assert.deepEqual(result.secrets.sort(), ['ghp_vscode_0123', 'pplx-0123456789'], "the values from the environment and the config, not the file's defaults");
    });

    test('client-only fields are warnings naming the file, the field and where it stands', () => {
        const result = importFile(file, { env, inputs: { 'perplexity-key': 'k' } });
        assert.equal(result.format, 'vscode');
        assert.deepEqual(
            result.notes.map(note => `${note.level} ${note.message.replace(`${file}: `, '')}`),
            [
                'warning servers.githubMcp.gallery: where VS Code installed the server from: a setting of the client, with no effect in the gateway (line 36, column 18)',
                'warning servers.githubMcp.version: the version VS Code installed: a setting of the client, with no effect in the gateway (line 37, column 18)',
                "warning servers.myServer.dev: VS Code's development mode (restart on file changes, debugger): a setting of the client, with no effect in the gateway (line 43, column 14)"
            ]
        );
    });

    test('an input may come from MCP_INPUT_<ID>', () => {
        assert.equal(inputVariableName('perplexity-key'), 'MCP_INPUT_PERPLEXITY_KEY');
        assert.equal(inputVariableName('githubToken'), 'MCP_INPUT_GITHUB_TOKEN');
        const result = importFile(file, { env: { ...env, MCP_INPUT_PERPLEXITY_KEY: 'pplx-from-env' } });
        assert.deepEqual(byId(result).perplexity?.env, { PERPLEXITY_API_KEY: 'pplx-from-env', REGION: 'eu', PORT: '3000' });
        assert.deepEqual(result.secrets.sort(), ['ghp_vscode_0123', 'pplx-from-env']);
    });

    test('an input without a value is an error naming the input, the server and both ways to supply it', () => {
        const listed = configError(() => importFile(file, { env, entry: 'upstreamsFrom[2]' }));
        assert.match(
            lineFor(listed, 'servers.perplexity.env.PERPLEXITY_API_KEY'),
            /input "perplexity-key" of server "perplexity" has no value: VS Code asks the user for it, the gateway cannot; give it in the gateway config as upstreamsFrom\[2\]\.inputs\["perplexity-key"\], or set the environment variable MCP_INPUT_PERPLEXITY_KEY \(line 24, column 31\)/
        );
        const fromCommandLine = configError(() => importFile(file, { env }));
        assert.match(
            fromCommandLine.message,
            /set the environment variable MCP_INPUT_PERPLEXITY_KEY, or list this file in a gateway config's upstreamsFrom with "inputs": \{"perplexity-key": "\.\.\."\}/
        );
    });

    test('an input supplied but used by no server is a warning (a misspelt ID)', () => {
        const result = importFile(file, { env, inputs: { 'perplexity-key': 'k', 'perplexity-kye': 'k' }, entry: 'upstreamsFrom[0]' });
        assert.ok(result.notes.some(note => note.message === `upstreamsFrom[0].inputs["perplexity-kye"]: no server in ${file} uses \${input:perplexity-kye}; check the spelling`));
    });

    test("variables about VS Code's own state are errors; unknown ones stay as written", () => {
        const text = JSON.stringify({
            servers: { a: { command: 'run', args: ['${config:editor.fontSize}', '${file}', '${unknownThing}', '${workspaceFolderBasename}'] } }
        });
        const error = configError(() => importText(text));
        assert.match(lineFor(error, 'servers.a.args[0]'), /\$\{config:editor\.fontSize\} is a VS Code variable that has no value outside VS Code; write the value itself there/);
        assert.match(lineFor(error, 'servers.a.args[1]'), /\$\{file\} is a VS Code variable/);
        assert.equal(error.issues.length, 2);
        const fine = importText(JSON.stringify({ servers: { a: { command: 'run', args: ['${unknownThing}', '${workspaceFolderBasename}', '${pathSeparator}'] } } }));
        assert.deepEqual(fine.servers[0]?.upstream.args, ['${unknownThing}', 'demo', path.sep]);
    });

    test('sandboxEnabled: true is refused (the gateway cannot sandbox); false is fine', () => {
        const sandboxed = JSON.stringify({
            servers: { s: { type: 'stdio', command: 'npx', sandboxEnabled: true, sandbox: { network: { allowedDomains: ['api.example.com'] } } } }
        });
        const error = configError(() => importText(sandboxed));
        assert.match(
            lineFor(error, 'servers.s.sandboxEnabled'),
            /asks VS Code to run the server in a sandbox, which the gateway cannot do; remove sandboxEnabled to run the server unsandboxed, or leave it out with exclude/
        );
        const unsandboxed = importText(JSON.stringify({ servers: { s: { type: 'stdio', command: 'npx', sandboxEnabled: false } } }));
        assert.equal(unsandboxed.servers.length, 1);
        assert.deepEqual(unsandboxed.notes, []);
    });

    test('Unix socket and named pipe URLs are refused', () => {
        const error = configError(() => importText(JSON.stringify({ servers: { s: { type: 'http', url: 'unix:///tmp/server.sock#/mcp' } } })));
        assert.match(lineFor(error, 'servers.s.url'), /a Unix socket or named pipe, which the gateway cannot reach/);
    });
});

describe('Cline and others: fields of other clients', () => {
    test('tool approvals and timeouts are warnings; a disabled server is left out with a notice', () => {
        const file = fixture('cline_mcp_settings.json');
        const result = importFile(file);
        assert.deepEqual(
            result.servers.map(server => server.id),
            ['weather']
        );
        const lines = result.notes.map(note => `${note.level} ${note.message.replace(`${file}: `, '').replace(/ \(line .*\)$/, '')}`);
        assert.deepEqual(lines, [
            'warning mcpServers.weather.autoApprove: tool calls the client approves without asking: a setting of the client, with no effect in the gateway',
            'warning mcpServers.weather.alwaysAllow: tool calls the client approves without asking: a setting of the client, with no effect in the gateway',
            "warning mcpServers.weather.timeout: the client's own request timeout; the gateway's timeoutMs (10 s by default) applies: a setting of the client, with no effect in the gateway",
            'notice mcpServers.old-server: disabled in the client, so left out'
        ]);
    });

    test('an unknown field is a warning naming it; fields of the other transport are warnings too', () => {
        const text = JSON.stringify({ mcpServers: { a: { command: 'run', url: 'http://127.0.0.1:1/mcp', transportType: 'stdio' } } });
        const messages = importText(text).notes.map(note => note.message.replace(/ \(line .*\)$/, ''));
        assert.deepEqual(messages, [
            '/projects/demo/.vscode/mcp.json: mcpServers.a.transportType: not a field the gateway knows; it is not applied',
            '/projects/demo/.vscode/mcp.json: mcpServers.a.url: is for a remote server; this one is started with its command, so it has no effect'
        ]);
    });
});

describe('format detection and structure', () => {
    test('auto says which keys it looked for when the file has neither', () => {
        const error = configError(() => importText('{"servrs": {}}'));
        assert.match(lineFor(error, '(top level)'), /has neither "mcpServers" \(Claude Desktop, Cursor, Claude Code\) nor "servers" \(VS Code\) at the top level/);
        assert.match(
            lineFor(
                configError(() => importText('{"servers": {}, "mcpServers": {}}')),
                '(top level)'
            ),
            /has both .* set format to say which to read/
        );
    });

    test('a named format that does not match the file says so', () => {
        const error = configError(() => importFile(fixture('claude_desktop_config.json'), { format: 'vscode' }));
        assert.match(error.message, /format "vscode" reads the servers in "servers", which this file does not have\. It has "mcpServers": set format to "auto"\./);
    });

    test('a syntax error names file:line:column', () => {
        const error = configError(() => importText('{\n  "servers": {\n    "a": { "command": "x" \n  }\n', { file: '/p/mcp.json' }));
        assert.equal(error.source, '/p/mcp.json:5:1');
        assert.match(error.message, /not valid JSON \(expected "}"\); fix the syntax there \(comments and trailing commas are allowed\)/);
    });

    test('type, command and url are checked; values of the wrong type are named without being echoed', () => {
        const text = JSON.stringify({
            mcpServers: {
                pigeon: { type: 'carrier-pigeon', url: 'http://127.0.0.1:1/mcp' },
                nothing: { env: {} },
                numbers: { command: 'run', args: [1, 'two'], env: { TOKEN: { secret: 'hunter2' } } },
                notObject: 'npx server'
            }
        });
        const error = configError(() => importText(text));
        assert.match(lineFor(error, 'mcpServers.pigeon.type'), /must be "stdio", "http" or "sse", not "carrier-pigeon"/);
        assert.match(lineFor(error, 'mcpServers.nothing'), /has neither "command" .* nor "url"/);
        assert.match(lineFor(error, 'mcpServers.numbers.args[0]'), /expected a string, got number/);
        assert.match(lineFor(error, 'mcpServers.numbers.env.TOKEN'), /expected a string, got an object/);
        assert.match(lineFor(error, 'mcpServers.notObject'), /must be an object \(a server\)/);
        assert.doesNotMatch(error.message, /hunter2/);
    });
});

describe('ids from server names', () => {
    test('lowercased, accents dropped, other characters made "-", cut to 63', () => {
        assert.equal(upstreamIdFor('GitHub'), 'github');
        assert.equal(upstreamIdFor('Brave Search'), 'brave-search');
        assert.equal(upstreamIdFor('my_server'), 'my-server');
        assert.equal(upstreamIdFor('io.github.user/repo'), 'io-github-user-repo');
        assert.equal(upstreamIdFor('Café Menü'), 'cafe-menu');
        assert.equal(upstreamIdFor('__x__'), 'x');
        assert.equal(upstreamIdFor(`${'a'.repeat(62)}-b`), 'a'.repeat(62));
        assert.equal(upstreamIdFor('日本語'), undefined);
        assert.equal(upstreamIdFor('!!!'), undefined);
    });

    test('a name that makes no id, and two names that make one, are errors naming the file and the names', () => {
        const text = JSON.stringify({ mcpServers: { GitHub: { command: 'a' }, github: { command: 'b' }, サーバー: { command: 'c' } } });
        const error = configError(() => importText(text, { entry: 'upstreamsFrom[1]' }));
        assert.equal(error.source, '/projects/demo/.vscode/mcp.json');
        assert.match(
            lineFor(error, 'mcpServers.github'),
            /servers "GitHub" and "github" both make the upstream id "github"; rename one in the file, or leave one out with upstreamsFrom\[1\]\.exclude/
        );
        assert.match(lineFor(error, 'mcpServers["サーバー"]'), /the name cannot be made an upstream id \(lowercase letters, digits and "-"\)/);
    });
});

describe('secret expansions', () => {
    test('values from the environment are secrets wherever they go, except locations and settings; defaults and editor variables are not', () => {
        const env = { API_TOKEN: 'token-from-env-0123', HOME: '/home/tester', TOOLS_DIR: '/opt/secret-tools' };
        const editor = importText(
            JSON.stringify({
                servers: { s: { type: 'stdio', command: '${env:TOOLS_DIR}/server', args: ['--token=${env:API_TOKEN}', '${env:HOME}', '${userHome}', '${workspaceFolder}'] } }
            }),
            { env }
        );
        assert.deepEqual(editor.secrets.sort(), ['/opt/secret-tools', 'token-from-env-0123']);
        const claude = importText(JSON.stringify({ mcpServers: { s: { command: 'node', args: ['${API_TOKEN}', '${MISSING:-written-in-the-file}', '${HOME}'] } } }), {
            file: '/projects/demo/.mcp.json',
            format: 'claude-code',
            env
        });
        assert.deepEqual(claude.secrets, ['token-from-env-0123']);
        const desktop = importText(JSON.stringify({ mcpServers: { s: { command: 'node', args: ['${API_TOKEN}'] } } }), {
            file: '/projects/demo/claude_desktop_config.json',
            format: 'claude-desktop',
            env
        });
        assert.deepEqual(desktop.secrets, [], 'Claude Desktop expands nothing');
    });
});
