/**
 * A fixed-size Bloom filter of upstream ids: the set of upstreams a walk has
 * still to list, carried in its cursor. Fixed size, so a cursor's length says
 * nothing about how many upstreams (hidden ones included) are behind or ahead.
 * A Bloom filter has no false negatives: an upstream in the set is always found,
 * so a walk never skips one; a false positive can only make it list one again.
 *
 * Wire form (part of the cursor format): 64 bytes, bit b is bit (b % 8) of byte
 * floor(b / 8); an id sets the bits given by the low 9 bits of each of the first
 * 6 big-endian 16-bit words of SHA-256(id as UTF-8).
 *
 * Hand-written rather than a library: replicas must agree on these exact bits,
 * and the whole of it is a hash and a few bit operations.
 */
import { createHash } from 'node:crypto';

export const UPSTREAM_FILTER_BYTES = 64;
const BITS = UPSTREAM_FILTER_BYTES * 8;
const HASHES = 6;

/** The bit positions of one id: computed once per id and view, not per page. */
export type FilterKey = readonly number[];

export function filterKey(id: string): FilterKey {
    const hash = createHash('sha256').update(id, 'utf8').digest();
    return Array.from({ length: HASHES }, (_, i) => hash.readUInt16BE(i * 2) % BITS);
}

export function filterOf(keys: Iterable<FilterKey>): Uint8Array {
    const filter = new Uint8Array(UPSTREAM_FILTER_BYTES);
    for (const key of keys) {
        for (const bit of key) filter[bit >> 3]! |= 1 << (bit & 7);
    }
    return filter;
}

export function mayContain(filter: Uint8Array, key: FilterKey): boolean {
    return key.every(bit => (filter[bit >> 3]! & (1 << (bit & 7))) !== 0);
}
