/**
 * Waits for `promise`, but at most `ms`: after that, resolves with `onLate()`.
 * The timer is cleared either way, so nothing lingers; the promise itself runs on.
 */
export async function withDeadline<T, L>(promise: Promise<T>, ms: number, onLate: () => L): Promise<T | L> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<typeof LATE>(resolve => (timer = setTimeout(resolve, ms, LATE)));
    try {
        const result = await Promise.race([promise, late]);
        return result === LATE ? onLate() : result;
    } finally {
        clearTimeout(timer);
    }
}

const LATE: unique symbol = Symbol('late');
