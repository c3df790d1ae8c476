/**
 * The merged, namespaced view of every upstream's prompts.
 *
 * Each upstream's whole list is cached in a plain Map (one entry per configured
 * upstream, so it is bounded by the config) and dropped when that upstream
 * sends list_changed or its connection comes or goes; the next reader refreshes
 * it, one fetch at a time per upstream. Old versions of each name list are kept
 * in a size-bounded LRU so cursors cut from them can resume exactly.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Prompt } from '@modelcontextprotocol/client';
import { Bus } from '../lib/bus.js';
import { describeError, type Logger } from '../observability/logger.js';
import type { UpstreamConnection, UpstreamEvent } from '../upstream/connection.js';
import { Coalescer } from './coalescer.js';
import { exposedName, type NamingRule } from './names.js';
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
    list?: UpstreamList;
    refreshing?: Promise<UpstreamList | undefined>;
    generation: number;
}

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
            this.#slots.set(upstream.id, { generation: 0 });
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

    close(): void {
        this.#coalescer.cancel();
        for (const unsubscribe of this.#unsubscribe) unsubscribe();
    }

    #onUpstreamEvent(event: UpstreamEvent): void {
        // Only changes clients can see count: a list change, or an upstream entering or leaving "ready".
        if (event.type === 'state' && event.state !== 'ready' && event.previous !== 'ready') return;
        const slot = this.#slots.get(event.upstreamId);
        if (slot === undefined) return;
        slot.generation++;
        slot.list = undefined;
        this.#coalescer.push(event.upstreamId);
    }

    async #list(upstream: UpstreamConnection): Promise<UpstreamList | undefined> {
        if (upstream.state !== 'ready') return undefined;
        const slot = this.#slots.get(upstream.id)!;
        if (slot.list !== undefined) return slot.list;
        slot.refreshing ??= this.#refresh(upstream, slot).finally(() => {
            slot.refreshing = undefined;
        });
        return slot.refreshing;
    }

    async #refresh(upstream: UpstreamConnection, slot: CacheSlot): Promise<UpstreamList | undefined> {
        const generation = slot.generation;
        let list: UpstreamList;
        try {
            const collected = await upstream.listPrompts();
            if (collected.truncated !== undefined) {
                this.#log.warn({ upstream: upstream.id, reason: collected.truncated, prompts: collected.items.length }, 'upstream prompt list cut short');
            }
            list = this.#toList(upstream.id, collected.items);
        } catch (error) {
            this.#log.warn({ upstream: upstream.id, err: describeError(error) }, 'listing upstream prompts failed; leaving them out');
            return undefined;
        }
        // A change that arrived while reading makes this result stale: serve it now, reread next time.
        if (slot.generation === generation) slot.list = list;
        return list;
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
        const version = createHash('sha256').update(JSON.stringify(names)).digest('base64url').slice(0, 16);
        this.#history.set(historyKey(upstreamId, version), names);
        return { prompts: unique, names, version };
    }

    #buildView(lists: readonly (UpstreamList | undefined)[]): CatalogView {
        const byName = new Map<string, CatalogEntry>();
        const segments = this.upstreams.map((upstream, i): Segment<CatalogEntry> => {
            const list = lists[i] ?? EMPTY_LIST;
            const entries = list.prompts.map(prompt => {
                const name = exposedName(this.options.naming, upstream.id, upstream.config.namespace, prompt.name);
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
