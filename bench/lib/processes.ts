/**
 * The processes of a bench run (targets, upstreams, peers), each started as users start it and watched: one that
 * exits before the bench stops it fails the whole run at once, with the last lines it wrote, instead of leaving the
 * bench waiting. Every process still running when the bench exits, however it exits, is killed. Their resources
 * are read from /proc (Linux).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from '../../test/helpers.js';

export { ROOT };

export interface Watched {
    name: string;
    pid: number;
    child: ChildProcess;
    /** The line that said the process was ready, matched against `ready`. */
    readyMatch: RegExpExecArray;
    /** The last lines it wrote (stdout and stderr). */
    tail(): string[];
    /** Process warnings it printed so far ("(node:PID) MaxListenersExceededWarning: ..."), by name. */
    warnings: Map<string, number>;
    stop(): Promise<void>;
}

export interface SpawnOptions {
    /** Printed by the process (stdout or stderr) once it is ready; a capture group may carry its URL. */
    ready: RegExp;
    env?: Record<string, string>;
    cwd?: string;
    readyTimeoutMs?: number;
}

const running = new Set<ChildProcess>();
let fatal: (error: Error) => void = error => {
    throw error;
};

/** What happens when a watched process dies under the bench: the run's own handler (report and exit 1). */
export function onProcessFailure(handler: (error: Error) => void): void {
    fatal = handler;
}

process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
});

const TAIL_LINES = 30;
/** How long a process may take to exit on SIGTERM before it is killed: the bench has measured it already. */
const STOP_GRACE_MS = 2_000;

export async function spawnWatched(name: string, command: string, args: string[], options: SpawnOptions): Promise<Watched> {
    const child = spawn(command, args, {
        cwd: options.cwd ?? ROOT,
        // stdin stays a pipe this process holds: the bench's own servers exit when it ends (see servers/serve.ts).
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, ...options.env }
    });
    running.add(child);
    const tail: string[] = [];
    const warnings = new Map<string, number>();
    let stopping = false;
    let onLine: (line: string) => void = () => {};
    for (const stream of [child.stdout, child.stderr]) {
        createInterface({ input: stream }).on('line', line => {
            tail.push(line);
            if (tail.length > TAIL_LINES) tail.shift();
            const warning = /^\(node:\d+\) (\w*Warning)/.exec(line)?.[1];
            if (warning !== undefined) warnings.set(warning, (warnings.get(warning) ?? 0) + 1);
            onLine(line);
        });
    }
    const died = () => new Error(`${name} exited (code ${child.exitCode}, signal ${child.signalCode}); its last lines:\n${tail.join('\n')}`);
    child.once('exit', () => {
        running.delete(child);
        if (!stopping) fatal(died());
    });
    const readyMatch = await new Promise<RegExpExecArray>((resolve, reject) => {
        const timer = setTimeout(
            () => reject(new Error(`${name} not ready after ${options.readyTimeoutMs ?? 60_000} ms; its last lines:\n${tail.join('\n')}`)),
            options.readyTimeoutMs ?? 60_000
        );
        onLine = line => {
            const match = options.ready.exec(line);
            if (match === null) return;
            clearTimeout(timer);
            resolve(match);
        };
        child.once('error', reject);
    });
    onLine = () => {};
    return {
        name,
        pid: child.pid!,
        child,
        readyMatch,
        warnings,
        tail: () => [...tail],
        stop: async () => {
            stopping = true;
            if (child.exitCode !== null || child.signalCode !== null) return;
            const exited = once(child, 'exit');
            child.kill('SIGTERM');
            const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
            await exited;
            clearTimeout(timer);
        }
    };
}

/** One of the bench's own servers (bench/servers/<file>), under tsx; resolves with its URL. */
export async function startBenchServer(name: string, file: string, args: string[] = []): Promise<Watched & { url: string }> {
    const watched = await spawnWatched(name, process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/servers', file), ...args], { ready: /^listening on (\S+)$/ });
    return { ...watched, url: watched.readyMatch[1]! };
}

/** CPU time of all the process's threads so far, in nanoseconds (the first field of each thread's schedstat). */
export function cpuNs(pid: number): number {
    let total = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
        try {
            total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
        } catch {
            // The thread ended while we looked.
        }
    }
    return total;
}

/** A field of /proc/<pid>/status in KiB: VmRSS (resident now) or VmHWM (the peak). */
export function statusKiB(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]);
}
