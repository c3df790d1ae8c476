/**
 * Structured logs on stderr (stdout may carry the stdio MCP transport): JSON
 * lines, or readable lines for a person at a terminal. Every line written while
 * serving a request carries its id. The redaction list is a safety net for
 * objects logged whole (headers, env); the code logs short reasons, not raw
 * errors or payloads, in the first place.
 */
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { PrettyOptions, PrettyStream } from 'pino-pretty';
import type { LOG_FORMATS } from '../config/schema.js';
import { currentRequestId } from './request-context.js';

export type { Logger };

export const REDACTED_PATHS = [
    'headers.authorization',
    'headers["x-api-key"]',
    'headers.cookie',
    'req.headers.authorization',
    'req.headers["x-api-key"]',
    'req.headers.cookie',
    'env',
    'cursorSecret',
    '*.headers',
    '*.env'
];

export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LoggerOptions {
    level: string;
    format?: LogFormat;
    /** Where to write; stderr unless a test captures it. */
    destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions): Logger {
    const format = options.format ?? 'auto';
    return pino(
        {
            level: options.level,
            base: { name: 'mcp-prompt-gateway' },
            redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
            formatters: { level: label => ({ level: label }) },
            timestamp: pino.stdTimeFunctions.isoTime,
            mixin: () => {
                const requestId = currentRequestId();
                return requestId === undefined ? {} : { requestId };
            }
        },
        destination(options.destination, format === 'pretty' || (format === 'auto' && process.stderr.isTTY))
    );
}

function destination(stream: NodeJS.WritableStream | undefined, readable: boolean): DestinationStream {
    if (!readable) return stream ?? pino.destination({ fd: 2, sync: false });
    // Loaded only for people at a terminal: servers writing JSON never pay for it.
    const { build } = createRequire(import.meta.url)('pino-pretty') as { build: (options: PrettyOptions) => PrettyStream };
    return build({ destination: stream ?? 2, colorize: stream === undefined && process.stderr.isTTY, sync: stream !== undefined });
}

/** Short, single-line description of an error, safe to show: no stack, no multi-line payloads. */
export function describeError(error: unknown): string {
    const raw = error instanceof Error ? error.message : String(error);
    const firstLine = raw.split('\n', 1)[0] ?? '';
    return firstLine.length > 200 ? `${firstLine.slice(0, 200)}...` : firstLine;
}
