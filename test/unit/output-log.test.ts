import assert from 'node:assert/strict';
import { test } from 'node:test';
import { childOutputLog, LineBudget, throttledLines } from '../../src/upstream/output-log.js';
import { capturingLogger } from '../helpers.js';

test('LineBudget admits `max` lines per window and counts the others', () => {
    const budget = new LineBudget(3, 10_000);
    assert.deepEqual(
        [0, 1, 2, 3, 4, 9_999].map(at => budget.admit(at)),
        [true, true, true, false, false, false]
    );
    assert.equal(budget.windowEnd, 10_000);
    assert.equal(budget.takeDropped(), 3);
    assert.equal(budget.takeDropped(), 0, 'each dropped line is reported once');
    assert.equal(budget.admit(10_000), true, 'a new window');
    assert.equal(budget.windowEnd, 20_000);
});

test('throttledLines reports the dropped lines before the next line it writes', () => {
    const clock = { now: 0 };
    const out: string[] = [];
    const write = throttledLines({
        max: 2,
        windowMs: 1000,
        write: line => out.push(line),
        reportDropped: dropped => out.push(`${dropped} not logged`),
        now: () => clock.now
    });
    for (const line of ['a', 'b', 'c', 'd', 'e']) write(line);
    clock.now = 1000;
    write('f');
    assert.deepEqual(out, ['a', 'b', '3 not logged', 'f']);
});

test('throttledLines reports the dropped lines when their window ends, when nothing else comes', async () => {
    const out: string[] = [];
    const write = throttledLines({ max: 1, windowMs: 50, write: line => out.push(line), reportDropped: dropped => out.push(`${dropped} not logged`) });
    for (let i = 0; i < 10; i++) write(`line ${i}`);
    assert.deepEqual(out, ['line 0']);
    await new Promise(resolve => setTimeout(resolve, 120));
    assert.deepEqual(out, ['line 0', '9 not logged']);
});

test("a child's stderr is logged at info, at most 50 lines per 10 s", () => {
    const { lines, logger } = capturingLogger();
    const hooks = childOutputLog(logger, () => {});
    for (let i = 0; i < 1000; i++) hooks.onStderrLine(`chatter ${i}`);
    assert.equal(lines().length, 50);
    assert.ok(lines().every(line => line.level === 'info' && line.stream === 'stderr'));
    assert.equal(lines()[49]!.msg, 'chatter 49');
});

test('stdout garbage: only its size goes to the fault; a short sample goes to debug only', () => {
    const { lines, logger } = capturingLogger();
    const sizes: number[] = [];
    const hooks = childOutputLog(logger, bytes => sizes.push(bytes));
    const secret = `{"result":{"messages":[{"content":{"text":"${'s'.repeat(1000)}"}}]}`;
    hooks.onNoise(secret);
    assert.deepEqual(sizes, [secret.length]);
    assert.equal(lines().length, 1);
    assert.equal(lines()[0]!.level, 'debug');
    assert.equal((lines()[0]!.line as string).length, 200);
});
