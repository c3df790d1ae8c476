/**
 * Cursor's `mcp.json` (`~/.cursor/mcp.json`, `.cursor/mcp.json`): `mcpServers` of command, args, env and envFile,
 * or url and headers, with `${env:NAME}`, `${userHome}`, `${workspaceFolder}`, `${workspaceFolderBasename}` and
 * `${pathSeparator}` (`${/}`).
 */
import type { ClientFormat } from './format.js';
import { editorVariable } from './variables.js';

export const cursor: ClientFormat = {
    name: 'cursor',
    serversKey: 'mcpServers',
    httpTransport: 'streamable-http',
    variables: () => editorVariable
};
