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

/** What `jsonWithin` found: within both bounds, nested too deep, or too large (`bytes`: its JSON's UTF-8 length). */
export type JsonBounds =
    { readonly within: true } | { readonly within: false; readonly reason: 'too_deep' } | { readonly within: false; readonly reason: 'too_large'; readonly bytes: number };

const WITHIN: JsonBounds = Object.freeze({ within: true });
const TOO_DEEP: JsonBounds = Object.freeze({ within: false, reason: 'too_deep' });

/** The most UTF-8 bytes JSON.stringify writes for one UTF-16 unit: a control character or lone surrogate, `\uXXXX`. */
const MOST_BYTES_PER_UNIT = 6;
/** The longest number JSON.stringify writes, e.g. -0.0000012345678901234567 (25), with room to spare. */
const MOST_NUMBER_BYTES = 32;

/**
 * Whether `value` nests at most `maxDepth` deep and its JSON is at most `maxBytes` long, in one walk without
 * recursion and without serialising it: the walk sums an upper bound of the JSON's length, and only a value whose
 * bound passes `maxBytes` (or that holds something other than plain JSON data) is serialised to measure it exactly.
 */
export function jsonWithin(value: unknown, maxDepth: number, maxBytes: number): JsonBounds {
    let bound = scalarBound(value);
    if (typeof value === 'object' && value !== null) {
        const walked = walkBound(value, maxDepth);
        if (walked === undefined) return TOO_DEEP;
        bound = walked;
    }
    if (bound <= maxBytes) return WITHIN;
    // Past the bound, or not plain data (bound Infinity): measured exactly. The depth is known to be safe to serialise.
    const json = JSON.stringify(value) as string | undefined;
    const bytes = json === undefined ? 0 : Buffer.byteLength(json);
    return bytes <= maxBytes ? WITHIN : { within: false, reason: 'too_large', bytes };
}

/** An upper bound of the JSON length of `value`'s tree, or undefined when it nests deeper than `maxDepth`. */
function walkBound(value: object, maxDepth: number): number | undefined {
    // Two parallel stacks rather than one of pairs: no allocation per node.
    const pending: object[] = [value];
    const depths: number[] = [1];
    let bound = 0;
    while (pending.length > 0) {
        const node = pending.pop()! as Record<string, unknown>;
        const depth = depths.pop()!;
        if (depth > maxDepth) return undefined;
        // Brackets (each member adds its comma: one too many, a bound).
        bound += 2;
        if (Array.isArray(node)) {
            // An array's toJSON (its own, or its class's) is not walked: measured as written.
            if (!isPlainArray(node)) bound = Infinity;
            // By index: a hole is written as null.
            for (let index = 0; index < node.length; index++) bound += 1 + childBound(node[index], depth, pending, depths);
            continue;
        }
        if (!isPlainObject(node)) bound = Infinity;
        // A key's quotes, escapes, colon and comma.
        for (const key in node) bound += 4 + key.length * MOST_BYTES_PER_UNIT + childBound(node[key], depth, pending, depths);
    }
    return bound;
}

/** A scalar's bound, or 0 for an object, pushed to be walked one level deeper. */
function childBound(child: unknown, depth: number, pending: object[], depths: number[]): number {
    if (typeof child !== 'object' || child === null) return scalarBound(child);
    pending.push(child);
    depths.push(depth + 1);
    return 0;
}

/** An upper bound of a scalar's JSON length; Infinity for what JSON has no plain form for (then it is measured). */
function scalarBound(value: unknown): number {
    switch (typeof value) {
        case 'string':
            return 2 + value.length * MOST_BYTES_PER_UNIT;
        case 'number':
            return MOST_NUMBER_BYTES;
        case 'boolean':
            return 5;
        case 'object':
        case 'undefined':
        case 'symbol':
            // null; or what is written as null in an array and left out of an object.
            return 4;
        default:
            // A function may be a toJSON; a bigint cannot be written (JSON.stringify throws, as it would anyway).
            return Infinity;
    }
}

/** What JSON.parse makes of an array: Array's prototype, no toJSON of its own. */
function isPlainArray(node: unknown[]): boolean {
    return Object.getPrototypeOf(node) === Array.prototype && !Object.hasOwn(node, 'toJSON');
}

/** What JSON.parse makes: no prototype but Object's (or none), so no toJSON. */
function isPlainObject(node: object): boolean {
    const prototype: unknown = Object.getPrototypeOf(node);
    return prototype === Object.prototype || prototype === null;
}
