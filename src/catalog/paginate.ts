/**
 * Cuts pages from the merged view. Pure: the view, the cursor position and the
 * list-version history are passed in.
 *
 * Stability: a position names an upstream, a version (digest) of its name list
 * and an offset in that version. When the upstream's list changed since, the
 * old version is looked up in the history: the prompts before the offset were
 * consumed, so the walk resumes right after the last of them that still exists.
 * Provided upstreams keep the relative order of their surviving prompts (adds
 * and removes, not reorders), no prompt that exists throughout a walk is
 * skipped or returned twice. When the old version is not in the history (for
 * example a replica that never saw it), the walk resumes after the anchor (a
 * digest of the last name consumed), or at the same offset when that prompt is
 * gone as well.
 */
import { shortDigest } from '../lib/digest.js';
import type { CursorPosition } from './cursor.js';

export interface Segment<E> {
    upstreamId: string;
    upstreamIndex: number;
    /** Digest of `names`. */
    version: string;
    /** The upstream's prompt names in its own order, without duplicates. */
    names: readonly string[];
    /** What to emit for each name; undefined where the prompt is left out for everyone (e.g. a name clash). */
    entries: readonly (E | undefined)[];
}

export type VersionHistory = (upstreamId: string, version: string) => readonly string[] | undefined;

export type Position = Omit<CursorPosition, 'scope'>;

export interface Page<E> {
    items: E[];
    /** Where the next page starts; absent on the last page. */
    next?: Position;
}

export function paginate<E>(
    segments: readonly Segment<E>[],
    start: Position | undefined,
    pageSize: number,
    history: VersionHistory,
    visible: (entry: E) => boolean = () => true
): Page<E> {
    let segmentIndex = 0;
    let offset = 0;
    if (start !== undefined) ({ segmentIndex, offset } = resolve(segments, start, history));

    const items: E[] = [];
    for (; segmentIndex < segments.length; segmentIndex++, offset = 0) {
        const segment = segments[segmentIndex]!;
        for (; offset < segment.entries.length; offset++) {
            if (items.length === pageSize) {
                return hasVisibleFrom(segments, segmentIndex, offset, visible)
                    ? { items, next: positionIn(segment, offset) }
                    : { items };
            }
            const entry = segment.entries[offset];
            if (entry !== undefined && visible(entry)) items.push(entry);
        }
    }
    return { items };
}

function positionIn<E>(segment: Segment<E>, offset: number): Position {
    return {
        upstreamIndex: segment.upstreamIndex,
        upstreamId: segment.upstreamId,
        version: segment.version,
        offset,
        anchor: offset > 0 ? anchorOf(segment.names[offset - 1]!) : ''
    };
}

/** A fixed-size stand-in for a prompt name, so cursors stay small whatever upstreams call their prompts. */
export function anchorOf(name: string): string {
    return shortDigest(name);
}

function hasVisibleFrom<E>(segments: readonly Segment<E>[], segmentIndex: number, offset: number, visible: (entry: E) => boolean): boolean {
    for (let s = segmentIndex; s < segments.length; s++) {
        const entries = segments[s]!.entries;
        for (let i = s === segmentIndex ? offset : 0; i < entries.length; i++) {
            const entry = entries[i];
            if (entry !== undefined && visible(entry)) return true;
        }
    }
    return false;
}

function resolve<E>(
    segments: readonly Segment<E>[],
    start: Position,
    history: VersionHistory
): { segmentIndex: number; offset: number } {
    const segmentIndex = segments.findIndex(segment => segment.upstreamId === start.upstreamId);
    if (segmentIndex === -1) {
        // The upstream left the view: continue with the upstreams configured after it.
        const after = segments.findIndex(segment => segment.upstreamIndex > start.upstreamIndex);
        return { segmentIndex: after === -1 ? segments.length : after, offset: 0 };
    }
    const segment = segments[segmentIndex]!;
    return { segmentIndex, offset: resumeOffset(segment.names, segment.version, start, history) };
}

function resumeOffset(names: readonly string[], version: string, start: Position, history: VersionHistory): number {
    if (start.version === version) return Math.min(start.offset, names.length);
    const previous = history(start.upstreamId, start.version);
    if (previous !== undefined) {
        const consumed = new Set(previous.slice(0, start.offset));
        for (let i = names.length - 1; i >= 0; i--) {
            if (consumed.has(names[i]!)) return i + 1;
        }
        return 0;
    }
    if (start.anchor !== '') {
        const anchorAt = names.findIndex(name => anchorOf(name) === start.anchor);
        if (anchorAt !== -1) return anchorAt + 1;
    }
    return Math.min(start.offset, names.length);
}
