/**
 * One upstream's prompt list, cached until that upstream reports a change.
 *
 * The next reader after a change refreshes it; readers arriving meanwhile share
 * that read. One read at a time: a change during it marks the result as not
 * current, and the next reader reads again. No reader waits longer than the
 * upstream's `timeoutMs`: after it, the last good list (or nothing) is served,
 * to later readers of the same read at once, and when the slow read lands the
 * catalog is told, so sessions hear about the list they were not shown. A failed
 * read serves the last good list and is not retried for a few seconds, however
 * many changes the upstream announces, so one failing upstream does not slow
 * every request down.
 *
 * Freshness: the list of an upstream that announces its changes (a live
 * channel the gateway hears them on) is vouched for without end, whatever
 * `ttlMs` it gives. One that cannot announce is vouched for as long as its own
 * `ttlMs` says (2026-07-28), else for the re-list interval, counted from the
 * read (or from when it stopped announcing); it is then read again on a
 * schedule (never more often than the floor), and a change found is told to
 * the catalog like a late list. A list read again unchanged is the same
 * object, so nothing downstream of it is rebuilt or announced.
 */
import type { Prompt } from '@modelcontextprotocol/client';
import { withDeadline } from '../lib/deadline.js';
import { shortDigest } from '../lib/digest.js';
import { describeError, type Logger } from '../diagnostics/logger.js';
import { ATTR, MAX_SPAN_LINKS, type TraceSpan } from '../diagnostics/tracer.js';
import type { TraceContext } from '../protocol/meta.js';
import type { ListedPrompt, UpstreamPort } from './upstream-port.js';

export interface UpstreamList {
    prompts: Prompt[];
    /** Digest of each prompt's definition, in the order of `prompts`. */
    digests: string[];
    names: string[];
    /** Digest of `names`: identifies this version of the list in cursors. */
    version: string;
}

/** How often lists that cannot be announced are read again (caching.relistIntervalMs, caching.minRelistIntervalMs). */
export interface RelistPolicy {
    relistIntervalMs: number;
    /** No upstream is read on a schedule more often than this, whatever its ttlMs. */
    minRelistIntervalMs: number;
}

export interface ListCacheOptions {
    logger: Logger;
    /** Every list read is recorded here, so cursors cut from it can resume exactly later. */
    remember: (upstreamId: string, list: UpstreamList) => void;
    /**
     * The view changed without an upstream event: a fetch that outlived its readers' wait has landed, or a scheduled
     * read found a new list.
     */
    onLateList: (upstreamId: string) => void;
    /** Read when a list lands, so a reload applies from the next read on. */
    relist: () => RelistPolicy;
    /** Each read of a connected upstream's list: a hit when the cached list was current, else a miss. */
    onRead?: (upstreamId: string, hit: boolean) => void;
}

/**
 * How one reader got an upstream's list, for its request's span: from the cache; from a read of the upstream it
 * waited for (its own or one in flight it joined), with that read's CLIENT spans; or its last good list (a read too
 * slow, or failing).
 */
export type ListRead = { upstreamId: string; served: 'cache' | 'last_good' } | { upstreamId: string; served: 'upstream'; traces: readonly TraceContext[] | undefined };

/** What a read of the upstream's list gives its readers. */
interface Refreshed {
    list: UpstreamList | undefined;
    traces?: readonly TraceContext[] | undefined;
}

/** How long a failed list read is not retried. */
const LIST_RETRY_MS = 5000;
/** The longest wait for a scheduled read, whatever ttlMs an upstream gives (a timer cannot wait much over 24 days). */
const MAX_RELIST_MS = 86_400_000;

export class UpstreamListCache {
    #list: UpstreamList | undefined;
    #lastGood: UpstreamList | undefined;
    #refreshing: Promise<Refreshed> | undefined;
    /** A change arrived during the refresh in flight: its result is good, but not current. */
    #dirty = false;
    /** Bumped when the connection comes or goes: a fetch from before belongs to another connection. */
    #connection = 0;
    #retryAfter = 0;
    /** Readers of the refresh in flight were served the last good list: later ones need not wait either. */
    #servedStale = false;
    /** Until when (epoch ms) the list is vouched for; undefined while the upstream announces its changes itself. */
    #freshUntil: number | undefined;
    /** Delay of the scheduled read after each read; undefined: none. */
    #relistMs: number | undefined;
    /** The `ttlMs` the last list read on this connection came with, if it came with one. */
    #lastTtlMs: number | undefined;
    #relistTimer: NodeJS.Timeout | undefined;
    #closed = false;

    constructor(
        readonly upstream: UpstreamPort,
        private readonly options: ListCacheOptions
    ) {}

    /** The upstream sent list_changed. A flood of them must not defeat the retry delay or start parallel reads. */
    listChanged(): void {
        this.#list = undefined;
        if (this.#refreshing !== undefined) this.#dirty = true;
    }

    /** Until when (epoch ms) the current list can be vouched for: undefined when the upstream announces its changes. */
    get freshUntil(): number | undefined {
        return this.#freshUntil;
    }

    /** The upstream left the catalog: no more scheduled reads. */
    close(): void {
        this.#closed = true;
        clearTimeout(this.#relistTimer);
    }

    /**
     * The upstream's channel for its changes opened or closed (a 2026-07-28 upstream's subscription acknowledged, or
     * dropped). True when the list must be read again: changes made while it could not announce went unheard, and
     * the list is vouched for again only once read on the open channel. From a drop on, it is vouched for as one that
     * cannot announce, counted from the drop (every change before it was heard).
     */
    announcingChanged(): boolean {
        if (this.upstream.announcesChanges) {
            this.listChanged();
            return true;
        }
        if (this.#lastGood !== undefined) this.#keepFresh(Date.now(), this.#lastTtlMs);
        return false;
    }

    /** The upstream connected or went away: nothing read before may be served. */
    connectionChanged(): void {
        this.#connection++;
        clearTimeout(this.#relistTimer);
        this.#freshUntil = this.#relistMs = this.#lastTtlMs = undefined;
        this.#list = undefined;
        this.#lastGood = undefined;
        this.#refreshing = undefined;
        this.#dirty = false;
        this.#retryAfter = 0;
        this.#servedStale = false;
    }

    /** `reads`: told how the list was got (a traced request's; ListRead), when given. */
    async read(reads?: ListRead[]): Promise<UpstreamList | undefined> {
        if (this.upstream.state !== 'ready') return undefined;
        this.options.onRead?.(this.upstream.id, this.#list !== undefined);
        if (this.#list !== undefined) return this.#served(this.#list, 'cache', reads);
        if (this.#refreshing !== undefined) return this.#servedStale ? this.#served(this.#lastGood, 'last_good', reads) : this.#within(this.#refreshing, reads);
        if (Date.now() < this.#retryAfter) return this.#served(this.#lastGood, 'last_good', reads);
        return this.#within(this.#startRefresh(), reads);
    }

    #served(list: UpstreamList | undefined, served: 'cache' | 'last_good', reads: ListRead[] | undefined): UpstreamList | undefined {
        reads?.push({ upstreamId: this.upstream.id, served });
        return list;
    }

    #startRefresh(): Promise<Refreshed> {
        // Shared by every reader that comes meanwhile: it is no reader's, carries none's headers and its lines name none.
        const refreshing = this.#refresh().finally(() => {
            if (this.#refreshing === refreshing) this.#refreshing = undefined;
        });
        this.#refreshing = refreshing;
        return refreshing;
    }

    /**
     * The scheduled read: the current list keeps being served meanwhile (readers do not wait for a read nobody asked
     * for), and only a list that differs is news.
     */
    async #relist(): Promise<void> {
        this.#relistTimer = undefined;
        if (this.#closed || this.upstream.state !== 'ready') return;
        // A read in flight schedules the next one itself when it lands.
        if (this.#refreshing !== undefined) return;
        const before = this.#lastGood;
        const { list: after } = await this.#startRefresh();
        if (after !== undefined && after !== before) this.options.onLateList(this.upstream.id);
    }

    /**
     * The one rule of freshness: after a read on the current connection (or a change of whether the upstream
     * announces), how long its list is vouched for from `since`, and when to read it again.
     */
    #keepFresh(since: number, ttlMs: number | undefined): void {
        this.#lastTtlMs = ttlMs;
        const policy = this.options.relist();
        const interval = this.upstream.config.relistIntervalMs ?? policy.relistIntervalMs;
        // The gateway hears every change of an upstream that announces them, so it needs no hint of how long a list
        // holds. Of one that cannot, its own ttlMs is its word on that; without one, the re-list interval.
        const vouchMs = this.upstream.announcesChanges ? undefined : (ttlMs ?? interval);
        this.#freshUntil = vouchMs === undefined ? undefined : since + vouchMs;
        this.#relistMs = vouchMs === undefined ? undefined : Math.min(MAX_RELIST_MS, Math.max(policy.minRelistIntervalMs, vouchMs));
        this.#scheduleRelist();
    }

    /** `atLeastMs`: after a failed read, the schedule is no excuse to ask a failing upstream more often than reads may. */
    #scheduleRelist(atLeastMs = 0): void {
        clearTimeout(this.#relistTimer);
        this.#relistTimer = undefined;
        if (this.#closed || this.#relistMs === undefined) return;
        const delay = Math.max(atLeastMs, this.#relistMs);
        this.#relistTimer = setTimeout(() => void this.#relist(), delay);
        this.#relistTimer.unref();
    }

    async #within(refreshing: Promise<Refreshed>, reads: ListRead[] | undefined): Promise<UpstreamList | undefined> {
        let waited = true;
        const read = refreshing.then(({ list, traces }) => {
            if (waited) reads?.push({ upstreamId: this.upstream.id, served: 'upstream', traces });
            return list;
        });
        const ms = this.upstream.config.timeoutMs;
        if (ms === undefined) return read;
        return withDeadline(read, ms, () => {
            waited = false;
            reads?.push({ upstreamId: this.upstream.id, served: 'last_good' });
            if (!this.#servedStale) {
                this.#servedStale = true;
                this.upstream.reportFault('list_slow', `listing took longer than ${ms} ms; serving the last good list, if any`, {
                    lastGood: this.#lastGood !== undefined
                });
            }
            return this.#lastGood;
        });
    }

    async #refresh(): Promise<Refreshed> {
        const connection = this.#connection;
        const upstream = this.upstream;
        const started = Date.now();
        try {
            const listing = await upstream.listPrompts();
            const list = this.#toList(listing.items);
            if (this.#connection !== connection) return { list, traces: listing.traces };
            this.#keepFresh(started, listing.ttlMs);
            this.#lastGood = list;
            // Changed meanwhile: serve this result, read again on the next request.
            if (!this.#dirty) this.#list = list;
            this.#dirty = false;
            if (this.#servedStale) {
                this.#servedStale = false;
                this.options.onLateList(upstream.id);
            }
            return { list, traces: listing.traces };
        } catch (error) {
            this.options.logger.warn(
                { upstream: upstream.id, err: describeError(error), retryInMs: LIST_RETRY_MS },
                'listing upstream prompts failed; serving its last good list, if any'
            );
            if (this.#connection === connection) {
                this.#retryAfter = Date.now() + LIST_RETRY_MS;
                this.#dirty = false;
                this.#servedStale = false;
                // What was vouched for still expires; the schedule keeps trying.
                this.#scheduleRelist(LIST_RETRY_MS);
            }
            return { list: this.#lastGood };
        }
    }

    #toList(listed: readonly ListedPrompt[]): UpstreamList {
        const seen = new Set<string>();
        const prompts: Prompt[] = [];
        const digests: string[] = [];
        for (const { prompt, digest } of listed) {
            if (seen.has(prompt.name)) {
                this.options.logger.warn({ upstream: this.upstream.id, prompt: prompt.name.slice(0, 64) }, 'upstream lists a prompt name twice; keeping the first');
                continue;
            }
            seen.add(prompt.name);
            prompts.push(prompt);
            digests.push(digest);
        }
        const names = prompts.map(prompt => prompt.name);
        const version = shortDigest(JSON.stringify(names));
        // The same names and definitions as before: the same list, so nothing built from it is built again.
        const previous = this.#lastGood;
        const same = previous?.version === version && previous.digests.every((digest, index) => digest === digests[index]);
        const list = same ? previous : { prompts, digests, names, version };
        this.options.remember(this.upstream.id, list);
        return list;
    }
}

/**
 * Tells a prompts/list span how its upstreams' lists were got (`reads`): the upstreams it asked (it waited for a read
 * of their list) as `mcp.gateway.upstream.ids`, linked to those reads' CLIENT spans (a read serves every request that
 * waits for it: a link, not a child); those served from the cache, and those whose last good list was served, as events.
 */
export function traceListReads(span: Pick<TraceSpan, 'set' | 'event' | 'link'>, reads: readonly ListRead[]): void {
    const asked: string[] = [];
    const cached: string[] = [];
    const lastGood: string[] = [];
    let links = 0;
    for (const read of reads) {
        if (read.served !== 'upstream') (read.served === 'cache' ? cached : lastGood).push(read.upstreamId);
        else {
            asked.push(read.upstreamId);
            for (const trace of read.traces ?? []) if (links++ < MAX_SPAN_LINKS) span.link(trace, { [ATTR.upstream]: read.upstreamId });
        }
    }
    if (asked.length > 0) span.set({ [ATTR.upstreams]: asked });
    if (cached.length > 0) span.event('mcp.gateway.list.cached', { [ATTR.upstreams]: cached });
    if (lastGood.length > 0) span.event('mcp.gateway.list.last_good', { [ATTR.upstreams]: lastGood });
}
