/**
 * What a file's path below the folder becomes as a prompt name, per format,
 * and which files a format reads. Each tool's own convention: a file in a
 * subfolder is named after its file (Claude Code, Codex, VS Code, and the
 * gateway's own `markdown`: the folder only organises), except Gemini CLI, which names `git/commit.toml`
 * `/git:commit`: served as `git.commit`, as `:` is not for names here. A skill
 * is its folder: `review/SKILL.md` is `review`. Exposed names keep to letters,
 * digits, `_`, `-` and `.`: spaces become `-`; anything else is an error
 * naming the file. Pure.
 */
import type { PromptFormat } from '../../../config/prompt-formats.js';
import type { PromptFileError, PromptFileWarning } from '../prompt-file.js';

const NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
const MAX_NAME_LENGTH = 128;
/** What to do about a file name that makes no prompt name. */
const RENAME_OR_NAME = 'rename it, or give it a "name" in its front matter';
const RENAME_SKILL = 'rename the folder, or give the skill a "name" in its front matter';

const SUFFIX: Record<PromptFormat, string> = {
    markdown: '.md',
    'claude-commands': '.md',
    'codex-prompts': '.md',
    'vscode-prompts': '.prompt.md',
    'gemini-commands': '.toml',
    skills: '/SKILL.md'
};

/** Whether the file at `relativePath` ("/"-separated, below the folder) is one the format reads. */
export function isPromptFileOf(format: PromptFormat, relativePath: string): boolean {
    if (format === 'skills') return relativePath === 'SKILL.md' || relativePath.endsWith(SUFFIX.skills);
    return relativePath.endsWith(SUFFIX[format]) && !baseName(relativePath).startsWith('.');
}

export type NameOutcome = { ok: true; name: string; respelt: boolean } | { ok: false; message: string };

/** The formats whose files may name themselves (front matter `name`); the others are named after their file only. */
export function namesItself(format: PromptFormat): boolean {
    return format === 'markdown' || format === 'vscode-prompts' || format === 'skills';
}

/** The name a file gets when its content names none (`name` in the front matter of the formats that have one). */
export function defaultPromptName(format: PromptFormat, relativePath: string): NameOutcome {
    if (!isPromptFileOf(format, relativePath)) return { ok: false, message: `not a ${format} file (its name must end in "${SUFFIX[format].replace(/^\//, '')}")` };
    const stem = relativePath.slice(0, -SUFFIX[format].length);
    if (format === 'skills') {
        if (stem === '')
            return { ok: false, message: 'a SKILL.md directly in the folder has no skill folder to be named after; give it a "name" in its front matter or move it into a folder' };
        return exposedName(baseName(stem), RENAME_SKILL);
    }
    return exposedName(format === 'gemini-commands' ? stem.split('/').join('.') : baseName(stem), namesItself(format) ? RENAME_OR_NAME : 'rename it');
}

/** The default name as the parsers take it: a name respelt comes with a warning; an error says how the file may name itself. */
export function nameAfterFile(format: PromptFormat, relativePath: string): { name: string; warnings: PromptFileWarning[] } | PromptFileError {
    const named = defaultPromptName(format, relativePath);
    if (!named.ok) return { line: undefined, message: named.message };
    const warnings = named.respelt ? [{ line: undefined, message: `served as "${named.name}": white space in a file name becomes "-"` }] : [];
    return { name: named.name, warnings };
}

/**
 * What a prompt once named by its file's path below the folder (`ops/incident`, as `markdown` named files
 * before they were named after their file) is named now (`incident`); undefined when it makes no name.
 */
export function renamedAfterFile(format: PromptFormat, pathName: string): string | undefined {
    const named = defaultPromptName(format, `${pathName}${SUFFIX[format]}`);
    return named.ok ? named.name : undefined;
}

/** `raw` as a name every client can type: runs of white space become one "-"; any other character outside the set is an error saying `fix`. */
export function exposedName(raw: string, fix = 'rename it'): NameOutcome {
    const name = raw.trim().replace(/\s+/g, '-');
    if (name.length === 0 || name.length > MAX_NAME_LENGTH || !NAME.test(name)) {
        return {
            ok: false,
            message: `"${raw.slice(0, MAX_NAME_LENGTH)}" does not make a prompt name (at most ${MAX_NAME_LENGTH} letters, digits, ".", "_", "-", not starting with "." or "-"); ${fix}`
        };
    }
    return { ok: true, name, respelt: name !== raw };
}

/** What a name the file itself gives must be (no "/": a folder is not part of a name). */
export const DECLARED_NAME_RULE = `must be at most ${MAX_NAME_LENGTH} letters, digits, ".", "_", "-", not starting with "." or "-" (no "/": a prompt is named without its folders)`;

/** A name the file itself gives (front matter `name`): taken as written, or an error. */
export function isDeclaredNameValid(name: string): boolean {
    return name.length <= MAX_NAME_LENGTH && NAME.test(name);
}

function baseName(path: string): string {
    return path.slice(path.lastIndexOf('/') + 1);
}
