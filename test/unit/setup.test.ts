/** The starter config that `init` writes, and the next steps it prints (the command itself: test/init.test.ts). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { nextSteps, shellQuote } from '../../src/setup/next-steps.js';
import { CLAUDE_COMMANDS_UPSTREAM, STARTER_URL, starterConfig } from '../../src/setup/starter.js';

const OPTIONS = { schema: '/opt/gateway/config/gateway.schema.json', node: '/usr/bin/node', exampleServer: '/opt/gateway/examples/prompt-server.mjs' };

describe('starterConfig', () => {
    test('validates with the gateway loader as written, with no variable set, and listens where the snippets point', () => {
        const config = parseConfig(starterConfig(OPTIONS), 'starter', {});
        assert.equal(`http://${config.listen.host}:${config.listen.port}${config.listen.path}`, STARTER_URL);
        assert.equal(config.cursorSecret, '');
        assert.deepEqual(config.upstreams, [
            { ...config.upstreams[0], id: 'team', transport: 'files', path: 'prompts', format: 'markdown' },
            { ...config.upstreams[1], id: 'examples', transport: 'stdio', command: '/usr/bin/node', args: ['/opt/gateway/examples/prompt-server.mjs'] }
        ]);
    });

    test('$schema is a file URL of the schema, and cursorSecret comes from GATEWAY_CURSOR_SECRET', () => {
        const text = starterConfig(OPTIONS);
        assert.match(text, /"\$schema": "file:\/\/\/opt\/gateway\/config\/gateway\.schema\.json"/);
        assert.equal(parseConfig(text, 'starter', { GATEWAY_CURSOR_SECRET: 'a secret of 16+ characters' }).cursorSecret, 'a secret of 16+ characters');
    });

    test('the commented-out example upstreams are valid once uncommented', () => {
        const uncommented = starterConfig(OPTIONS).replace(/^(\s*)\/\/ \{/gm, '$1{');
        const config = parseConfig(uncommented, 'starter', { DOCS_TOKEN: 'token' });
        assert.deepEqual(
            config.upstreams.map(upstream => upstream.id),
            ['team', 'claude', 'examples', 'everything', 'docs']
        );
        assert.deepEqual(config.upstreams[1], { ...config.upstreams[1], transport: 'files', path: '.claude/commands', format: 'claude-commands' });
    });

    test('with client files (init --from), it takes their servers and the prompt folder, and only shows the example server, commented out', () => {
        const config = parseConfig(starterConfig({ ...OPTIONS, from: ['/home/me/.cursor/mcp.json'] }), 'starter', {});
        assert.deepEqual(
            config.upstreams.map(upstream => [upstream.id, upstream.transport]),
            [['team', 'files']]
        );
        assert.deepEqual(
            config.upstreamsFrom.map(source => [source.file, source.format]),
            [['/home/me/.cursor/mcp.json', 'auto']]
        );
        const uncommented = starterConfig({ ...OPTIONS, from: ['/a.json'] }).replace(/^(\s*)\/\/ \{/gm, '$1{');
        assert.deepEqual(
            parseConfig(uncommented, 'starter', { DOCS_TOKEN: 't' }).upstreams.map(upstream => upstream.id),
            ['team', 'claude', 'examples', 'everything', 'docs']
        );
    });

    test('paths with quotes, backslashes and spaces stay intact', () => {
        const odd = { schema: 'C:\\Program Files\\gw\\gateway.schema.json', node: 'C:\\Program Files\\node.exe', exampleServer: '/opt/"gw"/ex ample.mjs' };
        const upstream = parseConfig(starterConfig(odd), 'starter', {}).upstreams.find(candidate => candidate.id === 'examples');
        assert.ok(upstream?.transport === 'stdio');
        assert.equal(upstream.command, odd.node);
        assert.deepEqual(upstream.args, [odd.exampleServer]);
    });

    test('paths with "${" are written escaped ("$${"), so that the gateway reads them back as they are', () => {
        const odd = { schema: '/opt/${GW}/gateway.schema.json', node: '/opt/${NODE}/bin/node', exampleServer: '/srv/$${x}/${HOME}/ex.mjs' };
        const config = parseConfig(starterConfig(odd), 'starter', {});
        const upstream = config.upstreams.find(candidate => candidate.id === 'examples');
        assert.ok(upstream?.transport === 'stdio');
        assert.equal(upstream.command, odd.node);
        assert.deepEqual(upstream.args, [odd.exampleServer]);
        const client = '/home/${USER}/.cursor/mcp.json';
        const withClient = parseConfig(starterConfig({ ...odd, from: [client] }), 'starter', {});
        assert.deepEqual(
            withClient.upstreamsFrom.map(source => source.file),
            [client]
        );
        const uncommented = starterConfig({ ...odd, from: [client] }).replace(/^(\s*)\/\/ \{/gm, '$1{');
        const example = parseConfig(uncommented, 'starter', { DOCS_TOKEN: 't' }).upstreams.find(candidate => candidate.id === 'examples');
        assert.ok(example?.transport === 'stdio');
        assert.deepEqual([example.command, example.args], [odd.node, [odd.exampleServer]]);
    });
});

describe('nextSteps', () => {
    const steps = {
        serving: 'one example MCP server',
        cwd: '/home/me/project',
        shellCommand: 'mcp-prompt-gateway',
        node: '/usr/bin/node',
        cli: '/opt/gateway/dist/cli.js',
        promptFolder: { kind: 'created', folder: '/home/me/project/prompts', example: '/home/me/project/prompts/explain.md' },
        formatExamples: '/opt/gateway/examples/formats'
    } as const;

    test('in the folder of ./gateway.json, the start command needs no --config', () => {
        const text = nextSteps({ ...steps, file: '/home/me/project/gateway.json' });
        assert.match(text, /^ {2}mcp-prompt-gateway {4}\(in \/home\/me\/project, where it finds gateway\.json\)$/m);
        assert.match(text, /"args": \["\/opt\/gateway\/dist\/cli\.js", "--stdio", "-c", "\/home\/me\/project\/gateway\.json"\]/);
    });

    test('elsewhere, it names the file; every client snippet is there', () => {
        const text = nextSteps({ ...steps, file: '/home/me/my configs/gw.json' });
        assert.match(text, /^ {2}mcp-prompt-gateway --config '\/home\/me\/my configs\/gw\.json'$/m);
        assert.match(text, /claude mcp add --transport http prompts http:\/\/127\.0\.0\.1:8080\/mcp$/m);
        assert.match(text, /claude mcp add prompts -- \/usr\/bin\/node \/opt\/gateway\/dist\/cli\.js --stdio -c '\/home\/me\/my configs\/gw\.json'$/m);
        assert.match(text, /^ {4}\{ "mcpServers": \{ "prompts": \{ "url": "http:\/\/127\.0\.0\.1:8080\/mcp" \} \} \}$/m);
        assert.match(text, /^ {4}\{ "servers": \{ "prompts": \{ "type": "http", "url": "http:\/\/127\.0\.0\.1:8080\/mcp" \} \} \}$/m);
    });

    test('a new prompt folder: names the example written, and how Claude Code runs it, one-word argument first', () => {
        const text = nextSteps({ ...steps, file: '/home/me/project/gateway.json' });
        assert.match(text, /^Wrote \/home\/me\/project\/prompts\/explain\.md: an example prompt, served as team__explain; /m);
        assert.match(text, /^ {4}then type: \/mcp__prompts__team__explain newcomer what a race condition is$/m);
    });

    test('a prompt folder that was there: says it was kept, and names no example', () => {
        const text = nextSteps({ ...steps, file: '/home/me/project/gateway.json', promptFolder: { kind: 'kept', folder: '/home/me/project/prompts' } });
        assert.match(text, /^Kept \/home\/me\/project\/prompts as it was: its \.md files are served as team__<name>/m);
        assert.doesNotMatch(text, /explain/);
    });

    test("a repository's Claude Code commands: an upstream that validates, and where the other formats are", () => {
        const text = nextSteps({ ...steps, file: '/home/me/project/gateway.json' });
        assert.ok(text.includes(`add to "upstreams"\n    ${CLAUDE_COMMANDS_UPSTREAM}\n`), text);
        const config = parseConfig(`{ "upstreams": [${CLAUDE_COMMANDS_UPSTREAM}] }`, 'snippet', {});
        assert.deepEqual(config.upstreams[0], { ...config.upstreams[0], id: 'claude', transport: 'files', path: '.claude/commands', format: 'claude-commands' });
        assert.match(text, /one example of each in\n {2}\/opt\/gateway\/examples\/formats, and docs\/prompt-files\.md/);
        assert.doesNotMatch(text, /is there/);
        const found = nextSteps({ ...steps, file: '/home/me/project/gateway.json', claudeCommands: '/home/me/project/.claude/commands' });
        assert.ok(found.endsWith('\n/home/me/project/.claude/commands is there: to serve it, uncomment the "claude" upstream in /home/me/project/gateway.json.\n'), found);
    });
});

describe('shellQuote', () => {
    test('plain words stay bare; others are quoted for the platform', () => {
        assert.equal(shellQuote('/usr/bin/node', 'linux'), '/usr/bin/node');
        assert.equal(shellQuote("/tmp/it's here", 'linux'), "'/tmp/it'\\''s here'");
        assert.equal(shellQuote('C:\\node\\node.exe', 'linux'), "'C:\\node\\node.exe'");
        assert.equal(shellQuote('C:\\node\\node.exe', 'win32'), 'C:\\node\\node.exe');
        assert.equal(shellQuote('C:\\Program Files\\node.exe', 'win32'), '"C:\\Program Files\\node.exe"');
    });
});
