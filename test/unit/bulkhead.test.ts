import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, test } from 'node:test';
import { Bulkhead, BulkheadFullError, BulkheadTimeoutError } from '../../src/upstream/bulkhead.js';

/** A task that finishes when the test says so, and records that it started. */
function gate() {
    let open!: () => void;
    const done = new Promise<void>(resolve => (open = resolve));
    const state = { started: false };
    const task = async () => {
        state.started = true;
        await done;
        return 'done';
    };
    return { task, open, state };
}

const tick = () => new Promise(resolve => setImmediate(resolve));
const later = (ms = 60_000) => ({ deadline: Date.now() + ms });

describe('Bulkhead', () => {
    test('runs at most maxConcurrency tasks, queues up to maxQueue, refuses the next at once', async () => {
        const bulkhead = new Bulkhead({ maxConcurrency: 2, maxQueue: 1 });
        const gates = [gate(), gate(), gate()];
        const running = gates.map(g => bulkhead.run(g.task, later()));
        await tick();
        assert.deepEqual(
            gates.map(g => g.state.started),
            [true, true, false]
        );
        assert.deepEqual({ active: bulkhead.active, queued: bulkhead.queued }, { active: 2, queued: 1 });
        await assert.rejects(
            bulkhead.run(() => Promise.resolve('never'), later()),
            BulkheadFullError
        );

        gates[0]!.open();
        await running[0];
        await tick();
        assert.equal(gates[2]!.state.started, true, 'the queued task starts when a slot frees');
        const fits = bulkhead.run(() => Promise.resolve('fits again'), later()).catch(() => 'refused');
        gates[1]!.open();
        gates[2]!.open();
        assert.deepEqual(await Promise.all([...running, fits]), ['done', 'done', 'done', 'fits again'], 'a freed place in the queue is usable');
    });

    test('a task cancelled while queued fails at once, never starts, and frees its place', async () => {
        const bulkhead = new Bulkhead({ maxConcurrency: 1, maxQueue: 1 });
        const first = gate();
        const second = gate();
        const controller = new AbortController();
        const running = bulkhead.run(first.task, later());
        const queued = bulkhead.run(second.task, { ...later(), signal: controller.signal });
        controller.abort(new Error('client went away'));
        // Rejected while the first task still holds the only slot: the caller does not wait for it.
        await assert.rejects(queued, /client went away/);
        assert.equal(bulkhead.queued, 0);
        const third = bulkhead.run(() => Promise.resolve('third'), later());
        first.open();
        assert.deepEqual(await Promise.all([running, third]), ['done', 'third']);
        assert.equal(second.state.started, false);
        assert.deepEqual({ active: bulkhead.active, queued: bulkhead.queued }, { active: 0, queued: 0 });
    });

    test('a task still queued at its deadline fails with BulkheadTimeoutError and leaves the queue', async () => {
        const bulkhead = new Bulkhead({ maxConcurrency: 1, maxQueue: 5 });
        const blocker = gate();
        const running = bulkhead.run(blocker.task, later());
        const waiting = gate();
        // The slot frees only after this: failing now is failing at the deadline.
        await assert.rejects(bulkhead.run(waiting.task, later(50)), BulkheadTimeoutError);
        assert.equal(bulkhead.queued, 0);
        blocker.open();
        await running;
        assert.equal(waiting.state.started, false);
    });

    test('a failing task frees its slot', async () => {
        const bulkhead = new Bulkhead({ maxConcurrency: 1, maxQueue: 0 });
        await assert.rejects(
            bulkhead.run(() => Promise.reject(new Error('upstream failed')), later()),
            /upstream failed/
        );
        assert.equal(await bulkhead.run(() => Promise.resolve('next'), later()), 'next');
    });

    test("a queued task runs in its own caller's async context, not in that of the task whose end started it", async () => {
        const bulkhead = new Bulkhead({ maxConcurrency: 1, maxQueue: 5 });
        const caller = new AsyncLocalStorage<string>();
        const first = gate();
        const running = caller.run('first', () => bulkhead.run(first.task, later()));
        const seen: (string | undefined)[] = [];
        const queued = ['second', 'third'].map(name => caller.run(name, () => bulkhead.run(() => Promise.resolve(seen.push(caller.getStore())), later())));
        first.open();
        await Promise.all([running, ...queued]);
        assert.deepEqual(seen, ['second', 'third']);
    });
});
