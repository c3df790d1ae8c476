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
import { refusal, type Refusal as ProtocolRefusal } from '../protocol/errors.js';
import { readEnvelope } from '../protocol/json-rpc.js';

export type RefusalReason = 'invalid_message' | 'id_too_long' | 'invalid_params';

/**
 * The refused message's id is null when it has none that can be read (or one over the bound); `method` is there when
 * it could be read as a request all the same (its params were no object): its refusal is traced.
 */
export type Refusal = ProtocolRefusal<RefusalReason> & { method?: string };

export interface Inbound {
    batch: boolean;
    /** The valid messages, in order. */
    messages: JSONRPCMessage[];
    /** One per item refused; a notification with params that are not an object is dropped without one. */
    refusals: Refusal[];
}

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
                inbound.refusals.push(refusal('invalid_message', message.id, { message: BATCHED_INITIALIZE }));
            } else inbound.messages.push(message);
        } else if (envelope.reason !== 'invalid_notification') {
            // The envelope's fault is JSON-RPC's Invalid Request: the message HTTP counts it as invalid.
            const reason = envelope.reason === 'invalid_request' ? 'invalid_message' : envelope.reason;
            const refused: Refusal = refusal(reason, envelope.id, { message: envelope.message });
            if (envelope.reason === 'invalid_params') refused.method = envelope.method;
            inbound.refusals.push(refused);
        }
    }
    return inbound;
}

/** The refusal as the JSON-RPC error answering it (id null when unreadable: JSON-RPC 2.0 §5). */
export function refusalAnswer(refusal: Pick<ProtocolRefusal, 'id' | 'error'>): JSONRPCMessage {
    return { jsonrpc: '2.0', id: refusal.id, error: refusal.error } as JSONRPCMessage;
}
