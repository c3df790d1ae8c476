/** Files that are not regular files, for the tests that check the gateway refuses them instead of blocking on them. */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { TeardownScope } from './helpers.js';

/**
 * A FIFO at `file`. At teardown a writer opens it without blocking, which lets go of any reader stuck opening it
 * (a gateway without the fix): the test then fails instead of leaving a thread blocked forever.
 */
export function makeFifo(t: TeardownScope, file: string): string {
    execFileSync('mkfifo', [file]);
    t.after(() => releaseFifo(file));
    return file;
}

async function releaseFifo(file: string): Promise<void> {
    try {
        const handle = await open(file, constants.O_WRONLY | constants.O_NONBLOCK);
        await handle.close();
    } catch {
        // ENXIO: no reader waiting; ENOENT: already removed.
    }
}

/** SIGTERM, and SIGKILL if the process has not exited after `graceMs`: a teardown that cannot hang. */
export function killAfter(t: TeardownScope, child: ChildProcess, graceMs = 10_000): void {
    t.after(async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
    });
}
