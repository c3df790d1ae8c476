/**
 * The commented starter config that `init` writes. Text rather than a serialized object, for its comments; every
 * value that comes from outside (paths) goes through `quoted`.
 */
import { pathToFileURL } from 'node:url';
import { literalText } from '../config/interpolate.js';
import { STARTER_FOLDER } from './example-prompt.js';

/** Where the starter listens; the client snippets point there. */
const STARTER_LISTEN = { host: '127.0.0.1', port: 8080, path: '/mcp' } as const;

export const STARTER_URL = `http://${STARTER_LISTEN.host}:${STARTER_LISTEN.port}${STARTER_LISTEN.path}`;

/** The upstream that serves a repository's Claude Code commands, with the config file at the repository's root. */
export const CLAUDE_COMMANDS_UPSTREAM = '{ "id": "claude", "transport": "files", "path": ".claude/commands", "format": "claude-commands" }';

export interface StarterOptions {
    /** Absolute path of config/gateway.schema.json, for editors. */
    schema: string;
    /** The node that runs the example upstream. */
    node: string;
    /** Absolute path of the example prompt server shipped with the package. */
    exampleServer: string;
    /** Absolute paths of MCP client config files whose servers the gateway serves (`init --from`). */
    from?: readonly string[];
}

export function starterConfig(options: StarterOptions): string {
    const { host, port, path } = STARTER_LISTEN;
    return `// mcp-prompt-gateway config, written by \`mcp-prompt-gateway init\`: JSON with comments.
// Every key is in the schema below (editors complete and check them) and in the README.
{
  "$schema": ${quoted(pathToFileURL(options.schema).href)},

  // Clients connect to ${STARTER_URL}. Keep 127.0.0.1 unless other machines must
  // connect: then also set "auth" (API keys or JWT) and GATEWAY_CURSOR_SECRET.
  "listen": { "host": "${host}", "port": ${port}, "path": "${path}" },

  // Signs pagination cursors and sessions. Empty: a random key per process, enough on 127.0.0.1.
  // Off loopback, or with several replicas, set GATEWAY_CURSOR_SECRET (16+ characters) in the environment.
  "cursorSecret": "\${GATEWAY_CURSOR_SECRET:-}",

${options.from === undefined || options.from.length === 0 ? ownServers(options) : clientServers(options, options.from)}}
`;
}

function ownServers(options: StarterOptions): string {
    return `  // Where the prompts come from, prompt files and MCP servers, each prompt served as "<id>__<prompt name>".
  "upstreams": [
${upstreamEntries(options, 'serving')}
  ],
`;
}

/** The servers of the client files, followed as they change; \`upstreams\` stays for servers of the gateway's own. */
function clientServers(options: StarterOptions, files: readonly string[]): string {
    const sources = files.map(file => `    { "file": ${quoted(file)}, "format": "auto" },`).join('\n');
    return `  // The servers of these MCP client config files, each prompt as "<server name>__<prompt name>". The gateway
  // reads them again when they change. "inputs" supplies VS Code's \${input:...} values; "include" and "exclude"
  // pick servers by name; "defaults" holds settings for all of them (e.g. "timeoutMs" for servers npx downloads).
  "upstreamsFrom": [
${sources}
  ],

  // Prompt files and more servers of the gateway's own, each prompt as "<id>__<prompt name>".
  "upstreams": [
${upstreamEntries(options, 'commented')}
  ],
`;
}

/**
 * The prompt folder is always served (it needs no network). The example server is served when it is the only server,
 * and shown commented out beside a client's servers.
 */
function upstreamEntries(options: StarterOptions, example: 'serving' | 'commented'): string {
    const command = quoted(options.node);
    const args = `[${quoted(options.exampleServer)}]`;
    const exampleEntry =
        example === 'serving'
            ? `    // An example server that comes with the gateway (three prompts; nothing to download).
    // Replace it with your own servers.
    {
      "id": "examples",
      "transport": "stdio",
      "command": ${command},
      "args": ${args}
    },`
            : `    // An example server that comes with the gateway (three prompts; nothing to download):
    // { "id": "examples", "transport": "stdio", "command": ${command}, "args": ${args} },`;
    return `${promptFolderEntries()}
${exampleEntry}
    // A server from npm, which the gateway starts (npx downloads it on the first start):
    // { "id": "everything", "transport": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "timeoutMs": 60000 },
    // A server that runs elsewhere, by URL (\${DOCS_TOKEN} is read from the environment):
    // { "id": "docs", "transport": "streamable-http", "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer \${DOCS_TOKEN}" } },`;
}

function promptFolderEntries(): string {
    const { id, path } = STARTER_FOLDER;
    return `    // Your prompt files: each .md file in the folder "${path}" beside this file is a prompt, "${id}__<file name>",
    // reloaded as it changes (the format: docs/prompt-files.md). --check reads them too.
    { "id": "${id}", "transport": "files", "path": "${path}" },
    // A repository's Claude Code commands, served as they are (the path is relative to this file; Codex prompts,
    // VS Code prompt files, Gemini CLI commands and skills have their own "format"):
    // ${CLAUDE_COMMANDS_UPSTREAM},`;
}

/** A JSON string that the gateway reads back as `value`: config strings are interpolated, so a "${" is escaped. */
function quoted(value: string): string {
    return JSON.stringify(literalText(value));
}
