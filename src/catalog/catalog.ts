/**
 * The merged, namespaced view of every upstream's prompts.
 *
 * Each upstream's whole list is cached in a plain Map (one entry per configured
 * upstream, so it is bounded by the config) and dropped when that upstream
 * sends list_changed or its connection comes or goes. The next reader refreshes
 * it; readers arriving meanwhile share that fetch, unless a change lands during
 * it, which starts a fresh one. A failed fetch serves the last good list (or
 * nothing) and is not retried for a few seconds, so one failing upstream does
 * not slow every request down. Old versions of each name list are kept in a
 * size-bounded LRU so cursors cut from them can resume exactly.
 */
import { LRUCache } from 'lru-cache';
import type { Prompt } from '@modelcontextprotocol/client';
import { Bus } from '../lib/bus.js';
import { shortDigest } from '../lib/digest.js';
import { describeError, type Logger } from '../observability/logger.js';
import type { UpstreamConnection, UpstreamEvent } from '../upstream/connection.js';
import { Coalescer } from './coalescer.js';
import { exposedName, inReservedNamespace, type NamingRule } from './names.js';
import type { Segment } from './paginate.js';

export interface CatalogEntry {
    exposedName: string;
    upstream: UpstreamConnection;
    originalName: string;
    /** The prompt as clients see it: the upstream's definition under its exposed name. */
    prompt: Prompt;
}

export interface CatalogView {
    segments: Segment<CatalogEntry>[];
    byName: ReadonlyMap<string, CatalogEntry>;
}

/** One coalesced burst of upstream changes. */
export interface CatalogChange {
    upstreamIds: string[];
}

export interface CatalogOptions {
    naming: NamingRule;
    logger: Logger;
    notifications: { debounceMs: number; maxDelayMs: number };
    /** Most prompt names kept across old list versions (memory bound of the cursor history). */
    historyMaxNames?: number;
}

interface UpstreamList {
    prompts: Prompt[];
    names: string[];
    version: string;
}

interface CacheSlot {
    /** The current list; undefined when it must be (re)read. */
    list?: UpstreamList;
    /** The last list read successfully, served while a reread fails. */
    lastGood?: UpstreamList;
    refreshing?: Promise<UpstreamList | undefined>;
    /** Bumped by every change; a fetch that started before one is stale. */
    generation: number;
    /** After a failed read, no new attempt before this time (ms since epoch). */
    retryAfter: number;
}

/** How long a failed list read is not retried. */
const LIST_RETRY_MS = 5000;

export class Catalog {
    /** Coalesced: one event per burst of upstream changes. */
    readonly changes: Bus<CatalogChange>;
    readonly #slots = new Map<string, CacheSlot>();
    readonly #history: LRUCache<string, readonly string[]>;
    readonly #coalescer: Coalescer<string>;
    readonly #unsubscribe: (() => void)[] = [];
    #memo: { lists: (UpstreamList | undefined)[]; view: CatalogView } | undefined;
    readonly #log: Logger;

    constructor(
        private readonly upstreams: readonly UpstreamConnection[],
        private readonly options: CatalogOptions
    ) {
        this.#log = options.logger;
        this.changes = new Bus(error => this.#log.error({ err: describeError(error) }, 'catalog change listener failed'));
        this.#history = new LRUCache({ maxSize: options.historyMaxNames ?? 200_000, sizeCalculation: names => names.length + 1 });
        this.#coalescer = new Coalescer<string>({
            ...options.notifications,
            flush: ids => this.changes.publish({ upstreamIds: [...new Set(ids)] })
        });
        for (const upstream of upstreams) {
            this.#slots.set(upstream.id, { generation: 0, retryAfter: 0 });
            this.#unsubscribe.push(upstream.events.subscribe(event => this.#onUpstreamEvent(event)));
        }
    }

    /** The current merged view, refreshing any upstream list that is stale. */
    async view(): Promise<CatalogView> {
        const lists = await Promise.all(this.upstreams.map(upstream => this.#list(upstream)));
        const memo = this.#memo;
        if (memo !== undefined && memo.lists.every((list, i) => list === lists[i])) return memo.view;
        const view = this.#buildView(lists);
        this.#memo = { lists, view };
        return view;
    }

    /** A name list version seen earlier, if still remembered. */
    history(upstreamId: string, version: string): readonly string[] | undefined {
        return this.#history.get(historyKey(upstreamId, version));
    }

    /** Forgets changes seen so far, e.g. the upstreams' first connections, which no client needs to hear about. */
    discardPendingChanges(): void {
        this.#coalescer.discard();
    }

    close(): void {
        this.#coalescer.discard();
        for (const unsubscribe of this.#unsubscribe) unsubscribe();
    }

    #onUpstreamEvent(event: UpstreamEvent): void {
        // Only changes clients can see count: a list change, or an upstream entering or leaving "ready".
        if (event.type === 'state' && event.state !== 'ready' && event.previous !== 'ready') return;
        const slot = this.#slots.get(event.upstreamId);
        if (slot === undefined) return;
        slot.generation++;
        slot.list = undefined;
        slot.refreshing = undefined;
        slot.retryAfter = 0;
        if (event.type === 'state') slot.lastGood = undefined;
        this.#coalescer.push(event.upstreamId);
    }

    async #list(upstream: UpstreamConnection): Promise<UpstreamList | undefined> {
        if (upstream.state !== 'ready') return undefined;
        const slot = this.#slots.get(upstream.id)!;
        if (slot.list !== undefined) return slot.list;
        if (Date.now() < slot.retryAfter) return slot.lastGood;
        if (slot.refreshing === undefined) {
            const refreshing = this.#refresh(upstream, slot).finally(() => {
                if (slot.refreshing === refreshing) slot.refreshing = undefined;
            });
            slot.refreshing = refreshing;
        }
        return slot.refreshing;
    }

    async #refresh(upstream: UpstreamConnection, slot: CacheSlot): Promise<UpstreamList | undefined> {
        const generation = slot.generation;
        try {
            const collected = await upstream.listPrompts();
            if (collected.truncated !== undefined) {
                this.#log.warn({ upstream: upstream.id, reason: collected.truncated, prompts: collected.items.length }, 'upstream prompt list cut short');
            }
            const list = this.#toList(upstream.id, collected.items);
            // A change that arrived while reading makes this result stale: serve it to this reader, reread next time.
            if (slot.generation === generation) {
                slot.list = list;
                slot.lastGood = list;
            }
            return list;
        } catch (error) {
            this.#log.warn({ upstream: upstream.id, err: describeError(error), retryInMs: LIST_RETRY_MS }, 'listing upstream prompts failed; serving its last good list, if any');
            if (slot.generation === generation) slot.retryAfter = Date.now() + LIST_RETRY_MS;
            return slot.lastGood;
        }
    }

    #toList(upstreamId: string, prompts: readonly Prompt[]): UpstreamList {
        const seen = new Set<string>();
        const unique: Prompt[] = [];
        for (const prompt of prompts) {
            if (seen.has(prompt.name)) {
                this.#log.warn({ upstream: upstreamId, prompt: prompt.name }, 'upstream lists a prompt name twice; keeping the first');
                continue;
            }
            seen.add(prompt.name);
            unique.push(prompt);
        }
        const names = unique.map(prompt => prompt.name);
        const version = shortDigest(JSON.stringify(names));
        this.#history.set(historyKey(upstreamId, version), names);
        return { prompts: unique, names, version };
    }

    #buildView(lists: readonly (UpstreamList | undefined)[]): CatalogView {
        const byName = new Map<string, CatalogEntry>();
        const naming = this.options.naming;
        const namespacedIds = new Set(this.upstreams.filter(upstream => upstream.config.namespace).map(upstream => upstream.id));
        const segments = this.upstreams.map((upstream, i): Segment<CatalogEntry> => {
            const list = lists[i] ?? EMPTY_LIST;
            const entries = list.prompts.map(prompt => {
                const name = exposedName(naming, upstream.id, upstream.config.namespace, prompt.name);
                if (!upstream.config.namespace && inReservedNamespace(naming, name, namespacedIds)) {
                    this.#log.warn({ prompt: name, upstream: upstream.id }, 'unprefixed prompt name lies in a namespaced upstream\'s namespace; leaving it out');
                    return undefined;
                }
                const owner = byName.get(name);
                if (owner !== undefined) {
                    this.#log.warn({ prompt: name, kept: owner.upstream.id, dropped: upstream.id }, 'prompt name clash; keeping the first upstream in config order');
                    return undefined;
                }
                const entry: CatalogEntry = { exposedName: name, upstream, originalName: prompt.name, prompt: { ...prompt, name } };
                byName.set(name, entry);
                return entry;
            });
            return { upstreamId: upstream.id, upstreamIndex: upstream.index, version: list.version, names: list.names, entries };
        });
        return { segments, byName };
    }
}

const EMPTY_LIST: UpstreamList = { prompts: [], names: [], version: 'empty' };

function historyKey(upstreamId: string, version: string): string {
    return `${upstreamId}\u0000${version}`;
}
