/**
 * Structured JSON logs on stderr (stdout may carry the stdio MCP transport).
 * The redaction list is a safety net for objects logged whole (headers, env);
 * the code logs short reasons, not raw errors or payloads, in the first place.
 */
import { pino, type Logger } from 'pino';

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

export interface LoggerOptions {
    level: string;
    /** Where to write; stderr unless a test captures it. */
    destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions): Logger {
    const level = process.env.LOG_LEVEL ?? options.level;
    return pino(
        {
            level,
            base: { name: 'mcp-prompt-gateway' },
            redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
            formatters: { level: label => ({ level: label }) },
            timestamp: pino.stdTimeFunctions.isoTime
        },
        options.destination ?? pino.destination({ fd: 2, sync: false })
    );
}

/** Short, single-line description of an error, safe to show: no stack, no multi-line payloads. */
export function describeError(error: unknown): string {
    const raw = error instanceof Error ? error.message : String(error);
    const firstLine = raw.split('\n', 1)[0] ?? '';
    return firstLine.length > 200 ? `${firstLine.slice(0, 200)}...` : firstLine;
}
