/**
 * `work`, or the signal's abort reason as soon as it is aborted: work that takes no signal (or is shared by other
 * waiters) still lets its caller go, and goes on for whoever else waits. No signal: `work` itself.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    if (signal === undefined) return work;
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<T>((resolve, reject) => {
        const onAbort = () => reject(signal.reason as Error);
        signal.addEventListener('abort', onAbort, { once: true });
        work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
}
