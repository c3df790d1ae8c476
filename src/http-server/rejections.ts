/**
 * Every way the HTTP side turns a request away before MCP handles it: the
 * status, the JSON-RPC error and a reason from a closed list, so each refusal
 * is answered the same way everywhere and counted under a bounded label.
 */
import type { ServerResponse } from 'node:http';
import { CODE, REFUSALS, type RefusalReason } from '../protocol/errors.js';
import { sendJson } from './respond.js';

interface Rejection {
    status: number;
    code: number;
    message: string;
}

/** HTTP's own refusals: about the request's HTTP (its host, credentials, headers, session), not its message. */
const HTTP_REJECTIONS = {
    forbidden_host: { status: 403, code: CODE.serverError, message: 'Forbidden: Host not allowed' },
    forbidden_origin: { status: 403, code: CODE.serverError, message: 'Forbidden: Origin not allowed' },
    unauthorized: { status: 401, code: CODE.serverError, message: 'Unauthorized: invalid credentials' },
    insufficient_scope: { status: 403, code: CODE.serverError, message: 'Forbidden: the token lacks a scope this gateway requires' },
    unknown_client: { status: 403, code: CODE.serverError, message: "Forbidden: the token's client is not configured on this gateway" },
    auth_unavailable: { status: 503, code: CODE.serverError, message: 'Authentication is temporarily unavailable; try again later' },
    rate_limited: { status: 429, code: CODE.serverError, message: 'Too many requests' },
    not_acceptable: { status: 406, code: CODE.serverError, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' },
    unsupported_media_type: { status: 415, code: CODE.serverError, message: 'Unsupported Media Type: Content-Type must be application/json' },
    unsupported_encoding: { status: 415, code: CODE.serverError, message: 'Unsupported Media Type: Content-Encoding must be gzip, deflate or identity' },
    session_required: { status: 400, code: CODE.serverError, message: 'Bad Request: Mcp-Session-Id header is required' },
    session_not_found: { status: 404, code: CODE.sessionNotFound, message: 'Session not found' },
    stream_conflict: { status: 409, code: CODE.serverError, message: 'Conflict: Only one SSE stream is allowed per session' },
    too_many_sessions: { status: 503, code: CODE.serverError, message: 'Too many sessions; try again later' },
    client_session_limit: { status: 429, code: CODE.serverError, message: 'Too many sessions for this client' },
    not_found: { status: 404, code: CODE.serverError, message: 'Not found' },
    method_not_allowed: { status: 405, code: CODE.serverError, message: 'Method not allowed' }
} as const satisfies Record<string, Rejection>;

/**
 * The status of each protocol refusal HTTP answers with one of its own: its code and message are the protocol's
 * (protocol/errors.ts), the same over stdio. A refusal not listed (a duplicate id, a listen's filter) is a request's
 * answer like any other, 200 in its response.
 */
const REFUSAL_STATUS = {
    parse_error: 400,
    body_too_large: 413,
    too_deep: 400,
    batch_refused: 400,
    invalid_message: 400,
    id_too_long: 400,
    // Where it is refused whole; a session's request gets 200.
    invalid_params: 400,
    invalid_request_meta: 400,
    header_mismatch: 400,
    unsupported_protocol_version: 400,
    // 2026-07-28: a method the server does not implement is 404 with -32601 (the body tells it from a missing endpoint).
    unknown_method: 404,
    already_initialized: 400,
    too_many_subscriptions: 503,
    client_subscription_limit: 429,
    shutting_down: 503
} as const satisfies Partial<Record<RefusalReason, number>>;

type StatusedRefusal = keyof typeof REFUSAL_STATUS;

function withProtocolErrors(statuses: Record<StatusedRefusal, number>): Record<StatusedRefusal, Rejection> {
    const entries = Object.entries(statuses) as [StatusedRefusal, number][];
    return Object.fromEntries(entries.map(([reason, status]) => [reason, { status, ...REFUSALS[reason] }])) as Record<StatusedRefusal, Rejection>;
}

const REJECTIONS: Readonly<Record<keyof typeof HTTP_REJECTIONS | StatusedRefusal, Rejection>> = { ...HTTP_REJECTIONS, ...withProtocolErrors(REFUSAL_STATUS) };

export type RejectionReason = keyof typeof REJECTIONS;

/**
 * Answers with the reason's status and error; `detail` replaces the message, `status` the status (a 4xx of the same
 * kind), adds the error's `data`, and names the request (`id`) once the body was read.
 */
export type Reject = (res: ServerResponse, reason: RejectionReason, detail?: { message?: string; status?: number; data?: unknown; id?: string | number | null }) => void;

/** The JSON-RPC code a rejection answers with. */
export function rejectionCode(reason: RejectionReason): number {
    return REJECTIONS[reason].code;
}

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
