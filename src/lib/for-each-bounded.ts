/** `work` on every item, at most `concurrency` at a time: a few workers taking the next item, no promise per waiting item. */
export async function forEachBounded<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
    let next = 0;
    const worker = async () => {
        while (next < items.length) await work(items[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
