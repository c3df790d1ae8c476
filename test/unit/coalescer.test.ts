import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Coalescer, type Timers } from '../../src/catalog/coalescer.js';

/** A virtual clock: timers fire only when the test advances time. */
class FakeClock implements Timers {
    time = 0;
    /** Timers ever armed: the cost of a push shows in it. */
    armed = 0;
    #nextId = 1;
    readonly #timers = new Map<number, { at: number; callback: () => void }>();

    now(): number {
        return this.time;
    }

    setTimeout(callback: () => void, ms: number): unknown {
        const id = this.#nextId++;
        this.armed++;
        this.#timers.set(id, { at: this.time + ms, callback });
        return id;
    }

    clearTimeout(handle: unknown): void {
        this.#timers.delete(handle as number);
    }

    get pending(): number {
        return this.#timers.size;
    }

    /** Moves time forward, firing due timers in time order (timers set by callbacks included). */
    advance(ms: number): void {
        const end = this.time + ms;
        for (;;) {
            let due: [number, { at: number; callback: () => void }] | undefined;
            for (const entry of this.#timers) {
                if (entry[1].at <= end && (due === undefined || entry[1].at < due[1].at)) due = entry;
            }
            if (due === undefined) break;
            this.#timers.delete(due[0]);
            this.time = due[1].at;
            due[1].callback();
        }
        this.time = end;
    }
}

interface Flush {
    at: number;
    events: number[];
}

function setup(debounceMs = 100, maxDelayMs = 1000) {
    const clock = new FakeClock();
    const flushes: Flush[] = [];
    const coalescer = new Coalescer<number>({
        debounceMs,
        maxDelayMs,
        timers: clock,
        flush: events => flushes.push({ at: clock.time, events })
    });
    return { clock, flushes, coalescer };
}

const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);

describe('Coalescer', () => {
    test('a burst of 100 pushes gives one flush with all events in order', () => {
        const { clock, flushes, coalescer } = setup();
        for (const n of range(0, 100)) coalescer.push(n);
        clock.advance(10_000);
        assert.equal(flushes.length, 1);
        assert.deepEqual(flushes[0]!.events, range(0, 100));
    });

    test('a flood of 10,000 repeats of a few events flushes each once, in order of first occurrence', () => {
        const { clock, flushes, coalescer } = setup();
        for (let i = 0; i < 10_000; i++) coalescer.push([7, 3, 7, 9][i % 4]!);
        clock.advance(10_000);
        assert.deepEqual(
            flushes.map(flush => flush.events),
            [[7, 3, 9]]
        );
        coalescer.push(7);
        clock.advance(10_000);
        assert.deepEqual(flushes[1]!.events, [7], 'an event flushed before counts again in the next burst');
    });

    test('a push within a burst arms no timer: a flood costs a constant number of timers, not one per event', () => {
        const { clock, flushes, coalescer } = setup(100, 1000);
        for (let i = 0; i < 10_000; i++) {
            coalescer.push(i % 3);
            // 10,000 events over 500ms of virtual time: never quiet for the debounce.
            if (i % 20 === 0) clock.advance(1);
        }
        assert.ok(clock.armed <= 10, `${clock.armed} timers armed for one burst`);
        clock.advance(10_000);
        assert.deepEqual(
            flushes.map(flush => flush.events),
            [[0, 1, 2]]
        );
        assert.equal(flushes[0]!.at, 600, 'flushed debounceMs after the last push');
    });

    test('nothing is flushed before the burst goes quiet', () => {
        const { clock, flushes, coalescer } = setup(100, 1000);
        coalescer.push(1);
        clock.advance(99);
        assert.equal(flushes.length, 0);
        clock.advance(1);
        assert.deepEqual(flushes, [{ at: 100, events: [1] }]);
    });

    test("pending: from a burst's first push to its flush, and not after a discard", () => {
        const { clock, coalescer } = setup(100, 1000);
        assert.equal(coalescer.pending, false);
        coalescer.push(1);
        assert.equal(coalescer.pending, true);
        clock.advance(100);
        assert.equal(coalescer.pending, false, 'flushed');
        coalescer.push(2);
        coalescer.discard();
        assert.equal(coalescer.pending, false, 'discarded');
    });

    test('each push restarts the debounce', () => {
        const { clock, flushes, coalescer } = setup(100, 1000);
        coalescer.push(1);
        clock.advance(80);
        coalescer.push(2);
        clock.advance(80);
        assert.equal(flushes.length, 0, 'flushed although the last push was only 80ms ago');
        coalescer.push(3);
        clock.advance(99);
        assert.equal(flushes.length, 0);
        clock.advance(1);
        assert.deepEqual(flushes, [{ at: 260, events: [1, 2, 3] }]);
    });

    test('a continuous stream still flushes no later than maxDelayMs after the burst began', () => {
        const { clock, flushes, coalescer } = setup(100, 1000);
        let n = 0;
        // One event every 50ms, never quiet for debounceMs, for 3.5 seconds.
        for (let t = 0; t < 3500; t += 50) {
            coalescer.push(n++);
            clock.advance(50);
        }
        assert.ok(flushes.length >= 3, `only ${flushes.length} flushes during a 3.5s stream`);
        let burstStart = 0;
        for (const flush of flushes) {
            assert.ok(flush.at - burstStart <= 1000, `flush at ${flush.at} for a burst that began at ${burstStart}`);
            // The next burst begins with the first push after this flush; pushes are on multiples of 50ms.
            burstStart = Math.ceil(flush.at / 50) * 50;
        }
        clock.advance(10_000);
        assert.deepEqual(
            flushes.flatMap(flush => flush.events),
            range(0, n),
            'events lost, duplicated or reordered across flushes'
        );
    });

    test('a new burst after a flush starts fresh: its own debounce and its own max delay', () => {
        const { clock, flushes, coalescer } = setup(100, 1000);
        coalescer.push(1);
        clock.advance(500);
        assert.equal(flushes.length, 1);
        // Second burst: a stream of pushes every 60ms starting at t=500. If the old deadline leaked, it would flush early.
        for (let i = 0; i < 20; i++) {
            coalescer.push(100 + i);
            clock.advance(60);
        }
        assert.equal(flushes.length, 2);
        assert.equal(flushes[1]!.at, 1500, 'second burst flushed by its own maxDelayMs');
        assert.deepEqual(flushes[1]!.events, range(100, 17));
        clock.advance(10_000);
        assert.deepEqual(flushes[2]!.events, range(117, 3));
    });

    test('no timers stay armed after a flush', () => {
        const { clock, coalescer } = setup(100, 1000);
        coalescer.push(1);
        coalescer.push(2);
        clock.advance(100);
        assert.equal(clock.pending, 0);
    });

    test('discard prevents the flush and leaves no timer', () => {
        const { clock, flushes, coalescer } = setup(100, 1000);
        coalescer.push(1);
        coalescer.push(2);
        coalescer.discard();
        clock.advance(10_000);
        assert.equal(flushes.length, 0);
        assert.equal(clock.pending, 0);
    });

    test('events discarded are not delivered with the next burst', () => {
        const { clock, flushes, coalescer } = setup(100, 1000);
        coalescer.push(1);
        coalescer.discard();
        clock.advance(5000);
        coalescer.push(2);
        clock.advance(100);
        assert.deepEqual(flushes, [{ at: 5100, events: [2] }]);
    });

    test('flushNow delivers at once and disarms the timers', () => {
        const { clock, flushes, coalescer } = setup(100, 1000);
        coalescer.push(1);
        coalescer.flushNow();
        assert.deepEqual(flushes, [{ at: 0, events: [1] }]);
        clock.advance(10_000);
        assert.equal(flushes.length, 1);
    });

    test('flushNow with nothing pending does not call flush', () => {
        const { flushes, coalescer } = setup();
        coalescer.flushNow();
        assert.equal(flushes.length, 0);
    });
});
