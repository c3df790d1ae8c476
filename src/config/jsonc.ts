/**
 * JSON with comments and trailing commas (what VS Code calls JSONC), for config files people edit by hand.
 * jsonc-parser reads the text; the value is built here rather than by its `parse`, which assigns keys with `=`:
 * a key "__proto__" would set the object's prototype instead of being a key like any other, as JSON.parse keeps it.
 */
import { createScanner, findNodeAtLocation, parseTree, ParseErrorCode, SyntaxKind, type Node, type ParseError } from 'jsonc-parser';

/** Deeper than any config or client config file: beyond it, a file is refused before parsing (the parser recurses). */
export const MAX_CONFIG_DEPTH = 64;

/** `tooDeep`: the document nests objects and arrays deeper than MAX_CONFIG_DEPTH; the place is where it first does. */
export type JsoncResult = { ok: true; value: unknown } | { ok: false; line: number; column: number; problem: string; tooDeep?: true };

/** What each syntax error means, in words; never the text at fault, which may be a secret. */
const PROBLEMS: Record<ParseErrorCode, string> = {
    [ParseErrorCode.InvalidSymbol]: 'unexpected character',
    [ParseErrorCode.InvalidNumberFormat]: 'malformed number',
    [ParseErrorCode.PropertyNameExpected]: 'expected a key in double quotes',
    [ParseErrorCode.ValueExpected]: 'expected a value',
    [ParseErrorCode.ColonExpected]: 'expected ":"',
    [ParseErrorCode.CommaExpected]: 'expected ","',
    [ParseErrorCode.CloseBraceExpected]: 'expected "}"',
    [ParseErrorCode.CloseBracketExpected]: 'expected "]"',
    [ParseErrorCode.EndOfFileExpected]: 'unexpected text after the end of the document',
    [ParseErrorCode.InvalidCommentToken]: 'malformed comment',
    [ParseErrorCode.UnexpectedEndOfComment]: 'comment not closed with */',
    [ParseErrorCode.UnexpectedEndOfString]: 'string not closed (a string cannot span lines)',
    [ParseErrorCode.UnexpectedEndOfNumber]: 'number cut short',
    [ParseErrorCode.InvalidUnicode]: 'malformed \\u escape',
    [ParseErrorCode.InvalidEscapeCharacter]: 'unknown escape after "\\"',
    [ParseErrorCode.InvalidCharacter]: 'control character in a string; escape it'
};

const BYTE_ORDER_MARK = '\uFEFF';

const OPTIONS = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false };

/** Editors on Windows may start the file with a byte order mark; it is not part of the document. */
const withoutByteOrderMark = (source: string) => (source.startsWith(BYTE_ORDER_MARK) ? source.slice(1) : source);

export function parseJsonc(source: string): JsoncResult {
    const text = withoutByteOrderMark(source);
    const tooDeep = offsetTooDeep(text);
    if (tooDeep !== undefined) return { ok: false, ...locate(text, tooDeep), problem: `nested deeper than ${MAX_CONFIG_DEPTH} levels`, tooDeep: true };
    const errors: ParseError[] = [];
    const tree = parseTree(text, errors, OPTIONS);
    const first = errors[0];
    if (first !== undefined) return { ok: false, ...locate(text, first.offset), problem: PROBLEMS[first.error] ?? 'syntax error' };
    // Without errors there is a tree: empty content is itself an error (allowEmptyContent: false).
    return { ok: true, value: tree === undefined ? undefined : valueOf(tree) };
}

/** Where an object or array first opens deeper than MAX_CONFIG_DEPTH, by the scanner alone, which does not recurse. */
function offsetTooDeep(text: string): number | undefined {
    const scanner = createScanner(text, true);
    let depth = 0;
    for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
        if (token === SyntaxKind.OpenBraceToken || token === SyntaxKind.OpenBracketToken) {
            if (++depth > MAX_CONFIG_DEPTH) return scanner.getTokenOffset();
        } else if (token === SyntaxKind.CloseBraceToken || token === SyntaxKind.CloseBracketToken) depth--;
    }
    return undefined;
}

/** Where the value at a path (["servers", "github", "url"]) stands in `source`, for messages about it; parsed once. */
export function positionsIn(source: string): (path: (string | number)[]) => { line: number; column: number } | undefined {
    const text = withoutByteOrderMark(source);
    const tree = parseTree(text, [], OPTIONS);
    return path => {
        const node = tree === undefined ? undefined : findNodeAtLocation(tree, path);
        return node === undefined ? undefined : locate(text, node.offset);
    };
}

function locate(text: string, offset: number): { line: number; column: number } {
    const before = text.slice(0, offset);
    return { line: before.split('\n').length, column: offset - before.lastIndexOf('\n') };
}

function valueOf(node: Node): unknown {
    if (node.type === 'array') return (node.children ?? []).map(valueOf);
    if (node.type !== 'object') return node.value;
    const object: Record<string, unknown> = {};
    for (const property of node.children ?? []) {
        const [key, value] = property.children ?? [];
        if (key === undefined || value === undefined) continue;
        // A repeated key keeps its last value, as with JSON.parse.
        Object.defineProperty(object, String(key.value), { value: valueOf(value), enumerable: true, writable: true, configurable: true });
    }
    return object;
}
