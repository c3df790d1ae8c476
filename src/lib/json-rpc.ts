/**
 * JSON-RPC 2.0 message shapes as MCP uses them, checked by hand: every
 * message crossing the gateway is checked, and a few property tests cost a
 * fraction of a microsecond where a schema library's parse costs several.
 * Only the envelope is checked here; what `params` or `result` must hold is the
 * business of whoever handles the method.
 */
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/client';
import { exceeds } from './json-bounds.js';
import { isRecord } from './is-record.js';

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

/** Whether a message (checked or not) carries a string id over MAX_REQUEST_ID_BYTES: refused before anything stores it. */
export function hasOversizedId(value: unknown): boolean {
    return isRecord(value) && typeof value.id === 'string' && exceeds(value.id, MAX_REQUEST_ID_BYTES);
}

/** The members each kind of message may have: envelopes are closed, as in the SDK's schemas. */
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const RESULT_KEYS = new Set(['jsonrpc', 'id', 'result']);
const ERROR_KEYS = new Set(['jsonrpc', 'id', 'error']);

function onlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
    for (const key in value) if (!allowed.has(key)) return false;
    return true;
}

/** The value as a JSON-RPC request, notification, result or error message, or undefined when it is none of them. */
export function asJsonRpcMessage(value: unknown): JSONRPCMessage | undefined {
    if (!isRecord(value) || value.jsonrpc !== '2.0') return undefined;
    const { id, method, params, result, error } = value;
    if (method !== undefined) {
        if (typeof method !== 'string' || (params !== undefined && !isRecord(params)) || !onlyKeys(value, REQUEST_KEYS)) return undefined;
        return id === undefined || isRequestId(id) ? (value as JSONRPCMessage) : undefined;
    }
    if (result !== undefined) return isRequestId(id) && isRecord(result) && onlyKeys(value, RESULT_KEYS) ? (value as JSONRPCMessage) : undefined;
    if (isRecord(error) && typeof error.code === 'number' && Number.isSafeInteger(error.code) && typeof error.message === 'string') {
        // An error about a request that could not be read has no id (null in JSON-RPC, absent since MCP 2025-11-25).
        return (id === undefined || id === null || isRequestId(id)) && onlyKeys(value, ERROR_KEYS) ? (value as JSONRPCMessage) : undefined;
    }
    return undefined;
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

/** The error codes the MCP specification reserves for itself from 2026-07-28 on: only a stateless server sends them. */
export function isSpecReservedError(code: number): boolean {
    return code >= -32099 && code <= -32020;
}
