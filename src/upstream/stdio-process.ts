/**
 * MCP client transport that runs a stdio server as a child process and owns its
 * whole lifetime, unlike the SDK's StdioClientTransport:
 * - stdout lines that are not JSON-RPC messages are reported (`onNoise`) instead of
 *   silently dropped, and never end the connection;
 * - the child leads its own process group, so closing it also ends what it started
 *   (`npx` -> `node`): stdin end, then SIGTERM to the group, then SIGKILL;
 * - with a {@link ChildReaper}, the group is killed even when the gateway is SIGKILLed.
 *
 * `env` is passed as it is: the caller decides what the child inherits.
 * On Windows there are no process groups: only the direct child is signalled
 * (see reaper.ts), and commands are not resolved through PATHEXT (`npx` needs `npx.cmd`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
    SdkError,
    SdkErrorCode,
    deserializeMessage,
    serializeMessage,
    type JSONRPCMessage,
    type MessageExtraInfo,
    type Transport
} from '@modelcontextprotocol/client';
import { LineSplitter } from './lines.js';
import { PROCESS_GROUPS, type ChildReaper } from './reaper.js';

export const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;
const MAX_STDERR_LINE = 4096;
const MAX_NOISE_LINE = 200;
/**
 * After the child exited, how long its stdout may still deliver what it wrote before
 * dying. Bounded because a process that left the group can hold the pipe open forever.
 */
const PIPE_DRAIN_MS = 500;

export interface StdioProcessOptions {
    command: string;
    args: string[];
    env: Record<string, string>;
    cwd?: string;
    /** Wait after closing stdin before SIGTERM, and after SIGTERM before SIGKILL. */
    killGraceMs: number;
    /** Each stderr line, cut at 4096 characters. */
    onStderrLine?: (line: string) => void;
    /** A stdout line that is not a valid JSON-RPC message, cut at 200 characters. */
    onNoise?: (line: string) => void;
    /** Pass `sharedReaper()` so the child dies with the gateway even on SIGKILL. */
    reaper?: ChildReaper;
    /** Longest stdout line accepted; a longer one is an error that closes the transport. */
    maxLineBytes?: number;
}

export class StdioProcessTransport implements Transport {
    onclose?: () => void;
    onerror?: (error: Error) => void;
    onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

    readonly #options: StdioProcessOptions;
    #child: ChildProcess | undefined;
    #exited = false;
    #markExited: () => void = () => {};
    readonly #exit = new Promise<void>(resolve => (this.#markExited = resolve));
    #markFinished: () => void = () => {};
    readonly #finished = new Promise<void>(resolve => (this.#markFinished = resolve));
    #closing: Promise<void> | undefined;
    #oncloseFired = false;

    constructor(options: StdioProcessOptions) {
        this.#options = options;
    }

    /** The child's pid (also its process group id on POSIX); undefined before start or when spawning failed. */
    get pid(): number | undefined {
        return this.#child?.pid;
    }

    async start(): Promise<void> {
        if (this.#child !== undefined) throw new Error('StdioProcessTransport already started');
        if (this.#closing !== undefined) throw new SdkError(SdkErrorCode.NotConnected, 'Transport closed before start');
        const options = this.#options;
        const child = spawn(options.command, options.args, {
            env: options.env,
            cwd: options.cwd,
            stdio: ['pipe', 'pipe', 'pipe'],
            // A group of its own (POSIX): one signal reaches everything it started.
            detached: PROCESS_GROUPS,
            shell: false,
            windowsHide: true
        });
        this.#child = child;
        // Registered in the same turn as the fork: the narrowest window the reaper can have.
        if (child.pid !== undefined && PROCESS_GROUPS) options.reaper?.register(child.pid);

        this.#readStdout(child);
        child.stderr?.pipe(new LineSplitter(MAX_STDERR_LINE)).on('data', (line: string) => this.#callSafely(options.onStderrLine, line));
        child.stdin?.on('error', error => this.#reportError(error));
        child.stdout?.on('error', error => this.#reportError(error));
        child.stderr?.on('error', error => this.#reportError(error));
        const closed = new Promise<void>(resolve => child.once('close', () => resolve()));
        child.once('exit', () => void this.#afterExit(child, closed));

        await new Promise<void>((resolve, reject) => {
            const onSpawn = () => {
                child.off('error', onSpawnError);
                child.on('error', error => this.#reportError(error));
                resolve();
            };
            const onSpawnError = (error: Error) => {
                child.off('spawn', onSpawn);
                // No 'exit' follows a failed spawn; this is the end of the transport.
                child.on('error', () => {});
                void this.#afterExit(child, closed);
                reject(error);
            };
            child.once('spawn', onSpawn);
            child.once('error', onSpawnError);
        });
    }

    send(message: JSONRPCMessage): Promise<void> {
        const stdin = this.#child?.stdin;
        if (stdin == null || this.#exited || this.#closing !== undefined || !stdin.writable) {
            return Promise.reject(new SdkError(SdkErrorCode.NotConnected, 'Not connected'));
        }
        return new Promise((resolve, reject) => {
            // The callback fires once this message has reached the pipe, or with the error that stopped it
            // (EPIPE, stream destroyed): waiting for it when the buffer is full is the backpressure.
            const accepted = stdin.write(serializeMessage(message), error => {
                if (error) reject(new SdkError(SdkErrorCode.SendFailed, `Send failed: ${error.message}`, undefined, { cause: error }));
                else resolve();
            });
            if (accepted) resolve();
        });
    }

    /**
     * Ends the child: stdin end, up to killGraceMs for it to exit, SIGTERM to its group,
     * up to killGraceMs more, SIGKILL to its group. Resolves once it has exited and
     * `onclose` fired; if it survives SIGKILL for another killGraceMs (stuck in the
     * kernel), resolves anyway and `onclose` follows when it exits. Idempotent.
     */
    close(): Promise<void> {
        this.#closing ??= this.#terminate();
        return this.#closing;
    }

    async #terminate(): Promise<void> {
        const child = this.#child;
        if (child === undefined) {
            this.#fireOnclose();
            return;
        }
        const grace = this.#options.killGraceMs;
        if (!this.#exited) {
            try {
                child.stdin?.end();
            } catch {
                // A broken pipe is as good as an ended one here.
            }
            if (!(await settlesWithin(this.#exit, grace))) {
                this.#signalGroup(child, 'SIGTERM');
                if (!(await settlesWithin(this.#exit, grace))) {
                    this.#signalGroup(child, 'SIGKILL');
                    await settlesWithin(this.#exit, grace);
                }
            }
        }
        if (this.#exited) await this.#finished;
    }

    /** The exit of the leader, by itself or by close(): end what it left behind, then report the close. */
    async #afterExit(child: ChildProcess, closed: Promise<void>): Promise<void> {
        if (this.#exited) return;
        this.#exited = true;
        this.#markExited();
        if (child.pid !== undefined) {
            // Grandchildren that stayed behind would otherwise run on as orphans.
            this.#signalGroup(child, 'SIGKILL');
            if (PROCESS_GROUPS) this.#options.reaper?.unregister(child.pid);
        }
        await settlesWithin(closed, PIPE_DRAIN_MS);
        child.stdin?.destroy();
        child.stdout?.destroy();
        child.stderr?.destroy();
        this.#fireOnclose();
    }

    #signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
        const pid = child.pid;
        if (pid === undefined) return;
        try {
            if (PROCESS_GROUPS) process.kill(-pid, signal);
            else if (!this.#exited) child.kill(signal);
        } catch (error) {
            // ESRCH: the group is already gone. EPERM: a member changed its user; nothing more can be done.
            const code = (error as NodeJS.ErrnoException).code;
            if (code !== 'ESRCH' && code !== 'EPERM') this.#reportError(error);
        }
    }

    #readStdout(child: ChildProcess): void {
        const maxLineBytes = this.#options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
        const reader = new LineReader(maxLineBytes, line => this.#handleLine(line));
        let broken = false;
        child.stdout?.on('data', (chunk: Buffer) => {
            if (broken) return;
            try {
                reader.push(chunk);
            } catch (error) {
                // Like the SDK: a line this long is a broken server, not noise to skip.
                broken = true;
                this.#reportError(error);
                void this.close();
            }
        });
    }

    #handleLine(line: string): void {
        if (line.trim() === '') return;
        let message: JSONRPCMessage;
        try {
            message = deserializeMessage(line);
        } catch {
            // Not JSON, or JSON that is not JSON-RPC: count it, skip it, keep the connection.
            this.#callSafely(this.#options.onNoise, line.slice(0, MAX_NOISE_LINE));
            return;
        }
        try {
            this.onmessage?.(message);
        } catch (error) {
            this.#reportError(error);
        }
    }

    /** A throwing callback must not escape into a stream's event handler and crash the process. */
    #callSafely(callback: ((line: string) => void) | undefined, line: string): void {
        try {
            callback?.(line);
        } catch (error) {
            this.#reportError(error);
        }
    }

    #reportError(error: unknown): void {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }

    #fireOnclose(): void {
        if (this.#oncloseFired) return;
        this.#oncloseFired = true;
        this.#markFinished();
        this.onclose?.();
    }
}

export class LineTooLongError extends Error {
    override readonly name = 'LineTooLongError';

    constructor(readonly maxLineBytes: number) {
        super(`stdout line longer than ${maxLineBytes} bytes`);
    }
}

/** Splits stdout into lines without ever holding more than one line of at most maxLineBytes. */
class LineReader {
    #pending: Buffer[] = [];
    #pendingBytes = 0;

    constructor(
        private readonly maxLineBytes: number,
        private readonly onLine: (line: string) => void
    ) {}

    /** Throws LineTooLongError when the line being read grows beyond the limit. */
    push(chunk: Buffer): void {
        let start = 0;
        for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
            const tail = chunk.subarray(start, newline);
            this.#checkLength(this.#pendingBytes + tail.length);
            const line = this.#pending.length === 0 ? tail : Buffer.concat([...this.#pending, tail]);
            this.#pending = [];
            this.#pendingBytes = 0;
            start = newline + 1;
            // Decoded per whole line, so a character split between chunks stays intact.
            this.onLine(line.toString('utf8').replace(/\r$/, ''));
        }
        if (start < chunk.length) {
            const rest = chunk.subarray(start);
            this.#checkLength(this.#pendingBytes + rest.length);
            this.#pending.push(rest);
            this.#pendingBytes += rest.length;
        }
    }

    #checkLength(bytes: number): void {
        if (bytes > this.maxLineBytes) {
            this.#pending = [];
            this.#pendingBytes = 0;
            throw new LineTooLongError(this.maxLineBytes);
        }
    }
}

/** Whether the promise settles within ms; the timer never outlives the wait. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>(resolve => (timer = setTimeout(resolve, ms, false)));
    try {
        return await Promise.race([promise.then(() => true), timeout]);
    } finally {
        clearTimeout(timer);
    }
}
