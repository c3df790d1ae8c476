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
 */
import type { Prompt } from '@modelcontextprotocol/client';
import { withDeadline } from '../lib/deadline.js';
import { shortDigest } from '../lib/digest.js';
import { describeError, type Logger } from '../observability/logger.js';
import { outsideRequests } from '../observability/request-context.js';
import type { ListedPrompt, UpstreamPort } from './upstream-port.js';

export interface UpstreamList {
    prompts: Prompt[];
    /** Digest of each prompt's definition, in the order of `prompts`. */
    digests: string[];
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
    /** Each read of a connected upstream's list: a hit when the cached list was current, else a miss. */
    onRead?: (upstreamId: string, hit: boolean) => void;
}

/** How long a failed list read is not retried. */
const LIST_RETRY_MS = 5000;

export class UpstreamListCache {
    #list: UpstreamList | undefined;
    #lastGood: UpstreamList | undefined;
    #refreshing: Promise<UpstreamList | undefined> | undefined;
    /** A change arrived during the refresh in flight: its result is good, but not current. */
    #dirty = false;
    /** Bumped when the connection comes or goes: a fetch from before belongs to another connection. */
    #connection = 0;
    #retryAfter = 0;
    /** Readers of the refresh in flight were served the last good list: later ones need not wait either. */
    #servedStale = false;

    constructor(
        readonly upstream: UpstreamPort,
        private readonly options: ListCacheOptions
    ) {}

    /** The upstream sent list_changed. A flood of them must not defeat the retry delay or start parallel reads. */
    listChanged(): void {
        this.#list = undefined;
        if (this.#refreshing !== undefined) this.#dirty = true;
    }

    /** The upstream connected or went away: nothing read before may be served. */
    connectionChanged(): void {
        this.#connection++;
        this.#list = undefined;
        this.#lastGood = undefined;
        this.#refreshing = undefined;
        this.#dirty = false;
        this.#retryAfter = 0;
        this.#servedStale = false;
    }

    async read(): Promise<UpstreamList | undefined> {
        if (this.upstream.state !== 'ready') return undefined;
        this.options.onRead?.(this.upstream.id, this.#list !== undefined);
        if (this.#list !== undefined) return this.#list;
        if (this.#refreshing !== undefined) return this.#servedStale ? this.#lastGood : this.#within(this.#refreshing);
        if (Date.now() < this.#retryAfter) return this.#lastGood;
        // Shared by every reader that comes meanwhile: it is no reader's, carries none's headers and its lines name none.
        const refreshing = outsideRequests(() => this.#refresh()).finally(() => {
            if (this.#refreshing === refreshing) this.#refreshing = undefined;
        });
        this.#refreshing = refreshing;
        return this.#within(refreshing);
    }

    async #within(refreshing: Promise<UpstreamList | undefined>): Promise<UpstreamList | undefined> {
        const ms = this.upstream.config.timeoutMs;
        if (ms === undefined) return refreshing;
        return withDeadline(refreshing, ms, () => {
            if (!this.#servedStale) {
                this.#servedStale = true;
                this.upstream.reportFault('list_slow', `listing took longer than ${ms} ms; serving the last good list, if any`, {
                    lastGood: this.#lastGood !== undefined
                });
            }
            return this.#lastGood;
        });
    }

    async #refresh(): Promise<UpstreamList | undefined> {
        const connection = this.#connection;
        const upstream = this.upstream;
        try {
            const list = this.#toList((await upstream.listPrompts()).items);
            if (this.#connection !== connection) return list;
            this.#lastGood = list;
            // Changed meanwhile: serve this result, read again on the next request.
            if (!this.#dirty) this.#list = list;
            this.#dirty = false;
            if (this.#servedStale) {
                this.#servedStale = false;
                this.options.onLateList(upstream.id);
            }
            return list;
        } catch (error) {
            this.options.logger.warn(
                { upstream: upstream.id, err: describeError(error), retryInMs: LIST_RETRY_MS },
                'listing upstream prompts failed; serving its last good list, if any'
            );
            if (this.#connection === connection) {
                this.#retryAfter = Date.now() + LIST_RETRY_MS;
                this.#dirty = false;
                this.#servedStale = false;
            }
            return this.#lastGood;
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
        const list = { prompts, digests, names, version: shortDigest(JSON.stringify(names)) };
        this.options.remember(this.upstream.id, list);
        return list;
    }
}
