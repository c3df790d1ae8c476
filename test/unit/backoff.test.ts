import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from '../../src/lib/backoff.js';

const POLICY: BackoffPolicy = { initialMs: 100, maxMs: 5000 };
const fixed = (value: number) => () => value;

/** The step for an attempt, derived from the documented rule: initial * 2^attempt, capped at maxMs. */
const stepOf = (attempt: number, policy: BackoffPolicy): number => Math.min(policy.maxMs, policy.initialMs * 2 ** attempt);

describe('backoffDelay', () => {
    test('stays within [step/2, step] and never exceeds maxMs, for any random value', () => {
        fc.assert(
            fc.property(
                fc.integer({ min: 0, max: 60 }),
                fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
                fc.integer({ min: 1, max: 10_000 }),
                fc.integer({ min: 1, max: 600_000 }),
                (attempt, random, initialMs, maxMs) => {
                    const policy = { initialMs, maxMs };
                    const step = stepOf(attempt, policy);
                    const delay = backoffDelay(attempt, policy, fixed(random));
                    assert.ok(delay >= Math.floor(step / 2), `${delay} < ${step}/2`);
                    assert.ok(delay <= step, `${delay} > step ${step}`);
                    assert.ok(delay <= maxMs, `${delay} > maxMs ${maxMs}`);
                    assert.ok(Number.isInteger(delay));
                }
            )
        );
    });

    test('the lowest random value gives half the step, the highest almost the whole step', () => {
        assert.equal(backoffDelay(0, POLICY, fixed(0)), 50);
        assert.equal(backoffDelay(3, POLICY, fixed(0)), 400);
        assert.ok(backoffDelay(3, POLICY, fixed(0.999999)) > 790);
    });

    test('grows with the attempt for a fixed random value until the cap', () => {
        for (const random of [0, 0.5, 0.99]) {
            const delays = Array.from({ length: 12 }, (_, attempt) => backoffDelay(attempt, POLICY, fixed(random)));
            for (let i = 1; i < delays.length; i++) assert.ok(delays[i]! >= delays[i - 1]!, `attempt ${i} shrank: ${delays.join(', ')}`);
            assert.ok(delays[5]! > delays[0]! * 16, 'not exponential');
            assert.equal(delays[11], delays[10], 'still growing past the cap');
        }
    });

    test('doubles per attempt before the cap', () => {
        for (let attempt = 0; attempt < 5; attempt++) {
            assert.equal(backoffDelay(attempt + 1, POLICY, fixed(0.5)), 2 * backoffDelay(attempt, POLICY, fixed(0.5)));
        }
    });

    test('huge attempt numbers stay finite and capped', () => {
        for (const attempt of [1000, 1e9, Number.MAX_SAFE_INTEGER]) {
            const delay = backoffDelay(attempt, POLICY, fixed(0.999));
            assert.ok(Number.isFinite(delay) && delay <= POLICY.maxMs && delay >= POLICY.maxMs / 2, String(delay));
        }
    });

    test('the default policy starts small and caps at its maximum', () => {
        assert.ok(backoffDelay(0, undefined, fixed(0.999)) <= DEFAULT_BACKOFF.initialMs);
        assert.ok(backoffDelay(100, undefined, fixed(0.999)) <= DEFAULT_BACKOFF.maxMs);
        assert.ok(backoffDelay(100, undefined, fixed(0)) >= DEFAULT_BACKOFF.maxMs / 2);
    });

    test('uses the random source it is given', () => {
        const low = backoffDelay(4, POLICY, fixed(0));
        const high = backoffDelay(4, POLICY, fixed(0.9));
        assert.ok(high > low);
    });
});
