/**
 * What a file's path below the folder becomes as a prompt name, per format,
 * and which files a format reads. Each tool's own convention: a file in a
 * subfolder is named after its file (Claude Code, Codex, VS Code: the folder
 * only organises), except Gemini CLI, which names `git/commit.toml`
 * `/git:commit`: served as `git.commit`, as `:` is not for names here. A skill
 * is its folder: `review/SKILL.md` is `review`. Exposed names keep to letters,
 * digits, `_`, `-` and `.`: spaces become `-`; anything else is an error
 * naming the file. Pure.
 */
import type { PromptFormat } from '../../../config/prompt-formats.js';

const NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
export const MAX_NAME_LENGTH = 128;

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

/**
 * The name a file gets when its content names none (`name` in VS Code's and skills' front matter does).
 * `markdown` here is the convention the other formats share (file name only); today's `markdown`
 * parser (prompt-file.ts) still names by the whole path until its users are told of the change.
 */
export function defaultPromptName(format: PromptFormat, relativePath: string): NameOutcome {
    if (!isPromptFileOf(format, relativePath)) return { ok: false, message: `not a ${format} file (its name must end in "${SUFFIX[format].replace(/^\//, '')}")` };
    const stem = relativePath.slice(0, -SUFFIX[format].length);
    if (format === 'skills') {
        if (stem === '')
            return { ok: false, message: 'a SKILL.md directly in the folder has no skill folder to be named after; give it a "name" in its front matter or move it into a folder' };
        return exposedName(baseName(stem));
    }
    return exposedName(format === 'gemini-commands' ? stem.split('/').join('.') : baseName(stem));
}

/** `raw` as a name every client can type: runs of white space become one "-"; any other character outside the set is an error. */
export function exposedName(raw: string): NameOutcome {
    const name = raw.trim().replace(/\s+/g, '-');
    if (name.length === 0 || name.length > MAX_NAME_LENGTH || !NAME.test(name)) {
        return {
            ok: false,
            message: `"${raw.slice(0, MAX_NAME_LENGTH)}" does not make a prompt name (at most ${MAX_NAME_LENGTH} letters, digits, ".", "_", "-", not starting with "." or "-"); rename it`
        };
    }
    return { ok: true, name, respelt: name !== raw };
}

/** A name the file itself gives (front matter `name`): taken as written, or an error. */
export function isDeclaredNameValid(name: string): boolean {
    return name.length <= MAX_NAME_LENGTH && NAME.test(name);
}

function baseName(path: string): string {
    return path.slice(path.lastIndexOf('/') + 1);
}
