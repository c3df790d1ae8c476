/**
 * Client config files are JSON with comments and trailing commas (VS Code writes JSONC; people add comments to the
 * others too), read as the gateway's own config is. A syntax error names the file as `file:line:column`, and every
 * later message about a value can say where it stands in the file.
 */
import { ConfigError } from '../issues.js';
import { parseJsonc as parseText, positionsIn } from '../jsonc.js';

export interface JsoncDocument {
    value: unknown;
    /** " (line L, column C)" of the value at `path`, or "" when the path is not in the file. */
    where(path: (string | number)[]): string;
}

export function parseJsonc(text: string, file: string): JsoncDocument {
    const result = parseText(text);
    if (!result.ok) {
        const message =
            result.tooDeep === true
                ? `${result.problem} (the limit for client config files); flatten it there`
                : `not valid JSON (${result.problem}); fix the syntax there (comments and trailing commas are allowed)`;
        throw new ConfigError(`${file}:${result.line}:${result.column}`, [{ path: [], message }]);
    }
    const position = positionsIn(text);
    return {
        value: result.value,
        where(path) {
            const at = position(path);
            return at === undefined ? '' : ` (line ${at.line}, column ${at.column})`;
        }
    };
}
