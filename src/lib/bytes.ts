/**
 * The two ends of a run of chunks, copied: a slice would keep alive the whole
 * chunk it was cut from (and the pool it was read into), which no limit counts.
 */

/** The first `count` bytes of the chunks (fewer if they hold fewer). */
export function firstBytes(chunks: readonly Buffer[], count: number): Buffer {
    const out = Buffer.allocUnsafe(count);
    let filled = 0;
    for (const chunk of chunks) {
        if (filled === count) break;
        filled += chunk.copy(out, filled, 0, Math.min(chunk.length, count - filled));
    }
    return out.subarray(0, filled);
}

/** The last `count` bytes of the chunks (fewer if they hold fewer). */
export function lastBytes(chunks: readonly Buffer[], count: number): Buffer {
    const out = Buffer.allocUnsafe(count);
    let start = count;
    for (let index = chunks.length - 1; index >= 0 && start > 0; index--) {
        const chunk = chunks[index]!;
        const taken = Math.min(chunk.length, start);
        start -= taken;
        chunk.copy(out, start, chunk.length - taken);
    }
    return out.subarray(start);
}
