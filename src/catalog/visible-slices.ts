/**
 * Each client's visible slice of a view, built once per view and scope: the
 * policy is tested against every prompt of the view once, not on every page,
 * so a client that sees 1 of 200,000 prompts pays for its page, not for the
 * view. The slice also gives the scope's fingerprint (list_changed decisions),
 * computed at most once per view and scope.
 *
 * Memory: a slice holds 4 bytes per prompt the client sees in an upstream it
 * sees in part (upstreams seen whole or not at all share arrays), for each
 * scope (configured clients and anonymous) and each view still in use (the
 * current and the last published one; older views are collected with their
 * slices).
 */
import type { CatalogEntry, CatalogView, Visibility } from './catalog.js';
import { viewFingerprint } from './fingerprint.js';
import { visibleSlice, type VisibleSlice } from './paginate.js';

interface Cached {
    visible: Visibility;
    slice: VisibleSlice;
    fingerprint?: string;
}

interface PerView {
    everything?: VisibleSlice;
    byScope: Map<string, Cached>;
}

export class VisibleSlices {
    #views = new WeakMap<CatalogView, PerView>();

    /** What `visible` (the scope's current visibility) lets through in `view`. */
    of(view: CatalogView, scope: string, visible: Visibility): VisibleSlice {
        return this.#cached(view, scope, visible).slice;
    }

    fingerprint(view: CatalogView, scope: string, visible: Visibility): string {
        const cached = this.#cached(view, scope, visible);
        cached.fingerprint ??= viewFingerprint(view, cached.slice);
        return cached.fingerprint;
    }

    #cached(view: CatalogView, scope: string, visible: Visibility): Cached {
        let perView = this.#views.get(view);
        if (perView === undefined) this.#views.set(view, (perView = { byScope: new Map() }));
        const cached = perView.byScope.get(scope);
        // Another predicate for the scope means other rules: a slice is only ever served for the rules it was cut by.
        if (cached?.visible === visible) return cached;
        perView.everything ??= visibleSlice<CatalogEntry>(view.segments);
        const fresh = { visible, slice: visibleSlice(view.segments, visible, perView.everything) };
        perView.byScope.set(scope, fresh);
        return fresh;
    }
}
