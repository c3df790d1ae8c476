/**
 * The shared state in Redis (see shared-state.ts): one link, the writes it keeps until Redis takes them, and each
 * shared duty over them. A module of its own, imported only when `cluster.redis` is set, so that ioredis is loaded
 * only then.
 */
import type { GatewayConfig } from '../config/schema.js';
import type { Logger } from '../diagnostics/logger.js';
import { RedisLink } from './redis-link.js';
import { SharedRateLimiter } from './shared-rate-limiter.js';
import { SharedRevocations } from './shared-revocations.js';
import { SharedSessions } from './shared-sessions.js';
import type { SharedState } from './shared-state.js';
import { SharedWrites } from './shared-writes.js';

type RedisConfig = NonNullable<NonNullable<GatewayConfig['cluster']>['redis']>;

export async function startRedisState(redis: RedisConfig, sessionsConfig: GatewayConfig['sessions'], logger: Logger): Promise<SharedState> {
    const link = new RedisLink({ url: redis.url, keyPrefix: redis.keyPrefix, commandTimeoutMs: redis.commandTimeoutMs, logger });
    const writes = new SharedWrites(link, logger);
    const revocations = new SharedRevocations(link, writes, logger);
    const sessions = new SharedSessions(link, writes, sessionsConfig.idleTimeoutMs);
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
