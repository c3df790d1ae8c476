/**
 * What replicas share, behind one face: with `cluster.redis`, per-client rate
 * limits and session quotas counted across replicas, ended sessions, and when
 * sessions were last used; without it, the same duties done by this process
 * alone. Redis away, refusing writes or not answering: each duty falls back
 * to its local answer and the status says so (readiness details, logs,
 * metrics); nothing waits for Redis, and what must be shared is written when
 * Redis takes it (shared-writes.ts).
 */
import type { GatewayConfig } from '../config/schema.js';
import { LocalRevocations, type SessionRevocations } from '../downstream/revocations.js';
import type { Logger } from '../diagnostics/logger.js';
import { ClientRateLimiter, type RateLimiter } from '../policy/rate-limiter.js';
import { RedisLink } from './redis-link.js';
import { SharedRateLimiter } from './shared-rate-limiter.js';
import { SharedRevocations } from './shared-revocations.js';
import { SharedSessions } from './shared-sessions.js';
import { SharedWrites } from './shared-writes.js';

/** `local`: no Redis configured; `up`/`down`: whether the configured Redis does the shared state's work now. */
export type SharedStateStatus = 'local' | 'up' | 'down';

export interface SharedState {
    readonly revocations: SessionRevocations;
    readonly rateLimiter: RateLimiter;
    /** undefined without Redis: then quotas and idleness are this process's own. */
    readonly sessions: SharedSessions | undefined;
    status(): SharedStateStatus;
    /** Why it is down ("Redis unreachable", "Redis refuses writes: OOM", ...); undefined otherwise. */
    downReason(): string | undefined;
    /** Writes kept for Redis until it takes them; 0 without Redis. */
    pendingWrites(): number;
    close(): Promise<void>;
}

export async function startSharedState(config: Pick<GatewayConfig, 'cluster' | 'sessions'>, logger: Logger): Promise<SharedState> {
    const redis = config.cluster?.redis;
    if (redis === undefined) {
        return {
            revocations: new LocalRevocations(),
            rateLimiter: new ClientRateLimiter(),
            sessions: undefined,
            status: () => 'local',
            downReason: () => undefined,
            pendingWrites: () => 0,
            close: () => Promise.resolve()
        };
    }
    const link = new RedisLink({ url: redis.url, keyPrefix: redis.keyPrefix, logger });
    const writes = new SharedWrites(link, logger);
    const revocations = new SharedRevocations(link, writes, logger);
    const sessions = new SharedSessions(link, writes, config.sessions.idleTimeoutMs);
    const rateLimiter = new SharedRateLimiter(link);
    await link.connect();
    return {
        revocations,
        rateLimiter,
        sessions,
        status: () => (link.up ? 'up' : 'down'),
        downReason: () => link.downReason,
        pendingWrites: () => writes.pending,
        async close() {
            revocations.close();
            sessions.close();
            // One last attempt for what waits (if Redis is up): what it does not take by then is lost with the process.
            await sessions.flush();
            if (link.up) await writes.flush();
            writes.close();
            link.close();
        }
    };
}
