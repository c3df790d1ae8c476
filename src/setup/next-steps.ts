/** What `init` prints after writing the starter: how to start the gateway, and how each client uses it. */
import path from 'node:path';
import { STARTER_URL } from './starter.js';

export interface NextStepsOptions {
    /** Absolute path of the config written. */
    file: string;
    /** The folder init ran in: there, the gateway finds gateway.json without --config. */
    cwd: string;
    /** How to start the gateway from a shell: `mcp-prompt-gateway`, or node and the script's path. */
    shellCommand: string;
    /** Absolute paths for clients that start the gateway themselves: they may run with another PATH. */
    node: string;
    cli: string;
    /** What the config serves, after "the gateway in front of". */
    serving: string;
}

/** The name of the entry every snippet adds. */
const SERVER_NAME = 'prompts';

export function nextSteps(options: NextStepsOptions): string {
    const { file, shellCommand } = options;
    const foundByItself = file === path.join(options.cwd, 'gateway.json');
    const start = foundByItself ? `${shellCommand}    (in ${options.cwd}, where it finds gateway.json)` : `${shellCommand} --config ${shellQuote(file)}`;
    const stdioArgs = [options.cli, '--stdio', '-c', file];
    const entry = (key: string, server: Record<string, unknown>) => oneLine({ [key]: { [SERVER_NAME]: server } });
    return `Wrote ${file}: the gateway in front of ${options.serving}.

Start the gateway (add --check to only validate the file, after editing it):
  ${start}

Use it from MCP clients (${STARTER_URL} while the gateway runs):
  Claude Code, with the gateway running, or starting it itself:
    claude mcp add --transport http ${SERVER_NAME} ${STARTER_URL}
    claude mcp add ${SERVER_NAME} -- ${[options.node, ...stdioArgs].map(word => shellQuote(word)).join(' ')}
  Claude Desktop (claude_desktop_config.json) or Cursor (~/.cursor/mcp.json), starting it itself:
    ${entry('mcpServers', { command: options.node, args: stdioArgs })}
  Cursor, with the gateway running:
    ${entry('mcpServers', { url: STARTER_URL })}
  VS Code (.vscode/mcp.json), with the gateway running:
    ${entry('servers', { type: 'http', url: STARTER_URL })}
`;
}

/** JSON on one line, spaced as people write it: { "a": ["b", "c"] }. */
function oneLine(value: unknown): string {
    if (Array.isArray(value)) return `[${value.map(oneLine).join(', ')}]`;
    if (value === null || typeof value !== 'object') return JSON.stringify(value);
    return `{ ${Object.entries(value)
        .map(([key, item]) => `${JSON.stringify(key)}: ${oneLine(item)}`)
        .join(', ')} }`;
}

/** A word for the shell of this platform: quoted only when it needs to be. */
export function shellQuote(word: string, platform: NodeJS.Platform = process.platform): string {
    const windows = platform === 'win32';
    // A backslash is a path separator on Windows, an escape in a POSIX shell.
    if ((windows ? /^[\w@%+=:,./\\-]+$/ : /^[\w@%+=:,./-]+$/).test(word)) return word;
    if (windows) return `"${word}"`;
    return `'${word.replaceAll("'", `'\\''`)}'`;
}
