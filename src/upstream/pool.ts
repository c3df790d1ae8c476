/**
 * The set of upstream connections, and how a new config changes it: added
 * upstreams connect, removed ones close, changed ones are replaced, unchanged
 * ones are left alone. Replacement is make-before-break: new connections get
 * their first attempt before the caller swaps them in, and old ones close only
 * after, so a reload never leaves a gap in which prompts briefly disappear.
 */
import { isDeepStrictEqual } from 'node:util';
import pLimit from 'p-limit';
import type { UpstreamConfig } from '../config/schema.js';
import type { UpstreamConnection } from './connection.js';

export interface PoolChange {
    added: string[];
    removed: string[];
    restarted: string[];
    unchanged: string[];
}

export class UpstreamPool {
    #connections: UpstreamConnection[] = [];
    /** Started by an apply() not finished yet: close() must stop them too. */
    readonly #starting = new Set<UpstreamConnection>();
    #closed = false;

    constructor(private readonly create: (config: UpstreamConfig) => UpstreamConnection) {}

    /** In config order. */
    get connections(): readonly UpstreamConnection[] {
        return this.#connections;
    }

    /**
     * Moves to `configs`: starts what is new (at most `concurrency` at a time) and waits for each one's first
     * attempt, calls `swap` with the new set, then closes what is gone.
     */
    async apply(
        configs: readonly UpstreamConfig[],
        concurrency: number,
        swap: (next: readonly UpstreamConnection[]) => void
    ): Promise<PoolChange> {
        const current = new Map(this.#connections.map(connection => [connection.id, connection]));
        const change: PoolChange = { added: [], removed: [], restarted: [], unchanged: [] };
        const next = configs.map(config => {
            const existing = current.get(config.id);
            if (existing !== undefined && isDeepStrictEqual(existing.config, config)) {
                change.unchanged.push(config.id);
                return existing;
            }
            (existing === undefined ? change.added : change.restarted).push(config.id);
            return this.create(config);
        });
        const started = next.filter(connection => current.get(connection.id) !== connection);
        for (const connection of started) this.#starting.add(connection);
        const limit = pLimit(concurrency);
        try {
            await Promise.all(started.map(connection => limit(() => connection.start())));
        } finally {
            for (const connection of started) this.#starting.delete(connection);
        }
        if (this.#closed) {
            await Promise.allSettled(started.map(connection => connection.close()));
            throw new Error('upstream pool closed during a reload');
        }

        const kept = new Set(next);
        const retired = this.#connections.filter(connection => !kept.has(connection));
        change.removed = retired.filter(connection => !configs.some(config => config.id === connection.id)).map(connection => connection.id);
        this.#connections = next;
        swap(next);
        await Promise.allSettled(retired.map(connection => connection.close()));
        return change;
    }

    async close(): Promise<void> {
        this.#closed = true;
        const connections = [...this.#connections, ...this.#starting];
        this.#connections = [];
        await Promise.allSettled(connections.map(connection => connection.close()));
    }
}
