/** TokenBucket and ClientRateLimiter, with time passed in by the test (no timers, no sleeps). */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.js';
import { ClientDirectory, type ClientProfile } from '../../src/policy/clients.js';
import { ClientRateLimiter } from '../../src/policy/rate-limiter.js';
import { TokenBucket, type RateDecision } from '../../src/policy/token-bucket.js';

const ALLOWED: RateDecision = { allowed: true };
const denied = (retryAfterMs: number): RateDecision => ({ allowed: false, retryAfterMs });

/** Takes `count` tokens at `now`, asserting each is allowed. */
function drain(bucket: TokenBucket, count: number, now: number): void {
    for (let i = 0; i < count; i++) assert.deepEqual(bucket.take(now), ALLOWED, `take #${i + 1} of ${count} at ${now}`);
}

describe('TokenBucket', () => {
    test('starts full: exactly `burst` requests pass at once, the next is denied', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 1, burst: 3 }, 0);
        drain(bucket, 3, 0);
        assert.deepEqual(bucket.take(0), denied(1000));
    });

    test('refills at requestsPerSecond', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 2, burst: 2 }, 1000);
        drain(bucket, 2, 1000);
        assert.equal(bucket.take(1000).allowed, false);
        // 500 ms at 2/s is one token.
        assert.deepEqual(bucket.take(1500), ALLOWED);
        assert.deepEqual(bucket.take(1500), denied(500));
        // Another full second: two tokens.
        drain(bucket, 2, 2500);
        assert.equal(bucket.take(2500).allowed, false);
    });

    test('retryAfterMs is the time until the next whole token, rounded up', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 1, burst: 1 }, 0);
        drain(bucket, 1, 0);
        assert.deepEqual(bucket.take(250), denied(750));
        // A denied take spends nothing: the wait keeps shrinking.
        assert.deepEqual(bucket.take(600), denied(400));
        assert.deepEqual(bucket.take(1000), ALLOWED);
    });

    test('retryAfterMs is rounded up to a whole millisecond', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 3, burst: 1 }, 0);
        drain(bucket, 1, 0);
        assert.deepEqual(bucket.take(0), denied(334));
    });

    test('a fractional rate works (one request every two seconds)', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 0.5, burst: 1 }, 0);
        drain(bucket, 1, 0);
        assert.deepEqual(bucket.take(0), denied(2000));
        assert.deepEqual(bucket.take(1999), denied(1));
        assert.deepEqual(bucket.take(2000), ALLOWED);
    });

    test('take(now, n) takes n tokens or none; the wait is until n are there', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 1, burst: 5 }, 0);
        assert.deepEqual(bucket.take(0, 3), ALLOWED);
        // 2 left: 3 do not fit, and the refused take spends nothing.
        assert.deepEqual(bucket.take(0, 3), denied(1000));
        assert.deepEqual(bucket.take(0, 2), ALLOWED);
        assert.deepEqual(bucket.take(0, 1), denied(1000));
        assert.deepEqual(bucket.take(0, 4), denied(4000));
        assert.deepEqual(bucket.take(4000, 4), ALLOWED);
    });

    test('a long quiet time earns no more than `burst` tokens', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 10, burst: 3 }, 0);
        drain(bucket, 3, 0);
        drain(bucket, 3, 3_600_000);
        assert.equal(bucket.take(3_600_000).allowed, false);
    });

    test('a clock that goes backwards earns nothing', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 1, burst: 1 }, 10_000);
        drain(bucket, 1, 10_000);
        assert.equal(bucket.take(5_000).allowed, false);
        assert.equal(bucket.take(0).allowed, false);
    });

    test('requestsPerSecond 0 means unlimited', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 0, burst: 1 }, 0);
        drain(bucket, 10_000, 0);
        assert.equal(bucket.isFull(0), true);
    });

    test('setLimit: a smaller burst caps the tokens already earned', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 1, burst: 10 }, 0);
        bucket.setLimit({ requestsPerSecond: 1, burst: 2 });
        drain(bucket, 2, 0);
        assert.deepEqual(bucket.take(0), denied(1000));
    });

    test('setLimit: a larger burst grants nothing at once, it is earned over time', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 1, burst: 2 }, 0);
        drain(bucket, 2, 0);
        bucket.setLimit({ requestsPerSecond: 1, burst: 10 });
        assert.equal(bucket.take(0).allowed, false);
        drain(bucket, 5, 5000);
        assert.equal(bucket.take(5000).allowed, false);
    });

    test('setLimit: a new rate applies to the refill from then on', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 1, burst: 1 }, 0);
        drain(bucket, 1, 0);
        bucket.setLimit({ requestsPerSecond: 4, burst: 1 });
        assert.deepEqual(bucket.take(0), denied(250));
    });

    test('setLimit to 0 turns the limit off, and back on keeps the bucket honest', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 1, burst: 1 }, 0);
        drain(bucket, 1, 0);
        bucket.setLimit({ requestsPerSecond: 0, burst: 1 });
        drain(bucket, 100, 0);
        bucket.setLimit({ requestsPerSecond: 1, burst: 1 });
        assert.equal(bucket.take(0).allowed, false);
    });

    test('isFull: only once the burst is back', () => {
        const bucket = new TokenBucket({ requestsPerSecond: 1, burst: 2 }, 0);
        assert.equal(bucket.isFull(0), true);
        drain(bucket, 2, 0);
        assert.equal(bucket.isFull(0), false);
        assert.equal(bucket.isFull(1000), false);
        assert.equal(bucket.isFull(2000), true);
    });
});

/** Client profiles as the gateway builds them, from a parsed config. */
function directory(clients: Record<string, unknown>[], rateLimit: Record<string, number>): ClientDirectory {
    const config = parseConfig(JSON.stringify({ limits: { rateLimit }, clients, upstreams: [{ id: 'u', transport: 'stdio', command: 'node' }] }), 'rate.test.json', {});
    return new ClientDirectory(config);
}

function profile(dir: ClientDirectory, id: string): ClientProfile {
    const client = dir.get(id);
    assert.ok(client !== undefined, `no client ${id}`);
    return client;
}

describe('ClientRateLimiter', () => {
    test('each client has its own bucket', () => {
        let now = 0;
        const dir = directory([{ id: 'a' }, { id: 'b' }], { requestsPerSecond: 1, burst: 2 });
        const limiter = new ClientRateLimiter(() => now);
        const a = profile(dir, 'a');
        const b = profile(dir, 'b');
        assert.deepEqual(limiter.take(a), ALLOWED);
        assert.deepEqual(limiter.take(a), ALLOWED);
        assert.deepEqual(limiter.take(a), denied(1000));
        // b is untouched by a's exhaustion, and so is the anonymous client.
        assert.deepEqual(limiter.take(b), ALLOWED);
        assert.deepEqual(limiter.take(b), ALLOWED);
        assert.deepEqual(limiter.take(dir.anonymous), ALLOWED);
        assert.equal(limiter.take(b).allowed, false);
        now = 1000;
        assert.deepEqual(limiter.take(a), ALLOWED);
        assert.equal(limiter.take(a).allowed, false);
    });

    test('the injected clock drives refills and retryAfterMs', () => {
        let now = 50_000;
        const dir = directory([{ id: 'a' }], { requestsPerSecond: 10, burst: 1 });
        const limiter = new ClientRateLimiter(() => now);
        const a = profile(dir, 'a');
        assert.deepEqual(limiter.take(a), ALLOWED);
        assert.deepEqual(limiter.take(a), denied(100));
        now += 40;
        assert.deepEqual(limiter.take(a), denied(60));
        now += 60;
        assert.deepEqual(limiter.take(a), ALLOWED);
    });

    test('a per-client override applies to that client only', () => {
        const dir = directory([{ id: 'slow', rateLimit: { burst: 1 } }, { id: 'fast' }], { requestsPerSecond: 1, burst: 5 });
        const limiter = new ClientRateLimiter(() => 0);
        const slow = profile(dir, 'slow');
        assert.deepEqual(slow.rateLimit, { requestsPerSecond: 1, burst: 1 });
        assert.deepEqual(limiter.take(slow), ALLOWED);
        assert.equal(limiter.take(slow).allowed, false);
        for (let i = 0; i < 5; i++) assert.deepEqual(limiter.take(profile(dir, 'fast')), ALLOWED);
        assert.equal(limiter.take(profile(dir, 'fast')).allowed, false);
    });

    test('a client with requestsPerSecond 0 is never limited', () => {
        const dir = directory([{ id: 'free', rateLimit: { requestsPerSecond: 0 } }, { id: 'held' }], { requestsPerSecond: 1, burst: 1 });
        const limiter = new ClientRateLimiter(() => 0);
        for (let i = 0; i < 5000; i++) assert.deepEqual(limiter.take(profile(dir, 'free')), ALLOWED);
        assert.deepEqual(limiter.take(profile(dir, 'held')), ALLOWED);
        assert.equal(limiter.take(profile(dir, 'held')).allowed, false);
    });

    test('a reloaded profile (same id, new limit) keeps the bucket and applies the new limit', () => {
        const limiter = new ClientRateLimiter(() => 0);
        const before = profile(directory([{ id: 'a' }], { requestsPerSecond: 1, burst: 3 }), 'a');
        assert.deepEqual(limiter.take(before), ALLOWED);
        // After a reload the profile object is new; the drained state must carry over, capped at the new burst.
        const after = profile(directory([{ id: 'a' }], { requestsPerSecond: 1, burst: 1 }), 'a');
        assert.deepEqual(limiter.take(after), ALLOWED);
        assert.deepEqual(limiter.take(after), denied(1000));
    });

    test("a key of its own (an anonymous caller's address) gets a bucket of its own, with the client's limit", () => {
        const dir = directory([], { requestsPerSecond: 1, burst: 2 });
        const limiter = new ClientRateLimiter(() => 0);
        assert.deepEqual(limiter.take(dir.anonymous, 'anonymous@127.0.0.2', 2), ALLOWED);
        assert.deepEqual(limiter.take(dir.anonymous, 'anonymous@127.0.0.2'), denied(1000));
        assert.deepEqual(limiter.take(dir.anonymous, 'anonymous@127.0.0.3'), ALLOWED);
        assert.deepEqual(limiter.take(dir.anonymous), ALLOWED, 'the client id is a key apart');
    });

    test('many clients and many calls (sweeps included) never let a drained client through early', () => {
        let now = 0;
        const ids = Array.from({ length: 50 }, (_, i) => `c${i}`);
        const dir = directory(
            ids.map(id => ({ id })),
            { requestsPerSecond: 1, burst: 1 }
        );
        const limiter = new ClientRateLimiter(() => now);
        const drained = profile(dir, 'c0');
        assert.deepEqual(limiter.take(drained), ALLOWED);
        // Enough calls to pass several sweeps (every 1024 calls) while c0 stays drained.
        for (let round = 0; round < 60; round++) {
            for (const id of ids.slice(1)) limiter.take(profile(dir, id));
            assert.equal(limiter.take(drained).allowed, false, `round ${round}`);
        }
        now = 1000;
        assert.deepEqual(limiter.take(drained), ALLOWED);
    });
});
