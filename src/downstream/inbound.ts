/**
 * What a client's body (HTTP) or line (stdio) holds, once framed (pipeline.ts
 * `frame`: parsed, its batch allowed): the same for both transports, so the same message gets
 * the same answer over each. Every item is read by `readEnvelope`; one that is
 * not a valid message is refused on its own, under its id where it has a
 * readable one (JSON-RPC §5, and §6: inside a batch each item is answered for
 * itself), and the others are served. What to do with a refusal of a lone
 * message (HTTP adds a 400) is the transport's.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { readEnvelope, type RequestId } from '../protocol/json-rpc.js';

export type RefusalReason = 'invalid_request' | 'id_too_long' | 'invalid_params';

export interface Refusal {
    reason: RefusalReason;
    /** The refused message's id, null when it has none that can be read (or one over the bound). */
    id: RequestId | null;
    error: { code: number; message: string };
}

export interface Inbound {
    batch: boolean;
    /** The valid messages, in order. */
    messages: JSONRPCMessage[];
    /** One per item refused; a notification with params that are not an object is dropped without one. */
    refusals: Refusal[];
}

const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;

/** 2025-03-26, the one revision with batches: "the initialize request MUST NOT be part of a JSON-RPC batch". */
const BATCHED_INITIALIZE = 'Invalid Request: initialize cannot be part of a JSON-RPC batch';

export function readMessages(value: unknown): Inbound {
    const batch = Array.isArray(value);
    const inbound: Inbound = { batch, messages: [], refusals: [] };
    for (const item of batch ? (value as unknown[]) : [value]) {
        const envelope = readEnvelope(item);
        if (envelope.ok) {
            const { message } = envelope;
            if (batch && 'method' in message && message.method === 'initialize' && 'id' in message) {
                inbound.refusals.push({ reason: 'invalid_request', id: message.id, error: { code: INVALID_REQUEST, message: BATCHED_INITIALIZE } });
            } else inbound.messages.push(message);
        } else if (envelope.reason !== 'invalid_notification') {
            const code = envelope.reason === 'invalid_params' ? INVALID_PARAMS : INVALID_REQUEST;
            inbound.refusals.push({ reason: envelope.reason, id: envelope.id, error: { code, message: envelope.message } });
        }
    }
    return inbound;
}

/** The refusal as the JSON-RPC error answering it (id null when unreadable: JSON-RPC 2.0 §5). */
export function refusalAnswer(refusal: Refusal): JSONRPCMessage {
    return { jsonrpc: '2.0', id: refusal.id, error: refusal.error } as JSONRPCMessage;
}
