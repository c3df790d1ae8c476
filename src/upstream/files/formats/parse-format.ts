/**
 * One prompt file read as the tool it was written for reads it
 * (docs/prompt-files.md): `parseByFormat` gives the same outcome as the
 * gateway's own format (a prompt, its compiled message, or an error with its
 * line), plus warnings for what is served as written. Pure: the caller reads
 * the file.
 */
import { normaliseSource, parsePromptFile, type ParseOutcome, type PromptFileWarning } from '../prompt-file.js';
import { builtPrompt, firstLineOf, readCommandSource, trimBody, type CommandSource } from './command-file.js';
import { BodyError, compileDollarBody, type CompiledBody } from './dollar-body.js';
import type { PromptFormat } from '../../../config/prompt-formats.js';
import { parseGeminiCommand } from './gemini-command.js';
import { DECLARED_NAME_RULE, isDeclaredNameValid, nameAfterFile, namesItself } from './names.js';
import { toolMarkerWarnings } from './tool-markers.js';
import { compileVscodeBody } from './vscode-body.js';

type MarkdownFormat = Exclude<PromptFormat, 'markdown' | 'gemini-commands'>;

/** `relativePath` is the file's path below the folder, with "/" separators. */
export function parseByFormat(format: PromptFormat, source: string, relativePath: string): ParseOutcome {
    if (format === 'markdown') return parsePromptFile(source, relativePath);
    const normalised = normaliseSource(source);
    if ('error' in normalised) return { ok: false, error: normalised.error };
    if (format === 'gemini-commands') {
        const named = nameAfterFile(format, relativePath);
        return 'message' in named ? { ok: false, error: named } : withWarnings(parseGeminiCommand(normalised.text, named.name), named.warnings);
    }
    return parseCommandFile(format, normalised.text, relativePath);
}

function parseCommandFile(format: MarkdownFormat, text: string, relativePath: string): ParseOutcome {
    const source = readCommandSource(text);
    if ('error' in source) return { ok: false, error: source.error };
    const named = nameOf(format, source, relativePath);
    if ('message' in named) return { ok: false, error: named };
    const body = trimBody(source.body, source.bodyLine);
    let compiled: CompiledBody;
    try {
        compiled = compileBodyOf(format, body, source);
    } catch (error) {
        if (error instanceof BodyError) return { ok: false, error: { line: error.line, message: error.message } };
        throw error;
    }
    const description = source.fields.description ?? (format === 'vscode-prompts' ? undefined : firstLineOf(body.text));
    return builtPrompt({
        format,
        name: named.name,
        description: description ?? undefined,
        arguments: compiled.arguments,
        segments: compiled.segments,
        meta: source.rest,
        warnings: [...named.warnings, ...compiled.warnings, ...(format === 'claude-commands' || format === 'skills' ? toolMarkerWarnings('claude', body.text, body.firstLine) : [])]
    });
}

function compileBodyOf(format: MarkdownFormat, body: { text: string; firstLine: number }, source: CommandSource): CompiledBody {
    if (format === 'vscode-prompts') return compileVscodeBody(body.text, body.firstLine);
    const hint = source.fields['argument-hint'] ?? undefined;
    return compileDollarBody(format === 'codex-prompts' ? 'codex' : 'claude', body.text, hint, () => source.lineOf('argument-hint'));
}

/** VS Code and skills let the front matter name the prompt; Claude Code and Codex name it after the file only. */
function nameOf(
    format: MarkdownFormat,
    source: CommandSource,
    relativePath: string
): { name: string; warnings: PromptFileWarning[] } | { line: number | undefined; message: string } {
    const declared = namesItself(format) ? source.fields.name : undefined;
    if (declared === undefined || declared === null) return nameAfterFile(format, relativePath);
    if (isDeclaredNameValid(declared)) return { name: declared, warnings: [] };
    return { line: source.lineOf('name'), message: `name: ${DECLARED_NAME_RULE}` };
}

/** A file served with a name respelt says so first. */
function withWarnings(outcome: ParseOutcome, warnings: readonly PromptFileWarning[]): ParseOutcome {
    if (!outcome.ok || warnings.length === 0) return outcome;
    return { ...outcome, warnings: [...warnings, ...(outcome.warnings ?? [])] };
}
