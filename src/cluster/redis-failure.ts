/**
 * What a failed Redis command says about Redis, whatever the command was: the
 * one reading of a failure that every shared duty feeds into the link's health
 * (redis-link.ts). Pure: tested in test/unit/redis-failure.test.ts.
 */

export type RedisFailure =
    /** No connection (lost, refused, not yet made): the connection's own events tell when it is back. */
    | { kind: 'unreachable' }
    /** Redis is there but cannot do the shared state's work (full, read-only, loading, not answering): an outage all the same. */
    | { kind: 'unhealthy'; reason: string }
    /** This command was refused for itself (a wrong type under our key, a script error): says nothing of Redis. */
    | { kind: 'rejected'; code: string };

/** Replies that say Redis takes no writes now: maxmemory with noeviction, a replica, a failed save, too few replicas. */
const REFUSING_WRITES = new Set(['OOM', 'READONLY', 'MISCONF', 'NOREPLICAS']);
/** Replies that say Redis serves no commands now: starting up, a script running, its master gone, access denied. */
const REFUSING_COMMANDS = new Set(['LOADING', 'BUSY', 'MASTERDOWN', 'CLUSTERDOWN', 'TRYAGAIN', 'NOAUTH', 'NOPERM', 'WRONGPASS']);

/** ioredis's error for a command that got no answer within `commandTimeout`. */
const TIMEOUT_MESSAGE = 'Command timed out';

export function classifyRedisFailure(error: unknown): RedisFailure {
    if (!(error instanceof Error)) return { kind: 'unreachable' };
    if (error.message === TIMEOUT_MESSAGE) return { kind: 'unhealthy', reason: 'Redis does not answer in time' };
    if (error.name !== 'ReplyError') return { kind: 'unreachable' };
    const code = replyCode(error);
    if (REFUSING_WRITES.has(code)) return { kind: 'unhealthy', reason: `Redis refuses writes: ${code}` };
    if (REFUSING_COMMANDS.has(code)) return { kind: 'unhealthy', reason: `Redis refuses commands: ${code}` };
    return { kind: 'rejected', code };
}

/**
 * The error code a reply starts with ("OOM command not allowed ..."); a transaction discarded (EXECABORT) for the
 * errors of its commands, the first of theirs. A reply without one reads as ERR.
 */
function replyCode(error: Error): string {
    const { previousErrors } = error as Error & { previousErrors?: unknown[] };
    const first = previousErrors?.[0];
    const source = error.message.startsWith('EXECABORT') && first instanceof Error ? first : error;
    return /^[A-Z][A-Z_]{1,31}(?= |$)/.exec(source.message)?.[0] ?? 'ERR';
}
