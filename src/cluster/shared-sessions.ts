/**
 * What replicas share of 2025-era sessions besides their ends: how many each
 * quota key holds (a sorted set per key, scored by the seal's expiry, so an
 * expired session stops counting by itself and a replica that dies leaks
 * nothing), and when each was last used anywhere (one sorted set, written in
 * batches), so that a session quiet on one replica is ended only when it is
 * quiet on all of them. Both are written through shared-writes: a write Redis
 * does not take is tried again until it does.
 */
import type { SealedSession } from '../downstream/session-seal.js';
import type { SharedSessionState } from '../downstream/sessions.js';
import type { RedisLink } from './redis-link.js';
import type { SharedWrites } from './shared-writes.js';

/** KEYS[1]: the quota key's set. ARGV: now, nonce, expiresAt, max. 1: counted; 0: the key holds max already. */
const ADMIT_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[3], 'GT')
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return 1
`;

/** How often the last uses seen here are written; well within any idle timeout (at least 1 s). */
const MAX_FLUSH_EVERY_MS = 5000;
/** Last uses older than any session lifetime are of no interest: the set is swept of them as it is written. */
const SEEN_KEPT_MS = 31 * 86_400_000;

export class SharedSessions implements SharedSessionState {
    /** Nonce -> last use here, since the last write. */
    readonly #seen = new Map<string, number>();
    readonly #flusher: NodeJS.Timeout;
    readonly #seenKey: string;
    /** Twice the write interval: a replica's write may come late on a busy machine. */
    readonly lagMs: number;

    constructor(
        private readonly link: RedisLink,
        private readonly writes: SharedWrites,
        idleTimeoutMs: number,
        private readonly now: () => number = Date.now
    ) {
        this.#seenKey = `${link.keyPrefix}seen`;
        link.commands.defineCommand('gatewayAdmitSession', { numberOfKeys: 1, lua: ADMIT_SCRIPT });
        const flushEveryMs = Math.max(1000, Math.min(MAX_FLUSH_EVERY_MS, idleTimeoutMs / 8));
        this.lagMs = 2 * flushEveryMs;
        this.#flusher = setInterval(() => void this.flush(), flushEveryMs).unref();
    }

    /** Counts a new session against its quota key: whether there was room; undefined when Redis cannot say. */
    async admit(session: SealedSession, max: number): Promise<boolean | undefined> {
        if (!this.link.up) return undefined;
        try {
            // defineCommand adds the method at run time; ioredis types such commands only through module augmentation.
            const command = this.link.commands as unknown as { gatewayAdmitSession(key: string, ...args: (number | string)[]): Promise<number> };
            const admitted = await command.gatewayAdmitSession(this.#quotaKey(session), this.now(), session.nonce, session.expiresAt, max);
            if (admitted === 1) this.seen(session.nonce, session.createdAt);
            return admitted === 1;
        } catch (error) {
            this.link.failed(error);
            return undefined;
        }
    }

    /** The session ended: it counts no more, and its last use is of no interest. */
    release(session: SealedSession): void {
        const { nonce } = session;
        this.#seen.delete(nonce);
        this.writes.forget(`seen:${nonce}`);
        const quotaKey = this.#quotaKey(session);
        this.writes.put(`released:${nonce}`, { usefulUntil: session.expiresAt, addTo: transaction => transaction.zrem(quotaKey, nonce).zrem(this.#seenKey, nonce) });
    }

    seen(nonce: string, at: number): void {
        this.#seen.set(nonce, at);
    }

    /** When each session was last used on any replica (as written so far); undefined when Redis cannot say. */
    async lastSeen(nonces: readonly string[]): Promise<(number | undefined)[] | undefined> {
        if (!this.link.up || nonces.length === 0) return nonces.length === 0 ? [] : undefined;
        try {
            await this.flush();
            const scores = await this.link.commands.zmscore(this.#seenKey, ...nonces);
            return scores.map(score => (score === null ? undefined : Number(score)));
        } catch (error) {
            this.link.failed(error);
            return undefined;
        }
    }

    /** Hands the last uses seen here to be written (a later one wins: GT); while Redis is up, waits for the attempt. */
    async flush(): Promise<void> {
        if (this.#seen.size === 0) return;
        const usefulFrom = this.now() - SEEN_KEPT_MS;
        for (const [nonce, at] of this.#seen) {
            this.writes.put(`seen:${nonce}`, { usefulUntil: at + SEEN_KEPT_MS, addTo: transaction => transaction.zadd(this.#seenKey, 'GT', at, nonce) });
        }
        this.#seen.clear();
        this.writes.put('seen-sweep', { usefulUntil: Infinity, addTo: transaction => transaction.zremrangebyscore(this.#seenKey, '-inf', usefulFrom) });
        if (this.link.up) await this.writes.flush();
    }

    close(): void {
        clearInterval(this.#flusher);
    }

    #quotaKey(session: SealedSession): string {
        return `${this.link.keyPrefix}sessions:${session.quotaKey}`;
    }
}
