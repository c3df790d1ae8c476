import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FaultKind } from '../../src/diagnostics/faults.js';
import { FaultLog } from '../../src/upstream/fault-log.js';
import { capturingLogger } from '../helpers.js';

function setup() {
    const { logger, lines: logged } = capturingLogger();
    const counted: FaultKind[] = [];
    const clock = { now: 0 };
    const faults = new FaultLog(
        logger.child({ upstream: 'u1' }),
        kind => counted.push(kind),
        () => clock.now
    );
    return { lines: logged, counted, clock, faults };
}

test('every fault is counted, but each kind is logged at most once per 10 s, with the number not logged', () => {
    const { lines, counted, clock, faults } = setup();
    for (let i = 0; i < 1000; i++) faults.report('garbage_output', 'junk on stdout');
    faults.report('timeout', 'slow');
    assert.equal(counted.length, 1001);
    assert.deepEqual(
        lines().map(line => [line.upstream, line.fault]),
        [
            ['u1', 'garbage_output'],
            ['u1', 'timeout']
        ]
    );

    clock.now = 9_999;
    faults.report('garbage_output', 'junk on stdout');
    assert.equal(lines().length, 2);
    clock.now = 10_000;
    faults.report('garbage_output', 'junk on stdout');
    assert.equal(lines().length, 3);
    assert.equal(lines()[2]!.alsoSince, 1000, 'the 999 suppressed in the first window plus the one at 9999 ms');
});

test('count() counts without logging', () => {
    const { lines, counted, faults } = setup();
    faults.count('disconnected');
    assert.deepEqual(counted, ['disconnected']);
    assert.equal(lines().length, 0);
});
