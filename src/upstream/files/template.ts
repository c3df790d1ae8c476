/**
 * A prompt file's body, compiled once at load time into messages of literal
 * text and argument slots. Rendering only fills the slots: the structure
 * (how many messages, their roles, which are embedded resources) is fixed by
 * the file, and a value is copied in as it is, never read again, so a value
 * holding `{{other}}` or a message marker stays literal text.
 *
 * Syntax (docs/prompt-files.md):
 * - `{{name}}` (spaces inside allowed) is the argument `name`; `\{{` writes a literal `{{`.
 * - Without marker lines the body is one user message. A line of its own
 *   `<!-- message role="user" -->` (or "assistant") starts a message;
 *   `<!-- resource role="user" uri="..." mimeType="..." -->` starts an embedded
 *   text resource whose text is what follows. Text before the first marker
 *   must be blank. Pure: no I/O.
 */

export type Role = 'user' | 'assistant';

/**
 * Literal text; or the name of the argument whose value goes there (`before` is written
 * ahead of the value, and only when the value is not empty: the other tools' "append what
 * was typed" rule); or arguments whose given values go there joined by single spaces
 * (Claude Code's `$ARGUMENTS` beside `$1`..`$9`).
 */
export type Segment = string | { argument: string; before?: string | undefined } | { joined: readonly string[] };

export interface MessageTemplate {
    role: Role;
    /** Set for an embedded resource; its text is the rendered segments. */
    resource?: { uri: string; mimeType?: string | undefined } | undefined;
    segments: Segment[];
}

export class TemplateError extends Error {
    constructor(
        message: string,
        /** 1-based, within the body. */
        readonly line: number
    ) {
        super(message);
    }
}

const PLACEHOLDER = /\\\{\{|\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}/g;
/** Anything that looks like a marker must be a well-formed one: a typo must not silently become prompt text. */
const MARKER_LIKE = /^\s*<!--\s*(message|resource)\b/i;
const MARKER = /^<!--\s*(message|resource)((?:\s+[A-Za-z]+="[^"]*")*)\s*-->\s*$/;
const ATTRIBUTE = /([A-Za-z]+)="([^"]*)"/g;
const ATTRIBUTES = { message: new Set(['role']), resource: new Set(['role', 'uri', 'mimeType']) };
const ROLES = new Set<string>(['user', 'assistant']);

/** Compiles a body; `declared` are the argument names the front matter declares (any other placeholder is an error). */
export function compileBody(body: string, declared: ReadonlySet<string>): MessageTemplate[] {
    const lines = body.split('\n');
    const starts = lines.flatMap((text, index) => (MARKER_LIKE.test(text) ? [index] : []));
    if (starts.length === 0) return [{ role: 'user', segments: compileLines(lines, 1, declared) }];
    const before = lines.slice(0, starts[0]).join('\n');
    if (before.trim() !== '') throw new TemplateError('text before the first message marker; put it inside a message, or remove the markers for a single user message', 1);
    return starts.map((start, index) => {
        const end = starts[index + 1] ?? lines.length;
        return { ...parseMarker(lines[start]!, start + 1), segments: compileLines(lines.slice(start + 1, end), start + 2, declared) };
    });
}

function parseMarker(line: string, lineNumber: number): Omit<MessageTemplate, 'segments'> {
    const match = MARKER.exec(line.trim());
    if (match === null)
        throw new TemplateError('malformed message marker; write <!-- message role="user" --> or <!-- resource role="user" uri="..." --> on a line of its own', lineNumber);
    const kind = match[1] as 'message' | 'resource';
    const attributes = new Map<string, string>();
    for (const [, key, value] of match[2]!.matchAll(ATTRIBUTE)) {
        if (!ATTRIBUTES[kind].has(key!)) throw new TemplateError(`unknown attribute "${key}" on a ${kind} marker; use ${[...ATTRIBUTES[kind]].join(', ')}`, lineNumber);
        if (attributes.has(key!)) throw new TemplateError(`attribute "${key}" given twice`, lineNumber);
        attributes.set(key!, value!);
    }
    const role = attributes.get('role') ?? 'user';
    if (!ROLES.has(role)) throw new TemplateError(`role "${role}" is not "user" or "assistant"`, lineNumber);
    if (kind === 'message') return { role: role as Role };
    const uri = attributes.get('uri');
    if (uri === undefined || !/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(uri)) {
        throw new TemplateError('a resource marker needs uri="scheme:..." (an absolute URI, e.g. "file:///guide.md")', lineNumber);
    }
    return { role: role as Role, resource: { uri, mimeType: attributes.get('mimeType') } };
}

function compileText(text: string, firstLine: number, declared: ReadonlySet<string>): Segment[] {
    return compileMatches(text, PLACEHOLDER, match => {
        const name = match[1];
        if (name === undefined) return '{{';
        if (declared.has(name)) return { argument: name };
        const line = firstLine + countNewlines(text, match.index);
        throw new TemplateError(`placeholder {{${name}}} names no declared argument; declare it under "arguments" or write \\{{ for a literal "{{"`, line);
    });
}

/**
 * `text` as segments: each match of `pattern` (a global regex) becomes what `slot` makes of
 * it, literal text (a string) or a slot; the rest stays literal. Adjacent literals are merged.
 */
export function compileMatches(text: string, pattern: RegExp, slot: (match: RegExpExecArray) => Segment): Segment[] {
    const segments: Segment[] = [];
    let literal = '';
    let from = 0;
    for (const match of text.matchAll(pattern)) {
        literal += text.slice(from, match.index);
        from = match.index + match[0].length;
        const made = slot(match);
        if (typeof made === 'string') {
            literal += made;
            continue;
        }
        if (literal !== '') segments.push(literal);
        literal = '';
        segments.push(made);
    }
    literal += text.slice(from);
    if (literal !== '') segments.push(literal);
    return segments;
}

/** Values are copied in, nothing else: a missing optional argument is empty text. */
export function renderSegments(segments: readonly Segment[], values: ReadonlyMap<string, string>): string {
    let text = '';
    for (const segment of segments) text += typeof segment === 'string' ? segment : renderSlot(segment, values);
    return text;
}

function renderSlot(segment: Exclude<Segment, string>, values: ReadonlyMap<string, string>): string {
    if ('joined' in segment) {
        // An empty value is a field the client left blank, not a word: no double spaces.
        return segment.joined.flatMap(name => values.get(name) || []).join(' ');
    }
    const value = values.get(segment.argument) ?? '';
    return segment.before === undefined || value === '' ? value : segment.before + value;
}

/** Blank lines around a message are layout, not text. */
function compileLines(lines: readonly string[], firstLine: number, declared: ReadonlySet<string>): Segment[] {
    let start = 0;
    let end = lines.length;
    while (start < end && lines[start]!.trim() === '') start++;
    while (end > start && lines[end - 1]!.trim() === '') end--;
    return compileText(lines.slice(start, end).join('\n'), firstLine + start, declared);
}

export function countNewlines(text: string, end: number): number {
    let count = 0;
    for (let at = text.indexOf('\n'); at !== -1 && at < end; at = text.indexOf('\n', at + 1)) count++;
    return count;
}
