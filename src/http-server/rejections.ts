/**
 * Every way the HTTP side turns a request away before MCP handles it: the
 * status, the JSON-RPC error and a reason from a closed list, so each refusal
 * is answered the same way everywhere and counted under a bounded label.
 */
import type { ServerResponse } from 'node:http';
import { OVERSIZED_ID_MESSAGE } from '../protocol/json-rpc.js';
import { CODE } from '../protocol/errors.js';
import { META } from '../protocol/meta.js';
import { sendJson } from './respond.js';

interface Rejection {
    status: number;
    code: number;
    message: string;
}

const REJECTIONS = {
    forbidden_host: { status: 403, code: CODE.serverError, message: 'Forbidden: Host not allowed' },
    forbidden_origin: { status: 403, code: CODE.serverError, message: 'Forbidden: Origin not allowed' },
    unauthorized: { status: 401, code: CODE.serverError, message: 'Unauthorized: invalid credentials' },
    insufficient_scope: { status: 403, code: CODE.serverError, message: 'Forbidden: the token lacks a scope this gateway requires' },
    unknown_client: { status: 403, code: CODE.serverError, message: "Forbidden: the token's client is not configured on this gateway" },
    auth_unavailable: { status: 503, code: CODE.serverError, message: 'Authentication is temporarily unavailable; try again later' },
    rate_limited: { status: 429, code: CODE.serverError, message: 'Too many requests' },
    // The revision's UnsupportedProtocolVersionError (-32022), whichever era asks; data lists the supported versions.
    unsupported_protocol_version: { status: 400, code: CODE.unsupportedVersion, message: 'Unsupported protocol version' },
    header_mismatch: { status: 400, code: CODE.headerMismatch, message: 'Header mismatch' },
    // 2026-07-28: a request whose _meta lacks what every request carries (checked before its method is looked at).
    invalid_request_meta: {
        status: 400,
        code: CODE.invalidParams,
        message: `Invalid params: _meta must carry ${META.protocolVersion} and ${META.clientCapabilities}`
    },
    // 2026-07-28: a method the server does not implement is 404 with -32601 (the body tells it from a missing endpoint).
    unknown_method: { status: 404, code: CODE.methodNotFound, message: 'Method not found' },
    not_acceptable: { status: 406, code: CODE.serverError, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' },
    unsupported_media_type: { status: 415, code: CODE.serverError, message: 'Unsupported Media Type: Content-Type must be application/json' },
    unsupported_encoding: { status: 415, code: CODE.serverError, message: 'Unsupported Media Type: Content-Encoding must be gzip, deflate or identity' },
    body_too_large: { status: 413, code: CODE.invalidRequest, message: 'Request body too large' },
    parse_error: { status: 400, code: CODE.parseError, message: 'Parse error: invalid JSON' },
    // JSON that parsed but is no valid message (JSON-RPC 2.0 §5: -32600, not a parse error).
    invalid_message: { status: 400, code: CODE.invalidRequest, message: 'Invalid Request' },
    // A request whose params are not an object: 400 where it is refused whole; a session's request gets 200.
    invalid_params: { status: 400, code: CODE.invalidParams, message: 'Invalid params' },
    bad_request: { status: 400, code: CODE.invalidRequest, message: 'Bad request' },
    too_deep: { status: 400, code: CODE.invalidRequest, message: 'Invalid Request: nested too deep' },
    id_too_long: { status: 400, code: CODE.invalidRequest, message: OVERSIZED_ID_MESSAGE },
    batch_refused: { status: 400, code: CODE.invalidRequest, message: 'Invalid Request: batch not accepted' },
    already_initialized: { status: 400, code: CODE.invalidRequest, message: 'Invalid Request: Server already initialized' },
    session_required: { status: 400, code: CODE.serverError, message: 'Bad Request: Mcp-Session-Id header is required' },
    session_not_found: { status: 404, code: CODE.sessionNotFound, message: 'Session not found' },
    stream_conflict: { status: 409, code: CODE.serverError, message: 'Conflict: Only one SSE stream is allowed per session' },
    too_many_sessions: { status: 503, code: CODE.serverError, message: 'Too many sessions; try again later' },
    client_session_limit: { status: 429, code: CODE.serverError, message: 'Too many sessions for this client' },
    too_many_subscriptions: { status: 503, code: CODE.serverError, message: 'Too many subscriptions; try again later' },
    client_subscription_limit: { status: 429, code: CODE.serverError, message: 'Too many subscriptions for this client; close unused ones' },
    shutting_down: { status: 503, code: CODE.serverError, message: 'Gateway is shutting down; try again later' },
    not_found: { status: 404, code: CODE.serverError, message: 'Not found' },
    method_not_allowed: { status: 405, code: CODE.serverError, message: 'Method not allowed' }
} as const satisfies Record<string, Rejection>;

export type RejectionReason = keyof typeof REJECTIONS;

/**
 * Answers with the reason's status and error; `detail` replaces the message, `status` the status (a 4xx of the same
 * kind), adds the error's `data`, and names the request (`id`) once the body was read.
 */
export type Reject = (res: ServerResponse, reason: RejectionReason, detail?: { message?: string; status?: number; data?: unknown; id?: string | number | null }) => void;

export function rejecter(onRejected: (reason: RejectionReason) => void = () => {}): Reject {
    return (res, reason, detail = {}) => {
        const rejection = REJECTIONS[reason];
        onRejected(reason);
        const error = { code: rejection.code, message: detail.message ?? rejection.message, ...(detail.data === undefined ? {} : { data: detail.data }) };
        sendJson(res, detail.status ?? rejection.status, { jsonrpc: '2.0', error, id: detail.id ?? null });
    };
}

export function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
    sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}
