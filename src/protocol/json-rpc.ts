/**
 * JSON-RPC 2.0 message shapes as MCP uses them, checked by hand: every
 * message crossing the gateway is checked, and a few property tests cost a
 * fraction of a microsecond where a schema library's parse costs several.
 * Only the envelope is checked here; what `params` or `result` must hold is the
 * business of whoever handles the method.
 */
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/client';
import { exceeds } from '../lib/json-bounds.js';
import { isRecord } from '../lib/is-record.js';

export type RequestId = string | number;

/**
 * Longest string id taken, in UTF-8 bytes: far above the counters and UUIDs clients use. An id is stored while its
 * request is in flight and echoed in every message about it (each list_changed of a subscription carries its listen
 * request's id), so an unbounded one multiplies memory and bytes sent.
 */
const MAX_REQUEST_ID_BYTES = 256;

/** What a client is told when its message's id is over the bound. */
export const OVERSIZED_ID_MESSAGE = `Invalid Request: id longer than ${MAX_REQUEST_ID_BYTES} bytes`;

/** A safe integer, or a string of at most MAX_REQUEST_ID_BYTES: a request id, and what a progress token may be. */
export function isRequestId(value: unknown): value is RequestId {
    return typeof value === 'string' ? !exceeds(value, MAX_REQUEST_ID_BYTES) : typeof value === 'number' && Number.isSafeInteger(value);
}

/** The members each kind of message may have: envelopes are closed, as in the SDK's schemas (zod `.strict()`). */
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const RESULT_KEYS = new Set(['jsonrpc', 'id', 'result']);
const ERROR_KEYS = new Set(['jsonrpc', 'id', 'error']);

function onlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
    for (const key in value) if (!allowed.has(key)) return false;
    return true;
}

/**
 * What a client is told of an envelope it got wrong. Fixed texts: nothing of the message is repeated (a member's name
 * is the client's own, and unbounded).
 */
const NOT_A_MESSAGE = 'Invalid Request: not a JSON-RPC 2.0 request, notification or response';
const WRONG_VERSION = 'Invalid Request: jsonrpc must be "2.0"';
const METHOD_NOT_STRING = 'Invalid Request: method must be a string';
const INVALID_ID = 'Invalid Request: id must be a string or an integer';
const EXTRA_MEMBER = 'Invalid Request: a request has no members but jsonrpc, id, method and params';
const PARAMS_NOT_OBJECT = 'Invalid params: params must be an object';

/**
 * A message read: the message itself, or why it is refused with the id to answer it under. `invalid_request` and
 * `id_too_long` are -32600; `invalid_params` (params that are not an object) is -32602 for a request, and
 * `invalid_notification` a notification with such params, which gets no answer (JSON-RPC answers no notification).
 */
export type Envelope =
    | { ok: true; message: JSONRPCMessage }
    | { ok: false; reason: 'invalid_request' | 'id_too_long'; id: RequestId | null; message: string }
    | { ok: false; reason: 'invalid_params'; id: RequestId; message: string; method: string }
    | { ok: false; reason: 'invalid_notification' };

const INVALID_NOTIFICATION: Envelope = { ok: false, reason: 'invalid_notification' };

function invalid(id: RequestId | null, message: string): Envelope {
    return { ok: false, reason: 'invalid_request', id, message };
}

/**
 * A parsed value as a JSON-RPC message, or why it is none. The id is echoed whenever it is one (a string of at most
 * MAX_REQUEST_ID_BYTES or a safe integer), so the sender can match the refusal; any other id (null, an object, a
 * boolean, a fraction, an unsafe integer, an oversized string) is answered with a null one, and an oversized string is
 * never stored nor repeated. Envelope first, params after: a request wrong in both is -32600.
 */
export function readEnvelope(value: unknown): Envelope {
    if (!isRecord(value)) return invalid(null, NOT_A_MESSAGE);
    const { id } = value;
    if (typeof id === 'string' && exceeds(id, MAX_REQUEST_ID_BYTES)) return { ok: false, reason: 'id_too_long', id: null, message: OVERSIZED_ID_MESSAGE };
    const echoed = typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
    if (value.jsonrpc !== '2.0') return invalid(echoed, WRONG_VERSION);
    if (value.method === undefined && (value.result !== undefined || value.error !== undefined)) return readResponse(value, echoed);
    return readCall(value, echoed);
}

/** A request or a notification (or a message that is neither, told apart by its missing method). */
function readCall(value: Record<string, unknown>, echoed: RequestId | null): Envelope {
    const { id, method, params } = value;
    if (typeof method !== 'string') return invalid(echoed, method === undefined ? NOT_A_MESSAGE : METHOD_NOT_STRING);
    if (id !== undefined && echoed === null) return invalid(null, INVALID_ID);
    if (!onlyKeys(value, REQUEST_KEYS)) return invalid(echoed, EXTRA_MEMBER);
    if (params !== undefined && !isRecord(params))
        return echoed === null ? INVALID_NOTIFICATION : { ok: false, reason: 'invalid_params', id: echoed, message: PARAMS_NOT_OBJECT, method };
    return { ok: true, message: value as JSONRPCMessage };
}

function readResponse(value: Record<string, unknown>, echoed: RequestId | null): Envelope {
    const { id, result, error } = value;
    if (result !== undefined)
        return echoed !== null && isRecord(result) && onlyKeys(value, RESULT_KEYS) ? { ok: true, message: value as JSONRPCMessage } : invalid(echoed, NOT_A_MESSAGE);
    // An error about a request that could not be read has no id (null in JSON-RPC, absent since MCP 2025-11-25).
    const idOk = id === undefined || id === null || echoed !== null;
    const errorOk = isRecord(error) && typeof error.code === 'number' && Number.isSafeInteger(error.code) && typeof error.message === 'string';
    return idOk && errorOk && onlyKeys(value, ERROR_KEYS) ? { ok: true, message: value as JSONRPCMessage } : invalid(echoed, NOT_A_MESSAGE);
}

/** The value as a JSON-RPC request, notification, result or error message, or undefined when it is none of them. */
export function asJsonRpcMessage(value: unknown): JSONRPCMessage | undefined {
    const envelope = readEnvelope(value);
    return envelope.ok ? envelope.message : undefined;
}

/** Whether a message (checked, or the gateway's own) is a request: the SDK's guard of the same name is a zod parse. */
export function isRequest(message: JSONRPCMessage): message is JSONRPCRequest {
    return 'method' in message && 'id' in message;
}

/** The request a message (checked, or the gateway's own) answers; undefined for a request or notification. */
export function answeredId(message: JSONRPCMessage): RequestId | undefined {
    // An error about a request that could not be read has a null id, whatever the SDK's type says.
    return 'method' in message ? undefined : (message.id ?? undefined);
}

/** The request a `notifications/cancelled` cancels; undefined for any other message. */
export function cancelledRequestId(message: JSONRPCMessage): RequestId | undefined {
    if (!('method' in message) || message.method !== 'notifications/cancelled' || 'id' in message) return undefined;
    const requestId = message.params?.requestId;
    return typeof requestId === 'string' || typeof requestId === 'number' ? requestId : undefined;
}

/** Parses one message from text; undefined for anything that is not JSON or not a JSON-RPC message. */
export function parseJsonRpcMessage(text: string): JSONRPCMessage | undefined {
    let value: unknown;
    try {
        value = JSON.parse(text);
    } catch {
        return undefined;
    }
    return asJsonRpcMessage(value);
}
