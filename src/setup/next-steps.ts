/** What `init` prints after writing the starter: how to start the gateway, and how each client uses it. */
import path from 'node:path';
import { EXAMPLE_PROMPT, STARTER_FOLDER, type PromptFolderOutcome } from './example-prompt.js';
import { CLAUDE_COMMANDS_UPSTREAM, STARTER_URL } from './starter.js';

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
    /** What init did with the starter's prompt folder. */
    promptFolder: PromptFolderOutcome;
    /** Absolute path of the package's examples of every prompt file format. */
    formatExamples: string;
    /** The folder .claude/commands beside the config, when it is there: the starter shows its upstream commented out. */
    claudeCommands?: string | undefined;
}

/** The name of the entry every snippet adds. */
const SERVER_NAME = 'prompts';

export function nextSteps(options: NextStepsOptions): string {
    const { file, shellCommand } = options;
    const foundByItself = file === path.join(options.cwd, 'gateway.json');
    const start = foundByItself ? `${shellCommand}    (in ${options.cwd}, where it finds gateway.json)` : `${shellCommand} --config ${shellQuote(file)}`;
    const stdioArgs = [options.cli, '--stdio', '-c', file];
    const entry = (key: string, server: Record<string, unknown>) => oneLine({ [key]: { [SERVER_NAME]: server } });
    // Claude Code's slash command for the example, its one-word argument first (it splits what follows on spaces).
    const tryExample = options.promptFolder.kind === 'created' ? `    then type: /mcp__${SERVER_NAME}__${EXAMPLE_PROMPT} newcomer what a race condition is\n` : '';
    return `Wrote ${file}: the gateway in front of ${options.serving}.
${promptFolderLine(options.promptFolder)}

Start the gateway (add --check to only validate the file, after editing it):
  ${start}

Use it from MCP clients (${STARTER_URL} while the gateway runs):
  Claude Code, with the gateway running, or starting it itself:
    claude mcp add --transport http ${SERVER_NAME} ${STARTER_URL}
    claude mcp add ${SERVER_NAME} -- ${[options.node, ...stdioArgs].map(word => shellQuote(word)).join(' ')}
${tryExample}  Claude Desktop (claude_desktop_config.json) or Cursor (~/.cursor/mcp.json), starting it itself:
    ${entry('mcpServers', { command: options.node, args: stdioArgs })}
  Cursor, with the gateway running:
    ${entry('mcpServers', { url: STARTER_URL })}
  VS Code (.vscode/mcp.json), with the gateway running:
    ${entry('servers', { type: 'http', url: STARTER_URL })}

${claudeCommandsSteps(options)}`;
}

function claudeCommandsSteps(options: NextStepsOptions): string {
    const found = options.claudeCommands === undefined ? '' : `${options.claudeCommands} is there: to serve it, uncomment the "claude" upstream in ${options.file}.\n`;
    return `Serve a repository's Claude Code commands (.claude/commands/*.md) as they are: add to "upstreams"
    ${CLAUDE_COMMANDS_UPSTREAM}
  ("path" is relative to the config file: as written, for a config at the repository's root). Codex prompts,
  VS Code prompt files, Gemini CLI commands and skills have a "format" too: one example of each in
  ${options.formatExamples}, and docs/prompt-files.md in the gateway's repository.
${found}`;
}

function promptFolderLine(outcome: PromptFolderOutcome): string {
    if (outcome.kind === 'kept') return `Kept ${outcome.folder} as it was: its .md files are served as ${STARTER_FOLDER.id}__<name> (--check reads them).`;
    return `Wrote ${outcome.example}: an example prompt, served as ${EXAMPLE_PROMPT}; each .md file in ${outcome.folder} is a prompt.`;
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
