import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InFlight } from '../../src/downstream/in-flight.js';

describe('InFlight', () => {
    test('many requests at once add no listener to a shared signal (no MaxListenersExceededWarning)', { timeout: 10_000 }, async () => {
        const warnings: string[] = [];
        const onWarning = (warning: Error) => warnings.push(warning.name);
        process.on('warning', onWarning);
        try {
            const inFlight = new InFlight();
            let release = () => {};
            const gate = new Promise<void>(resolve => (release = resolve));
            const requests = Array.from({ length: 50 }, (_, index) => inFlight.track(async () => (await gate, index)));
            assert.equal(inFlight.count, 50);
            // Warnings are emitted on the next tick.
            await new Promise(resolve => setImmediate(resolve));
            release();
            assert.deepEqual(
                await Promise.all(requests),
                Array.from({ length: 50 }, (_, index) => index)
            );
            assert.equal(inFlight.count, 0);
            assert.deepEqual(warnings, []);
        } finally {
            process.off('warning', onWarning);
        }
    });

    test('cancelAll fails those in flight and later ones with -32603; drained() resolves once none is left', { timeout: 10_000 }, async () => {
        const inFlight = new InFlight();
        const running = inFlight.track(() => new Promise<never>(() => {}));
        const drained = inFlight.drained(5000);
        inFlight.cancelAll('stopping');
        await assert.rejects(running, { code: -32603, message: 'stopping' });
        assert.equal(await drained, true);
        await assert.rejects(
            inFlight.track(() => Promise.resolve(1)),
            { code: -32603, message: 'stopping' }
        );
    });

    test('refuseNew refuses later requests while those in flight finish', { timeout: 10_000 }, async () => {
        const inFlight = new InFlight();
        let finish = (_value: string) => {};
        const running = inFlight.track(() => new Promise<string>(resolve => (finish = resolve)));
        inFlight.refuseNew('draining');
        await assert.rejects(
            inFlight.track(() => Promise.resolve('late')),
            { code: -32603, message: 'draining' }
        );
        finish('done');
        assert.equal(await running, 'done');
    });
});
