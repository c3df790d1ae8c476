/**
 * The commented starter config that `init` writes. Text rather than a serialized object, for its comments; every
 * value that comes from outside (paths) goes through JSON.stringify.
 */
import { pathToFileURL } from 'node:url';

/** Where the starter listens; the client snippets point there. */
const STARTER_LISTEN = { host: '127.0.0.1', port: 8080, path: '/mcp' } as const;

export const STARTER_URL = `http://${STARTER_LISTEN.host}:${STARTER_LISTEN.port}${STARTER_LISTEN.path}`;

export interface StarterOptions {
    /** Absolute path of config/gateway.schema.json, for editors. */
    schema: string;
    /** The node that runs the example upstream. */
    node: string;
    /** Absolute path of the example prompt server shipped with the package. */
    exampleServer: string;
}

export function starterConfig(options: StarterOptions): string {
    const { host, port, path } = STARTER_LISTEN;
    return `// mcp-prompt-gateway config, written by \`mcp-prompt-gateway init\`: JSON with comments.
// Every key is in the schema below (editors complete and check them) and in the README.
{
  "$schema": ${JSON.stringify(pathToFileURL(options.schema).href)},

  // Clients connect to ${STARTER_URL}. Keep 127.0.0.1 unless other machines must
  // connect: then also set "auth" (API keys or JWT) and GATEWAY_CURSOR_SECRET.
  "listen": { "host": "${host}", "port": ${port}, "path": "${path}" },

  // Signs pagination cursors and sessions. Empty: a random key per process, enough on 127.0.0.1.
  // Off loopback, or with several replicas, set GATEWAY_CURSOR_SECRET (16+ characters) in the environment.
  "cursorSecret": "\${GATEWAY_CURSOR_SECRET:-}",

  // The MCP servers whose prompts the gateway serves, each prompt as "<id>__<prompt name>".
  "upstreams": [
${upstreamEntries(options)}
  ],
}
`;
}

function upstreamEntries(options: StarterOptions): string {
    return `    // An example server that comes with the gateway (three prompts; nothing to download).
    // Replace it with your own servers.
    {
      "id": "examples",
      "transport": "stdio",
      "command": ${JSON.stringify(options.node)},
      "args": [${JSON.stringify(options.exampleServer)}]
    },
    // A server from npm, which the gateway starts (npx downloads it on the first start):
    // { "id": "everything", "transport": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "timeoutMs": 60000 },
    // A server that runs elsewhere, by URL (\${DOCS_TOKEN} is read from the environment):
    // { "id": "docs", "transport": "streamable-http", "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer \${DOCS_TOKEN}" } },`;
}
