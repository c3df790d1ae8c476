/**
 * Makes sure stdio children do not outlive the gateway, even when the gateway is
 * killed with SIGKILL and so runs no exit handler at all.
 *
 * How: one small watchdog process per gateway process. The gateway holds the
 * write end of the watchdog's stdin and tells it `+<pgid>` when a child's process
 * group starts and `-<pgid>` when that group is gone. The kernel closes the write
 * end when the gateway dies, however it dies; the watchdog sees end-of-file and
 * SIGTERMs every group still registered, SIGKILLs them after a grace period, and
 * exits. It runs in its own session (`detached`), so a signal to the gateway's
 * process group (`kill -9 -<pgid>`, Ctrl-C in a terminal) does not reach it, and
 * it ignores SIGINT/SIGTERM/SIGHUP in case one is aimed at it anyway. The gateway
 * `unref()`s it, so it never keeps the gateway running.
 *
 * What is still not covered:
 * - The gateway killed between a child's fork and the `+<pgid>` write. Both happen
 *   in the same JavaScript turn (spawn() returns the pid synchronously, and a pipe
 *   write reaches the kernel at once), so the window is microseconds wide.
 * - Processes that leave the child's process group (setsid/setpgid, i.e. daemons).
 *   Nothing short of cgroups or PID namespaces can track those.
 * - The watchdog itself killed with SIGKILL (by hand, by the OOM killer) while the
 *   gateway lives: `available` turns false and children still work, without the
 *   guarantee. When both die at once (a container or cgroup stopped) the children
 *   go down with them anyway.
 * - PID reuse: a group is forgotten as soon as a signal finds it gone, and the
 *   kernel does not reuse a number while any process still has it as its group id,
 *   so only a group that vanished in the instant before a signal could be mistaken.
 * - Spawning the watchdog failed: `available` is false and children run without
 *   the guarantee; nothing else changes.
 *
 * Windows has no process groups and no way to signal one, so no watchdog is
 * started there (`available` is always false). libuv puts every non-detached child
 * into a job object that Windows kills when the gateway exits, so the direct child
 * is covered, but that job lets grandchildren break away silently: `npx` -> `node`
 * can leave the inner `node` behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Socket } from 'node:net';
import { withDeadline } from '../lib/deadline.js';

/** Whether process groups exist here (POSIX); see the header for Windows. */
export const PROCESS_GROUPS = process.platform !== 'win32';

const DEFAULT_REAPER_GRACE_MS = 2000;

/**
 * The watchdog. Plain JavaScript for `node -e`, so it needs no build step and no
 * file on disk. `__GRACE_MS__` is replaced with a number before it is started.
 */
const WATCHDOG_SCRIPT = `
'use strict';
const GRACE_MS = __GRACE_MS__;
const groups = new Set();

// A signal aimed at the gateway must not stop the watchdog before it has done its job.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => {});

let partial = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', chunk => {
    const lines = (partial + chunk).split('\\n');
    partial = lines.pop();
    for (const line of lines) {
        const pgid = Number(line.slice(1));
        // 0 and 1 would mean our own group and init's: never signal those.
        if (!Number.isSafeInteger(pgid) || pgid < 2) continue;
        if (line[0] === '+') groups.add(pgid);
        else if (line[0] === '-') groups.delete(pgid);
    }
});

// A group that a signal cannot reach is gone (or not ours to signal): forget it, so a
// later signal cannot hit whatever reuses the number.
function signalGroups(signal) {
    for (const pgid of groups) {
        try {
            process.kill(-pgid, signal);
        } catch {
            groups.delete(pgid);
        }
    }
}

// End of stdin: the gateway is gone, or closed us on purpose after its children were closed.
let reaping = false;
function reap() {
    if (reaping) return;
    reaping = true;
    signalGroups('SIGTERM');
    const deadline = Date.now() + GRACE_MS;
    const check = () => {
        signalGroups(0);
        if (groups.size > 0 && Date.now() < deadline) return;
        clearInterval(timer);
        signalGroups('SIGKILL');
        process.exit(0);
    };
    const timer = setInterval(check, 100);
    check();
}
process.stdin.on('end', reap);
process.stdin.on('error', reap);
`;

export interface ChildReaperOptions {
    /** How long the watchdog waits after SIGTERM before SIGKILL. */
    graceMs?: number;
    /** The node binary for the watchdog; a wrong one is how tests reach the fallback. */
    nodePath?: string;
}

export class ChildReaper {
    readonly #watchdog: ChildProcess | undefined;
    readonly #exited: Promise<void>;
    readonly #graceMs: number;
    #available = false;
    #closed = false;

    constructor(options: ChildReaperOptions = {}) {
        this.#graceMs = options.graceMs ?? DEFAULT_REAPER_GRACE_MS;
        if (!PROCESS_GROUPS) {
            this.#exited = Promise.resolve();
            return;
        }
        this.#watchdog = startWatchdog(options.nodePath ?? process.execPath, this.#graceMs);
        const watchdog = this.#watchdog;
        this.#exited = new Promise(resolve => {
            if (watchdog === undefined) return resolve();
            // 'close' also follows a failed spawn, where there is no 'exit'.
            watchdog.once('close', () => resolve());
        });
        if (watchdog?.pid === undefined) return;
        this.#available = true;
        watchdog.once('exit', () => (this.#available = false));
        watchdog.stdin?.on('error', () => (this.#available = false));
    }

    /** True while the watchdog runs and listens; false on Windows, after a failed start, or after close(). */
    get available(): boolean {
        return this.#available;
    }

    get closed(): boolean {
        return this.#closed;
    }

    /** The watchdog's pid, for diagnostics and tests. */
    get pid(): number | undefined {
        return this.#watchdog?.pid;
    }

    /** Call right after spawning a child that leads its own process group (same turn as spawn()). */
    register(pgid: number): void {
        this.#tell('+', pgid);
    }

    /** Call once the group is gone (its leader exited and the rest was ended). */
    unregister(pgid: number): void {
        this.#tell('-', pgid);
    }

    /**
     * Ends the watchdog. For the process's own shutdown, after every child was closed:
     * a group still registered then is killed by the watchdog. Resolves when the
     * watchdog has exited (bounded by its grace period). Idempotent.
     */
    async close(): Promise<void> {
        if (!this.#closed) {
            this.#closed = true;
            this.#available = false;
            this.#watchdog?.stdin?.end();
            // Whoever awaits this wants to see the watchdog gone: keep the event loop up for its exit.
            this.#watchdog?.ref();
        }
        await withDeadline(this.#exited, this.#graceMs + 1000, () => {});
    }

    #tell(sign: '+' | '-', pgid: number): void {
        if (!this.#available || !Number.isSafeInteger(pgid) || pgid < 2) return;
        // An EPIPE (watchdog gone) arrives as an 'error' event, handled in the constructor.
        this.#watchdog?.stdin?.write(`${sign}${pgid}\n`);
    }
}

function startWatchdog(nodePath: string, graceMs: number): ChildProcess | undefined {
    let watchdog: ChildProcess;
    try {
        watchdog = spawn(nodePath, ['-e', WATCHDOG_SCRIPT.replace('__GRACE_MS__', String(Math.max(0, Math.round(graceMs))))], {
            detached: true,
            stdio: ['pipe', 'ignore', 'ignore'],
            // NODE_OPTIONS could load code (`--import tsx`) that does not resolve from '/' and so kill the
            // watchdog at birth; '/' keeps it from holding on to the gateway's working directory.
            env: withoutNodeOptions(process.env),
            cwd: '/'
        });
    } catch {
        return undefined;
    }
    // A failed spawn reports 'error' asynchronously; without a listener it would crash the gateway.
    watchdog.on('error', () => {});
    watchdog.unref();
    // The stdin pipe is a handle of its own and would keep the gateway's event loop alive.
    if (watchdog.stdin instanceof Socket) watchdog.stdin.unref();
    return watchdog;
}

function withoutNodeOptions(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    const copy = { ...env };
    delete copy.NODE_OPTIONS;
    return copy;
}

let shared: ChildReaper | undefined;

/**
 * The reaper of this process, created on first use. A new one is created after
 * the previous one was closed. Embedders that run several gateways in one process
 * should call closeSharedReaper() only when the process shuts down, not per gateway.
 */
export function sharedReaper(): ChildReaper {
    if (shared === undefined || shared.closed) shared = new ChildReaper();
    return shared;
}

/** Closes the shared reaper at shutdown; starts no watchdog just to end it when none was ever needed. */
export async function closeSharedReaper(): Promise<void> {
    await shared?.close();
}
