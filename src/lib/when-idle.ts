/**
 * Waits until `isIdle()` holds, or `timeoutMs` passes. The caller keeps
 * `waiters` and calls every one of them (and empties the list) when it becomes idle.
 */
export async function whenIdle(isIdle: () => boolean, waiters: (() => void)[], timeoutMs: number): Promise<boolean> {
    if (isIdle()) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<true>(resolve => waiters.push(() => resolve(true)));
    const late = new Promise<false>(resolve => (timer = setTimeout(resolve, timeoutMs, false)));
    try {
        return await Promise.race([idle, late]);
    } finally {
        clearTimeout(timer);
    }
}
