/**
 * One upstream's prompt list, cached until that upstream reports a change.
 *
 * The next reader after a change refreshes it; readers arriving meanwhile share
 * that fetch, unless another change lands during it, which starts a fresh one.
 * No reader waits longer than the upstream's `timeoutMs`: after it, the last
 * good list (or nothing) is served, and when the slow fetch lands later the
 * catalog is told, so sessions hear about the list they were not shown. A failed
 * fetch serves the last good list and is not retried for a few seconds, so one
 * failing upstream does not slow every request down.
 */
import type { Prompt } from '@modelcontextprotocol/client';
import { shortDigest } from '../lib/digest.js';
import { describeError, type Logger } from '../observability/logger.js';
import type { UpstreamConnection } from '../upstream/connection.js';

export interface UpstreamList {
    prompts: Prompt[];
    names: string[];
    /** Digest of `names`: identifies this version of the list in cursors. */
    version: string;
}

export interface ListCacheOptions {
    logger: Logger;
    /** Every list read is recorded here, so cursors cut from it can resume exactly later. */
    remember: (upstreamId: string, list: UpstreamList) => void;
    /** A fetch that outlived its readers' wait has landed: the view changed without an upstream event. */
    onLateList: (upstreamId: string) => void;
}

/** How long a failed list read is not retried. */
const LIST_RETRY_MS = 5000;

export class UpstreamListCache {
    #list: UpstreamList | undefined;
    #lastGood: UpstreamList | undefined;
    #refreshing: Promise<UpstreamList | undefined> | undefined;
    /** Bumped by every change; a fetch that started before one is stale. */
    #generation = 0;
    #retryAfter = 0;
    /** Readers were served without waiting for the fetch in flight. */
    #servedStale = false;

    constructor(
        readonly upstream: UpstreamConnection,
        private readonly options: ListCacheOptions
    ) {}

    /** The upstream's list changed (`keepLastGood` false: it came or went, so its old list must not be served). */
    invalidate(keepLastGood: boolean): void {
        this.#generation++;
        this.#list = undefined;
        this.#refreshing = undefined;
        this.#retryAfter = 0;
        this.#servedStale = false;
        if (!keepLastGood) this.#lastGood = undefined;
    }

    async read(): Promise<UpstreamList | undefined> {
        if (this.upstream.state !== 'ready') return undefined;
        if (this.#list !== undefined) return this.#list;
        if (Date.now() < this.#retryAfter) return this.#lastGood;
        if (this.#refreshing === undefined) {
            const refreshing = this.#refresh().finally(() => {
                if (this.#refreshing === refreshing) this.#refreshing = undefined;
            });
            this.#refreshing = refreshing;
        }
        return this.#within(this.#refreshing, this.upstream.config.timeoutMs);
    }

    async #within(refreshing: Promise<UpstreamList | undefined>, ms: number): Promise<UpstreamList | undefined> {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>(resolve => (timer = setTimeout(resolve, ms, 'late')));
        try {
            const result = await Promise.race([refreshing, late]);
            if (result !== 'late') return result;
        } finally {
            clearTimeout(timer);
        }
        if (!this.#servedStale) {
            this.#servedStale = true;
            this.upstream.reportFault('list_slow', `listing took longer than ${ms} ms; serving the last good list, if any`, {
                lastGood: this.#lastGood !== undefined
            });
        }
        return this.#lastGood;
    }

    async #refresh(): Promise<UpstreamList | undefined> {
        const generation = this.#generation;
        const upstream = this.upstream;
        try {
            const list = this.#toList((await upstream.listPrompts()).items);
            // A change that arrived while reading makes this result stale: serve it to this reader, reread next time.
            if (this.#generation === generation) {
                this.#list = list;
                this.#lastGood = list;
                if (this.#servedStale) {
                    this.#servedStale = false;
                    this.options.onLateList(upstream.id);
                }
            }
            return list;
        } catch (error) {
            this.options.logger.warn(
                { upstream: upstream.id, err: describeError(error), retryInMs: LIST_RETRY_MS },
                'listing upstream prompts failed; serving its last good list, if any'
            );
            if (this.#generation === generation) {
                this.#retryAfter = Date.now() + LIST_RETRY_MS;
                this.#servedStale = false;
            }
            return this.#lastGood;
        }
    }

    #toList(prompts: readonly Prompt[]): UpstreamList {
        const seen = new Set<string>();
        const unique: Prompt[] = [];
        for (const prompt of prompts) {
            if (seen.has(prompt.name)) {
                this.options.logger.warn({ upstream: this.upstream.id, prompt: prompt.name }, 'upstream lists a prompt name twice; keeping the first');
                continue;
            }
            seen.add(prompt.name);
            unique.push(prompt);
        }
        const names = unique.map(prompt => prompt.name);
        const list = { prompts: unique, names, version: shortDigest(JSON.stringify(names)) };
        this.options.remember(this.upstream.id, list);
        return list;
    }
}
