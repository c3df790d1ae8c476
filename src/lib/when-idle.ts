import { withDeadline } from './deadline.js';

/**
 * Waits until `isIdle()` holds, or `timeoutMs` passes. The caller keeps
 * `waiters` and calls every one of them (and empties the list) when it becomes idle.
 */
export async function whenIdle(isIdle: () => boolean, waiters: (() => void)[], timeoutMs: number): Promise<boolean> {
    if (isIdle()) return true;
    const idle = new Promise<true>(resolve => waiters.push(() => resolve(true)));
    return withDeadline(idle, timeoutMs, () => false);
}
