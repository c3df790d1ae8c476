/**
 * Bounds on JSON taken from outside (upstream results, client messages).
 * `JSON.parse` copes with any nesting, but `JSON.stringify`, structured clone
 * and every recursive walk overflow the stack on a few thousand levels, so a
 * value is checked here, without recursion, before anything else walks it.
 */

/** Whether `value` nests more than `maxDepth` objects or arrays inside each other (a flat object is depth 1). */
export function exceedsDepth(value: unknown, maxDepth: number): boolean {
    if (typeof value !== 'object' || value === null) return false;
    // Two parallel stacks rather than one of pairs: no allocation per node.
    const pending: object[] = [value];
    const depths: number[] = [1];
    while (pending.length > 0) {
        const node = pending.pop()!;
        const depth = depths.pop()!;
        if (depth > maxDepth) return true;
        const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
        for (const child of children) {
            if (typeof child === 'object' && child !== null) {
                pending.push(child);
                depths.push(depth + 1);
            }
        }
    }
    return false;
}

/** Whether `text` is longer than `maxBytes` in UTF-8; cheap for short strings. */
export function exceeds(text: string, maxBytes: number): boolean {
    // A UTF-16 unit is 1 to 3 UTF-8 bytes: decide by length alone where that settles it.
    if (text.length * 3 <= maxBytes) return false;
    if (text.length > maxBytes) return true;
    return Buffer.byteLength(text, 'utf8') > maxBytes;
}
