/**
 * Values 2026-07-28 mirrors into HTTP headers (`Mcp-Name`, `Mcp-Param-*`):
 * plain ASCII as it is, anything else as `=?base64?<UTF-8, base64>?=` (also a
 * plain value that looks like that form, so it cannot be mistaken for one).
 */

const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;
/** A header value as RFC 9110 allows it, taken as it is: visible ASCII, inner spaces and tabs, nothing at either end. */
const PLAIN_VALUE = /^[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?$/;
/** What the gateway itself sends as it is: the same without tabs, which some intermediaries rewrite. */
const PLAIN_TO_SEND = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;

/** The value a client meant: plain ASCII as it is, the `=?base64?...?=` form decoded; undefined when malformed. */
export function decodeHeaderValue(header: string): string | undefined {
    const encoded = SENTINEL.exec(header);
    // A plain value shaped like the encoded form must have been encoded: this one is not valid base64.
    if (encoded === null) return PLAIN_VALUE.test(header) && !looksEncoded(header) ? header : undefined;
    const bytes = Buffer.from(encoded[1]!, 'base64');
    // Buffer.from drops what is not base64: a value that does not round-trip was not base64.
    if (bytes.toString('base64') !== encoded[1]) return undefined;
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    try {
        return text.decode(bytes);
    } catch {
        return undefined;
    }
}

/** The header form of a value: as it is when it is plain ASCII (and not itself sentinel-shaped), else base64. */
export function encodeHeaderValue(value: string): string {
    if (PLAIN_TO_SEND.test(value) && !looksEncoded(value)) return value;
    return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

function looksEncoded(value: string): boolean {
    return value.startsWith('=?base64?') && value.endsWith('?=');
}
