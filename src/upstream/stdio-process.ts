/**
 * MCP client transport that runs a stdio server as a child process and owns its
 * whole lifetime, unlike the SDK's StdioClientTransport:
 * - stdout lines that are not JSON-RPC messages are reported (`onNoise`) instead of
 *   silently dropped, and never end the connection;
 * - a stdout line over `maxLineBytes` is skipped, not held: a response fails only the
 *   request it answers (see oversized.ts), anything else is dropped and reported;
 * - the child leads its own process group, so closing it also ends what it started
 *   (`npx` -> `node`): stdin end, then SIGTERM to the group, then SIGKILL; what
 *   outlives the leader gets SIGTERM and a grace period too, whether the leader
 *   exited by itself or on close();
 * - a child that stops reading its stdin makes send() fail, not queue without end;
 * - with a {@link ChildReaper}, the group is killed even when the gateway is SIGKILLed.
 *
 * `env` is passed as it is: the caller decides what the child inherits.
 * On Windows there are no process groups: only the direct child is signalled
 * (see reaper.ts), and commands are not resolved through PATHEXT (`npx` needs `npx.cmd`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { SdkError, SdkErrorCode, serializeMessage, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { withDeadline } from '../lib/deadline.js';
import { parseJsonRpcMessage } from '../protocol/json-rpc.js';
import { CommandNotStartedError, explainSpawnFailure } from './command.js';
import { streamPace } from './flood.js';
import { LineReader, type OverlongLine } from '../lib/lines.js';
import { OVERSIZED_EDGE_BYTES } from '../lib/byte-collector.js';
import { messageLimit, oversizedResponse, requestIdOf } from './oversized.js';
import { readPaced } from './paced-read.js';
import { PROCESS_GROUPS, type ChildReaper } from './reaper.js';
import type { UpstreamTransport } from './transports.js';

const DEFAULT_MAX_PENDING_WRITE_BYTES = 16 * 1024 * 1024;
const MAX_STDERR_LINE_BYTES = 4096;
const MAX_NOISE_LINE = 200;
/**
 * After the child exited, how long its stdout may still deliver what it wrote before
 * dying. Bounded because a process that left the group can hold the pipe open forever.
 */
const PIPE_DRAIN_MS = 500;
/** How often the group is checked for members while what the leader left behind has its grace. */
const GROUP_PROBE_MS = 50;

export interface StdioProcessOptions {
    command: string;
    args: string[];
    env: Record<string, string>;
    cwd?: string;
    /** Wait after closing stdin before SIGTERM, and after SIGTERM before SIGKILL. */
    killGraceMs: number;
    /** Each stderr line, cut at 4096 bytes. */
    onStderrLine?: (line: string) => void;
    /** A stdout line that is not a valid JSON-RPC message, cut at 200 characters. */
    onNoise?: (line: string) => void;
    /** Pass `sharedReaper()` so the child dies with the gateway even on SIGKILL. */
    reaper?: ChildReaper;
    /**
     * Longest stdout line read (limits.maxUpstreamMessageBytes). A longer one is skipped: if it is a response whose
     * id shows at one of its ends, its request gets an error response instead; otherwise it is dropped.
     */
    maxLineBytes: number;
    /** A stdout line over maxLineBytes was dropped, with its size: no request id showed at its ends. */
    onOversizedDropped?: (bytes: number) => void;
    /** Stdout brought more lines in a window than it is read at (see flood.ts): it waits for the next, told once per window. */
    onStreamFlood?: () => void;
    /** Most bytes queued for a child that does not read its stdin; beyond that, send() fails. */
    maxPendingWriteBytes?: number;
}

export class StdioProcessTransport implements UpstreamTransport {
    onclose?: (() => void) | undefined;
    onerror?: ((error: Error) => void) | undefined;
    onmessage?: ((message: JSONRPCMessage) => void) | undefined;

    readonly #options: StdioProcessOptions;
    #child: ChildProcess | undefined;
    #exited = false;
    #markExited: () => void = () => {};
    readonly #exit = new Promise<void>(resolve => (this.#markExited = resolve));
    #markFinished: () => void = () => {};
    readonly #finished = new Promise<void>(resolve => (this.#markFinished = resolve));
    #closing: Promise<void> | undefined;
    /** When close() sent SIGTERM to the group: the grace of what outlives the leader counts from there. */
    #sigtermAt: number | undefined;
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
        const stderrLines = new LineReader({
            maxBytes: MAX_STDERR_LINE_BYTES,
            overlong: 'cut',
            onLine: line => this.#callSafely(options.onStderrLine, line)
        });
        child.stderr?.on('data', (chunk: Buffer) => stderrLines.push(chunk));
        child.stderr?.on('end', () => stderrLines.end());
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
                reject(this.#explain(error));
            };
            child.once('spawn', onSpawn);
            child.once('error', onSpawnError);
        });
    }

    /** ENOENT or EACCES from spawn says nothing of which: the command, the PATH searched or the cwd. */
    #explain(error: Error): Error {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'EACCES') return error;
        const { command, cwd, env } = this.#options;
        return new CommandNotStartedError(explainSpawnFailure({ command, cwd, env }, code), code, { cause: error });
    }

    send(message: JSONRPCMessage): Promise<void> {
        const stdin = this.#child?.stdin;
        if (stdin == null || this.#exited || this.#closing !== undefined || !stdin.writable) {
            return Promise.reject(new SdkError(SdkErrorCode.NotConnected, 'Not connected'));
        }
        // A hung child never drains its pipe; past this, more queueing only grows the gateway's memory.
        const maxPending = this.#options.maxPendingWriteBytes ?? DEFAULT_MAX_PENDING_WRITE_BYTES;
        if (stdin.writableLength > maxPending) {
            const error = new SdkError(SdkErrorCode.SendFailed, `Send failed: the child has not read ${stdin.writableLength} bytes from its stdin`);
            this.#reportError(error);
            return Promise.reject(error);
        }
        return new Promise((resolve, reject) => {
            // The callback fires once this message has reached the pipe, or with the error that stopped it
            // (EPIPE, stream destroyed): waiting for it when the buffer is full is the backpressure.
            // A Buffer, so writableLength counts bytes (a string would count UTF-16 units).
            const accepted = stdin.write(Buffer.from(serializeMessage(message), 'utf8'), error => {
                if (error) reject(new SdkError(SdkErrorCode.SendFailed, `Send failed: ${error.message}`, undefined, { cause: error }));
                else resolve();
            });
            if (accepted) resolve();
        });
    }

    /**
     * Ends the child: stdin end, up to killGraceMs for it to exit, SIGTERM to its group,
     * up to killGraceMs more, SIGKILL to its group. Resolves once it and its group have
     * exited and `onclose` fired; if it survives SIGKILL for another killGraceMs (stuck in
     * the kernel), resolves anyway and `onclose` follows when it exits. Idempotent.
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
            await withDeadline(this.#exit, grace, () => {});
            if (!this.#exited) {
                this.#sigtermAt = Date.now();
                this.#signalGroup(child, 'SIGTERM');
                await withDeadline(this.#exit, grace, () => {});
            }
            if (!this.#exited) {
                this.#signalGroup(child, 'SIGKILL');
                await withDeadline(this.#exit, grace, () => {});
            }
        }
        if (this.#exited) await this.#finished;
    }

    /** The exit of the leader, by itself or by close(): end what it left behind, then report the close. */
    async #afterExit(child: ChildProcess, closed: Promise<void>): Promise<void> {
        if (this.#exited) return;
        this.#exited = true;
        this.#markExited();
        if (child.pid !== undefined && PROCESS_GROUPS) {
            await this.#endGroup(child, child.pid);
            // Only now: had the gateway died during the grace, the watchdog still had to end the group.
            this.#options.reaper?.unregister(child.pid);
        }
        await withDeadline(closed, PIPE_DRAIN_MS, () => {});
        child.stdin?.destroy();
        child.stdout?.destroy();
        child.stderr?.destroy();
        this.#fireOnclose();
    }

    /**
     * What the leader left in its group would run on as orphans. It gets SIGTERM (unless close() sent
     * one already) and killGraceMs from that SIGTERM to exit, then SIGKILL: a wrapper like `npx`
     * exits on SIGTERM at once, while the server it started may still be shutting down.
     * A member that exited counts until init reaps it, so a slow init can use up the grace; it stays bounded.
     */
    async #endGroup(child: ChildProcess, pgid: number): Promise<void> {
        if (!groupExists(pgid)) return;
        if (this.#sigtermAt === undefined) {
            this.#sigtermAt = Date.now();
            this.#signalGroup(child, 'SIGTERM');
        }
        const deadline = this.#sigtermAt + this.#options.killGraceMs;
        while (groupExists(pgid)) {
            const left = deadline - Date.now();
            if (left <= 0) {
                this.#signalGroup(child, 'SIGKILL');
                return;
            }
            await sleep(Math.min(GROUP_PROBE_MS, left));
        }
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
        const { maxLineBytes } = this.#options;
        const reader = new LineReader({
            maxBytes: maxLineBytes,
            overlong: 'report',
            edgeBytes: OVERSIZED_EDGE_BYTES,
            onLine: line => this.#handleLine(line),
            onOverlong: line => this.#handleOverlong(line, maxLineBytes)
        });
        const { stdout } = child;
        if (stdout === null) return;
        const pace = streamPace(() => this.#callSafely(this.#options.onStreamFlood, undefined));
        // Stdout is not read while readPaced waits (the child blocks on a full pipe); once destroyed, it waits no more.
        const destroyed = new AbortController();
        stdout.once('close', () => destroyed.abort());
        // A stream error is reported by its 'error' listener; stdout destroyed before its end needs no report.
        readPaced(stdout, reader, pace, destroyed.signal).catch(() => {});
    }

    /** Only the request it answers fails: the connection and every other request on it carry on. */
    #handleOverlong(line: OverlongLine, maxLineBytes: number): void {
        const id = requestIdOf(line.head, line.tail);
        if (id === undefined) {
            this.#callSafely(this.#options.onOversizedDropped, line.bytes);
            return;
        }
        this.#deliver(oversizedResponse(id, messageLimit(maxLineBytes)));
    }

    #handleLine(line: string): void {
        if (line.trim() === '') return;
        const message = parseJsonRpcMessage(line);
        if (message === undefined) {
            // Not JSON, or JSON that is not JSON-RPC: count it, skip it, keep the connection.
            this.#callSafely(this.#options.onNoise, line.slice(0, MAX_NOISE_LINE));
            return;
        }
        this.#deliver(message);
    }

    #deliver(message: JSONRPCMessage): void {
        try {
            this.onmessage?.(message);
        } catch (error) {
            this.#reportError(error);
        }
    }

    /** A throwing callback must not escape into a stream's event handler and crash the process. */
    #callSafely<T>(callback: ((value: T) => void) | undefined, value: T): void {
        try {
            callback?.(value);
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

/** Whether any process is left in the group; one we may not signal (EPERM) is out of our reach anyway. */
function groupExists(pgid: number): boolean {
    try {
        process.kill(-pgid, 0);
        return true;
    } catch {
        return false;
    }
}
