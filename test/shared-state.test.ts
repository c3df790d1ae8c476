/**
 * Replicas sharing state through a real redis-server (two gateways in this process, each with its own listener):
 * a session opened on one is served by the other, DELETE ends it on both, rate limits and session quotas hold in
 * all, an idle session ends only when quiet on both, and Redis going away leaves both serving with local limits
 * (and saying so) until it is back. The nginx-fronted, multi-process run is test/replicas.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { RedisLink } from '../src/cluster/redis-link.js';
import { SharedRateLimiter } from '../src/cluster/shared-rate-limiter.js';
import { SharedRevocations } from '../src/cluster/shared-revocations.js';
import { SharedWrites } from '../src/cluster/shared-writes.js';
import type { RunningGateway } from '../src/gateway.js';
import type { Logger } from '../src/diagnostics/logger.js';
import type { ClientProfile } from '../src/policy/clients.js';
import { CLUSTER_SKIP_MESSAGE, redisAvailable, startRedis, type RunningRedis } from './cluster-harness.js';
import { capturingLogger, closeAfter, startTestGateway, stdioFixture, waitFor } from './helpers.js';
import { call, deleteSession, openRawSession, post, postModern, type RawSession } from './raw-http.js';

const CURSOR_SECRET = 'a cursor secret of 32 characters';
const SESSION_SECRET = 'a session secret of 32 character';
const BURST = 6;

function replicaConfig(redis: RunningRedis, extra: Record<string, unknown> = {}) {
    return {
        cursorSecret: CURSOR_SECRET,
        sessions: { secrets: [SESSION_SECRET] },
        cluster: { redis: { url: redis.url } },
        upstreams: [stdioFixture('local')],
        ...extra
    };
}

async function replicas(t: TestContext, redis: RunningRedis, extra: Record<string, unknown> = {}, loggers: readonly Logger[] = []): Promise<[RunningGateway, RunningGateway]> {
    const started: RunningGateway[] = [];
    for (let index = 0; index < 2; index++) {
        const gateway = await startTestGateway(replicaConfig(redis, extra), loggers[index]);
        closeAfter(t, () => gateway.close());
        started.push(gateway);
    }
    return started as [RunningGateway, RunningGateway];
}

async function ping(url: string, session: RawSession): Promise<number> {
    return (await call(url, session, 'ping', {}, 'p')).status;
}

/** HTTP sessions the replica holds now, from its metrics (reading them uses no session). */
async function heldSessions(gateway: RunningGateway): Promise<number> {
    const metrics = await (await fetch(new URL('/metrics', gateway.url))).text();
    return Number(/^mcp_gateway_sessions\{transport="http"\} (\d+)$/m.exec(metrics)?.[1] ?? Number.NaN);
}

async function readyDetails(gateway: RunningGateway): Promise<Record<string, unknown>> {
    const response = await fetch(new URL('/readyz', gateway.url));
    return (await response.json()) as Record<string, unknown>;
}

/** The test's own connection to its redis-server, to change its settings and read its counters. */
async function adminOf(t: TestContext, redis: RunningRedis): Promise<Redis> {
    const admin = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    closeAfter(t, () => admin.disconnect());
    await admin.connect();
    return admin;
}

/**
 * Makes Redis refuse writes as a full one does (maxmemory reached, noeviction: every write answers OOM) until the
 * returned function is called; reads, and the connections, go on.
 */
async function refuseWrites(t: TestContext, admin: Redis): Promise<() => Promise<void>> {
    const accept = async () => {
        await admin.config('SET', 'maxmemory', '0');
    };
    closeAfter(t, () => (admin.status === 'ready' ? accept() : undefined));
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    return accept;
}

/** Redis's own count of a command's calls it refused (INFO commandstats: rejected_calls), from every client. */
async function rejectedCalls(admin: Redis, command: string): Promise<number> {
    const stats = await admin.info('commandstats');
    return Number(new RegExp(`^cmdstat_${command}:.*rejected_calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0);
}

/** Sessions counted against quotas in Redis, every client's. */
async function sessionsCounted(admin: Redis): Promise<number> {
    const keys = await admin.keys('mcp-prompt-gateway:sessions:*');
    const counts = await Promise.all(keys.map(key => admin.zcard(key)));
    return counts.reduce((sum, count) => sum + count, 0);
}

async function connectionsReceived(admin: Redis): Promise<number> {
    return Number(/^total_connections_received:(\d+)/m.exec(await admin.info('stats'))?.[1]);
}

async function metricsOf(gateway: RunningGateway): Promise<string> {
    return (await fetch(new URL('/metrics', gateway.url))).text();
}

describe('replicas sharing state in Redis', { skip: redisAvailable() ? false : CLUSTER_SKIP_MESSAGE }, () => {
    test('a session opened on one replica is served by the other; DELETE on either ends it on both', { timeout: 120_000 }, async t => {
        const redis = await startRedis(t);
        const [a, b] = await replicas(t, redis);
        const session = await openRawSession(a.url!);
        const listed = await call(b.url!, session, 'prompts/list', {}, 'list');
        assert.equal(listed.status, 200);
        assert.ok((listed.response?.result?.prompts as unknown[]).length > 0, 'served by the replica that did not open it');
        assert.equal(await ping(a.url!, session), 200);

        const deleted = await deleteSession(b.url!, session.headers);
        assert.equal(deleted.status, 200);
        assert.equal(await ping(b.url!, session), 404);
        // The other replica hears of it through Redis (a channel); it held the session until then.
        await waitFor(async () => (await ping(a.url!, session)) === 404, 20_000, 'the other replica to refuse the ended session');
        const restarted = await startTestGateway(replicaConfig(redis));
        closeAfter(t, () => restarted.close());
        assert.equal(await ping(restarted.url!, session), 404, 'a replica started later learns it from Redis');
    });

    test('a subscriber connection ready before the commands one reads the ended sessions once both are up, with no warning', { timeout: 60_000 }, async t => {
        const redis = await startRedis(t);
        const admin = await adminOf(t, redis);
        await admin.zadd('race-test:revoked', Date.now() + 600_000, 'ended-before');
        const log = capturingLogger();
        // A command slowed past the default 250 ms by a loaded machine would warn too: the order is under test here.
        const link = new RedisLink({ url: redis.url, keyPrefix: 'race-test:', logger: log.logger, commandTimeoutMs: 10_000 });
        closeAfter(t, () => link.close());
        const writes = new SharedWrites(link, log.logger);
        closeAfter(t, () => writes.close());
        const revocations = new SharedRevocations(link, writes, log.logger);
        closeAfter(t, () => revocations.close());
        // The order a loaded machine can give: the subscriber's 'ready' first, the commands connection not yet up.
        await link.subscriber.connect();
        await link.commands.connect();
        await waitFor(() => revocations.has('ended-before'), 20_000, 'the ended sessions to be read');
        const warnings = log.lines().filter(line => line['level'] === 'warn');
        assert.deepEqual(
            warnings.map(line => line['msg']),
            []
        );
    });

    test('a rate limit and a session quota hold across replicas, not per replica', { timeout: 120_000 }, async t => {
        const redis = await startRedis(t);
        const [a, b] = await replicas(t, redis, { limits: { maxSessionsPerClient: 3, rateLimit: { requestsPerSecond: 0.001, burst: BURST } } });
        const statuses: number[] = [];
        for (let index = 0; index < BURST + 2; index++) {
            const response = await post(index % 2 === 0 ? a.url! : b.url!, { jsonrpc: '2.0', id: index, method: 'ping' }, { 'mcp-protocol-version': '2026-07-28' });
            await response.body?.cancel();
            statuses.push(response.status);
        }
        assert.equal(statuses.filter(status => status === 429).length, 2, `${BURST} in all, across both: ${statuses.join(' ')}`);
        assert.ok(statuses.slice(BURST).every(status => status === 429));
    });

    test('leases: many requests at once under the limit are all served, and over it exactly the limit passes', { timeout: 60_000 }, async t => {
        const redis = await startRedis(t);
        // The lease arithmetic is under test, not the fallback: a command slowed past 250 ms by a loaded machine would
        // be answered locally, by each replica for itself (15 of 30 passed where 5 should).
        const link = new RedisLink({ url: redis.url, keyPrefix: 'lease-test:', logger: pino({ level: 'silent' }), commandTimeoutMs: 10_000 });
        closeAfter(t, () => link.close());
        assert.equal(await link.connect(), true);
        // Three replicas' limiters; 10,000 requests/s with a burst of 20,000: leases of 500 tokens.
        const limiters = [0, 1, 2].map(() => new SharedRateLimiter(link));
        const client = { id: 'c', rateLimit: { requestsPerSecond: 10_000, burst: 20_000 } } as ClientProfile;
        // 3 x 64 requests at once, over and over: each wave finds the leases used up together (one fetch each, not 64).
        let refused = 0;
        for (let wave = 0; wave < 40; wave++) {
            const decisions = await Promise.all(Array.from({ length: 192 }, (_, index) => Promise.resolve(limiters[index % 3]!.take(client, 'under', 1))));
            refused += decisions.filter(decision => !decision.allowed).length;
        }
        assert.equal(refused, 0, '7,680 requests, far under the limit');
        // Far over it: a bucket of 5 with almost no refill lets 5 through in all, across the three.
        const tight = { id: 't', rateLimit: { requestsPerSecond: 0.001, burst: 5 } } as ClientProfile;
        const decisions = await Promise.all(Array.from({ length: 30 }, (_, index) => Promise.resolve(limiters[index % 3]!.take(tight, 'over', 1))));
        assert.equal(decisions.filter(decision => decision.allowed).length, 5);
    });

    test('sessions per client are counted across replicas, and an ended one frees its place everywhere', { timeout: 120_000 }, async t => {
        const redis = await startRedis(t);
        const [a, b] = await replicas(t, redis, { limits: { maxSessionsPerClient: 2 } });
        const first = await openRawSession(a.url!);
        await openRawSession(b.url!);
        const third = await post(a.url!, {
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } }
        });
        await third.body?.cancel();
        assert.equal(third.status, 429, 'the third session of the client, though each replica holds one');
        assert.equal((await deleteSession(b.url!, first.headers)).status, 200);
        await openRawSession(a.url!);
    });

    test('a session idle on one replica but used on the other lives on; quiet on both, it ends on both', { timeout: 120_000 }, async t => {
        const redis = await startRedis(t);
        const [a, b] = await replicas(t, redis, { sessions: { secrets: [SESSION_SECRET], idleTimeoutMs: 1000 } });
        const session = await openRawSession(a.url!);
        // Used on b for longer than the idle timeout, while a holds it idle.
        const until = Date.now() + 3500;
        while (Date.now() < until) {
            assert.equal(await ping(b.url!, session), 200);
            await new Promise(resolve => setTimeout(resolve, 200));
        }
        assert.equal(await ping(a.url!, session), 200, 'a let it go but did not end it: it was in use');
        // Watched without using the session (a request would keep it alive): neither replica holds it any more...
        await waitFor(async () => (await heldSessions(a)) === 0 && (await heldSessions(b)) === 0, 30_000, 'both replicas to let the quiet session go');
        // ... and it ended, rather than being let go: no replica takes it back.
        assert.equal(await ping(b.url!, session), 404);
        assert.equal(await ping(a.url!, session), 404);
    });

    test('Redis away: both replicas keep serving with local limits and say so; back, they share again', { timeout: 120_000 }, async t => {
        const redis = await startRedis(t);
        const [a, b] = await replicas(t, redis);
        const session = await openRawSession(a.url!);
        assert.deepEqual((await readyDetails(a))['sharedState'], 'redis');
        await redis.stop('SIGKILL');
        await waitFor(async () => (await readyDetails(a))['sharedState'] === 'local (Redis unreachable)', 20_000, 'readiness to tell');
        const ready = await fetch(new URL('/readyz', a.url));
        await ready.body?.cancel();
        assert.equal(ready.status, 200, 'still ready: it serves on');
        assert.equal(await ping(b.url!, session), 200, 'sessions still open anywhere');
        const fresh = await openRawSession(b.url!);
        assert.equal((await deleteSession(b.url!, fresh.headers)).status, 200, 'ended while Redis is away');
        const metrics = await (await fetch(new URL('/metrics', a.url))).text();
        assert.match(metrics, /^mcp_gateway_shared_state_up 0$/m);

        await redis.start();
        await waitFor(async () => (await readyDetails(a))['sharedState'] === 'redis', 30_000, 'the replicas to reconnect');
        await waitFor(async () => (await readyDetails(b))['sharedState'] === 'redis', 30_000, 'the replicas to reconnect');
        // Ended on b while Redis was away: written when it came back, so a hears of it too.
        await waitFor(async () => (await ping(a.url!, fresh)) === 404, 20_000, 'the other replica to learn of the session ended meanwhile');
    });

    test('a DELETE while Redis refuses writes is retried until stored: then the other replica refuses the session too', { timeout: 120_000 }, async t => {
        const redis = await startRedis(t);
        const admin = await adminOf(t, redis);
        const [a, b] = await replicas(t, redis);
        const session = await openRawSession(a.url!);
        assert.equal(await ping(b.url!, session), 200);
        const accept = await refuseWrites(t, admin);
        const connections = await connectionsReceived(admin);

        assert.equal((await deleteSession(a.url!, session.headers)).status, 200, 'the DELETE is answered: nothing waits for Redis');
        assert.equal(await ping(a.url!, session), 404);
        // While refused, Redis is checked again and again (a SET, nothing else sets), and the revocation (a ZADD and a
        // PUBLISH, nothing else publishes) waits for it to take writes: tried at most once, not on a timer of its own...
        const checks = await rejectedCalls(admin, 'set');
        await waitFor(async () => (await rejectedCalls(admin, 'set')) >= checks + 3, 20_000, 'Redis to be checked again and again');
        assert.ok((await rejectedCalls(admin, 'publish')) <= 1, 'the write is not retried while the link finds Redis refusing');
        assert.equal(await admin.zcard('mcp-prompt-gateway:revoked'), 0, 'not stored while Redis refuses writes');
        await waitFor(async () => /^mcp_gateway_shared_writes_pending [1-9]/m.test(await metricsOf(a)), 20_000, 'the write to be reported pending');
        assert.equal(await ping(b.url!, session), 200, 'the other replica has not heard of it');

        // ... and stored once Redis takes writes again, on the same connections.
        await accept();
        await waitFor(async () => (await ping(b.url!, session)) === 404, 20_000, 'the other replica to refuse the ended session');
        assert.equal(await admin.zcard('mcp-prompt-gateway:revoked'), 1, 'stored in Redis, for replicas started later');
        await waitFor(async () => /^mcp_gateway_shared_writes_pending 0$/m.test(await metricsOf(a)), 20_000, 'nothing left pending');
        assert.equal(await connectionsReceived(admin), connections, 'no replica reconnected');
    });

    test("the retries and checks a request's refused write starts are no request's: the log line of Redis taking writes again names none", { timeout: 120_000 }, async t => {
        const redis = await startRedis(t);
        const admin = await adminOf(t, redis);
        const log = capturingLogger();
        const [a] = await replicas(t, redis, {}, [log.logger]);
        const session = await openRawSession(a.url!);
        const accept = await refuseWrites(t, admin);
        // The DELETE's write is refused while serving it: what follows (backoff, checks, the recovery) is shared work.
        assert.equal((await deleteSession(a.url!, { ...session.headers, 'x-request-id': 'delete-1' })).status, 200);
        await waitFor(async () => (await rejectedCalls(admin, 'set')) >= 2, 20_000, 'Redis to be checked again');
        await accept();
        const back = () => log.lines().filter(line => String(line['msg']).includes('Redis takes writes again'));
        await waitFor(() => back().length === 1, 20_000, 'the shared state to come back');
        await waitFor(async () => (await admin.zcard('mcp-prompt-gateway:revoked')) === 1, 20_000, 'the retried write to be stored');
        assert.equal(back()[0]!['requestId'], undefined, "the recovery is no request's");
    });

    test("a session ended while Redis refuses writes frees its place in the client's quota once Redis takes writes again", { timeout: 120_000 }, async t => {
        const redis = await startRedis(t);
        const admin = await adminOf(t, redis);
        const [a, b] = await replicas(t, redis, { limits: { maxSessionsPerClient: 1 } });
        const session = await openRawSession(a.url!);
        const accept = await refuseWrites(t, admin);
        assert.equal((await deleteSession(a.url!, session.headers)).status, 200);
        await waitFor(async () => (await rejectedCalls(admin, 'set')) >= 2, 20_000, 'Redis to be checked again');
        assert.equal(await sessionsCounted(admin), 1, 'still counted while Redis refuses writes');
        await accept();
        await waitFor(async () => (await sessionsCounted(admin)) === 0, 20_000, 'the release to be stored');
        await waitFor(async () => (await readyDetails(b))['sharedState'] === 'redis', 20_000, 'the replicas to share again');
        await openRawSession(b.url!);
    });

    test("a write Redis rejects for itself (another program's value under the key) is retried until stored, the state staying up", { timeout: 120_000 }, async t => {
        const redis = await startRedis(t);
        const admin = await adminOf(t, redis);
        const log = capturingLogger();
        // Its subject is a refusal, not slowness: a loaded machine must not make Redis look down (250 ms by default).
        const [a] = await replicas(t, redis, { cluster: { redis: { url: redis.url, commandTimeoutMs: 10_000 } } }, [log.logger]);
        const session = await openRawSession(a.url!);
        // Not a sorted set: ZADD answers WRONGTYPE, which says nothing of Redis's health.
        await admin.set('mcp-prompt-gateway:revoked', 'not a sorted set');
        assert.equal((await deleteSession(a.url!, session.headers)).status, 200);
        await waitFor(async () => /^mcp_gateway_shared_writes_pending [1-9]/m.test(await metricsOf(a)), 20_000, 'the rejected write to be kept');
        assert.equal((await readyDetails(a))['sharedState'], 'redis', 'Redis itself is fine');
        assert.ok(log.lines().some(line => line['level'] === 'warn' && String(line['msg']).includes('Redis rejected a command (WRONGTYPE)')));
        await admin.del('mcp-prompt-gateway:revoked');
        await waitFor(async () => (await admin.zcard('mcp-prompt-gateway:revoked')) === 1, 20_000, 'the write to be retried and stored');
    });

    test("Redis refusing writes is reported like an outage, and rate limits fall back to each replica's own; accepted again, shared again", { timeout: 120_000 }, async t => {
        const redis = await startRedis(t);
        const admin = await adminOf(t, redis);
        const logs = [capturingLogger(), capturingLogger()];
        const burst = 10;
        // Refused writes are under test, not slowness: a command slowed past the default 250 ms by a loaded machine
        // would take the state down as "does not answer in time" first (seen in CI), and the warning counted be that.
        const [a, b] = await replicas(
            t,
            redis,
            { cluster: { redis: { url: redis.url, commandTimeoutMs: 10_000 } }, limits: { rateLimit: { requestsPerSecond: 0.001, burst } } },
            logs.map(log => log.logger)
        );
        assert.equal((await readyDetails(a))['sharedState'], 'redis');
        const accept = await refuseWrites(t, admin);

        // As in an outage, each replica limits on its own: 2 replicas with a burst of 10 pass 20 (10 each), not 10.
        const passed = [0, 0];
        for (let index = 0; index < 2 * burst + 6; index++) {
            const replica = index % 2;
            const response = await postModern([a, b][replica]!.url!, 'prompts/list');
            await response.body?.cancel();
            if (response.status === 200) passed[replica]!++;
            else assert.equal(response.status, 429);
        }
        assert.deepEqual(passed, [burst, burst], 'each replica its own burst, as when Redis is away');
        for (const replica of [a, b]) {
            const ready = await fetch(new URL('/readyz', replica.url));
            assert.equal(ready.status, 200, 'still ready: it serves on');
            assert.equal(((await ready.json()) as Record<string, unknown>)['sharedState'], 'local (Redis refuses writes: OOM)');
            assert.match(await metricsOf(replica), /^mcp_gateway_shared_state_up 0$/m);
        }
        // Asked again and again whether it takes writes (a SET that is refused), the replicas warn once all the same.
        await waitFor(async () => (await rejectedCalls(admin, 'set')) >= 6, 20_000, 'Redis to be asked again');

        await accept();
        for (const replica of [a, b]) {
            await waitFor(async () => (await readyDetails(replica))['sharedState'] === 'redis', 20_000, 'the replicas to share again');
            assert.match(await metricsOf(replica), /^mcp_gateway_shared_state_up 1$/m);
        }
        for (const log of logs) {
            const said = log.lines().filter(line => String(line['msg']).startsWith('shared state:'));
            const text = said.map(line => `${String(line['level'])} ${String(line['msg'])}`).join('\n');
            const warnings = said.filter(line => line['level'] === 'warn');
            assert.equal(warnings.length, 1, text);
            assert.match(String(warnings[0]!['msg']), /Redis refuses writes: OOM/);
            assert.equal(said.filter(line => line['level'] === 'info' && String(line['msg']).includes('Redis takes writes again')).length, 1, text);
        }
    });

    test('Redis not answering in time (writes paused) is reported like an outage too; answering again, shared again', { timeout: 120_000 }, async t => {
        const redis = await startRedis(t);
        const admin = await adminOf(t, redis);
        const [a] = await replicas(t, redis, { limits: { rateLimit: { requestsPerSecond: 0.001, burst: 10 } } });
        // Writes wait (as during a failover), reads are served: the rate limit's script waits past the command timeout.
        await admin.call('CLIENT', 'PAUSE', '600000', 'WRITE');
        closeAfter(t, () => (admin.status === 'ready' ? admin.call('CLIENT', 'UNPAUSE') : undefined));
        const response = await postModern(a.url!, 'prompts/list');
        await response.body?.cancel();
        assert.equal(response.status, 200, 'served with the local limit');
        assert.equal((await readyDetails(a))['sharedState'], 'local (Redis does not answer in time)');
        assert.match(await metricsOf(a), /^mcp_gateway_shared_state_up 0$/m);
        await admin.call('CLIENT', 'UNPAUSE');
        await waitFor(async () => (await readyDetails(a))['sharedState'] === 'redis', 20_000, 'the replica to share again');
    });
});
