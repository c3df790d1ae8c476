/**
 * The body of a VS Code prompt file: `${input:name}` and
 * `${input:name:placeholder}` are arguments (the placeholder is the
 * description; all optional, as VS Code asks for a missing one in chat). Editor
 * variables (`${selection}`, `${file}`, `${workspaceFolder}`, ...) come from
 * an editor an MCP client does not have: left as written, with a warning. Pure.
 */
import type { PromptArgument } from '@modelcontextprotocol/client';
import { ARGUMENT_NAME, type PromptFileWarning } from '../prompt-file.js';
import { compileMatches, countNewlines } from '../template.js';
import { BodyError, type CompiledBody } from './dollar-body.js';
import { capWarnings, clip } from './tool-markers.js';

const VARIABLE = /\$\{([^{}\n]*)\}/g;
const INPUT = /^input:([^:]*)(?::(.*))?$/s;

/** `firstLine` is the line of the file `body` starts on. */
export function compileVscodeBody(body: string, firstLine: number): CompiledBody {
    const inputs = new Map<string, PromptArgument>();
    const warnings: PromptFileWarning[] = [];
    const segments = compileMatches(body, VARIABLE, match => {
        const line = firstLine + countNewlines(body, match.index);
        const input = INPUT.exec(match[1]!);
        if (input === null) {
            warnings.push({ line, message: `${clip(match[0])} is filled by VS Code from the editor; MCP clients have none: served as written` });
            return match[0];
        }
        const name = input[1]!.trim();
        if (!ARGUMENT_NAME.test(name) || name.length > 64)
            throw new BodyError(`\${input:${clip(name)}} is not an argument name (a letter or "_", then letters, digits, "_", "-")`, line);
        // The first placeholder given for a name describes it.
        const placeholder = input[2]?.trim();
        if (!inputs.has(name) || (inputs.get(name)!.description === undefined && placeholder)) inputs.set(name, { name, ...(placeholder ? { description: placeholder } : {}) });
        return { argument: name };
    });
    return { segments, arguments: [...inputs.values()], warnings: capWarnings(warnings, 'editor variables') };
}
