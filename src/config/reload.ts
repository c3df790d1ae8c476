/**
 * Hot reload of the config file: on SIGHUP, and when the file changes (watched
 * through its folder, because editors and Kubernetes ConfigMaps replace files
 * rather than write them in place). Reloads run one at a time; a request that
 * arrives during one runs once more after it. A config that does not validate
 * is rejected with the same message as at start, and the running one stays.
 */
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '../observability/logger.js';
import { describeError } from '../observability/logger.js';
import { ConfigError } from './issues.js';
import type { GatewayConfig } from './schema.js';

export interface ReloaderOptions {
    file: string;
    /** Reads and validates the file (throws ConfigError). */
    load: () => Promise<GatewayConfig>;
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
    #running: Promise<ReloadOutcome> | undefined;
    #again: { reason: string; forced: boolean } | undefined;
    #watcher: FSWatcher | undefined;
    #debounce: NodeJS.Timeout | undefined;

    constructor(private readonly options: ReloaderOptions) {
        this.#current = options.current;
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

    /** Watches the file if the running config asks for it. */
    start(): void {
        this.#syncWatch(this.#current.reload.watch);
    }

    #syncWatch(wanted: boolean): void {
        if (!wanted) {
            clearTimeout(this.#debounce);
            this.#watcher?.close();
            this.#watcher = undefined;
            return;
        }
        if (this.#watcher !== undefined) return;
        const file = path.resolve(this.options.file);
        const name = path.basename(file);
        try {
            // Kubernetes swaps a ConfigMap's files by renaming the hidden `..data` link; other names in the folder are not ours.
            this.#watcher = watch(path.dirname(file), { persistent: false }, (_event, changed) => {
                if (changed !== null && changed !== name && changed !== '..data') return;
                clearTimeout(this.#debounce);
                this.#debounce = setTimeout(() => void this.reload('config file changed', false), this.options.debounceMs ?? 200);
                this.#debounce.unref();
            });
            this.#watcher.on('error', error => {
                this.options.logger.warn({ err: describeError(error) }, 'watching the config file failed; SIGHUP still reloads');
            });
        } catch (error) {
            this.options.logger.warn({ err: describeError(error) }, 'cannot watch the config file; SIGHUP still reloads');
        }
    }

    close(): void {
        this.#syncWatch(false);
    }

    async #run(reason: string, forced: boolean): Promise<ReloadOutcome> {
        const log = this.options.logger;
        let next: GatewayConfig;
        try {
            next = await this.options.load();
        } catch (error) {
            if (!(error instanceof ConfigError)) {
                log.error({ reason, err: describeError(error) }, 'config reload failed; keeping the running config');
                return 'failed';
            }
            log.error({ reason, problems: error.message }, 'config reload rejected; keeping the running config');
            return 'rejected';
        }
        if (!forced && isDeepStrictEqual(next, this.#current)) return 'unchanged';
        try {
            const summary = await this.options.apply(next);
            this.#current = next;
            this.#syncWatch(next.reload.watch);
            log.info({ reason, ...summary }, 'config reloaded');
            return 'applied';
        } catch (error) {
            log.error({ reason, err: describeError(error) }, 'applying the new config failed');
            return 'failed';
        }
    }
}
