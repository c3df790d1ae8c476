/**
 * The prompt folder of the starter: a `files` upstream beside the config file, and one example prompt in it that
 * `init` writes when the folder is not there yet. A folder that exists is the user's: nothing in it is written.
 */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The starter's `files` upstream: its id, and its folder relative to the config file (as the config resolves it). */
export const STARTER_FOLDER = { id: 'team', path: 'prompts' } as const;

const EXAMPLE_NAME = 'explain';

/** The example's exposed name, as clients list it. */
export const EXAMPLE_PROMPT = `${STARTER_FOLDER.id}__${EXAMPLE_NAME}`;

/** The gateway's own format (docs/prompt-files.md): one argument with completion values first, free text last. */
const EXAMPLE_TEXT = `---
# An example prompt, written by \`mcp-prompt-gateway init\`. Every .md file in this folder (and in
# its subfolders) is a prompt named after the file, served as "${STARTER_FOLDER.id}__<name>"; the gateway
# reloads them as they change. Edit this one, add more beside it, and check them with --check.
# The format: docs/prompt-files.md in the gateway's repository.
title: Explain
description: Explain code, an error or a concept to a chosen audience.
arguments:
  # Claude Code splits what is typed after a slash command on spaces, in this order:
  # one-word arguments first, free text last.
  - name: audience
    description: Who the explanation is for
    required: true
    values: [newcomer, teammate, expert]
  - name: subject
    description: What to explain - a question, an error message or code; blank for what we are working on
---
Explain the subject below to a {{audience}}; if it is blank, explain the code or error we
are working on. Start with the idea in a sentence or two, then the details a {{audience}}
needs, then one short example. Define terms they may not know, and say what you are
unsure of.

Subject: {{subject}}
`;

/** What `init` did with the prompt folder. */
export type PromptFolderOutcome =
    /** The folder was made, with the example prompt in it (absolute path). */
    | { kind: 'created'; folder: string; example: string }
    /** The folder was there: left as it was, its files served as they are. */
    | { kind: 'kept'; folder: string };

/** The starter's prompt folder for a config written at `configFile`. */
export function starterFolder(configFile: string): string {
    return path.join(path.dirname(configFile), STARTER_FOLDER.path);
}

/**
 * Why the folder cannot be the starter's prompt folder (something other than a folder is there), or undefined.
 * Asked before anything is written, so that init refuses with nothing half done.
 */
export async function folderRefusal(folder: string): Promise<string | undefined> {
    try {
        if ((await stat(folder)).isDirectory()) return undefined;
        return `${folder} exists and is not a folder: the starter serves the prompt files of a folder there; move it, or write the config elsewhere with --output <file>`;
    } catch (error) {
        // Missing (or under a missing folder, which writing the config reports): made after the config is written.
        if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return undefined;
        throw error;
    }
}

/** Makes the folder with the example in it, unless the folder exists: then nothing in it is touched. */
export async function ensurePromptFolder(folder: string): Promise<PromptFolderOutcome> {
    try {
        await mkdir(folder);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { kind: 'kept', folder };
        throw error;
    }
    const example = path.join(folder, `${EXAMPLE_NAME}.md`);
    // The folder is new, so the file cannot be there; 'wx' all the same: a user's file is never overwritten.
    await writeFile(example, EXAMPLE_TEXT, { flag: 'wx' });
    return { kind: 'created', folder, example };
}
