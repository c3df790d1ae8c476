/**
 * The merged, namespaced view of every upstream's prompts, and the one place
 * that announces changes to it.
 *
 * Upstreams are seen through the catalog's own port (upstream-port.ts). Each
 * upstream's list is cached (see list-cache.ts) and named (names.ts). Upstream
 * events (a list_changed, an upstream entering or leaving "ready", a reload
 * changing the set of upstreams) are coalesced into bursts; at the end of a
 * burst the new view is built and published with it, so subscribers compare
 * what they can see instead of guessing from the events. Old versions of each name list are kept
 * in a size-bounded LRU so cursors cut from them can resume exactly.
 */
import { LRUCache } from 'lru-cache';
import type { Prompt } from '@modelcontextprotocol/client';
import { Bus } from '../lib/bus.js';
import { describeError, type Logger } from '../diagnostics/logger.js';
import { Coalescer } from './coalescer.js';
import { CuratedLists } from './curated-lists.js';
import { UpstreamListCache, type ListRead, type RelistPolicy, type UpstreamList } from './list-cache.js';
import { nameTable, type NamingRule } from './names.js';
import type { OverrideReport, UpstreamOverrides } from './overrides.js';
import type { Segment } from './paginate.js';
import type { UpstreamPort, UpstreamPortEvent } from './upstream-port.js';
import type { TraceContext } from '../protocol/meta.js';
import { MAX_SPAN_LINKS } from '../diagnostics/tracer.js';

export interface CatalogEntry {
    exposedName: string;
    upstream: UpstreamPort;
    originalName: string;
    /** The prompt as clients see it: the upstream's definition under its exposed name. */
    prompt: Prompt;
    /** Digest of the upstream's definition and its override: with the exposed name, it tells whether a client's view changed. */
    digest: string;
    /** Overrides' defaults, filled in for arguments the client leaves out. */
    defaults?: ReadonlyMap<string, string> | undefined;
}

/** Whether a client may see (and use) a catalog entry. */
export type Visibility = (entry: CatalogEntry) => boolean;

export interface CatalogView {
    segments: Segment<CatalogEntry>[];
    byName: ReadonlyMap<string, CatalogEntry>;
}

/** One coalesced burst of changes, with the view after it. */
export interface CatalogChange {
    upstreamIds: string[];
    view: CatalogView;
    /** The spans of the upstream notifications of the burst (tracing on; at most MAX_SPAN_LINKS): what clients' notifications link to. */
    traces?: readonly TraceContext[] | undefined;
}

export interface CatalogOptions {
    naming: NamingRule;
    logger: Logger;
    notifications: { debounceMs: number; maxDelayMs: number };
    /** Most prompt names kept across old list versions (memory bound of the cursor history). */
    historyMaxNames?: number;
    /** Told of every read of an upstream's cached list (see UpstreamListCache). */
    onCacheRead?: (upstreamId: string, hit: boolean) => void;
    /** How often lists of upstreams that cannot announce changes are read again; read as lists land. */
    relist: () => RelistPolicy;
}

interface Member {
    cache: UpstreamListCache;
    unsubscribe: () => void;
}

export class Catalog {
    /** Coalesced: one event per burst of changes. */
    readonly changes: Bus<CatalogChange>;
    #members = new Map<string, Member>();
    #order: UpstreamPort[] = [];
    #naming: NamingRule;
    readonly #curated: CuratedLists;
    readonly #history: LRUCache<string, readonly string[]>;
    #coalescer: Coalescer<string>;
    /** The upstream notifications' spans of the burst being coalesced. */
    #burstTraces: TraceContext[] = [];
    #memo: { lists: (UpstreamList | undefined)[]; view: CatalogView } | undefined;
    #published: CatalogView | undefined;
    #publishing = 0;
    /** Publications building their view. */
    #building = 0;
    #closed = false;
    readonly #log: Logger;
    readonly #onCacheRead: CatalogOptions['onCacheRead'];
    readonly #relist: CatalogOptions['relist'];

    /** Starts empty; `setUpstreams` brings the upstreams in. */
    constructor(options: CatalogOptions) {
        this.#log = options.logger;
        this.#naming = options.naming;
        this.#curated = new CuratedLists(options.logger);
        this.#onCacheRead = options.onCacheRead;
        this.#relist = options.relist;
        this.changes = new Bus(error => this.#log.error({ err: describeError(error) }, 'catalog change listener failed'));
        this.#history = new LRUCache({ maxSize: options.historyMaxNames ?? 200_000, sizeCalculation: names => names.length + 1 });
        this.#coalescer = this.#newCoalescer(options.notifications);
    }

    /** The view most recently published (or warmed): what sessions were last told about. */
    get publishedView(): CatalogView | undefined {
        return this.#published;
    }

    /**
     * Replaces the set of upstreams, the naming rule and the overrides (by upstream id) (start and reload).
     * Upstreams kept keep their cached lists; the change is announced like any other, once the burst ends.
     */
    setUpstreams(upstreams: readonly UpstreamPort[], naming: NamingRule = this.#naming, overrides?: ReadonlyMap<string, UpstreamOverrides>): void {
        if (overrides !== undefined) this.#curated.set(overrides);
        this.#curated.keep(new Set(upstreams.map(upstream => upstream.id)));
        if (naming.separator !== this.#naming.separator) {
            this.#naming = naming;
            for (const upstream of this.#order) this.#coalescer.push(upstream.id);
        }
        const next = new Map<string, Member>();
        for (const upstream of upstreams) {
            const member = this.#members.get(upstream.id);
            if (member !== undefined && member.cache.upstream === upstream) {
                next.set(upstream.id, member);
                continue;
            }
            next.set(upstream.id, {
                cache: new UpstreamListCache(upstream, {
                    logger: this.#log,
                    remember: (id, list) => this.#history.set(historyKey(id, list.version), list.names),
                    onLateList: id => this.#coalescer.push(id),
                    onRead: this.#onCacheRead,
                    relist: this.#relist
                }),
                unsubscribe: upstream.events.subscribe(event => this.#onUpstreamEvent(event))
            });
            this.#coalescer.push(upstream.id);
        }
        for (const [id, member] of this.#members) {
            if (next.get(id) === member) continue;
            member.unsubscribe();
            member.cache.close();
            this.#coalescer.push(id);
        }
        this.#members = next;
        this.#order = [...upstreams];
        this.#memo = undefined;
    }

    /**
     * Whether a change is still to be published: its burst has not ended, or its view is being built. Once false, no
     * notification is on its way until the next event: what a test checks instead of waiting for one not to come.
     * @internal for tests
     */
    get changePending(): boolean {
        return this.#coalescer.pending || this.#building > 0;
    }

    /** Publishes the view again at the end of the current burst, for subscribers whose rules of what they see changed. */
    announce(): void {
        for (const upstream of this.#order) this.#coalescer.push(upstream.id);
    }

    setNotificationTiming(timing: CatalogOptions['notifications']): void {
        this.#coalescer.flushNow();
        this.#coalescer = this.#newCoalescer(timing);
    }

    /**
     * The entry for `name` in the last view built, if its upstream is still here and connected: lets a get or a
     * completion skip waiting for another upstream's slow list. A prompt removed upstream since is then the
     * upstream's to reject.
     */
    cachedEntry(name: string): CatalogEntry | undefined {
        const entry = this.#memo?.view.byName.get(name);
        if (entry === undefined || entry.upstream.state !== 'ready') return undefined;
        return this.#members.get(entry.upstream.id)?.cache.upstream === entry.upstream ? entry : undefined;
    }

    /** The current merged view, refreshing any upstream list that is stale; `reads`: told how each list was got. */
    async view(reads?: ListRead[]): Promise<CatalogView> {
        const order = this.#order;
        const lists = await Promise.all(order.map(upstream => this.#members.get(upstream.id)?.cache.read(reads) ?? Promise.resolve(undefined)));
        const memo = this.#memo;
        if (memo !== undefined && memo.lists.length === lists.length && memo.lists.every((list, i) => list === lists[i])) return memo.view;
        lists.forEach((list, index) => {
            if (list === undefined) this.#curated.unknown(order[index]!.id);
        });
        const view = nameTable(order, lists, this.#naming, this.#log, this.#curated.curate);
        // A reload during the reads: this view is for the old set, and must not be remembered as the current one.
        if (order === this.#order) this.#memo = { lists, view };
        return view;
    }

    /**
     * Builds the current view and takes it as the one clients know, without announcing it: at start-up, where
     * the upstreams' first connections are news to nobody.
     */
    async warm(): Promise<void> {
        this.#coalescer.discard();
        this.#published = await this.view();
    }

    /** What of the upstream's overrides did not apply to its last list read (for /healthz); undefined when all did. */
    overrideReport(upstreamId: string): OverrideReport | undefined {
        return this.#curated.report(upstreamId);
    }

    /** A name list version seen earlier, if still remembered. */
    history(upstreamId: string, version: string): readonly string[] | undefined {
        return this.#history.get(historyKey(upstreamId, version));
    }

    close(): void {
        this.#closed = true;
        this.#coalescer.discard();
        for (const member of this.#members.values()) {
            member.unsubscribe();
            member.cache.close();
        }
    }

    /**
     * How much longer the gateway can vouch for the merged list: until the soonest any connected upstream's list may
     * have changed unannounced (see UpstreamListCache.freshUntil); undefined when every one announces its changes.
     */
    freshForMs(): number | undefined {
        let soonest = Infinity;
        for (const { cache } of this.#members.values()) {
            const until = cache.upstream.state === 'ready' ? cache.freshUntil : undefined;
            if (until !== undefined) soonest = Math.min(soonest, until);
        }
        return soonest === Infinity ? undefined : Math.max(0, soonest - Date.now());
    }

    #newCoalescer(timing: CatalogOptions['notifications']): Coalescer<string> {
        return new Coalescer<string>({
            ...timing,
            flush: ids => {
                const traces = this.#burstTraces;
                this.#burstTraces = [];
                void this.#publish(ids, traces);
            }
        });
    }

    async #publish(upstreamIds: string[], traces: readonly TraceContext[]): Promise<void> {
        const publishing = ++this.#publishing;
        let view: CatalogView;
        this.#building++;
        try {
            view = await this.view();
        } catch (error) {
            this.#log.error({ err: describeError(error) }, 'building the prompt view failed; change not announced');
            return;
        } finally {
            this.#building--;
        }
        // A later burst started meanwhile publishes a newer view; this one would only go stale on arrival.
        if (this.#closed || publishing !== this.#publishing) return;
        this.#published = view;
        this.changes.publish(traces.length === 0 ? { upstreamIds, view } : { upstreamIds, view, traces });
    }

    #onUpstreamEvent(event: UpstreamPortEvent): void {
        // Only changes clients can see count: a list change, or an upstream entering or leaving "ready".
        if (event.type === 'state' && event.state !== 'ready' && event.previous !== 'ready') return;
        const member = this.#members.get(event.upstreamId);
        if (member === undefined) return;
        if (event.type === 'announcing') {
            if (member.cache.announcingChanged()) this.#coalescer.push(event.upstreamId);
            return;
        }
        if (event.type === 'prompts-changed') {
            member.cache.listChanged();
            if (event.trace !== undefined && this.#burstTraces.length < MAX_SPAN_LINKS) this.#burstTraces.push(event.trace);
        } else member.cache.connectionChanged();
        this.#coalescer.push(event.upstreamId);
    }
}

function historyKey(upstreamId: string, version: string): string {
    return `${upstreamId}\u0000${version}`;
}
