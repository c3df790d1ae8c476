/**
 * Structured logs on stderr (stdout may carry the stdio MCP transport): JSON
 * lines, or readable lines for a person at a terminal. Every line written while
 * serving a request names its id (passed by the code that writes it: see
 * log-context.ts). The code logs short reasons, not raw errors or payloads, in
 * the first place; behind that, two safety nets: the redaction list blanks
 * objects logged whole (headers, env), and every line is searched for the
 * config's secret values (see config/secrets.ts), wherever they appear,
 * upstream text included.
 */
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { PrettyOptions, PrettyStream } from 'pino-pretty';
import { Redactor } from './redaction.js';

export type { Logger };

const REDACTED_PATHS = [
    'headers.authorization',
    'headers["x-api-key"]',
    'headers.cookie',
    'req.headers.authorization',
    'req.headers["x-api-key"]',
    'req.headers.cookie',
    'env',
    'cursorSecret',
    'sessions.secrets',
    '*.headers',
    '*.env'
];

/** `log.level` (and LOG_LEVEL): pino's levels. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** `log.format` (and LOG_FORMAT): `auto` is pretty on a terminal, JSON lines elsewhere. */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * LOG_LEVEL and LOG_FORMAT, where set, over `fallback` (every command reads them alike); a value outside the list is
 * a message for the command to refuse with, naming the variable and its values.
 */
export function logSettingsFrom(
    env: NodeJS.ProcessEnv,
    fallback: { level: string; format: LogFormat }
): { ok: true; level: string; format: LogFormat } | { ok: false; message: string } {
    const { LOG_LEVEL: level = fallback.level, LOG_FORMAT: format = fallback.format } = env;
    if (!(LOG_LEVELS as readonly string[]).includes(level)) return { ok: false, message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` };
    if (!(LOG_FORMATS as readonly string[]).includes(format)) return { ok: false, message: `LOG_FORMAT must be one of ${LOG_FORMATS.join(', ')}` };
    return { ok: true, level, format: format as LogFormat };
}

export interface LoggerOptions {
    level: string;
    format?: LogFormat;
    /** Where to write; stderr unless a test captures it. */
    destination?: NodeJS.WritableStream;
    /** Values redacted from every line (see setLogSecrets). */
    secrets?: Iterable<string>;
}

/** The redactor of each logger made here (children share their parent's lines, so its redactor too). */
const redactors = new WeakMap<Logger, Redactor>();

export function createLogger(options: LoggerOptions): Logger {
    const format = options.format ?? 'auto';
    const redactor = new Redactor(options.secrets);
    const { stream, takesBytes } = destination(options.destination, format === 'pretty' || (format === 'auto' && process.stderr.isTTY));
    const logger = pino(
        {
            level: options.level,
            base: { name: 'mcp-prompt-gateway' },
            redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
            formatters: { level: label => ({ level: label }) },
            timestamp: isoTimeByMillisecond(),
            // On the serialised line, before it is written (or made readable): nothing escapes it. pino hands on what
            // the hook returns as it is: bytes for a destination that takes them (its type says string).
            hooks: { streamWrite: takesBytes ? line => Buffer.from(redactor.redact(line)) as unknown as string : line => redactor.redact(line) }
        },
        stream
    );
    redactors.set(logger, redactor);
    return logger;
}

/**
 * pino's isoTime, made once a millisecond: a busy gateway writes lines several to a millisecond, and toISOString
 * costs about a microsecond each.
 */
function isoTimeByMillisecond(): () => string {
    let madeAt = NaN;
    let made = '';
    return () => {
        const now = Date.now();
        if (now !== madeAt) {
            madeAt = now;
            made = `,"time":"${new Date(now).toISOString()}"`;
        }
        return made;
    };
}

/**
 * `logger`'s lines without its redaction paths, for a line whose fields are flat values the code chose (the access
 * line): the wildcard paths cannot match there but cost microseconds and kilobytes a line on the hot path. The rest
 * stays `logger`'s: its level as it changes (a child without a level of its own reads its parent's), destination,
 * format, and the redaction of secret values from the written line.
 */
export function withoutPathRedaction(logger: Logger): Logger {
    return logger.child({}, { redact: [] });
}

/**
 * Sets the values redacted from every line of `logger` (one made by createLogger), and by its redactor wherever else
 * it is used (see logRedactor).
 */
export function setLogSecrets(logger: Logger, secrets: Iterable<string>): void {
    logRedactor(logger).update(secrets);
}

/**
 * The redactor of `logger`'s lines, for what else the process outputs (health, the dashboard) to hide the same
 * values; a logger not made by createLogger gets one of its own that only those outputs use.
 */
export function logRedactor(logger: Logger): Redactor {
    let redactor = redactors.get(logger);
    if (redactor === undefined) {
        redactor = new Redactor();
        redactors.set(logger, redactor);
    }
    return redactor;
}

/** JSON lines wait in a buffer until this much is there (a write per line cost more than the rest of the line)... */
const BUFFERED_BYTES = 4096;
/** ...or at most about this long, so a quiet gateway's lines still come out at once to a person or a collector. */
const FLUSH_EVERY_MS = 250;

/**
 * JSON lines go to stderr through sonic-boom, written asynchronously in batches; pino writes what is buffered
 * synchronously when the process exits (process.exit, the end of the event loop, an uncaught exception): a line is
 * lost only with the machine, or to a SIGKILL within FLUSH_EVERY_MS. Readable lines are for a person at a terminal:
 * written as they come.
 *
 * The batch is kept as bytes (`takesBytes`: each line encoded once as it comes): kept as text, sonic-boom measures
 * the whole batch's UTF-8 length at every line, which copies it (2.3 KB and ~3 us a line at BUFFERED_BYTES).
 */
function destination(stream: NodeJS.WritableStream | undefined, readable: boolean): { stream: DestinationStream; takesBytes: boolean } {
    if (!readable) {
        if (stream !== undefined) return { stream, takesBytes: false };
        const batched = pino.destination({ fd: 2, sync: false, minLength: BUFFERED_BYTES, periodicFlush: FLUSH_EVERY_MS, contentMode: 'buffer' });
        return { stream: batched, takesBytes: true };
    }
    // Loaded only for people at a terminal: servers writing JSON never pay for it.
    const { build } = createRequire(import.meta.url)('pino-pretty') as { build: (options: PrettyOptions) => PrettyStream };
    return { stream: build({ destination: stream ?? 2, colorize: stream === undefined && process.stderr.isTTY, sync: stream !== undefined }), takesBytes: false };
}

/**
 * Writes out the lines `logger` holds, synchronously: before a message the process writes on stderr itself on its
 * way out, which must come after them.
 */
export function flushLogSync(logger: Logger): void {
    const stream = (logger as unknown as Record<symbol, { flushSync?: () => void } | undefined>)[pino.symbols.streamSym];
    try {
        stream?.flushSync?.();
    } catch {
        // stderr is gone: there is nobody left to tell.
    }
}

/**
 * Runs `then` (an exit) once the log's lines are out, or after `timeoutMs` if stderr does not take them (a reader
 * that stopped reading must not keep a stopping process alive).
 */
export function afterLogFlushed(logger: Logger, then: () => void, timeoutMs = 2000): void {
    let done = false;
    const once = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        then();
    };
    const timer = setTimeout(once, timeoutMs);
    logger.flush(() => once());
}

/** Short, single-line description of an error, safe to show: no stack, no multi-line payloads. */
export function describeError(error: unknown): string {
    const raw = error instanceof Error ? error.message : String(error);
    const firstLine = raw.split('\n', 1)[0] ?? '';
    return firstLine.length > 200 ? `${firstLine.slice(0, 200)}...` : firstLine;
}
