/**
 * `mcp-prompt-gateway init [--output FILE] [--force]`: writes a commented starter config that validates as it is and
 * runs offline (a prompt folder beside it, made with one example prompt unless it exists, and an example server shipped
 * with the package), and prints how to start and use it.
 */
import { realpathSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { resolveUserPath } from '../config/client-config/load.js';
import { ConfigError } from '../config/issues.js';
import { loadGatewayConfig } from '../config/load.js';
import { describeError } from '../diagnostics/logger.js';
import { resolveCommand } from '../upstream/command.js';
import { DEFAULT_CONFIG_NAME } from './default-config.js';
import { ensurePromptFolder, folderRefusal, starterFolder, type PromptFolderOutcome } from './example-prompt.js';
import { nextSteps, shellQuote } from './next-steps.js';
import { packageFiles } from './package-files.js';
import { starterConfig } from './starter.js';

const INIT_USAGE = `Usage: mcp-prompt-gateway init [--from <file>]... [--output <file>] [--force]

Writes a commented starter config, which serves the prompt files of the folder "prompts" beside it: when
that folder does not exist, it is made with one example prompt (a folder that exists is left as it is).
Then prints how to start the gateway, connect MCP clients to it and serve a repository's Claude Code commands.

  --from <file>        an MCP client's config file (Claude Desktop, Cursor, Claude Code, VS Code): the starter
                       serves its servers, and follows the file as it changes; repeatable
  --output, -o <file>  where to write it (default: ${DEFAULT_CONFIG_NAME}; there the gateway finds it without --config)
  --force              overwrite the config file if it exists (never a prompt file)
  --help               print this help`;

/** Why writing failed, when the command line is at fault (exit 2); other errors are failures (exit 1). */
const REFUSALS: Record<string, (file: string) => string> = {
    EEXIST: file => `${file} already exists; pass --force to overwrite it, or --output <file> to write elsewhere`,
    EISDIR: file => `${file} is a folder; give --output a file name`,
    ENOENT: file => `cannot write ${file}: folder ${path.dirname(file)} does not exist`,
    ENOTDIR: file => `cannot write ${file}: part of that path is not a folder`
};

/** `cli` is the gateway's own script, for the commands that start it. Returns the exit code. */
export async function runInit(argv: string[], cli: string): Promise<number> {
    let args;
    try {
        args = parseArgs({
            args: argv,
            strict: true,
            allowPositionals: false,
            options: {
                from: { type: 'string', multiple: true, default: [] },
                output: { type: 'string', short: 'o', default: DEFAULT_CONFIG_NAME },
                force: { type: 'boolean', default: false },
                help: { type: 'boolean', short: 'h', default: false }
            }
        }).values;
    } catch (error) {
        process.stderr.write(`mcp-prompt-gateway init: ${describeError(error)}\n\n${INIT_USAGE}\n`);
        return 2;
    }
    if (args.help) {
        process.stdout.write(`${INIT_USAGE}\n`);
        return 0;
    }
    const cwd = process.cwd();
    const file = path.resolve(cwd, args.output);
    const node = process.execPath;
    const from = args.from.map(client => resolveUserPath(cwd, client));
    const servers = await serversOf(from);
    if (servers === undefined) return 2;
    const shipped = packageFiles();
    const promptFolder = await writeStarter(file, starterConfig({ ...shipped, node, from }), args.force);
    if (typeof promptFolder === 'number') return promptFolder;
    const mcpServers = from.length === 0 ? 'one example MCP server; add your servers under "upstreams"' : describeClientServers(from, servers);
    const serving = `your prompt files in ${promptFolder.folder} and ${mcpServers}`;
    const formatExamples = shipped.formatExamples;
    const claudeCommands = claudeCommandsBeside(file);
    process.stdout.write(nextSteps({ file, cwd, node, cli, shellCommand: shellCommand(cli), serving, promptFolder, formatExamples, claudeCommands }));
    return 0;
}

/** A repository's Claude Code commands beside the config (init run at the repository's root), if there. */
function claudeCommandsBeside(file: string): string | undefined {
    const folder = path.join(path.dirname(file), '.claude', 'commands');
    return statSync(folder, { throwIfNoEntry: false })?.isDirectory() === true ? folder : undefined;
}

/**
 * Writes the config (over one that exists only when forced), then the prompt folder beside it unless it exists. A
 * refusal (exit 2, after saying why) comes before anything is written: no prompt folder without its config.
 */
async function writeStarter(file: string, config: string, force: boolean): Promise<PromptFolderOutcome | number> {
    const folder = starterFolder(file);
    const folderRefused = await folderRefusal(folder);
    if (folderRefused !== undefined) return refuse(`${folderRefused}\nNothing was written.`);
    try {
        await writeFile(file, config, { flag: force ? 'w' : 'wx' });
    } catch (error) {
        const refusal = REFUSALS[(error as NodeJS.ErrnoException).code ?? ''];
        if (refusal === undefined) throw error;
        return refuse(refusal(file));
    }
    return ensurePromptFolder(folder);
}

function refuse(reason: string): number {
    process.stderr.write(`mcp-prompt-gateway init: ${reason}\n`);
    return 2;
}

function describeClientServers(from: readonly string[], servers: readonly string[]): string {
    return `the ${servers.length} MCP server(s) of ${from.join(', ')}${servers.length === 0 ? '' : `: ${servers.join(', ')}`}`;
}

/**
 * The upstream ids the client files make, read as the gateway will read them, so that a file it cannot use is
 * reported now rather than at the first start (undefined, after saying why). Environment variables and VS Code
 * inputs are taken from this environment; the written config reads them again wherever it runs.
 */
async function serversOf(from: readonly string[]): Promise<string[] | undefined> {
    if (from.length === 0) return [];
    try {
        const loaded = await loadGatewayConfig({ from: [...from] }, process.env);
        return loaded.config.upstreams.map(upstream => upstream.id);
    } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        process.stderr.write(`mcp-prompt-gateway init: ${error.message}\nNothing was written.\n`);
        return undefined;
    }
}

/** `mcp-prompt-gateway` when the shell finds this very gateway under that name; otherwise node and its script. */
function shellCommand(cli: string): string {
    if (shellFinds('mcp-prompt-gateway', cli)) return 'mcp-prompt-gateway';
    const node = shellFinds('node', process.execPath) ? 'node' : shellQuote(process.execPath);
    return `${node} ${shellQuote(cli)}`;
}

function shellFinds(name: string, target: string): boolean {
    const found = resolveCommand({ command: name, env: process.env.PATH === undefined ? {} : { PATH: process.env.PATH } });
    try {
        return found.ok && realpathSync(found.path) === realpathSync(target);
    } catch {
        return false;
    }
}
