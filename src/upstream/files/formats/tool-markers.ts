/**
 * What another tool would run or read when it expands a prompt: Claude Code's
 * ``!`command` `` (runs a shell command, inlines its output) and `@path`
 * (inlines a file), Gemini CLI's `!{command}` and `@{path}`. The gateway never
 * runs or reads them. A file holding them is served, with them left as
 * written, and a warning per marker (log, /healthz, dashboard, `--check`):
 *
 * - Nothing is run or read either way: the text is inert to the gateway, and a
 *   client receives it as prompt text, as it receives any other.
 * - Such lines are how teams write these tools' commands (a commit-message
 *   command starts from `!{git diff --staged}`): refusing them would leave out
 *   much of the library this feature is for, and make the team rewrite files.
 * - The prompt still reads sensibly without the output: the model sees which
 *   command or file was meant, and a client with tools of its own may fetch it,
 *   under that client's permissions, on the user's machine.
 *
 * One rule for every format: warned, served as written. Pure.
 */
import type { PromptFileWarning } from '../prompt-file.js';
import { countNewlines } from '../template.js';

/** Beyond these, one more warning says how many were left unsaid: a file of thousands of markers does not flood the log. */
const MAX_MARKER_WARNINGS = 20;
const SHOWN = 120;

interface Marker {
    pattern: RegExp;
    /** Whether a match is a marker (e.g. `@alice` names a person, not a file). */
    counts: (match: RegExpExecArray) => boolean;
    what: string;
}

const CLAUDE_MARKERS: Marker[] = [
    { pattern: /!`[^`\n]+`/g, counts: () => true, what: 'runs this shell command in Claude Code' },
    // A file reference stands at the start of a word and looks like a path; "@alice" or "a@b.c" are left alone.
    { pattern: /(?<![^\s(])@[^\s`'"()<>]*[^\s`'"()<>.,;:!?]/g, counts: match => /[./~]/.test(match[0].slice(1)), what: 'inlines this file in Claude Code' }
];

const GEMINI_MARKERS: Marker[] = [
    { pattern: /!\{/g, counts: () => true, what: 'runs this shell command in Gemini CLI' },
    { pattern: /@\{/g, counts: () => true, what: 'inlines this file or folder in Gemini CLI' }
];

export type MarkerDialect = 'claude' | 'gemini';

/** Warnings for the markers in `text`, whose first line is line `firstLine` of the file. */
export function toolMarkerWarnings(dialect: MarkerDialect, text: string, firstLine: number): PromptFileWarning[] {
    const found: { at: number; shown: string; what: string }[] = [];
    for (const marker of dialect === 'claude' ? CLAUDE_MARKERS : GEMINI_MARKERS) {
        for (const match of text.matchAll(marker.pattern)) {
            if (marker.counts(match)) found.push({ at: match.index, shown: dialect === 'gemini' ? braced(text, match.index) : match[0], what: marker.what });
        }
    }
    found.sort((a, b) => a.at - b.at);
    return capWarnings(
        found.map(({ at, shown, what }) => ({
            line: firstLine + countNewlines(text, at),
            message: `${clip(shown)} ${what}; the gateway never runs or reads it: served as written`
        })),
        'markers'
    );
}

/** The first warnings of a kind, then one that counts the rest (`what`: what they are about). */
export function capWarnings(warnings: PromptFileWarning[], what: string): PromptFileWarning[] {
    if (warnings.length <= MAX_MARKER_WARNINGS) return warnings;
    return [...warnings.slice(0, MAX_MARKER_WARNINGS), { line: undefined, message: `${warnings.length - MAX_MARKER_WARNINGS} more such ${what}, served as written` }];
}

/** `!{...}` or `@{...}` up to its closing brace (braces inside balanced, as Gemini CLI reads them), or to the end of the line. */
function braced(text: string, start: number): string {
    let depth = 0;
    for (let at = start + 1; at < text.length && at < start + 1000; at++) {
        const character = text[at];
        if (character === '\n') break;
        if (character === '{') depth++;
        else if (character === '}' && --depth === 0) return text.slice(start, at + 1);
    }
    return text.slice(start, text.indexOf('\n', start) === -1 ? undefined : text.indexOf('\n', start));
}

export function clip(shown: string): string {
    return shown.length > SHOWN ? `${shown.slice(0, SHOWN)}…` : shown;
}
