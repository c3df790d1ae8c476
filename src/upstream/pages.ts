/**
 * Reads a paginated upstream list to the end by following its own `nextCursor`,
 * with guards against upstreams whose lists never end, loop or grow without
 * bound. Each item is admitted (or left out) as its page arrives, so what is
 * held is what passed, within the item and byte budgets, never the raw pages.
 * Pure apart from the injected page fetcher.
 */
import { shortDigest } from '../lib/digest.js';

export interface PageOf<T> {
    items: readonly T[];
    nextCursor?: string | undefined;
}

export interface CollectLimits {
    maxPages: number;
    /** Most items kept. */
    maxItems: number;
    /** Most bytes of kept items, as `admit` measures them. */
    maxBytes: number;
}

/** An item kept, with its size against the byte budget. */
export interface Admitted<K> {
    kept: K;
    bytes: number;
}

export interface Collected<K> {
    items: K[];
    /** Why reading stopped before the upstream said it was done; undefined when complete. */
    truncated?: 'cursor-loop' | 'too-many-pages' | 'too-many-items' | 'too-many-bytes';
}

/** `admit` measures an item, or leaves it out (undefined) and says why itself. */
export async function collectPages<T, K>(
    fetchPage: (cursor: string | undefined) => Promise<PageOf<T>>,
    limits: CollectLimits,
    admit: (item: T) => Admitted<K> | undefined
): Promise<Collected<K>> {
    const items: K[] = [];
    let bytes = 0;
    // Digests: an upstream's cursor may be as long as a message, and it is kept for the whole read.
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    for (let pages = 0; ; pages++) {
        if (pages === limits.maxPages) return { items, truncated: 'too-many-pages' };
        const page = await fetchPage(cursor);
        for (const item of page.items) {
            const admitted = admit(item);
            if (admitted === undefined) continue;
            if (items.length === limits.maxItems) return { items, truncated: 'too-many-items' };
            if (bytes + admitted.bytes > limits.maxBytes) return { items, truncated: 'too-many-bytes' };
            bytes += admitted.bytes;
            items.push(admitted.kept);
        }
        // Only an absent cursor ends the list: "" is a cursor like any other (2026-07-28 says so outright).
        if (page.nextCursor === undefined) return { items };
        const seen = shortDigest(page.nextCursor);
        if (seenCursors.has(seen)) return { items, truncated: 'cursor-loop' };
        seenCursors.add(seen);
        cursor = page.nextCursor;
    }
}
