/**
 * The gateway's connections to the Redis that replicas share: one for
 * commands, one for subscriptions (a subscribed connection takes no other
 * commands). Commands fail fast while Redis is away (no offline queue, a short
 * timeout): every caller has a local answer to fall back on, and a request
 * must never wait for Redis to come back. ioredis reconnects by itself; the
 * link says whether Redis is there, for readiness, logs and metrics.
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../observability/logger.js';

/** A command taking longer than this is taken as Redis being away (loopback or LAN: well under a millisecond). */
const COMMAND_TIMEOUT_MS = 250;
const CONNECT_TIMEOUT_MS = 2000;
const MAX_RECONNECT_DELAY_MS = 2000;

export interface RedisLinkOptions {
    url: string;
    keyPrefix: string;
    logger: Logger;
    /**
     * How long a command may take before its caller falls back to its local answer (default 250 ms). Tests of what
     * Redis decides, rather than of the fallback, give it longer, so that a loaded machine does not change the answer.
     */
    commandTimeoutMs?: number;
}

export class RedisLink {
    readonly commands: Redis;
    readonly subscriber: Redis;
    readonly keyPrefix: string;
    #up = false;
    #closed = false;

    constructor(private readonly options: RedisLinkOptions) {
        this.keyPrefix = options.keyPrefix;
        const settings: RedisOptions = {
            enableOfflineQueue: false,
            maxRetriesPerRequest: 0,
            commandTimeout: options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS,
            connectTimeout: CONNECT_TIMEOUT_MS,
            retryStrategy: attempt => Math.min(MAX_RECONNECT_DELAY_MS, 50 * 2 ** Math.min(attempt, 6)),
            lazyConnect: true
        };
        this.commands = new Redis(options.url, { ...settings, connectionName: 'mcp-prompt-gateway' });
        // The subscriber's commands (SUBSCRIBE) wait for it to be ready: it resubscribes on every reconnect.
        this.subscriber = new Redis(options.url, { ...settings, enableOfflineQueue: true, commandTimeout: undefined, connectionName: 'mcp-prompt-gateway-sub' });
        this.commands.on('ready', () => this.#setUp(true));
        this.commands.on('close', () => this.#setUp(false));
        // Errors are reported through 'close' and the status: an 'error' without a listener would throw.
        for (const client of [this.commands, this.subscriber]) client.on('error', () => {});
    }

    get up(): boolean {
        return this.#up;
    }

    /** Connects both; resolves whether Redis answered (the gateway starts either way, with local limits meanwhile). */
    async connect(): Promise<boolean> {
        const connected = await Promise.all([this.commands.connect(), this.subscriber.connect()]).then(
            () => true,
            () => false
        );
        if (!connected) this.options.logger.warn('shared state: Redis is not reachable; serving with local limits until it is');
        return connected;
    }

    /** At once: what was not written by now is of no use to a process that is stopping. */
    close(): void {
        this.#closed = true;
        this.commands.disconnect();
        this.subscriber.disconnect();
    }

    #setUp(up: boolean): void {
        if (up === this.#up || this.#closed) return;
        this.#up = up;
        if (up) this.options.logger.info('shared state: Redis connected; limits, session quotas and ended sessions are shared');
        else this.options.logger.warn('shared state: Redis connection lost; serving with local limits until it is back');
    }
}
