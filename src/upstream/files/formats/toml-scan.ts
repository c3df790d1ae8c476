/**
 * One pass over a TOML file before it is parsed, strings and comments skipped:
 * it bounds what makes a small file costly to parse (smol-toml takes a quarter
 * of a second on 256 KiB of `a.a.a...` or of keys, and nests dotted keys and
 * table headers without its `maxDepth`), and it finds the line of each
 * top-level key, which the parsed value does not keep (for errors). A command
 * file has two keys; the bounds leave room for any real one. Pure.
 */

/** Key-value pairs and table headers. */
const MAX_ENTRIES = 64;
/** Array items (commas) and dots in keys and numbers, each. */
const MAX_SEPARATORS = 1024;

export type TomlScan = { ok: true; keyLines: ReadonlyMap<string, number> } | { ok: false; line: number; message: string };

type State = 'outside' | 'comment' | 'basic' | 'literal' | 'multiBasic' | 'multiLiteral';

// Sticky, from a line's start (no "^": with "y" it would match at 0 only).
const TOP_LEVEL_KEY = /[ \t]*(?:([A-Za-z0-9_-]+)|"([^"\\\n]*)"|'([^'\n]*)')[ \t]*=/y;

export function scanToml(source: string): TomlScan {
    const keyLines = new Map<string, number>();
    const counts: Counts = { entries: 0, commas: 0, dots: 0, depth: 0 };
    let state: State = 'outside';
    let line = 1;
    let inTable = lineStart(source, 0, false, counts, keyLines, line) === 'table';
    for (let at = 0; at < source.length; at++) {
        const character = source[at]!;
        if (character === '\n') {
            line++;
            if (state === 'comment' || state === 'basic' || state === 'literal') state = 'outside';
            if (state === 'outside' && lineStart(source, at + 1, inTable, counts, keyLines, line) === 'table') inTable = true;
            continue;
        }
        switch (state) {
            case 'comment':
                continue;
            case 'basic':
                if (character === '\\') at++;
                else if (character === '"') state = 'outside';
                continue;
            case 'literal':
                if (character === "'") state = 'outside';
                continue;
            case 'multiBasic':
                if (character === '\\' && source[at + 1] !== '\n') at++;
                else if (source.startsWith('"""', at)) [state, at] = ['outside', closingQuotes(source, at, '"')];
                continue;
            case 'multiLiteral':
                if (source.startsWith("'''", at)) [state, at] = ['outside', closingQuotes(source, at, "'")];
                continue;
            case 'outside': {
                const next = outside(source, at, character, counts);
                if (typeof next === 'string') return { ok: false, line, message: next };
                [state, at] = next;
            }
        }
    }
    return { ok: true, keyLines };
}

interface Counts {
    entries: number;
    commas: number;
    dots: number;
    /** Of [ and { : a line starting with "[" inside an array is an item, not a table header. */
    depth: number;
}

/** At a line's start, outside strings: a table header (counted as an entry), or a top-level key (its line kept). */
function lineStart(source: string, at: number, inTable: boolean, counts: Counts, keyLines: Map<string, number>, line: number): 'table' | undefined {
    if (counts.depth > 0) return undefined;
    if (/^[ \t]*\[/.test(source.slice(at, at + 64))) {
        counts.entries++;
        return 'table';
    }
    if (inTable) return undefined;
    TOP_LEVEL_KEY.lastIndex = at;
    const key = TOP_LEVEL_KEY.exec(source);
    const name = key?.[1] ?? key?.[2] ?? key?.[3];
    if (name !== undefined && !keyLines.has(name)) keyLines.set(name, line);
    return undefined;
}

function outside(source: string, at: number, character: string, counts: Counts): [State, number] | string {
    switch (character) {
        case '#':
            return ['comment', at];
        case '"':
            return source.startsWith('"""', at) ? ['multiBasic', at + 2] : ['basic', at];
        case "'":
            return source.startsWith("'''", at) ? ['multiLiteral', at + 2] : ['literal', at];
        case '=':
            return ++counts.entries > MAX_ENTRIES ? `more than ${MAX_ENTRIES} keys; a command needs "prompt" and "description"` : ['outside', at];
        case '[':
        case '{':
            // Table headers were counted at their line's start.
            if (counts.entries > MAX_ENTRIES) return `more than ${MAX_ENTRIES} keys and tables`;
            counts.depth++;
            return ['outside', at];
        case ']':
        case '}':
            counts.depth = Math.max(0, counts.depth - 1);
            return ['outside', at];
        case ',':
            return ++counts.commas > MAX_SEPARATORS ? `more than ${MAX_SEPARATORS} array items` : ['outside', at];
        case '.':
            return ++counts.dots > MAX_SEPARATORS ? `more than ${MAX_SEPARATORS} dots in keys and numbers (dotted keys nest tables)` : ['outside', at];
        default:
            return ['outside', at];
    }
}

/** A multi-line string may end in up to five quotes (two of them its text): the index of its last one. */
function closingQuotes(source: string, at: number, quote: string): number {
    let end = at + 2;
    while (end + 1 < source.length && source[end + 1] === quote && end - at < 4) end++;
    return end;
}
