/**
 * What an upstream call can fail with, in terms the gateway can show a client:
 * either the upstream rejected the client's request (-32602, -32021, -32002, an
 * application's code: the code and the message pass, bounded; see
 * ../protocol/errors.ts) or it failed (a short reason that never holds a stack
 * trace or a payload), classified as a fault kind for the counters. Those two
 * classes are the catalog's port's (../catalog/upstream-port.ts); the rest is the
 * upstream layer's own.
 */
import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { FaultKind } from '../diagnostics/faults.js';
import { boundedUpstreamError, upstreamErrorPasses } from '../protocol/errors.js';
import { systemErrorCode } from '../lib/system-error-code.js';
import { UpstreamFailedError, UpstreamRejectedError } from '../catalog/upstream-port.js';
import { CommandNotStartedError } from './command.js';
import { isOversizedMark } from './oversized.js';

/** An HTTP upstream answered with a status that is not a success. Only the status is kept: the body is never read. */
export class UpstreamHttpError extends Error {
    override readonly name = 'UpstreamHttpError';

    constructor(readonly status: number) {
        super(`HTTP ${status}`);
    }
}

/** What a transport found wrong with an upstream's answer, as a fixed phrase of its own: never the upstream's text. */
export class UpstreamWireError extends Error {
    override readonly name = 'UpstreamWireError';

    constructor(
        readonly reason: string,
        readonly fault: FaultKind | undefined
    ) {
        super(reason);
    }
}

export function toUpstreamError(upstreamId: string, error: unknown, timeoutMs: number): UpstreamRejectedError | UpstreamFailedError {
    if (error instanceof UpstreamRejectedError || error instanceof UpstreamFailedError) return error;
    if (error instanceof ProtocolError) {
        if (isOversizedMark(error.data)) return new UpstreamFailedError(upstreamId, error.message, 'oversized_result');
        if (upstreamErrorPasses(error.code)) {
            const passed = boundedUpstreamError(error.code, stripCodePrefix(error.message), error.data);
            return new UpstreamRejectedError(passed.message, passed.code, passed.data);
        }
        return new UpstreamFailedError(upstreamId, `error ${error.code}`, 'request_failed');
    }
    const [reason, fault] = classify(error, timeoutMs);
    return new UpstreamFailedError(upstreamId, reason, fault);
}

/**
 * What a failed request shows about the connection it was sent on: the upstream answered (any JSON-RPC error
 * reply, or a reply the client could not use, proves it is there), it did not answer in time, the connection is
 * gone, or something else failed on the way (an HTTP error, a transport error).
 */
export type ConnectionEvidence = 'answered' | 'no-answer' | 'gone' | 'failed';

export function connectionEvidence(error: unknown): ConnectionEvidence {
    if (error instanceof ProtocolError) return 'answered';
    if (error instanceof SdkError) {
        switch (error.code) {
            case SdkErrorCode.RequestTimeout:
                return 'no-answer';
            case SdkErrorCode.ConnectionClosed:
            case SdkErrorCode.NotConnected:
                return 'gone';
            case SdkErrorCode.InvalidResult:
                return 'answered';
        }
    }
    return isConnectionLoss(error) ? 'gone' : 'failed';
}

/** The short reason `error` is reported with (see UpstreamFailedError). */
export function failureReason(error: unknown, timeoutMs: number): string {
    if (error instanceof ProtocolError) return `error ${error.code}`;
    return classify(error, timeoutMs)[0];
}

/** Socket-level failures, and 404 for a session the server no longer knows (it restarted): the connection must be rebuilt. */
const LOST_CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'UND_ERR_SOCKET']);

function isConnectionLoss(error: unknown): boolean {
    if (error instanceof UpstreamHttpError) return error.status === 404;
    const code = systemErrorCode(error);
    return code !== undefined && LOST_CONNECTION_CODES.has(code);
}

function classify(error: unknown, timeoutMs: number): [string, FaultKind | undefined] {
    if (error instanceof UpstreamHttpError) return [error.message, 'http_error'];
    if (error instanceof UpstreamWireError) return [error.reason, error.fault];
    if (error instanceof SdkError) {
        switch (error.code) {
            case SdkErrorCode.RequestTimeout:
                return [`timed out after ${timeoutMs} ms`, 'timeout'];
            // The lost connection is counted once, as `disconnected`, not once more per request it cut off.
            case SdkErrorCode.ConnectionClosed:
                return ['connection closed', undefined];
            case SdkErrorCode.NotConnected:
                return ['not connected', undefined];
            case SdkErrorCode.InvalidResult:
                return ['invalid result', 'invalid_result'];
            default: {
                const reason = error.code.toLowerCase().replaceAll('_', ' ');
                return [reason, error.code.startsWith('CLIENT_HTTP') ? 'http_error' : 'request_failed'];
            }
        }
    }
    if (error instanceof Error && error.name === 'AbortError') return ['cancelled', undefined];
    // Says which command, PATH or folder is wrong: no secret inside, and what the operator needs.
    if (error instanceof CommandNotStartedError) return [error.message, 'request_failed'];
    const code = systemErrorCode(error);
    return [code === undefined ? 'request failed' : `request failed (${code})`, 'request_failed'];
}

/** The SDK may prefix "MCP error -32602: "; the code is already in the JSON-RPC error. */
function stripCodePrefix(message: string): string {
    return message.replace(/^MCP error -?\d+:\s*/, '');
}
