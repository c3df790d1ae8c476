/**
 * Hot reload of the config file: on SIGHUP, and when the file changes (watched
 * through its folder, because editors and Kubernetes ConfigMaps replace files
 * rather than write them in place). The files the config brings in (client config
 * files of upstreamsFrom, their env files) are watched the same way; which they are
 * is worked out again at each reload. Reloads run one at a time; a request that
 * arrives during one runs once more after it. A config that does not validate
 * is rejected with the same message as at start, and the running one stays.
 */
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '../diagnostics/logger.js';
import { describeError } from '../diagnostics/logger.js';
import { ConfigError } from './issues.js';
import type { GatewayConfig } from './schema.js';

export interface ReloaderOptions {
    /** The files the running config was read from. */
    files: readonly string[];
    /** Reads and validates the config (throws ConfigError), adding every file it reads or tries to `touched`. */
    load: (touched: Set<string>) => Promise<GatewayConfig>;
    /** Applies a valid config; resolves with a summary for the log. */
    apply: (config: GatewayConfig) => Promise<Record<string, unknown>>;
    current: GatewayConfig;
    logger: Logger;
    /** Quiet time after the last file event before reading it. */
    debounceMs?: number;
}

export type ReloadOutcome = 'applied' | 'unchanged' | 'rejected' | 'failed';

export class ConfigReloader {
    #current: GatewayConfig;
    /** The files of the running config. */
    #files: readonly string[];
    #running: Promise<ReloadOutcome> | undefined;
    #again: { reason: string; forced: boolean } | undefined;
    /** One watcher per folder, with the names in it that matter. */
    readonly #watchers = new Map<string, { watcher: FSWatcher; names: Set<string> }>();
    #debounce: NodeJS.Timeout | undefined;

    constructor(private readonly options: ReloaderOptions) {
        this.#current = options.current;
        this.#files = options.files;
    }

    /** Reloads now (`forced`: even if the file looks unchanged, as SIGHUP asks). */
    reload(reason: string, forced = true): Promise<ReloadOutcome> {
        if (this.#running !== undefined) {
            this.#again = { reason, forced: forced || this.#again?.forced === true };
            return this.#running.then(() => this.#running ?? 'unchanged');
        }
        const run = this.#run(reason, forced).finally(() => {
            this.#running = undefined;
            const again = this.#again;
            this.#again = undefined;
            if (again !== undefined) void this.reload(again.reason, again.forced);
        });
        this.#running = run;
        return run;
    }

    /** Watches the files if the running config asks for it. */
    start(): void {
        this.#syncWatch(this.#current.reload.watch ? this.#files : []);
    }

    /** Watches exactly the folders of `files`, each for the names of those files in it. */
    #syncWatch(files: readonly string[]): void {
        const wanted = new Map<string, Set<string>>();
        for (const file of files) {
            const absolute = path.resolve(file);
            const names = wanted.get(path.dirname(absolute)) ?? new Set<string>();
            wanted.set(path.dirname(absolute), names.add(path.basename(absolute)));
        }
        if (wanted.size === 0) clearTimeout(this.#debounce);
        for (const [folder, watched] of this.#watchers) {
            if (wanted.has(folder)) continue;
            watched.watcher.close();
            this.#watchers.delete(folder);
        }
        for (const [folder, names] of wanted) {
            const watched = this.#watchers.get(folder);
            if (watched !== undefined) watched.names = names;
            else this.#watch(folder, names);
        }
    }

    #watch(folder: string, names: Set<string>): void {
        try {
            // Kubernetes swaps a ConfigMap's files by renaming the hidden `..data` link; other names in the folder are not ours.
            const watcher = watch(folder, { persistent: false }, (_event, changed) => {
                const ours = changed === null || changed === '..data' || this.#watchers.get(folder)?.names.has(changed) === true;
                if (!ours) return;
                clearTimeout(this.#debounce);
                this.#debounce = setTimeout(() => void this.reload(`${changed ?? 'a config file'} changed`, false), this.options.debounceMs ?? 200);
                this.#debounce.unref();
            });
            watcher.on('error', error => {
                this.options.logger.warn({ folder, err: describeError(error) }, 'watching a config file failed; SIGHUP still reloads');
            });
            this.#watchers.set(folder, { watcher, names });
        } catch (error) {
            this.options.logger.warn({ folder, err: describeError(error) }, 'cannot watch a config file; SIGHUP still reloads');
        }
    }

    close(): void {
        this.#syncWatch([]);
    }

    async #run(reason: string, forced: boolean): Promise<ReloadOutcome> {
        const log = this.options.logger;
        let next: GatewayConfig;
        const touched = new Set<string>();
        try {
            next = await this.options.load(touched);
        } catch (error) {
            // Also the files this attempt read: fixing a file just added to upstreamsFrom must reload too.
            if (this.#current.reload.watch) this.#syncWatch([...this.#files, ...touched]);
            if (!(error instanceof ConfigError)) {
                log.error({ reason, err: describeError(error) }, 'config reload failed; keeping the running config');
                return 'failed';
            }
            log.error({ reason, problems: error.message }, 'config reload rejected; keeping the running config');
            return 'rejected';
        }
        if (!forced && isDeepStrictEqual(next, this.#current)) {
            this.#files = [...touched];
            this.#syncWatch(this.#current.reload.watch ? this.#files : []);
            return 'unchanged';
        }
        try {
            const summary = await this.options.apply(next);
            this.#current = next;
            this.#files = [...touched];
            this.#syncWatch(next.reload.watch ? this.#files : []);
            log.info({ reason, ...summary }, 'config reloaded');
            return 'applied';
        } catch (error) {
            log.error({ reason, err: describeError(error) }, 'applying the new config failed');
            return 'failed';
        }
    }
}
