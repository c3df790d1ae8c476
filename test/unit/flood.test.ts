import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FloodDetector, WorkBudget } from '../../src/upstream/flood.js';

test('says so once, on the first event over the limit within a window', () => {
    const flood = new FloodDetector(100, 1000);
    const verdicts = Array.from({ length: 500 }, (_, i) => flood.hit(i));
    assert.deepEqual(
        verdicts.flatMap((isFlood, i) => (isFlood ? [i] : [])),
        [100],
        'the 101st event within the second, and none after it'
    );
});

test('exactly the limit per window is no flood', () => {
    const flood = new FloodDetector(3, 1000);
    for (const at of [0, 10, 20, 1000, 1010, 1020, 2000, 2001, 2002]) assert.equal(flood.hit(at), false, `at ${at}`);
});

test('a new window starts from zero and can flood again', () => {
    const flood = new FloodDetector(2, 1000);
    assert.deepEqual(
        [0, 1, 2, 3].map(at => flood.hit(at)),
        [false, false, true, false]
    );
    assert.equal(flood.hit(999), false, 'still the first window');
    assert.deepEqual(
        [1000, 1001, 1002].map(at => flood.hit(at)),
        [false, false, true]
    );
});

test('the window starts at the first event after a quiet spell, not on a fixed grid', () => {
    const flood = new FloodDetector(2, 1000);
    assert.deepEqual(
        [900, 1500, 1899].map(at => flood.hit(at)),
        [false, false, true],
        'one window from 900 to 1900'
    );
});

test('a work budget: ok up to the limit, "flood" once when a window goes over it, "over" after, until the window ends', () => {
    const budget = new WorkBudget(10, 1000);
    assert.equal(budget.spend(0, 4), 'ok');
    assert.equal(budget.spend(10, 6), 'ok', 'exactly the limit');
    assert.equal(budget.spend(20, 1), 'flood');
    assert.equal(budget.resumeAt, 1000);
    assert.equal(budget.spend(30, 5), 'over');
    assert.equal(budget.spend(999, 0), 'over', 'nothing new, still over in this window');
    assert.equal(budget.spend(1000, 3), 'ok', 'a new window');
    assert.equal(budget.spend(1001, 20), 'flood', 'one spend past the limit at once');
    assert.equal(budget.resumeAt, 2000);
});
