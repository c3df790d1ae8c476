/**
 * Runs of a task asked for in bursts, coalesced and spaced: one run at a time, at most one more queued however often
 * it is asked for meanwhile, and each run starting at least `minGapMs` after the one before. The catalog walks its
 * list this way, so a storm of list_changed notifications costs one walk a second at most, not the client's whole
 * rate limit.
 */

/**
 * @template T
 * @param {() => Promise<T>} run
 * @param {{ minGapMs: number, signal?: AbortSignal }} options a queued run is dropped (its callers rejected with the
 *     signal's reason) once `signal` aborts
 * @returns {() => Promise<T>} asks for a run: the promise of a run that starts after this call (one running is not
 *     enough: it may have read its data before what the call is about changed)
 */
export function coalesced(run, { minGapMs, signal }) {
    /** @type {Promise<T> | undefined} */
    let running;
    /** @type {Promise<T> | undefined} */
    let queued;
    let lastStart = -Infinity;

    const start = () => {
        lastStart = Date.now();
        const current = run().finally(() => {
            if (running === current) running = undefined;
        });
        running = current;
        return current;
    };

    const later = async () => {
        await running?.catch(() => undefined);
        const wait = lastStart + minGapMs - Date.now();
        if (wait > 0) await new Promise(resolve => setTimeout(resolve, wait));
        queued = undefined;
        signal?.throwIfAborted();
        return start();
    };

    return () => {
        if (queued !== undefined) return queued;
        if (running === undefined && Date.now() - lastStart >= minGapMs) return start();
        queued = later();
        return queued;
    };
}

/**
 * The list walked on a timer while live updates are off, until they are back. Only 'listening' stops the timer: a
 * refused stream (one tab too many for the client's subscription slots) goes off, reconnecting, off... every 30 s,
 * and a timer restarted at each of those would never fire.
 *
 * @param {() => void} refresh
 * @param {() => number} everyMs read when the timer starts
 * @returns {(live: string) => void} to be told each live state; 'stopped' clears the timer for good
 */
export function whileLiveOff(refresh, everyMs) {
    /** @type {ReturnType<typeof setInterval> | undefined} */
    let timer;
    return live => {
        if (live === 'listening' || live === 'stopped') {
            clearInterval(timer);
            timer = undefined;
        } else if (live === 'off' && timer === undefined) {
            timer = setInterval(refresh, everyMs());
        }
    };
}
