/**
 * The gateway's connections to the Redis that replicas share: one for
 * commands, one for subscriptions (a subscribed connection takes no other
 * commands). Commands fail fast while Redis is away (no offline queue, a short
 * timeout): every caller has a local answer to fall back on, and a request
 * must never wait for Redis to come back. ioredis reconnects by itself.
 *
 * The link says whether Redis does the shared state's work, for the duties'
 * fallbacks, readiness, logs and metrics: not while the connection is lost,
 * nor while Redis, connected, refuses writes or does not answer in time. Every
 * duty hands its failed commands to `failed`, the one place that reads them
 * (redis-failure.ts); a refusal is then checked again with backoff, by a small
 * write, until one is taken.
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../diagnostics/logger.js';
import { backoffDelay, type BackoffPolicy } from '../lib/backoff.js';
import { classifyRedisFailure, type RedisFailure } from './redis-failure.js';

/** A command taking longer than this is taken as Redis being away (loopback or LAN: well under a millisecond); the config's default too. */
const COMMAND_TIMEOUT_MS = 250;
const CONNECT_TIMEOUT_MS = 2000;
const MAX_RECONNECT_DELAY_MS = 2000;
/** Spaces the checks of a Redis that refuses, and the retries of writes it rejected for themselves (shared-writes.ts). */
export const REDIS_RETRY_BACKOFF: BackoffPolicy = { initialMs: 100, maxMs: 5000 };
const UNREACHABLE = 'Redis unreachable';
/** Distinct codes of rejected commands warned about: a bound on what a misbehaving Redis can make the log say. */
const MAX_REJECTION_CODES_WARNED = 32;

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
    #connected = false;
    /** Why Redis, though connected, does not do the shared state's work; undefined while it does. */
    #trouble: string | undefined;
    /** What the log said last: undefined for "shared". Not connected yet counts as said (connect() says it). */
    #reported: string | undefined = UNREACHABLE;
    #probeTimer: NodeJS.Timeout | undefined;
    #probeFailures = 0;
    readonly #upListeners: (() => void)[] = [];
    readonly #rejectionsWarned = new Set<string>();
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
        this.commands.on('ready', () => this.#connectedNow(true));
        this.commands.on('close', () => this.#connectedNow(false));
        // Errors are reported through 'close' and the status: an 'error' without a listener would throw.
        for (const client of [this.commands, this.subscriber]) client.on('error', () => {});
    }

    /** Whether Redis does the shared state's work now: connected, taking writes, answering in time. */
    get up(): boolean {
        return this.downReason === undefined;
    }

    /** Why the shared state is not shared now ("Redis unreachable", "Redis refuses writes: OOM", ...); undefined while it is. */
    get downReason(): string | undefined {
        return this.#connected ? this.#trouble : UNREACHABLE;
    }

    /** Calls `listener` whenever the link comes up (connected, or taking writes again). */
    onUp(listener: () => void): void {
        this.#upListeners.push(listener);
    }

    /**
     * A command failed: what it says about Redis goes into the link's health. Refusals and timeouts take the shared
     * state down (and are checked again with backoff); a lost connection is the connection's own events' to tell.
     */
    failed(error: unknown): RedisFailure {
        const failure = classifyRedisFailure(error);
        if (failure.kind === 'unhealthy') {
            this.#trouble = failure.reason;
            this.#probeLater();
            this.#report();
        } else if (failure.kind === 'rejected') {
            this.#warnRejected(failure.code, error);
        }
        return failure;
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
        clearTimeout(this.#probeTimer);
        this.commands.disconnect();
        this.subscriber.disconnect();
    }

    #connectedNow(connected: boolean): void {
        if (connected === this.#connected || this.#closed) return;
        this.#connected = connected;
        // Reconnected to a Redis that refused: still down until it takes a write.
        if (connected && this.#trouble !== undefined) this.#probeNow();
        this.#report();
    }

    #probeLater(): void {
        if (this.#probeTimer !== undefined || this.#closed) return;
        const delay = backoffDelay(this.#probeFailures++, REDIS_RETRY_BACKOFF);
        this.#probeTimer = setTimeout(() => void this.#probe(), delay).unref();
    }

    #probeNow(): void {
        clearTimeout(this.#probeTimer);
        this.#probeTimer = undefined;
        this.#probeFailures = 0;
        void this.#probe();
    }

    /** Whether Redis takes a write now: a small key of the gateway's own, soon gone. */
    async #probe(): Promise<void> {
        this.#probeTimer = undefined;
        if (this.#closed || !this.#connected) return;
        try {
            await this.commands.set(`${this.keyPrefix}probe`, '1', 'PX', 60_000);
        } catch (error) {
            // Unreachable: the reconnection probes again. Anything else: asked again later.
            if (this.failed(error).kind === 'rejected') this.#probeLater();
            return;
        }
        this.#trouble = undefined;
        this.#probeFailures = 0;
        this.#report();
    }

    /**
     * Logs each change of what the shared state is, however many commands fail meanwhile: a warning when it goes
     * down, and no other until it has come back (a change of cause while down is information).
     */
    #report(): void {
        const reason = this.downReason;
        if (reason === this.#reported || this.#closed) return;
        const was = this.#reported;
        this.#reported = reason;
        const { logger } = this.options;
        if (reason === undefined) {
            if (was === UNREACHABLE) logger.info('shared state: Redis connected; limits, session quotas and ended sessions are shared');
            else logger.info({ was }, 'shared state: Redis takes writes again; limits, session quotas and ended sessions are shared');
            for (const listener of this.#upListeners) listener();
        } else if (was !== undefined) {
            logger.info({ was }, `shared state: still serving with local limits: ${reason}`);
        } else if (reason === UNREACHABLE) {
            logger.warn('shared state: Redis connection lost; serving with local limits until it is back');
        } else {
            logger.warn(`shared state: ${reason}; serving with local limits until it takes writes again`);
        }
    }

    #warnRejected(code: string, error: unknown): void {
        if (this.#rejectionsWarned.has(code) || this.#rejectionsWarned.size >= MAX_REJECTION_CODES_WARNED) return;
        this.#rejectionsWarned.add(code);
        const message = error instanceof Error ? error.message : String(error);
        this.options.logger.warn({ err: message }, `shared state: Redis rejected a command (${code}); a write it rejected is tried again with backoff`);
    }
}
