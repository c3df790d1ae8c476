import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Bulkhead, BulkheadFullError } from '../../src/upstream/bulkhead.js';

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

describe('Bulkhead', () => {
    test('runs at most maxConcurrency tasks, queues up to maxQueue, refuses the next at once', async () => {
        const bulkhead = new Bulkhead({ maxConcurrency: 2, maxQueue: 1 });
        const gates = [gate(), gate(), gate()];
        const running = gates.map(g => bulkhead.run(g.task));
        await tick();
        assert.deepEqual(gates.map(g => g.state.started), [true, true, false]);
        assert.deepEqual({ active: bulkhead.active, queued: bulkhead.queued }, { active: 2, queued: 1 });
        await assert.rejects(bulkhead.run(() => Promise.resolve('never')), BulkheadFullError);

        gates[0]!.open();
        await running[0];
        await tick();
        assert.equal(gates[2]!.state.started, true, 'the queued task starts when a slot frees');
        const fits = bulkhead.run(() => Promise.resolve('fits again')).catch(() => 'refused');
        gates[1]!.open();
        gates[2]!.open();
        assert.deepEqual(await Promise.all([...running, fits]), ['done', 'done', 'done', 'fits again'], 'a freed place in the queue is usable');
    });

    test('a task cancelled while queued never starts and frees its place', async () => {
        const bulkhead = new Bulkhead({ maxConcurrency: 1, maxQueue: 1 });
        const first = gate();
        const second = gate();
        const controller = new AbortController();
        const running = bulkhead.run(first.task);
        const queued = bulkhead.run(second.task, controller.signal);
        controller.abort(new Error('client went away'));
        first.open();
        await running;
        await assert.rejects(queued, /client went away/);
        assert.equal(second.state.started, false);
        assert.deepEqual({ active: bulkhead.active, queued: bulkhead.queued }, { active: 0, queued: 0 });
    });

    test('a failing task frees its slot', async () => {
        const bulkhead = new Bulkhead({ maxConcurrency: 1, maxQueue: 0 });
        await assert.rejects(bulkhead.run(() => Promise.reject(new Error('upstream failed'))), /upstream failed/);
        assert.equal(await bulkhead.run(() => Promise.resolve('next')), 'next');
    });
});
