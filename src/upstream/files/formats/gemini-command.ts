/**
 * A Gemini CLI command (`.gemini/commands/**\/*.toml`): TOML with `prompt`
 * (required) and `description`. `{{args}}` is one argument `args`; a prompt
 * without it gets what was typed appended after a blank line, as Gemini CLI
 * appends the command line (`/git:commit <args>`). `!{...}` and `@{...}` are
 * never run or read (tool-markers.ts). The TOML is bounded before it is parsed
 * (toml-scan.ts): its size, keys, items, dots and nesting. Pure.
 */
import { parse, TomlError } from 'smol-toml';
import { z } from 'zod';
import { exceedsDepth } from '../../../lib/json-bounds.js';
import { MAX_DESCRIPTION, text, type ParseOutcome, type PromptFileError } from '../prompt-file.js';
import { compileMatches, type Segment } from '../template.js';
import { builtPrompt, trimBody } from './command-file.js';
import { toolMarkerWarnings } from './tool-markers.js';
import { scanToml } from './toml-scan.js';

const MAX_DEPTH = 6;

const GeminiCommand = z.looseObject({
    prompt: z.string({ error: issue => (issue.input === undefined ? 'is missing: a command needs "prompt", the text sent to the model' : 'must be a string') }),
    description: text(MAX_DESCRIPTION).optional()
});

/** `name` is what the file is served as (`git.commit`); `normalised` has passed normaliseSource. */
export function parseGeminiCommand(normalised: string, name: string): ParseOutcome {
    const read = readToml(normalised);
    if ('message' in read) return { ok: false, error: read };
    const { value, keyLines } = read;
    const parsed = GeminiCommand.safeParse(value);
    if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        const key = String(issue.path[0] ?? '');
        return { ok: false, error: { line: keyLines.get(key), message: `${key || 'command'}: ${issue.message}` } };
    }
    const { prompt, description, ...rest } = parsed.data;
    const keyLine = keyLines.get('prompt');
    // A multi-line string's text starts on the line after its opening quotes.
    const opensAlone = keyLine !== undefined && /^[ \t]*prompt[ \t]*=[ \t]*(?:"""|''')\n/m.test(normalised);
    const body = trimBody(prompt, (keyLine ?? 1) + (opensAlone ? 1 : 0));
    const hasArgs = body.text.includes('{{args}}');
    const segments = compileMatches(body.text, /\{\{args\}\}/g, (): Segment => ({ argument: 'args' }));
    // Gemini CLI appends the whole command typed: `/git:commit` then what followed it.
    if (!hasArgs) segments.push({ argument: 'args', before: `\n\n/${name.split('.').join(':')} ` });
    return builtPrompt({
        format: 'gemini-commands',
        name,
        description,
        arguments: [{ name: 'args', ...(hasArgs ? {} : { description: 'Appended to the prompt after a blank line, as Gemini CLI appends what was typed' }) }],
        segments,
        meta: jsonSafe(rest),
        warnings:
            keyLine === undefined
                ? toolMarkerWarnings('gemini', body.text, 1).map(warning => ({ ...warning, line: undefined }))
                : toolMarkerWarnings('gemini', body.text, body.firstLine)
    });
}

function readToml(source: string): { value: unknown; keyLines: ReadonlyMap<string, number> } | PromptFileError {
    const scan = scanToml(source);
    if (!scan.ok) return { line: scan.line, message: `${scan.message}; not read` };
    let value: unknown;
    try {
        value = parse(source, { maxDepth: MAX_DEPTH, unsafeKeyBehaviour: 'throw' });
    } catch (error) {
        if (!(error instanceof TomlError)) throw error;
        const reason = error.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
        return { line: error.line, message: `not valid TOML: ${reason.includes('nested') ? `nested deeper than ${MAX_DEPTH} levels` : reason}` };
    }
    // Dotted keys and table headers nest without smol-toml's maxDepth.
    if (exceedsDepth(value, MAX_DEPTH)) return { line: undefined, message: `nested deeper than ${MAX_DEPTH} levels (dotted keys or table headers); not read` };
    return { value, keyLines: scan.keyLines };
}

/** Dates become their ISO text: `_meta` is JSON. */
function jsonSafe(value: Record<string, unknown>): Record<string, unknown> {
    return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}
