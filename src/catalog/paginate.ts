/**
 * Cuts pages from the merged view. Pure: the view, the cursor position, the
 * list-version history and what the caller sees are passed in.
 *
 * Within an upstream, a position names a version (digest) of its name list and
 * the offset in that version right after the last prompt returned. When the
 * upstream's list changed since, the old version is looked up in the history:
 * the prompts before the offset were passed, so the walk resumes right after
 * the last of them that still exists and that the caller sees (hidden ones
 * must not move the walk). Provided upstreams keep the relative order of their
 * surviving prompts (adds and removes, not reorders), no prompt that exists
 * throughout a walk is skipped or returned twice. When the old version is not
 * in the history (for example a replica that never saw it), the walk resumes
 * after the anchor (a digest of the last prompt returned), or at the start of
 * the upstream when that prompt is gone as well: prompts come again, none is
 * skipped.
 *
 * Across upstreams, a position names the upstream by id, with a digest of the
 * order of all upstreams and a filter of the ids still pending after it (see
 * upstream-filter.ts), never by config index: a reload shifts indexes. While
 * the order is the one the position was cut from and the pending upstreams are
 * exactly those after the current one (`positional`), the walk goes on in that
 * order, exactly. Otherwise (a reload added, removed or reordered upstreams, a
 * replica's config differs) it goes on with the rest of the current upstream,
 * then, in the current order, every upstream in the filter and, when the order
 * changed since the page was cut, every upstream after the current one, so
 * upstreams added after the position are listed too. The filter has no false
 * negatives: a pending upstream is never skipped; a false positive, or an
 * upstream already listed that a reorder moved after the position, is listed
 * again. docs/behaviour.md, "Stable pagination", states the guarantee case by case.
 *
 * Everything here depends on upstream ids and on the entries the caller sees,
 * never on entries it does not see: a hidden prompt changes no page, no
 * position and no decision to cut.
 */
import { shortDigest } from '../lib/digest.js';
import type { CursorPosition } from './cursor.js';
import { filterKey, filterOf, mayContain, type FilterKey } from './upstream-filter.js';

export interface Segment<E> {
    upstreamId: string;
    /** Digest of `names`. */
    version: string;
    /** The upstream's prompt names in its own order, without duplicates. */
    names: readonly string[];
    /** What to emit for each name; undefined where the prompt is left out for everyone (e.g. a name clash). */
    entries: readonly (E | undefined)[];
}

/** What one caller sees: per segment, the ascending offsets of the entries visible to it. */
export interface VisibleSlice {
    readonly offsets: readonly Uint32Array[];
}

export type VersionHistory = (upstreamId: string, version: string) => readonly string[] | undefined;

export type Position = Omit<CursorPosition, 'scope'>;

export interface Page<E> {
    items: E[];
    /** Where the next page starts; absent on the last page. */
    next?: Position;
}

/**
 * One page: O(upstreams + log(entries) + pageSize) given the slice. `segments` must not change once paginated
 * (a view's are immutable): its upstream order is computed once per array.
 */
export function paginate<E>(
    segments: readonly Segment<E>[],
    start: Position | undefined,
    pageSize: number,
    history: VersionHistory,
    slice: VisibleSlice = visibleSlice(segments)
): Page<E> {
    const order = upstreamOrder(segments);
    const walk = start === undefined ? fromTheStart(segments.length) : resume(segments, order, start, history, slice);
    const items: E[] = [];
    for (let step = 0; step < walk.sequence.length; step++) {
        const index = walk.sequence[step]!;
        const offsets = slice.offsets[index]!;
        const entries = segments[index]!.entries;
        let at = step === 0 ? firstAtOrAfter(offsets, walk.offset) : 0;
        for (; at < offsets.length && items.length < pageSize; at++) items.push(entries[offsets[at]!]!);
        if (items.length < pageSize) continue;
        const rest = walk.sequence.slice(step + 1);
        const more = at < offsets.length || rest.some(later => slice.offsets[later]!.length > 0);
        return more ? { items, next: positionAfter(segments[index]!, offsets[at - 1]!, order, rest, walk.positional) } : { items };
    }
    return { items };
}

const NONE = new Uint32Array(0);

/**
 * The entries `visible` lets through, in one pass over the view. A segment seen whole reuses `everything`'s offsets
 * (the slice of every entry), so a slice costs 4 bytes per prompt only in upstreams the caller sees in part.
 */
export function visibleSlice<E>(segments: readonly Segment<E>[], visible: (entry: E) => boolean = () => true, everything?: VisibleSlice): VisibleSlice {
    return {
        offsets: segments.map((segment, index) => {
            const offsets: number[] = [];
            segment.entries.forEach((entry, offset) => {
                if (entry !== undefined && visible(entry)) offsets.push(offset);
            });
            const whole = everything?.offsets[index];
            if (whole !== undefined && whole.length === offsets.length) return whole;
            return offsets.length === 0 ? NONE : Uint32Array.from(offsets);
        })
    };
}

/**
 * A fixed-size stand-in for a prompt name, so cursors stay small whatever upstreams call their prompts.
 * @internal exported for its tests
 */
export function anchorOf(name: string): string {
    return shortDigest(name);
}

interface UpstreamOrder {
    /** Digest of the upstream ids in order: tells whether a position was cut from this order. */
    digest: string;
    indexOf: ReadonlyMap<string, number>;
    keys: readonly FilterKey[];
}

const orders = new WeakMap<readonly Segment<unknown>[], UpstreamOrder>();

function upstreamOrder(segments: readonly Segment<unknown>[]): UpstreamOrder {
    let order = orders.get(segments);
    if (order === undefined) {
        const ids = segments.map(segment => segment.upstreamId);
        order = { digest: shortDigest(JSON.stringify(ids)), indexOf: new Map(ids.map((id, index) => [id, index])), keys: ids.map(filterKey) };
        orders.set(segments, order);
    }
    return order;
}

interface Walk {
    /** Segment indexes in the order the walk lists them from here; the first one from `offset` on. */
    sequence: readonly number[];
    offset: number;
    /** `sequence` is every segment from its first one on, in view order. */
    positional: boolean;
}

function fromTheStart(count: number): Walk {
    return { sequence: range(0, count), offset: 0, positional: true };
}

function resume<E>(segments: readonly Segment<E>[], order: UpstreamOrder, start: Position, history: VersionHistory, slice: VisibleSlice): Walk {
    const current = order.indexOf.get(start.upstreamId);
    const sequence = current !== undefined && start.positional && start.order === order.digest ? range(current, segments.length) : rejoin(order, start, current);
    const offset = current === undefined ? 0 : resumeOffset(segments[current]!, slice.offsets[current]!, start, history);
    return { sequence, offset, positional: sequence.every((index, at) => index === segments.length - sequence.length + at) };
}

/**
 * The walk's remaining upstreams once its order is not the view's: the current one (if still there), then in view
 * order those pending and, if the order changed since the cut, those after the current one (added ones among them).
 * A removed current upstream leaves no "after": only the pending ones follow.
 */
function rejoin(order: UpstreamOrder, start: Position, current: number | undefined): number[] {
    const changed = start.order !== order.digest;
    const sequence = current === undefined ? [] : [current];
    order.keys.forEach((key, index) => {
        if (index === current) return;
        if (mayContain(start.pending, key) || (changed && current !== undefined && index > current)) sequence.push(index);
    });
    return sequence;
}

function positionAfter<E>(segment: Segment<E>, last: number, order: UpstreamOrder, rest: readonly number[], positional: boolean): Position {
    return {
        upstreamId: segment.upstreamId,
        version: segment.version,
        offset: last + 1,
        anchor: anchorOf(segment.names[last]!),
        order: order.digest,
        positional,
        pending: filterOf(rest.map(index => order.keys[index]!))
    };
}

/** Where in `segment` the walk resumes; only the entries the caller sees (`visible`, offsets) may decide it. */
function resumeOffset<E>(segment: Segment<E>, visible: Uint32Array, start: Position, history: VersionHistory): number {
    const names = segment.names;
    if (start.version === segment.version) return Math.min(start.offset, names.length);
    const previous = history(start.upstreamId, start.version);
    const passed = previous === undefined ? undefined : new Set(previous.slice(0, start.offset));
    for (let i = visible.length - 1; i >= 0; i--) {
        const at = visible[i]!;
        if (passed !== undefined ? passed.has(names[at]!) : anchorOf(names[at]!) === start.anchor) return at + 1;
    }
    return 0;
}

function firstAtOrAfter(sorted: Uint32Array, value: number): number {
    let low = 0;
    let high = sorted.length;
    while (low < high) {
        const middle = (low + high) >>> 1;
        if (sorted[middle]! < value) low = middle + 1;
        else high = middle;
    }
    return low;
}

function range(from: number, to: number): number[] {
    return Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
}
