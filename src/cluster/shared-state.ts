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
import type { SharedSessions } from './shared-sessions.js';

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
    // Loaded only when Redis is configured: ioredis cost every start of a gateway without it ~0.15 s of CPU.
    const { startRedisState } = await import('./redis-state.js');
    return startRedisState(redis, config.sessions, logger);
}
