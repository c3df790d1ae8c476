/**
 * Parses one prompt file (Markdown with optional YAML front matter) into a
 * prompt definition and a compiled template (template.ts). The file is
 * untrusted input: its size, the front matter's depth and aliases, every
 * field's type and length are bounded, and every error says where (line) and
 * what to do. Pure: the caller reads the file.
 */
import type { Prompt } from '@modelcontextprotocol/client';
import { isNode, LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { exceedsDepth } from '../../lib/json-bounds.js';
import { DECLARED_NAME_RULE, isDeclaredNameValid, nameAfterFile } from './formats/names.js';
import { readPlainFrontMatter } from './plain-front-matter.js';
import { compileBody, TemplateError, type MessageTemplate } from './template.js';

/** Larger than any prompt a person writes, small enough that 10,000 of them fit in memory. */
export const MAX_PROMPT_FILE_BYTES = 262_144;
const MAX_FRONT_MATTER_DEPTH = 6;
const MAX_VALUES = 1000;
/** Arguments one prompt may declare, in every format. */
export const MAX_ARGUMENTS = 64;
export const MAX_DESCRIPTION = 4000;

export const ARGUMENT_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

export const text = (max: number) => z.string().max(max, { message: `must be at most ${max} characters` });

const FrontMatterSchema = z.strictObject({
    name: z.string().refine(isDeclaredNameValid, { message: DECLARED_NAME_RULE }).optional(),
    title: text(200).optional(),
    description: text(MAX_DESCRIPTION).optional(),
    arguments: z
        .array(
            z.strictObject({
                name: text(64).regex(ARGUMENT_NAME, { message: 'must be a letter or "_", then letters, digits, "_" or "-"' }),
                description: text(2000).optional(),
                required: z.boolean().optional(),
                values: z
                    .array(text(1000))
                    .max(MAX_VALUES, { message: `must list at most ${MAX_VALUES} values` })
                    .optional()
            })
        )
        .max(MAX_ARGUMENTS, { message: `must declare at most ${MAX_ARGUMENTS} arguments` })
        .optional(),
    icons: z
        .array(
            z.strictObject({
                src: text(8192).regex(/^(?:https:|data:)/, { message: 'must be an https: or data: URI' }),
                mimeType: text(100).optional(),
                sizes: z.array(text(20)).max(16).optional(),
                theme: z.enum(['light', 'dark']).optional()
            })
        )
        .max(8, { message: 'must list at most 8 icons' })
        .optional()
});

export interface PromptFile {
    prompt: Prompt;
    messages: MessageTemplate[];
    /** Completion values per argument name, as the front matter lists them. */
    values: ReadonlyMap<string, readonly string[]>;
}

export interface PromptFileError {
    /** 1-based, in the file; undefined when the error is about the whole file. */
    line: number | undefined;
    message: string;
}

/** Something in a file served as written that its author should hear of (same shape as an error). */
export type PromptFileWarning = PromptFileError;

export type ParseOutcome = { ok: true; file: PromptFile; warnings?: readonly PromptFileWarning[] | undefined } | { ok: false; error: PromptFileError };

/** The checks every format starts with: the size, then line ends and a byte-order mark normalised. */
export function normaliseSource(source: string): { text: string } | { error: PromptFileError } {
    if (Buffer.byteLength(source, 'utf8') > MAX_PROMPT_FILE_BYTES)
        return { error: { line: undefined, message: `larger than ${MAX_PROMPT_FILE_BYTES} bytes (the limit for prompt files); split the prompt` } };
    return { text: source.replace(/\r\n?/g, '\n').replace(/^\uFEFF/, '') };
}

/** `relativePath` is the file's path below the folder, with "/" separators: the prompt is named after its file (formats/names.ts) unless the front matter names it. */
export function parsePromptFile(source: string, relativePath: string): ParseOutcome {
    const normalised = normaliseSource(source);
    if ('error' in normalised) return { ok: false, error: normalised.error };
    const split = splitFrontMatter(normalised.text);
    if ('message' in split) return failure(split.line, split.message);
    const front = readFrontMatter(split.yaml, FrontMatterSchema);
    if (!front.ok) return failure(front.error.line === undefined ? undefined : front.error.line + 1, front.error.message);
    const data = front.data;
    const named = data.name === undefined ? nameAfterFile('markdown', relativePath) : { name: data.name, warnings: [] };
    if ('message' in named) return { ok: false, error: named };
    const declared = data.arguments ?? [];
    const duplicate = declared.find((argument, index) => declared.findIndex(other => other.name === argument.name) !== index);
    if (duplicate !== undefined) return failure((front.lineOf(['arguments']) ?? 0) + 1, `argument "${duplicate.name}" is declared twice`);
    let messages: MessageTemplate[];
    try {
        messages = compileBody(split.body, new Set(declared.map(argument => argument.name)));
    } catch (error) {
        if (error instanceof TemplateError) return failure(split.bodyLine + error.line - 1, error.message);
        throw error;
    }
    const file = { prompt: toPrompt(named.name, data), messages, values: new Map(declared.map(argument => [argument.name, argument.values ?? []])) };
    return { ok: true, file, ...(named.warnings.length === 0 ? {} : { warnings: named.warnings }) };
}

function toPrompt(name: string, data: z.infer<typeof FrontMatterSchema>): Prompt {
    return {
        name,
        ...(data.title === undefined ? {} : { title: data.title }),
        ...(data.description === undefined ? {} : { description: data.description }),
        ...(data.arguments === undefined
            ? {}
            : {
                  arguments: data.arguments.map(argument => ({
                      name: argument.name,
                      ...(argument.description === undefined ? {} : { description: argument.description }),
                      ...(argument.required === undefined ? {} : { required: argument.required })
                  }))
              }),
        ...(data.icons === undefined ? {} : { icons: data.icons })
    };
}

type Split = { yaml: string; body: string; bodyLine: number } | { line: number; message: string };

/** Front matter is a first line `---` and the next line `---`; without it the whole file is the body. */
export function splitFrontMatter(source: string): Split {
    if (!source.startsWith('---\n') && source !== '---') return { yaml: '', body: source, bodyLine: 1 };
    const lines = source.split('\n');
    const end = lines.findIndex((line, index) => index > 0 && /^(?:---|\.\.\.)\s*$/.test(line));
    if (end === -1) return { line: 1, message: 'front matter opened with "---" is never closed; add a line "---" after it' };
    return { yaml: lines.slice(1, end).join('\n'), body: lines.slice(end + 1).join('\n'), bodyLine: end + 2 };
}

export type FrontMatter<T> = { ok: true; data: T; lineOf: (path: readonly PropertyKey[]) => number | undefined } | { ok: false; error: PromptFileError };

/** Reads front matter into `schema` (each format has its own). Lines here are within the YAML text; the caller adds the opening "---". */
export function readFrontMatter<S extends z.ZodType>(yaml: string, schema: S): FrontMatter<z.infer<S>> {
    const plain = readPlainFrontMatter(yaml, MAX_FRONT_MATTER_DEPTH);
    if (plain !== undefined) {
        const parsed = schema.safeParse(plain ?? {});
        // An error is said again by the full parse below, which knows its line.
        if (parsed.success) return { ok: true, data: parsed.data, lineOf: path => lineInFull(yaml, schema, path) };
    }
    return readYamlFrontMatter(yaml, schema);
}

/** Lines are known to the full parse only: run when an error needs one. */
function lineInFull(yaml: string, schema: z.ZodType, path: readonly PropertyKey[]): number | undefined {
    const full = readYamlFrontMatter(yaml, schema);
    return full.ok ? full.lineOf(path) : undefined;
}

function readYamlFrontMatter<S extends z.ZodType>(yaml: string, schema: S): FrontMatter<z.infer<S>> {
    if (flowDepth(yaml) > MAX_FRONT_MATTER_DEPTH) return { ok: false, error: { line: undefined, message: `front matter nested deeper than ${MAX_FRONT_MATTER_DEPTH} levels` } };
    const counter = new LineCounter();
    // uniqueKeys: a key given twice is an error, not a silent override.
    const document = parseDocument(yaml, { lineCounter: counter, prettyErrors: false, uniqueKeys: true, strict: true });
    const lineAt = (offset: number | undefined) => (offset === undefined ? undefined : counter.linePos(offset).line);
    const problem = document.errors[0];
    if (problem !== undefined) return { ok: false, error: { line: lineAt(problem.pos[0]), message: `front matter is not valid YAML: ${firstLine(problem.message)}` } };
    let value: unknown;
    try {
        // No aliases at all: nothing a prompt needs, and the classic way to make a small file expand without bound.
        value = document.toJS({ maxAliasCount: 0 });
    } catch {
        return { ok: false, error: { line: undefined, message: 'front matter uses YAML aliases (*name); write the values out' } };
    }
    value ??= {};
    if (exceedsDepth(value, MAX_FRONT_MATTER_DEPTH)) return { ok: false, error: { line: undefined, message: `front matter nested deeper than ${MAX_FRONT_MATTER_DEPTH} levels` } };
    const lineOf = (path: readonly PropertyKey[]) => lineAt(nodeOffset(document, path));
    const parsed = schema.safeParse(value);
    if (parsed.success) return { ok: true, data: parsed.data, lineOf };
    const issue = parsed.error.issues[0]!;
    return { ok: false, error: { line: lineOf(issue.path), message: describeIssue(issue) } };
}

/** Where the node at `path` starts, or its nearest ancestor that exists. */
function nodeOffset(document: Document, path: readonly PropertyKey[]): number | undefined {
    for (let length = path.length; length >= 0; length--) {
        const node: unknown = length === 0 ? document.contents : document.getIn(path.slice(0, length), true);
        if (isNode(node) && node.range !== undefined && node.range !== null) return node.range[0];
    }
    return undefined;
}

function describeIssue(issue: z.core.$ZodIssue): string {
    const field =
        issue.path.length === 0
            ? 'front matter'
            : issue.path
                  .map(part => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
                  .join('')
                  .replace(/^\./, '');
    switch (issue.code) {
        case 'unrecognized_keys':
            return `${field}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map(key => JSON.stringify(key.slice(0, 64))).join(', ')}; the keys are name, title, description, arguments (name, description, required, values), icons`;
        case 'invalid_type':
            return `${field}: expected ${issue.expected}${issue.expected === 'string' ? ' (quote values such as 1.0, yes or 2024-01-01)' : ''}`;
        default:
            return `${field}: ${issue.message}`;
    }
}

/** Deepest nesting of [ and { (quotes not considered: an over-count only refuses odd files), checked before the parser recurses into it. */
function flowDepth(yaml: string): number {
    let depth = 0;
    let deepest = 0;
    for (const character of yaml) {
        if (character === '[' || character === '{') deepest = Math.max(deepest, ++depth);
        else if ((character === ']' || character === '}') && depth > 0) depth--;
    }
    return deepest;
}

function firstLine(message: string): string {
    return message.split('\n')[0]!.slice(0, 200);
}

function failure(line: number | undefined, message: string): ParseOutcome {
    return { ok: false, error: { line, message } };
}
