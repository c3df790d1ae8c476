/**
 * The framing every client message goes through once its transport has bounded its size (an HTTP body, a stdio line):
 * one `JSON.parse`, a byte order mark ignored (RFC 8259 §8.1 lets a parser do so, and some Windows tools write one),
 * then the nesting bound, checked before anything else walks the value.
 */
import { exceedsDepth } from '../lib/json-bounds.js';
import { refusalError } from './errors.js';

export type JsonText = { ok: true; value: unknown } | { ok: false; reason: 'parse_error' | 'too_deep'; error: { code: number; message: string } };

/** Text that is not JSON (or bytes that are not UTF-8): -32700. */
export const NOT_JSON: JsonText = { ok: false, reason: 'parse_error', error: refusalError('parse_error') };

const BYTE_ORDER_MARK = 0xfeff;

/** The value `text` holds, or why it holds none: -32700 for text that is not JSON, -32600 for JSON nested deeper than `maxDepth`. */
export function readJson(text: string, maxDepth: number): JsonText {
    let value: unknown;
    try {
        // A slice of a string is a view in V8, not a copy.
        value = JSON.parse(text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text);
    } catch {
        return NOT_JSON;
    }
    if (exceedsDepth(value, maxDepth))
        return { ok: false, reason: 'too_deep', error: refusalError('too_deep', { message: `Invalid Request: nested deeper than ${maxDepth} levels` }) };
    return { ok: true, value };
}
