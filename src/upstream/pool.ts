/**
 * The set of upstream connections, and how a new config changes it: added
 * upstreams connect, removed ones close, changed ones are replaced, unchanged
 * ones are left alone. Replacement is make-before-break: new connections get
 * their first attempt before the caller swaps them in, and old ones close only
 * after, once the requests they were serving have finished (at most their
 * `timeoutMs`), so a reload neither hides prompts for a moment nor fails a
 * request that was under way.
 *
 * A connection belongs to no request, whoever asked for the change: it is
 * started outside every request, so nothing it starts (streams, timers,
 * reconnects) carries a request's id, nor writes lines that name one.
 */
import { isDeepStrictEqual } from 'node:util';
import pLimit from 'p-limit';
import type { UpstreamConfig } from '../config/schema.js';
import type { GatewayUpstream } from './upstream.js';

const RETIRE_POLL_MS = 50;

export interface PoolChange {
    added: string[];
    removed: string[];
    restarted: string[];
    unchanged: string[];
}

export class UpstreamPool {
    #connections: GatewayUpstream[] = [];
    /** Started by an apply() not finished yet, and replaced ones still finishing requests: close() stops them too. */
    readonly #starting = new Set<GatewayUpstream>();
    readonly #retiring = new Set<GatewayUpstream>();
    #closed = false;

    constructor(private readonly create: (config: UpstreamConfig) => GatewayUpstream) {}

    /** In config order. */
    get connections(): readonly GatewayUpstream[] {
        return this.#connections;
    }

    /**
     * Moves to `configs`: starts what is new (at most `concurrency` at a time) and waits for each one's first
     * attempt, calls `swap` with the new set, then closes what is gone.
     */
    async apply(configs: readonly UpstreamConfig[], concurrency: number, swap: (next: readonly GatewayUpstream[]) => void): Promise<PoolChange> {
        if (this.#closed) throw new Error('upstream pool is closed');
        const current = new Map(this.#connections.map(connection => [connection.id, connection]));
        const change: PoolChange = { added: [], removed: [], restarted: [], unchanged: [] };
        const next = configs.map(config => {
            const existing = current.get(config.id);
            if (existing !== undefined && isDeepStrictEqual(connectionSettings(existing.config), connectionSettings(config))) {
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
        for (const connection of retired) void this.#retire(connection);
        return change;
    }

    async #retire(connection: GatewayUpstream): Promise<void> {
        this.#retiring.add(connection);
        // Polled: requests finish on their own schedule and a reload is rare, so a short poll is simpler than events.
        const deadline = Date.now() + ('timeoutMs' in connection.config ? connection.config.timeoutMs : 0);
        while (connection.load.active + connection.load.queued > 0 && Date.now() < deadline && !this.#closed) {
            await new Promise(resolve => setTimeout(resolve, RETIRE_POLL_MS));
        }
        await connection.close();
        this.#retiring.delete(connection);
    }

    async close(): Promise<void> {
        this.#closed = true;
        const connections = [...this.#connections, ...this.#starting, ...this.#retiring];
        this.#connections = [];
        await Promise.allSettled(connections.map(connection => connection.close()));
    }
}

/**
 * What the connection itself depends on: policy fields (which prompts are exposed, argument checks) and overrides
 * (how prompts appear, applied by the catalog) apply live.
 */
function connectionSettings(config: UpstreamConfig): Omit<UpstreamConfig, 'prompts' | 'passUnknownArguments' | 'overrides'> {
    const { prompts: _prompts, passUnknownArguments: _passUnknown, overrides: _overrides, ...settings } = config;
    return settings;
}
