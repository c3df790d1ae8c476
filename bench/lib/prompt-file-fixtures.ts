/**
 * The prompt files the prompt-files scenario loads: one prompt of comparable content written in each format a files
 * upstream reads (docs/prompt-files.md), about 600 bytes each, laid out as that tool keeps them. Each is a review
 * prompt of one service with a description and two argument slots (a free-text focus and the diff), in the format's
 * own syntax. Used by the scenario (to write the folder) and by bench/prompt-files-load.ts (to change one file).
 */
import type { PromptFormat } from '../../src/config/prompt-formats.js';

/** Subfolders of a format that has them (Gemini's are namespaces; Claude Code's and ours only organise). */
const FOLDERS = 50;

interface PromptFileFixture {
    /** How the tool keeps its files, for the report. */
    layout: string;
    /** File `index`'s path below the folder, "/"-separated. */
    pathOf(index: number): string;
    /** File `index`'s text, with `description` as its description. */
    textOf(index: number, description: string): string;
}

const describe = (index: number) => `Reviews a change of service ${index} for correctness, security and clarity.`;

/** The body every format shares, its two slots in the format's syntax. */
const body = (index: number, focus: string, diff: string) => `Review the following change to service ${index}. Pay most attention to ${focus}.

Point out bugs first, then risky patterns, then style. Quote the lines you mean, and say which findings block the
merge and which can wait for a follow-up change. Check error handling, input validation, resource cleanup and the
tests that cover the change, in that order.

${diff}
`;

const inFolders = (name: (index: number) => string) => (index: number) => `group-${index % FOLDERS}/${name(index)}`;
const inFoldersLayout = `${FOLDERS} subfolders`;

export const PROMPT_FILE_FIXTURES: Record<PromptFormat, PromptFileFixture> = {
    markdown: {
        layout: inFoldersLayout,
        pathOf: inFolders(index => `prompt-${index}.md`),
        textOf: (index, description) => `---
title: Prompt ${index}
description: ${description}
arguments:
  - name: diff
    description: The change, as a unified diff
    required: true
  - name: focus
    description: What to look at most closely
    values: [security, performance, readability, tests]
---
${body(index, '{{focus}}', '{{diff}}')}`
    },
    'claude-commands': {
        layout: inFoldersLayout,
        pathOf: inFolders(index => `review-${index}.md`),
        // Claude Code's own example of a hint: not YAML as written (the parser quotes it).
        textOf: (index, description) => `---
description: ${description}
argument-hint: [diff] [focus]
allowed-tools: Read, Grep
model: claude-sonnet-4-5
---
${body(index, '$2', '$1')}`
    },
    'codex-prompts': {
        layout: 'one folder',
        pathOf: index => `review-${index}.md`,
        textOf: (index, description) => `---
description: ${description}
argument-hint: [focus] [diff]
---
${body(index, '$1', 'The whole request: $ARGUMENTS')}`
    },
    'vscode-prompts': {
        layout: 'one folder',
        pathOf: index => `review-${index}.prompt.md`,
        textOf: (index, description) => `---
description: ${description}
mode: agent
model: GPT-4o
---
${body(index, '${input:focus:security, performance, readability or tests}', '${input:diff:The change, as a unified diff}')}`
    },
    'gemini-commands': {
        layout: inFoldersLayout,
        pathOf: inFolders(index => `review-${index}.toml`),
        textOf: (index, description) => `description = ${JSON.stringify(description)}
prompt = """
${body(index, 'what the request below names, or else security', '{{args}}')}"""
`
    },
    skills: {
        layout: 'a folder per skill',
        pathOf: index => `review-${index}/SKILL.md`,
        textOf: (index, description) => `---
name: review-${index}
description: ${description}
license: Apache-2.0
---
${body(index, 'what the request names, or else security', '$ARGUMENTS')}`
    }
};

/** File `index` as first written. */
export const fixtureText = (format: PromptFormat, index: number) => PROMPT_FILE_FIXTURES[format].textOf(index, describe(index));
