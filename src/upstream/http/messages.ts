/**
 * The JSON-RPC messages in one upstream body or SSE event. One too big to
 * have been read whole becomes the stand-in error for the request it answers,
 * when its first or last bytes say which (see ../oversized.ts).
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { asJsonRpcMessage, type RequestId } from '../../protocol/json-rpc.js';
import { UpstreamWireError } from '../errors.js';
import { isRequestOrNotification, messageLimit, oversizedResponse, requestIdOf, type ReadLimit } from '../oversized.js';
import type { Collected } from '../../lib/byte-collector.js';

type Decoded = { kind: 'messages'; messages: JSONRPCMessage[] } | { kind: 'dropped' } | { kind: 'invalid' };

/** `limit` is the bound the data was read under, named in the stand-in error. */
export function decodeMessages(data: Collected, limit: ReadLimit): Decoded {
    if (data.kind === 'oversized') {
        const id = requestIdOf(data.head, data.tail);
        return id === undefined ? { kind: 'dropped' } : { kind: 'messages', messages: [oversizedResponse(id, limit)] };
    }
    let parsed: unknown;
    try {
        parsed = JSON.parse(data.bytes.toString('utf8'));
    } catch {
        return { kind: 'invalid' };
    }
    // A batch answer is still accepted from servers of the 2025-03-26 revision.
    const messages: JSONRPCMessage[] = [];
    for (const value of Array.isArray(parsed) ? (parsed as unknown[]) : [parsed]) {
        const message = asJsonRpcMessage(value);
        if (message === undefined) return { kind: 'invalid' };
        messages.push(message);
    }
    return { kind: 'messages', messages };
}

/**
 * Whether an oversized message on the stream answering request `id` is that answer, from its first bytes alone:
 * yes if they show its id, or no id and no method (SDK servers write the id last). Only a message that shows
 * another id or a method is something else, to be read past.
 */
export function answersRequest(head: string, id: RequestId): boolean {
    if (isRequestOrNotification(head, '')) return false;
    const shown = requestIdOf(head, '');
    return shown === undefined || shown === id;
}

/** Why a decoded body or event was not handed on. */
export function messageFault(kind: 'dropped' | 'invalid'): UpstreamWireError {
    return kind === 'invalid'
        ? new UpstreamWireError('invalid JSON-RPC message', 'invalid_result')
        : new UpstreamWireError('oversized message without a request id dropped', 'oversized_result');
}

export interface MessageLimits {
    maxUpstreamMessageBytes: number;
    maxResultBytes: number;
}

/** Room for the JSON-RPC envelope around a result, and for an upstream's whitespace, over limits.maxResultBytes. */
const RESULT_ENVELOPE_BYTES = 64 * 1024;

/**
 * The most bytes read of the answer to `method`: a prompt or completion result bigger than limits.maxResultBytes
 * would be refused anyway, so reading stops about there; every other message is bounded by maxUpstreamMessageBytes.
 */
export function answerLimit(method: string, limits: MessageLimits): ReadLimit {
    const bound = limits.maxUpstreamMessageBytes;
    const result = limits.maxResultBytes + RESULT_ENVELOPE_BYTES;
    const isResult = method === 'prompts/get' || method === 'completion/complete';
    return isResult && result < bound ? { bytes: result, field: 'maxResultBytes' } : messageLimit(bound);
}
