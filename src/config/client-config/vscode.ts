/**
 * VS Code's `mcp.json` (`.vscode/mcp.json`, or the user profile's): `servers` of `type` stdio (command, args, env,
 * envFile, cwd), http (Streamable HTTP, falling back to legacy SSE, as VS Code does) or sse (url, headers), and
 * `inputs` for `${input:ID}`; besides it the predefined variables that Cursor shares.
 */
import type { ClientFormat } from './format.js';
import type { VsCodeInputs } from './vscode-inputs.js';
import { editorVariable, type VariableReader } from './variables.js';

/** Variables about the editor's state (open file, selection, settings, commands): nothing the gateway can know. */
const EDITOR_STATE = new Set([
    'cwd',
    'execPath',
    'defaultBuildTask',
    'file',
    'fileBasename',
    'fileBasenameNoExtension',
    'fileDirname',
    'fileDirnameBasename',
    'fileExtname',
    'fileWorkspaceFolder',
    'fileWorkspaceFolderBasename',
    'lineNumber',
    'relativeFile',
    'relativeFileDirname',
    'selectedText'
]);

const SCOPED = new Set(['config', 'command', 'workspaceFolder', 'workspaceFolderBasename']);

function vscodeVariables(inputs: VsCodeInputs | undefined): VariableReader {
    return (inside, scope) => {
        if (inside.startsWith('input:') && inputs !== undefined) return inputs.resolve(inside.slice('input:'.length), scope.server);
        const predefined = editorVariable(inside, scope);
        if (predefined !== undefined) return predefined;
        // `${config:...}`, `${command:...}`, and `${workspaceFolder:name}` of a multi-root workspace.
        const scoped = inside.includes(':') && SCOPED.has(inside.slice(0, inside.indexOf(':')));
        if (EDITOR_STATE.has(inside) || scoped) {
            return { problem: `\${${inside}} is a VS Code variable that has no value outside VS Code; write the value itself there` };
        }
        return undefined;
    };
}

export const vscode: ClientFormat = {
    name: 'vscode',
    serversKey: 'servers',
    httpTransport: 'http',
    variables: vscodeVariables
};
