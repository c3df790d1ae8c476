import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { untilAborted } from '../../src/lib/until-aborted.js';

describe('untilAborted', () => {
    test('settles as the work does while the signal is not aborted, and without a signal', async () => {
        assert.equal(await untilAborted(Promise.resolve(1), new AbortController().signal), 1);
        assert.equal(await untilAborted(Promise.resolve(2), undefined), 2);
        await assert.rejects(untilAborted(Promise.reject(new Error('failed')), new AbortController().signal), /failed/);
    });

    test('rejects with the abort reason at once, the work left to run on', async () => {
        const aborted = new AbortController();
        aborted.abort(new Error('gone before'));
        await assert.rejects(untilAborted(new Promise(() => {}), aborted.signal), /gone before/);
        const later = new AbortController();
        let finish!: (value: number) => void;
        const work = new Promise<number>(resolve => (finish = resolve));
        const waited = untilAborted(work, later.signal);
        later.abort(new Error('gone meanwhile'));
        await assert.rejects(waited, /gone meanwhile/);
        finish(3);
        assert.equal(await work, 3);
    });
});
