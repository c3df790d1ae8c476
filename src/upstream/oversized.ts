/**
 * An upstream message over `limits.maxUpstreamMessageBytes` is not read whole,
 * so it cannot be parsed: transports keep only its first and last bytes, find
 * the id of the request it answers there, and hand the client an error response
 * for that id instead. Only that request fails; the connection and every other
 * request on it carry on. A message whose id cannot be found (or a
 * notification) is dropped, and the requests it may have answered time out.
 */
import type { JSONRPCErrorResponse } from '@modelcontextprotocol/client';
import { CODE } from '../protocol/errors.js';

/**
 * The `data` of the stand-in error, compared by identity: the response object reaches the client's pending
 * request without serialisation, so no upstream can forge it.
 */
const OVERSIZED_MARK: Readonly<Record<string, never>> = Object.freeze({});

/** A bound a message was read under, and the config field that set it (named in the error a client sees). */
export interface ReadLimit {
    bytes: number;
    field: 'maxUpstreamMessageBytes' | 'maxResultBytes';
}

export function messageLimit(bytes: number): ReadLimit {
    return { bytes, field: 'maxUpstreamMessageBytes' };
}

export function oversizedResponse(id: string | number, limit: ReadLimit): JSONRPCErrorResponse {
    const message = `response larger than ${limit.bytes} bytes (limits.${limit.field})`;
    return { jsonrpc: '2.0', id, error: { code: CODE.internalError, message, data: OVERSIZED_MARK } };
}

/** Whether a ProtocolError's `data` says it stands in for an oversized response. */
export function isOversizedMark(data: unknown): boolean {
    return data === OVERSIZED_MARK;
}

// The id is a JSON number or string; strings are capped, as the gateway's own ids are short.
const ID = String.raw`("id"\s*:\s*(-?\d{1,16}|"(?:[^"\\]|\\.){0,64}"))`;
/** `{"jsonrpc":"2.0","id":7,...` or `{"id":7,...`: the id as the first or second member of the envelope. */
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?${ID}\s*,`);
/** `...,"id":7}` or `...,"id":7,"jsonrpc":"2.0"}`: the id as the last or next-to-last member. */
const ID_AT_END = new RegExp(String.raw`,\s*${ID}\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`);

const JSONRPC_MEMBER = String.raw`"jsonrpc"\s*:\s*"2\.0"`;
/** A `method` member among the first two, or the first after the id, or the last two: a request or notification. */
const METHOD_AT_START = new RegExp(String.raw`^\s*\{\s*(?:(?:${JSONRPC_MEMBER}|${ID})\s*,\s*){0,2}"method"\s*:`);
const METHOD_AT_END = new RegExp(String.raw`,\s*"method"\s*:\s*"(?:[^"\\]|\\.){0,256}"\s*(?:,\s*(?:${JSONRPC_MEMBER}|${ID})\s*){0,2}\}\s*$`);

/**
 * Whether the first and last bytes of a message show it to be a request or a notification (a `method` member
 * where serialisers put it), never an answer, whatever id it carries: the upstream's requests have ids of
 * their own, which must not fail the gateway's request of the same number.
 */
export function isRequestOrNotification(head: string, tail: string): boolean {
    return METHOD_AT_START.test(head) || METHOD_AT_END.test(tail);
}

/**
 * The request id of a JSON-RPC response from the first and last bytes of its text, where serialisers put it.
 * A value nested inside `result` cannot pass for it: the start pattern must begin the envelope, and the end
 * pattern must close it with a single brace. undefined when neither end shows an id, or when the message is a
 * request or a notification.
 */
export function requestIdOf(head: string, tail: string): string | number | undefined {
    if (isRequestOrNotification(head, tail)) return undefined;
    const match = ID_AT_START.exec(head) ?? ID_AT_END.exec(tail);
    if (match === null) return undefined;
    const raw = match[2]!;
    if (raw.startsWith('"')) {
        try {
            return JSON.parse(raw) as string;
        } catch {
            return undefined;
        }
    }
    const id = Number(raw);
    return Number.isSafeInteger(id) ? id : undefined;
}
