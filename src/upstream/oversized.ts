/**
 * An upstream message over `limits.maxUpstreamMessageBytes` is not read whole,
 * so it cannot be parsed: transports keep only its first and last bytes, find
 * the id of the request it answers there, and hand the client an error response
 * for that id instead. Only that request fails; the connection and every other
 * request on it carry on. A message whose id cannot be found (or a
 * notification) is dropped, and the requests it may have answered time out.
 */
import type { JSONRPCErrorResponse } from '@modelcontextprotocol/client';

/** How much of each end of an oversized message is kept to find its id. */
export const OVERSIZED_EDGE_BYTES = 1024;

/**
 * The `data` of the stand-in error, compared by identity: the response object reaches the SDK client's pending
 * request without serialisation, so no upstream can forge it.
 */
const OVERSIZED_MARK: Readonly<Record<string, never>> = Object.freeze({});

export function oversizedResponse(id: string | number, bytes: number): JSONRPCErrorResponse {
    return { jsonrpc: '2.0', id, error: { code: -32603, message: `response larger than ${bytes} bytes`, data: OVERSIZED_MARK } };
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

/**
 * The request id of a JSON-RPC response from the first and last bytes of its text, where serialisers put it.
 * A value nested inside `result` cannot pass for it: the start pattern must begin the envelope, and the end
 * pattern must close it with a single brace. undefined when neither end shows an id.
 */
export function requestIdOf(head: string, tail: string): string | number | undefined {
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
