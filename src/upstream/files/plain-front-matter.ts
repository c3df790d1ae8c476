/**
 * A fast reading of the front matter most prompt files have: block mappings
 * and sequences of plain words, double-quoted text without escapes (the other
 * formats quote `argument-hint` before parsing: command-file.ts),
 * `true`/`false`, and flow lists of plain words (`values: [a, b]`). Anything
 * else (escapes, single quotes, numbers, nulls spelt `~`, block
 * scalars, anchors, tags, comments after a value, tabs, flow mappings) makes
 * it answer undefined, and the caller parses with `yaml`, which then also
 * gives the errors and their lines. Where it answers, it answers what `yaml`
 * (YAML 1.2, core schema) would: test/unit/plain-front-matter.test.ts compares
 * the two. Why: the `yaml` parser's document model costs most of the load of
 * a folder of thousands of files.
 */

interface Line {
    indent: number;
    text: string;
}

/** Thrown inside, never out: the text is outside what this reads. */
class NotPlain extends Error {}

const KEY = /^([A-Za-z_][A-Za-z0-9_-]*):(?: (.*))?$/;
/** YAML wants the ":" of an implicit key at most 1024 characters after the key's start; longer is left to its error. */
const MAX_KEY_LENGTH = 1000;
/** Characters YAML gives a meaning at the start of a plain scalar, or that this reader leaves to `yaml`. */
const SPECIAL_START = /^[-?:,[\]{}#&*!|>'"%@`\s]/;
/** What the core schema reads as other than a string (null, booleans, numbers, .inf, .nan): left to `yaml`, but true and false. */
const NOT_A_STRING = /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?\.?[0-9].*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
/** Printable characters outside the surrogates and the byte-order mark. */
const PRINTABLE = /^[\x20-\x7e\u00a0-\ud7ff\ue000-\ufefe\uff00-\ufffd]*$/;

/** The front matter's value, or undefined when it is not in the plain subset (then parse it with `yaml`). */
export function readPlainFrontMatter(yaml: string, maxDepth: number): unknown {
    const lines: Line[] = [];
    for (const raw of yaml.split('\n')) {
        // YAML indents with spaces only (a tab is refused below): trimStart would take a no-break or ideographic
        // space for indentation too, where YAML reads it as text.
        const text = trimSpaces(raw, 'start');
        if (text === '' || text.startsWith('#')) continue;
        if (raw.includes('\t') || raw.endsWith(' ') || !PRINTABLE.test(raw)) return undefined;
        lines.push({ indent: raw.length - text.length, text });
    }
    if (lines.length === 0) return null;
    try {
        const reader = new Reader(lines, maxDepth);
        const value = reader.block(0, 0);
        if (!reader.done()) return undefined;
        return value;
    } catch (error) {
        if (error instanceof NotPlain) return undefined;
        throw error;
    }
}

class Reader {
    #at = 0;

    constructor(
        private readonly lines: Line[],
        private readonly maxDepth: number
    ) {}

    done(): boolean {
        return this.#at === this.lines.length;
    }

    /** A mapping or a sequence whose first line is at exactly `indent`. */
    block(indent: number, depth: number): unknown {
        const first = this.lines[this.#at];
        if (first?.indent !== indent) throw new NotPlain();
        if (depth >= this.maxDepth) throw new NotPlain();
        return isItem(first.text) ? this.#sequence(indent, depth) : this.#mapping(indent, depth);
    }

    #mapping(indent: number, depth: number): Record<string, unknown> {
        const mapping: Record<string, unknown> = {};
        for (let line = this.lines[this.#at]; line?.indent === indent && !isItem(line.text); line = this.lines[this.#at]) {
            const match = KEY.exec(line.text);
            // A key given twice is yaml's error to report; "__proto__" would set the object's prototype; "null: x" is not a string key.
            if (match === null || match[1]!.length > MAX_KEY_LENGTH || Object.hasOwn(mapping, match[1]!) || match[1] === '__proto__' || NOT_A_STRING.test(match[1]!)) {
                throw new NotPlain();
            }
            this.#at++;
            mapping[match[1]!] = match[2] === undefined ? this.#nested(indent, depth) : scalar(match[2]);
        }
        return mapping;
    }

    /** What follows `key:` alone on its line: a deeper block, a sequence at the key's own indent, or null. */
    #nested(indent: number, depth: number): unknown {
        const next = this.lines[this.#at];
        if (next === undefined || next.indent < indent) return null;
        if (next.indent === indent) return isItem(next.text) ? this.block(indent, depth + 1) : null;
        return this.block(next.indent, depth + 1);
    }

    #sequence(indent: number, depth: number): unknown[] {
        const items: unknown[] = [];
        for (let line = this.lines[this.#at]; line?.indent === indent && isItem(line.text); line = this.lines[this.#at]) {
            const rest = line.text.slice(2);
            if (!KEY.test(rest)) {
                this.#at++;
                items.push(scalar(rest));
                continue;
            }
            // "- key: value" opens a mapping whose keys stand two columns further in.
            this.lines[this.#at] = { indent: indent + 2, text: rest };
            items.push(this.block(indent + 2, depth + 1));
        }
        return items;
    }
}

const isItem = (text: string) => text.startsWith('- ');

/** Double quotes around text with no escape and no quote: the text, as written (one line, so nothing is folded). */
const QUOTED = /^"([^"\\]*)"$/;

function scalar(text: string): unknown {
    if (text.startsWith('[') && text.endsWith(']')) return flowList(text.slice(1, -1));
    const quoted = QUOTED.exec(text);
    if (quoted !== null) return quoted[1];
    if (text === 'true') return true;
    if (text === 'false') return false;
    return word(text);
}

function flowList(inner: string): string[] {
    if (trimSpaces(inner, 'both') === '') return [];
    return inner.split(',').map(item => {
        const text = trimSpaces(item, 'both');
        if (/[[\]{}:]/.test(text)) throw new NotPlain();
        return word(text);
    });
}

/** A plain scalar that can only be a string, on one line. */
function word(text: string): string {
    if (text === '' || SPECIAL_START.test(text) || NOT_A_STRING.test(text) || text.includes(': ') || text.includes(' #') || text.endsWith(':') || text.endsWith(' ')) {
        throw new NotPlain();
    }
    return text;
}

/**
 * Without the spaces and tabs YAML separates with (a line with a tab is refused, but for a comment); String.trim
 * would take Unicode's white space too (U+00A0, U+3000, ...), which YAML keeps as text. No regex: `[ \t]+$`
 * backtracks quadratically on a long run of spaces.
 */
function trimSpaces(text: string, where: 'start' | 'both'): string {
    let start = 0;
    let end = text.length;
    while (start < end && (text[start] === ' ' || text[start] === '\t')) start++;
    if (where === 'both') while (end > start && (text[end - 1] === ' ' || text[end - 1] === '\t')) end--;
    return text.slice(start, end);
}
