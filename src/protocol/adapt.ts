/**
 * How a result built in the newest protocol revision is brought down to the
 * revision a client negotiated (what each can carry: revisions.ts). Upstream results are
 * parsed by the SDK in the newest revision's terms, so an older client would
 * otherwise get content types its schema rejects (`audio` before 2025-03-26,
 * `resource_link` before 2025-06-18). The rules (also the table in docs/protocol-revisions.md):
 *
 * - `title` (prompts, arguments, resource links): from 2025-06-18.
 * - `icons` (prompts, resource links): from 2025-11-25.
 * - `_meta` on prompts, content blocks and resource contents: from 2025-06-18.
 *   A result's own `_meta` is in every revision and kept.
 * - `annotations.lastModified`: from 2025-06-18.
 * - `audio` content: from 2025-03-26; before, a text block naming what was left out.
 * - `resource_link` content: from 2025-06-18; before, a text block with its name and URI.
 * - progress `message`: from 2025-03-26.
 * - `resultType` on every result: from 2026-07-28 ("complete"; the stateless
 *   revision). `ttlMs` and `cacheScope` on `prompts/list` and
 *   `server/discover`: from 2026-07-28. What an upstream of that revision
 *   puts there (and the `serverInfo` it names itself by in `_meta`) is its
 *   own and never passed on: the gateway answers with its own.
 * - Requests for input (elicitation, sampling, roots), whichever era asks and
 *   whichever answers (a 2026-07-28 upstream's `input_required`, a 2025
 *   upstream's own request; a 2025 client asked on its request's stream, a
 *   2026-07-28 client through `input_required` and its retry): brought to the
 *   client's revision by protocol/input-requests.ts (`forRevision`), with the
 *   revision table's input columns; what a revision cannot carry is refused,
 *   naming it, never cut.
 *
 * A revision newer than the gateway knows (or none yet) gets everything unchanged.
 */
import type { Annotations, ContentBlock, GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage } from '@modelcontextprotocol/client';
import type { Revision } from './revisions.js';

export function adaptPromptList(result: ListPromptsResult, revision: Revision): ListPromptsResult {
    if (revision.current) return result;
    return { ...result, prompts: result.prompts.map(prompt => adaptPrompt(prompt, revision)) };
}

export function adaptGetPrompt(result: GetPromptResult, revision: Revision): GetPromptResult {
    if (revision.current) return result;
    return { ...result, messages: result.messages.map(message => adaptMessage(message, revision)) };
}

export interface ProgressParams {
    progress: number;
    total?: number | undefined;
    message?: string | undefined;
}

export function adaptProgress(params: ProgressParams, revision: Revision): ProgressParams {
    const { progress, total, message } = params;
    return {
        progress,
        ...(total === undefined ? {} : { total }),
        ...(message === undefined || !revision.progressMessage ? {} : { message })
    };
}

function adaptPrompt(prompt: Prompt, revision: Revision): Prompt {
    const adapted = withoutNewFields(prompt, revision);
    if (prompt.arguments === undefined) return adapted;
    return { ...adapted, arguments: prompt.arguments.map(argument => withoutNewFields<PromptArgument>(argument, revision)) };
}

function adaptMessage(message: PromptMessage, revision: Revision): PromptMessage {
    return { ...message, content: adaptContent(message.content, revision) };
}

function adaptContent(block: ContentBlock, revision: Revision): ContentBlock {
    if (block.type === 'audio' && !revision.audio) {
        return textInstead(block, `[audio omitted: ${block.mimeType}, not supported by MCP ${revision.version}]`, revision);
    }
    if (block.type === 'resource_link' && !revision.resourceLinks) {
        const label = `${block.title ?? block.name}: ${block.uri}`;
        return textInstead(block, block.description === undefined ? label : `${label}\n${block.description}`, revision);
    }
    const adapted = withoutNewFields(block, revision);
    if (adapted.annotations !== undefined) adapted.annotations = adaptAnnotations(adapted.annotations, revision);
    if (adapted.type === 'resource') adapted.resource = withoutNewFields(adapted.resource, revision);
    return adapted;
}

function textInstead(block: ContentBlock, text: string, revision: Revision): ContentBlock {
    return block.annotations === undefined ? { type: 'text', text } : { type: 'text', text, annotations: adaptAnnotations(block.annotations, revision) };
}

function adaptAnnotations(annotations: Annotations, revision: Revision): Annotations {
    if (revision.lastModified || annotations.lastModified === undefined) return annotations;
    const { lastModified: _lastModified, ...older } = annotations;
    return older;
}

/** A shallow copy without the `title`, `icons` and `_meta` fields the revision lacks. */
function withoutNewFields<T extends object>(value: T, revision: Revision): T {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    if (!revision.titles) delete copy.title;
    if (!revision.icons) delete copy.icons;
    if (!revision.meta) delete copy._meta;
    return copy as T;
}
