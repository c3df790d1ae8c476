/**
 * A digest of what a client sees in the merged list: every visible prompt's
 * exposed name and definition, in list order. Two views with the same
 * fingerprint look identical to that client, so it need not be notified.
 */
import { createHash } from 'node:crypto';
import type { CatalogEntry, CatalogView } from './catalog.js';

export type Visibility = (entry: CatalogEntry) => boolean;

export const ALL_VISIBLE: Visibility = () => true;

export function viewFingerprint(view: CatalogView, visible: Visibility = ALL_VISIBLE): string {
    const hash = createHash('sha256');
    for (const segment of view.segments) {
        for (const entry of segment.entries) {
            if (entry === undefined || !visible(entry)) continue;
            // The digest was taken where the definition entered, within its bounds: nothing here walks upstream data.
            // Fixed-length digest, then the name with its length: no two sequences of entries hash the same input.
            hash.update(`${entry.digest}${entry.exposedName.length}:${entry.exposedName}`);
        }
    }
    return hash.digest('base64url');
}
