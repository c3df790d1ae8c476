/**
 * Reads a paginated upstream list to the end by following its own `nextCursor`,
 * with guards against upstreams whose cursors loop or never end. Pure apart
 * from the injected page fetcher.
 */
export interface PageOf<T> {
    items: readonly T[];
    nextCursor?: string | undefined;
}

export interface CollectLimits {
    maxPages: number;
    maxItems: number;
}

export const DEFAULT_COLLECT_LIMITS: CollectLimits = { maxPages: 1000, maxItems: 100_000 };

export interface Collected<T> {
    items: T[];
    /** Why reading stopped before the upstream said it was done; undefined when complete. */
    truncated?: 'cursor-loop' | 'too-many-pages' | 'too-many-items';
}

export async function collectPages<T>(
    fetchPage: (cursor: string | undefined) => Promise<PageOf<T>>,
    limits: CollectLimits = DEFAULT_COLLECT_LIMITS
): Promise<Collected<T>> {
    const items: T[] = [];
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    for (let pages = 0; ; pages++) {
        if (pages === limits.maxPages) return { items, truncated: 'too-many-pages' };
        const page = await fetchPage(cursor);
        for (const item of page.items) {
            if (items.length === limits.maxItems) return { items, truncated: 'too-many-items' };
            items.push(item);
        }
        if (page.nextCursor === undefined || page.nextCursor === '') return { items };
        if (seenCursors.has(page.nextCursor)) return { items, truncated: 'cursor-loop' };
        seenCursors.add(page.nextCursor);
        cursor = page.nextCursor;
    }
}
