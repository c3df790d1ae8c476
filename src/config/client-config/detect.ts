/**
 * Which client wrote a file. `auto` goes by the top-level key: `servers` is VS Code's; `mcpServers` is shared by
 * Claude Desktop, Cursor and Claude Code, whose server fields do not conflict, so it is read with both Claude
 * Code's `${VAR}` / `${VAR:-default}` and Cursor's `${env:NAME}`, `${userHome}`, ... (name the format to get one
 * client's reading alone, such as Claude Desktop's, which expands nothing).
 */
import { claudeCode, claudeCodeVariable } from './claude-code.js';
import { claudeDesktop } from './claude-desktop.js';
import { cursor } from './cursor.js';
import type { ClientConfigFormat, ClientFormat } from './format.js';
import { editorVariable } from './variables.js';
import { vscode } from './vscode.js';

const anyMcpServers: ClientFormat = {
    name: 'auto: mcpServers (Claude Desktop, Cursor or Claude Code)',
    serversKey: 'mcpServers',
    httpTransport: 'streamable-http',
    // Cursor's names first: `${userHome}` is Cursor's home folder before it is a variable named userHome.
    variables: () => (inside, scope) => editorVariable(inside, scope) ?? claudeCodeVariable(inside, scope)
};

const NAMED: Record<Exclude<ClientConfigFormat, 'auto'>, ClientFormat> = {
    'claude-desktop': claudeDesktop,
    cursor,
    'claude-code': claudeCode,
    vscode
};

/** The format to read `document` with, or why it cannot be read. */
export function chooseFormat(requested: ClientConfigFormat, document: Record<string, unknown>): ClientFormat | { problem: string } {
    const has = (key: string) => Object.hasOwn(document, key);
    if (requested !== 'auto') {
        const format = NAMED[requested];
        if (has(format.serversKey)) return format;
        const other = format.serversKey === 'servers' ? 'mcpServers' : 'servers';
        const hint = has(other) ? ` It has "${other}": set format to "auto".` : '';
        return { problem: `format "${requested}" reads the servers in "${format.serversKey}", which this file does not have.${hint}` };
    }
    if (has('servers') && has('mcpServers')) {
        return { problem: 'has both "servers" (VS Code) and "mcpServers" (Claude Desktop, Cursor, Claude Code); set format to say which to read' };
    }
    if (has('servers')) return vscode;
    if (has('mcpServers')) return anyMcpServers;
    return {
        problem: 'has neither "mcpServers" (Claude Desktop, Cursor, Claude Code) nor "servers" (VS Code) at the top level; point it at an MCP client\'s config file'
    };
}
