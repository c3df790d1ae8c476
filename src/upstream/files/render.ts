/**
 * A prompt file's answers: `prompts/get` renders its compiled messages with
 * the client's arguments (checked before by the catalog, as for any upstream),
 * `completion/complete` offers the values the front matter lists. Pure.
 */
import type { CompleteResult, GetPromptResult, PromptMessage } from '@modelcontextprotocol/client';
import type { PromptFile } from './prompt-file.js';
import { renderSegments } from './template.js';

/** What the protocol allows in one completion answer. */
const MAX_COMPLETIONS = 100;

export function renderPrompt(file: PromptFile, args: Record<string, string> | undefined): GetPromptResult {
    // A Map: argument names are data, "__proto__" included.
    const values = new Map(Object.entries(args ?? {}));
    const messages = file.messages.map((message): PromptMessage => {
        const text = renderSegments(message.segments, values);
        if (message.resource === undefined) return { role: message.role, content: { type: 'text', text } };
        const { uri, mimeType } = message.resource;
        return { role: message.role, content: { type: 'resource', resource: { uri, ...(mimeType === undefined ? {} : { mimeType }), text } } };
    });
    return { ...(file.prompt.description === undefined ? {} : { description: file.prompt.description }), messages };
}

/** The listed values that start with what the client typed (case-insensitive), in the order the file lists them. */
export function completeArgument(file: PromptFile, argument: string, typed: string): CompleteResult {
    const prefix = typed.toLowerCase();
    const matches = (file.values.get(argument) ?? []).filter(value => value.toLowerCase().startsWith(prefix));
    return { completion: { values: matches.slice(0, MAX_COMPLETIONS), total: matches.length, hasMore: matches.length > MAX_COMPLETIONS } };
}
