/**
 * A digest of what a client sees in the merged list: every visible prompt's
 * exposed name and definition, in list order. Two views with the same
 * fingerprint look identical to that client, so it need not be notified.
 */
import { createHash } from 'node:crypto';
import type { CatalogView } from './catalog.js';
import { visibleSlice, type VisibleSlice } from './paginate.js';

/** O(prompts in the slice): the slice (see visible-slices.ts) already holds what the client sees. */
export function viewFingerprint(view: CatalogView, slice: VisibleSlice = visibleSlice(view.segments)): string {
    const hash = createHash('sha256');
    view.segments.forEach((segment, index) => {
        for (const offset of slice.offsets[index]!) {
            const entry = segment.entries[offset]!;
            // The digest was taken where the definition entered, within its bounds: nothing here walks upstream data.
            // Fixed-length digest, then the name with its length: no two sequences of entries hash the same input.
            hash.update(`${entry.digest}${entry.exposedName.length}:${entry.exposedName}`);
        }
    });
    return hash.digest('base64url');
}
