/**
 * Ended sessions shared by every replica: a Redis sorted set (nonce scored by
 * the seal's expiry) is the record, and a channel tells the other replicas at
 * once. Each replica answers `has` from its own copy (a request never waits on
 * Redis): the copy is loaded whole whenever the subscription (re)starts, and
 * kept by the channel meanwhile. An end Redis did not take (away, full,
 * read-only, slow) is in the copy here at once, and written by shared-writes
 * with backoff until Redis has it, so the others learn of it then.
 */
import { LocalRevocations, type SessionRevocations } from '../downstream/revocations.js';
import type { Logger } from '../diagnostics/logger.js';
import type { RedisLink } from './redis-link.js';
import type { SharedWrites } from './shared-writes.js';

const SWEEP_EVERY_MS = 60_000;

export class SharedRevocations implements SessionRevocations {
    readonly #copy: LocalRevocations;
    /** Names both the sorted set and the channel (Redis keeps keys and channels apart). */
    readonly #name: string;
    readonly #sweeper: NodeJS.Timeout;

    constructor(
        private readonly link: RedisLink,
        private readonly writes: SharedWrites,
        private readonly logger: Logger,
        private readonly now: () => number = Date.now
    ) {
        this.#copy = new LocalRevocations(now);
        this.#name = `${link.keyPrefix}revoked`;
        link.subscriber.on('message', (channel: string, message: string) => {
            if (channel === this.#name) this.#heard(message);
        });
        // Whenever the subscriber (re)connects or the shared state comes back: the copy may have missed messages
        // meanwhile (ioredis resubscribes by itself). A subscriber ready before the commands connection is not yet
        // worth a read (the commands connection queues nothing): its coming up reads then.
        link.subscriber.on('ready', () => {
            if (link.up) void this.#resync();
        });
        link.onUp(() => void this.#resync());
        this.#sweeper = setInterval(() => void this.#sweep(), SWEEP_EVERY_MS).unref();
    }

    has(nonce: string): boolean {
        return this.#copy.has(nonce);
    }

    /**
     * Ended here at once; in Redis (and so on the other replicas) once it takes the write. While Redis is up the
     * answer waits for that (a round trip, bounded by the command timeout), so that a DELETE answered is ended
     * everywhere; while it is not, nothing waits.
     */
    async add(nonce: string, expiresAt: number): Promise<boolean> {
        const first = this.#copy.remember(nonce, expiresAt);
        if (!first) return false;
        this.writes.put(`revoked:${nonce}`, {
            usefulUntil: expiresAt,
            addTo: transaction => transaction.zadd(this.#name, 'NX', expiresAt, nonce).publish(this.#name, `${nonce} ${expiresAt}`)
        });
        if (this.link.up) await this.writes.flush();
        return true;
    }

    close(): void {
        clearInterval(this.#sweeper);
    }

    #heard(message: string): void {
        const [nonce, expiry] = message.split(' ');
        const expiresAt = Number(expiry);
        if (nonce !== undefined && nonce.length > 0 && Number.isSafeInteger(expiresAt)) this.#copy.remember(nonce, expiresAt);
    }

    async #resync(): Promise<void> {
        try {
            await this.link.subscriber.subscribe(this.#name);
            const entries = await this.link.commands.zrangebyscore(this.#name, this.now(), '+inf', 'WITHSCORES');
            for (let index = 0; index + 1 < entries.length; index += 2) this.#copy.remember(entries[index]!, Number(entries[index + 1]));
        } catch (error) {
            this.link.failed(error);
            this.logger.warn(
                { err: error instanceof Error ? error.message : String(error) },
                'shared state: reading ended sessions from Redis failed; read again when the shared state is back'
            );
        }
    }

    async #sweep(): Promise<void> {
        await this.link.commands.zremrangebyscore(this.#name, '-inf', this.now()).catch((error: unknown) => this.link.failed(error));
    }
}
