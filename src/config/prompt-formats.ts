/** The prompt file formats a `files` upstream reads (docs/prompt-files.md): `markdown` is the gateway's own. */
export const PROMPT_FORMATS = ['markdown', 'claude-commands', 'codex-prompts', 'vscode-prompts', 'gemini-commands', 'skills'] as const;

export type PromptFormat = (typeof PROMPT_FORMATS)[number];
