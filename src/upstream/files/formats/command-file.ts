/**
 * What every format other than `markdown` shares: the front matter as those
 * tools read it (loosely: unknown keys are theirs, not errors), the prompt
 * built from a name, a description, arguments and one user message, and the
 * fields with no MCP meaning (`model`, `allowed-tools`, `tools`, ...) kept in
 * the prompt's `_meta`. Pure.
 */
import type { Prompt, PromptArgument } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { MAX_ARGUMENTS, MAX_DESCRIPTION, readFrontMatter, splitFrontMatter, text, type ParseOutcome, type PromptFileError, type PromptFileWarning } from '../prompt-file.js';
import type { Segment } from '../template.js';
import type { PromptFormat } from '../../../config/prompt-formats.js';

/** One key of the prompt's `_meta` holds the tool's own fields, named after the format: no clash with MCP's keys or another tool's. */
const metaKeyOf = (format: PromptFormat) => `mcp-prompt-gateway/${format}`;

const CommandFrontMatter = z.looseObject({
    name: text(128).nullish(),
    description: text(MAX_DESCRIPTION).nullish(),
    // Quoted before parsing when on one line; a block list (`- a`) is a list.
    'argument-hint': z.union([text(1000), z.array(text(200)).max(MAX_ARGUMENTS)]).nullish()
});

export type CommandFields = z.infer<typeof CommandFrontMatter>;

export interface CommandSource {
    fields: CommandFields;
    /** The front matter's other keys, for `_meta`. */
    rest: Record<string, unknown>;
    body: string;
    /** The line of the file the body starts on. */
    bodyLine: number;
    lineOf: (key: string) => number | undefined;
}

/** Keys read here, and so not copied to `_meta` (`argument-hint` is: MCP has no field for it). */
const READ_KEYS = new Set(['name', 'description']);

export function readCommandSource(normalised: string): CommandSource | { error: PromptFileError } {
    const split = splitFrontMatter(normalised);
    if ('message' in split) return { error: { line: split.line, message: split.message } };
    // `argument-hint` is text to these tools, and mostly not YAML (`[pr-number] [priority]`): quoted first, it
    // costs one parse, not a failed one and a second.
    const yaml = quoteTopLevelValues(split.yaml, key => key === 'argument-hint');
    let front = readFrontMatter(yaml, CommandFrontMatter);
    if (!front.ok && front.error.message.startsWith('front matter is not valid YAML')) {
        // These tools read `argument-hint: [pr-number] [priority]` (Claude Code's own example) or
        // `description: Fix: typos` as written; YAML does not. Read again with every top-level value
        // taken as the text it is, as Claude Code does: nothing for the author to fix, so no warning.
        const strict = front.error;
        front = readFrontMatter(
            quoteTopLevelValues(yaml, () => true),
            CommandFrontMatter
        );
        // Still not YAML: the first error is the author's to fix; a value of the wrong length or type is said as such.
        if (!front.ok && front.error.message.startsWith('front matter is not valid YAML')) front = { ok: false, error: strict };
    }
    if (!front.ok) return { error: { line: at(front.error.line), message: front.error.message } };
    const rest = Object.fromEntries(Object.entries(front.data).filter(([key]) => !READ_KEYS.has(key)));
    const lineOf = front.lineOf;
    return { fields: front.data, rest, body: split.body, bodyLine: split.bodyLine, lineOf: key => at(lineOf([key])) };
}

/** A line within the YAML is one more in the file (the opening "---"). */
const at = (line: number | undefined) => (line === undefined ? undefined : line + 1);

/** Each top-level `key: value` on one line whose key `quoted` picks, its value unquoted, with the value in double quotes. */
function quoteTopLevelValues(yaml: string, quoted: (key: string) => boolean): string {
    return yaml
        .split('\n')
        .map(line => {
            // trimEnd, not a trailing \s* in the pattern: that backtracks quadratically on a long run of spaces.
            const match = /^([A-Za-z_][A-Za-z0-9_-]*):[ \t]+(\S.*)$/.exec(line.trimEnd());
            if (match === null || !quoted(match[1]!) || /^["'|>]/.test(match[2]!)) return line;
            return `${match[1]}: ${JSON.stringify(match[2])}`;
        })
        .join('\n');
}

export interface PromptParts {
    format: PromptFormat;
    name: string;
    description: string | undefined;
    arguments: PromptArgument[];
    segments: Segment[];
    meta: Record<string, unknown>;
    warnings: PromptFileWarning[];
}

export function builtPrompt(parts: PromptParts): ParseOutcome {
    if (parts.arguments.length > MAX_ARGUMENTS)
        return { ok: false, error: { line: undefined, message: `${parts.arguments.length} arguments; a prompt takes at most ${MAX_ARGUMENTS}` } };
    const prompt: Prompt = {
        name: parts.name,
        ...(parts.description === undefined || parts.description === '' ? {} : { description: parts.description }),
        ...(parts.arguments.length === 0 ? {} : { arguments: parts.arguments }),
        ...(Object.keys(parts.meta).length === 0 ? {} : { _meta: { [metaKeyOf(parts.format)]: parts.meta } })
    };
    const values = new Map(parts.arguments.map(argument => [argument.name, [] as string[]]));
    return { ok: true, file: { prompt, messages: [{ role: 'user', segments: parts.segments }], values }, ...(parts.warnings.length === 0 ? {} : { warnings: parts.warnings }) };
}

/** The description Claude Code and Codex show for a file without one: its first line of text, heading marks left out. */
export function firstLineOf(body: string): string | undefined {
    const line = body.split('\n').find(candidate => candidate.trim() !== '');
    if (line === undefined) return undefined;
    const text = line.replace(/^\s*#+\s*/, '').trim();
    return text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION - 1)}…` : text;
}

/** Blank lines around the body are layout (as in the `markdown` format); `firstLine` moves past the leading ones. */
export function trimBody(body: string, firstLine: number): { text: string; firstLine: number } {
    const leading = /^(?:[ \t]*\n)*/.exec(body)![0];
    return { text: body.slice(leading.length).trimEnd(), firstLine: firstLine + leading.split('\n').length - 1 };
}
