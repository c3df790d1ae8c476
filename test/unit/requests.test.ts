import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { abortedByShutdown, RequestRegistry, Ticket } from '../../src/downstream/requests.js';

function taken(registry: RequestRegistry, ...args: Parameters<RequestRegistry['begin']>): Ticket {
    const ticket = registry.begin(...args);
    assert.ok(ticket instanceof Ticket, `taken, not ${ticket as string}`);
    return ticket;
}

const cancelled = (requestId: string | number) => ({ jsonrpc: '2.0' as const, method: 'notifications/cancelled', params: { requestId } });

describe('RequestRegistry', () => {
    test('an id is unique per scope while in flight, and free again once done', () => {
        const registry = new RequestRegistry();
        const first = taken(registry, 'stdio', 1, 'call');
        assert.equal(registry.begin('stdio', 1, 'call'), 'duplicate_id');
        assert.equal(registry.begin('stdio', 1, 'listen'), 'duplicate_id', 'a listen shares the id space');
        const elsewhere = taken(registry, 'session-b', 1, 'call');
        const second = taken(registry, 'stdio', 2, 'call');
        assert.equal(registry.countOf('call'), 3);
        first.done();
        first.done();
        assert.equal(registry.countOf('call'), 2, 'done counts once');
        taken(registry, 'stdio', 1, 'call').done();
        second.done();
        elsewhere.done();
        assert.equal(registry.countOf('call') + registry.countOf('listen'), 0);
    });

    test('notifications/cancelled aborts the request it names in its scope only; cancelScope every one of the scope', () => {
        const registry = new RequestRegistry();
        const a1 = taken(registry, 'a', 1, 'call');
        const a2 = taken(registry, 'a', 'two', 'listen');
        const b1 = taken(registry, 'b', 1, 'call');
        registry.cancelNamed(cancelled(1), 'a');
        assert.deepEqual([a1.aborted, a2.aborted, b1.aborted], [true, false, false]);
        assert.equal(abortedByShutdown(a1), false, 'a client cancel is answered with nothing');
        registry.cancelScope('a');
        assert.deepEqual([a2.aborted, b1.aborted], [true, false]);
        registry.cancelNamed({ jsonrpc: '2.0', method: 'notifications/progress', params: { requestId: 1 } }, 'b');
        assert.equal(b1.aborted, false, 'only notifications/cancelled cancels');
    });

    test("a ticket's abort listeners, as an AbortSignal's: each called once, in order; none removed, added twice or added late", () => {
        const registry = new RequestRegistry();
        const ticket = taken(registry, 'stdio', 1, 'call');
        const heard: string[] = [];
        const first = () => heard.push('first');
        const removed = () => heard.push('removed');
        ticket.addEventListener('abort', first);
        ticket.addEventListener('abort', removed);
        ticket.addEventListener('abort', () => heard.push(`second, ${(ticket.reason as Error).message}`));
        ticket.addEventListener('abort', first);
        ticket.removeEventListener('abort', removed);
        registry.cancelAll();
        ticket.cancel();
        ticket.addEventListener('abort', () => heard.push('late'));
        assert.deepEqual(heard, ['first', 'second, Gateway is shutting down; the request was cancelled']);
        assert.equal(abortedByShutdown(ticket), true, 'the first abort stands');
    });

    test('refuseNew refuses later requests while those in flight finish; settled waits for calls, not listens', async () => {
        const registry = new RequestRegistry();
        const call = taken(registry, 'stdio', 1, 'call');
        taken(registry, 'stdio', 2, 'listen');
        registry.refuseNew();
        assert.equal(registry.begin('stdio', 3, 'call'), 'shutting_down');
        const settled = registry.settled(10_000);
        assert.equal(call.aborted, false);
        call.done();
        assert.equal(await settled, true);
    });

    test('work held (an HTTP body being read) counts until released, once', async () => {
        const registry = new RequestRegistry();
        const release = registry.hold();
        const settled = registry.settled(10_000);
        release();
        release();
        assert.equal(await settled, true);
        assert.equal(await registry.settled(0), true);
    });

    test('cancelAll aborts those in flight as a shutdown (answered -32603), and refuses later ones', async () => {
        const registry = new RequestRegistry();
        const ticket = taken(registry, {}, 1, 'call');
        const running = ticket.until(new Promise<never>(() => {}));
        registry.cancelAll();
        await assert.rejects(running, /shutting down/);
        assert.equal(abortedByShutdown(ticket), true);
        assert.equal(registry.begin('x', 1, 'call'), 'shutting_down');
    });

    test("until: the work's outcome, or at once the reason of a client's cancel (answered nothing) or of a shutdown", async () => {
        const registry = new RequestRegistry();
        const served = taken(registry, 's', 1, 'call');
        assert.equal(await served.until(Promise.resolve('answer')), 'answer');
        await assert.rejects(served.until(Promise.reject(new Error('upstream failed'))), /upstream failed/);
        served.cancel();
        assert.equal(await served.until(Promise.resolve('late')).catch(() => 'refused at once'), 'refused at once');
        const cancelledWhileWaiting = taken(registry, 's', 2, 'call');
        const waiting = cancelledWhileWaiting.until(new Promise<never>(() => {}));
        registry.cancelNamed(cancelled(2), 's');
        await assert.rejects(waiting, /Request cancelled/);
        assert.equal(abortedByShutdown(cancelledWhileWaiting), false);
        const settledFirst = taken(registry, 's', 3, 'call');
        assert.equal(await settledFirst.until(Promise.resolve(3)), 3);
        registry.cancelAll();
        assert.equal(abortedByShutdown(settledFirst), true, 'an abort after the wait ended changes nothing of it');
    });

    test('many requests at once add no listener to a shared signal (no MaxListenersExceededWarning)', { timeout: 10_000 }, async () => {
        const warnings: string[] = [];
        const onWarning = (warning: Error) => warnings.push(warning.name);
        process.on('warning', onWarning);
        try {
            const registry = new RequestRegistry();
            let release = () => {};
            const gate = new Promise<void>(resolve => (release = resolve));
            const tickets = Array.from({ length: 50 }, (_, index) => taken(registry, 'session', index, 'call'));
            const requests = tickets.map((ticket, index) => ticket.until(gate.then(() => index)));
            await new Promise(resolve => setImmediate(resolve));
            release();
            assert.deepEqual(
                await Promise.all(requests),
                tickets.map((_, index) => index)
            );
            for (const ticket of tickets) ticket.done();
            assert.equal(registry.countOf('call') + registry.countOf('listen'), 0);
            assert.deepEqual(warnings, []);
        } finally {
            process.off('warning', onWarning);
        }
    });
});
