/**
 * What an upstream call can fail with, in terms the gateway can show a client:
 * either the upstream rejected the arguments (-32602, its message passes through)
 * or it failed (a short reason that never holds a stack trace or a payload).
 */
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { describeError } from '../observability/logger.js';

export class UpstreamRejectedError extends Error {
    override readonly name = 'UpstreamRejectedError';
}

export class UpstreamFailedError extends Error {
    override readonly name = 'UpstreamFailedError';

    constructor(
        readonly upstreamId: string,
        readonly reason: string
    ) {
        super(`Upstream ${upstreamId} failed: ${reason}`);
    }
}

export function toUpstreamError(upstreamId: string, error: unknown, timeoutMs: number): UpstreamRejectedError | UpstreamFailedError {
    if (error instanceof UpstreamRejectedError || error instanceof UpstreamFailedError) return error;
    if (error instanceof ProtocolError) {
        if (error.code === ProtocolErrorCode.InvalidParams) return new UpstreamRejectedError(stripCodePrefix(describeError(error)));
        return new UpstreamFailedError(upstreamId, `error ${error.code}`);
    }
    return new UpstreamFailedError(upstreamId, failureReason(error, timeoutMs));
}

function failureReason(error: unknown, timeoutMs: number): string {
    if (error instanceof SdkHttpError) return `HTTP ${error.status}`;
    if (error instanceof SdkError) {
        switch (error.code) {
            case SdkErrorCode.RequestTimeout:
                return `timed out after ${timeoutMs} ms`;
            case SdkErrorCode.ConnectionClosed:
                return 'connection closed';
            case SdkErrorCode.NotConnected:
                return 'not connected';
            case SdkErrorCode.InvalidResult:
                return 'invalid result';
            default:
                return error.code.toLowerCase().replaceAll('_', ' ');
        }
    }
    if (error instanceof Error && error.name === 'AbortError') return 'cancelled';
    const code = systemErrorCode(error);
    return code === undefined ? 'request failed' : `request failed (${code})`;
}

/** ECONNREFUSED, ENOENT, ...: from the error or its cause (fetch wraps them). Safe to show: no values inside. */
function systemErrorCode(error: unknown): string | undefined {
    for (let current = error, depth = 0; current instanceof Error && depth < 3; current = current.cause, depth++) {
        const code = (current as NodeJS.ErrnoException).code;
        if (typeof code === 'string' && /^E[A-Z0-9_]{2,30}$/.test(code)) return code;
    }
    return undefined;
}

/** The SDK may prefix "MCP error -32602: "; the code is already in the JSON-RPC error. */
function stripCodePrefix(message: string): string {
    return message.replace(/^MCP error -?\d+:\s*/, '');
}
