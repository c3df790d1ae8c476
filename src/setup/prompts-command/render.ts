/**
 * What `prompts list` and `prompts get` print as text: one prompt a line, and a prompt's messages under their roles.
 * What upstreams wrote goes to a terminal, so control characters (escape sequences that move the cursor, retitle
 * the window or hide text) and bidirectional overrides are shown as U+FFFD; `--json` prints them as they came, escaped by JSON. Pure.
 */
import type { GetPromptResult, Prompt } from '@modelcontextprotocol/client';
import { unicodeEscape } from '../../lib/one-line.js';

type Message = GetPromptResult['messages'][number];
type Content = Message['content'];

/**
 * Every C0 and C1 control character but tab and line feed (and carriage return, where it ends a line), and the
 * bidirectional overrides and isolates, which reorder what a terminal shows (as src/lib/one-line.ts escapes them).
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /\r(?!\n)|[\u0000-\u0008\u000B-\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g;

/** A description that spans lines is joined into one and cut to this many characters. */
const MULTILINE_DESCRIPTION_CHARS = 120;

/** The C1 controls: JSON.stringify leaves them as they are, and some terminals obey them (U+009B is CSI, U+009D OSC). */
const C1 = /[\u0080-\u009f]/g;

/** `value` as indented JSON with every control character escaped (JSON.stringify escapes C0 only): the same JSON. */
export function jsonText(value: unknown): string {
    return `${JSON.stringify(value, null, 2).replace(C1, unicodeEscape)}\n`;
}

export function terminalSafe(text: string): string {
    return text.replace(CONTROL, '\uFFFD').replaceAll('\r\n', '\n');
}

/** `<name>  <description>` a line; a description of several lines is joined (and cut), a single line kept whole. */
export function promptLines(prompts: readonly Prompt[]): string {
    return prompts.map(prompt => `${terminalSafe(joinedLines(prompt.name))}${describe(prompt.description)}\n`).join('');
}

function describe(description: string | undefined): string {
    const text = description?.trim();
    if (text === undefined || text === '') return '';
    if (!/[\r\n]/.test(text)) return `  ${terminalSafe(text)}`;
    const joined = joinedLines(text);
    return `  ${terminalSafe(joined.length > MULTILINE_DESCRIPTION_CHARS ? `${joined.slice(0, MULTILINE_DESCRIPTION_CHARS - 3)}...` : joined)}`;
}

function joinedLines(text: string): string {
    return text.replace(/\s*[\r\n]+\s*/g, ' ');
}

/** Each message as a `<role>:` line and its content, a blank line between messages. */
export function messagesText(messages: readonly Message[]): string {
    return messages.map(message => `${terminalSafe(joinedLines(String(message.role)))}:\n${withNewline(contentText(message.content))}`).join('\n');
}

function withNewline(text: string): string {
    return text.endsWith('\n') ? text : `${text}\n`;
}

/** Text as it is; what a terminal cannot show (images, audio, blobs) as one line naming its type and size. */
export function contentText(content: Content): string {
    switch (content.type) {
        case 'text':
            return terminalSafe(content.text);
        case 'image':
        case 'audio':
            return `[${content.type} ${terminalSafe(content.mimeType)}, ${base64Bytes(content.data)} bytes]`;
        case 'resource_link':
            return `[resource link ${terminalSafe(content.uri)}${mimeTypeOf(content.mimeType)}]`;
        case 'resource': {
            const { resource } = content;
            const header = `[resource ${terminalSafe(resource.uri)}${mimeTypeOf(resource.mimeType)}`;
            if ('text' in resource && typeof resource.text === 'string') return `${header}]\n${terminalSafe(resource.text)}`;
            return `${header}, ${'blob' in resource && typeof resource.blob === 'string' ? base64Bytes(resource.blob) : 0} bytes]`;
        }
        default:
            // A content type of a later revision: named, not guessed at.
            return `[${terminalSafe(String((content as { type: unknown }).type))} content]`;
    }
}

function mimeTypeOf(mimeType: string | undefined): string {
    return mimeType === undefined ? '' : ` (${terminalSafe(mimeType)})`;
}

function base64Bytes(data: string): number {
    return Buffer.byteLength(data, 'base64');
}
