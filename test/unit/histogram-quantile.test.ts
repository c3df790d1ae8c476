/**
 * Quantiles from cumulative buckets, as PromQL's histogram_quantile gives them: the values below are what
 * Prometheus computes for the same buckets.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { histogramQuantile, type CumulativeBucket } from '../../src/lib/histogram-quantile.js';

const buckets = (pairs: [number, number][]): CumulativeBucket[] => pairs.map(([le, count]) => ({ le, count }));

test('interpolates linearly within the bucket the rank falls in', () => {
    // 10 observations: 4 at most 0.01, 8 at most 0.1, all at most 1.
    const histogram = buckets([
        [0.01, 4],
        [0.1, 8],
        [1, 10],
        [Infinity, 10]
    ]);
    assert.equal(histogramQuantile(0.5, histogram), 0.01 + (0.1 - 0.01) * ((5 - 4) / 4));
    assert.equal(histogramQuantile(0.95, histogram), 0.1 + (1 - 0.1) * ((9.5 - 8) / 2));
    // The first bucket's lower bound is 0.
    assert.equal(histogramQuantile(0.2, histogram), 0.01 * (2 / 4));
});

test('empty buckets below the rank are skipped, and bucket order does not matter', () => {
    const histogram = buckets([
        [Infinity, 4],
        [0.5, 4],
        [0.25, 0],
        [0.1, 0]
    ]);
    assert.equal(histogramQuantile(0.5, histogram), 0.25 + 0.25 * (2 / 4));
    assert.equal(histogramQuantile(0, histogram), 0.25);
});

test('a rank in the +Inf bucket gives the highest finite bound', () => {
    const histogram = buckets([
        [1, 1],
        [60, 2],
        [Infinity, 10]
    ]);
    assert.equal(histogramQuantile(0.95, histogram), 60);
});

test('no observations, no finite bucket or a quantile outside 0..1: null', () => {
    assert.equal(histogramQuantile(0.5, []), null);
    assert.equal(
        histogramQuantile(
            0.5,
            buckets([
                [0.1, 0],
                [Infinity, 0]
            ])
        ),
        null
    );
    assert.equal(histogramQuantile(0.5, buckets([[Infinity, 3]])), null);
    assert.equal(histogramQuantile(1.5, buckets([[1, 3]])), null);
    assert.equal(histogramQuantile(Number.NaN, buckets([[1, 3]])), null);
});
