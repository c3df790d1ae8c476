/**
 * Client config files are JSON with comments and trailing commas (VS Code writes JSONC; people add comments to
 * the others too), read with Microsoft's jsonc-parser. Errors name the file as `file:line:column`, and every later
 * message about a value can say where it stands in the file.
 */
import { findNodeAtLocation, parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import { ConfigError } from '../issues.js';

export interface JsoncDocument {
    value: unknown;
    /** " (line L, column C)" of the value at `path`, or "" when the path is not in the file. */
    where(path: readonly (string | number)[]): string;
}

export function parseJsonc(text: string, file: string): JsoncDocument {
    const errors: ParseError[] = [];
    const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
    const first = errors[0];
    if (first !== undefined || tree === undefined) {
        const { line, column } = lineColumn(text, first?.offset ?? 0);
        const what = first === undefined ? 'no JSON value' : words(printParseErrorCode(first.error));
        // The parser's own text is not quoted: the file may hold secrets.
        throw new ConfigError(`${file}:${line}:${column}`, [
            { path: [], message: `not valid JSON (${what}); fix the syntax there (comments and trailing commas are allowed)` }
        ]);
    }
    return {
        value: valueOf(tree),
        where(path) {
            const node = findNodeAtLocation(tree, [...path]);
            if (node === undefined) return '';
            const { line, column } = lineColumn(text, node.offset);
            return ` (line ${line}, column ${column})`;
        }
    };
}

/** Plain data from the tree; keys such as "__proto__" stay data (the parser's own value builder assigns them). */
function valueOf(node: Node): unknown {
    if (node.type === 'array') return (node.children ?? []).map(valueOf);
    if (node.type !== 'object') return node.value as unknown;
    const out: Record<string, unknown> = {};
    for (const property of node.children ?? []) {
        const [key, value] = property.children ?? [];
        if (key === undefined || value === undefined) continue;
        Object.defineProperty(out, String(key.value), { value: valueOf(value), enumerable: true, writable: true, configurable: true });
    }
    return out;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
    const before = text.slice(0, offset);
    const lineStart = before.lastIndexOf('\n') + 1;
    return { line: before.split('\n').length, column: offset - lineStart + 1 };
}

/** "PropertyNameExpected" -> "property name expected". */
function words(code: string): string {
    return code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}
