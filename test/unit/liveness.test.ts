import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { connectionEvidence, UpstreamHttpError } from '../../src/upstream/errors.js';
import { Liveness, type LivenessOptions } from '../../src/upstream/liveness.js';
import { waitFor } from '../helpers.js';

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

const timeout = () => new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out');
const methodNotFound = () => new ProtocolError(-32601, 'Method not found');
const refused = () => new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
const http500 = () => new UpstreamHttpError(500);

/** A Liveness whose pings answer with `answer` (resolve, or reject with the error it returns), recording what happens. */
function watch(answer: () => Error | undefined, options: Partial<LivenessOptions> = {}) {
    const pings: number[] = [];
    const deaths: string[] = [];
    const liveness = new Liveness({
        pingIntervalMs: 30,
        pingTimeoutMs: 1000,
        checkTimeoutMs: 500,
        ping: async timeoutMs => {
            pings.push(timeoutMs);
            await sleep(1);
            const error = answer();
            if (error !== undefined) throw error;
        },
        onDead: reason => deaths.push(reason),
        ...options
    });
    return { liveness, pings, deaths };
}

test('connectionEvidence: an error reply is an answer; timeouts are silence; refused, reset and 404 are a lost connection', () => {
    assert.equal(connectionEvidence(methodNotFound()), 'answered');
    assert.equal(connectionEvidence(new SdkError(SdkErrorCode.InvalidResult, 'bad')), 'answered');
    assert.equal(connectionEvidence(timeout()), 'no-answer');
    assert.equal(connectionEvidence(refused()), 'gone');
    assert.equal(connectionEvidence(new SdkError(SdkErrorCode.ConnectionClosed, 'closed')), 'gone');
    assert.equal(connectionEvidence(new UpstreamHttpError(404)), 'gone');
    assert.equal(connectionEvidence(http500()), 'failed');
});

test('pings only after pingIntervalMs without hearing from the upstream, busy or not', async () => {
    // Heard every 10 ms, pinged after 1000 ms of silence: a gap that long between two timers of 10 ms would take a
    // stall of the whole process, not just a loaded machine.
    const { liveness, pings } = watch(() => undefined, { pingIntervalMs: 1000 });
    try {
        for (let i = 0; i < 20; i++) {
            liveness.heard();
            await sleep(10);
        }
        assert.equal(pings.length, 0, 'a talkative upstream is not pinged');
        await waitFor(() => pings.length >= 1, 10_000, 'a quiet one is pinged');
        assert.equal(pings[0], 1000, 'with the regular timeout');
    } finally {
        liveness.stop();
    }
});

test('two unanswered pings in a row: dead, once', async () => {
    const { liveness, deaths } = watch(timeout);
    await waitFor(() => deaths.length > 0, 10_000, 'the death');
    await sleep(200);
    assert.deepEqual(deaths, ['no answer to 2 pings in a row']);
    liveness.stop();
});

test('a ping answered with a JSON-RPC error proves the upstream is alive', async () => {
    const { liveness, pings, deaths } = watch(methodNotFound);
    await waitFor(() => pings.length >= 3, 10_000, 'three pings');
    liveness.stop();
    assert.ok(pings.length >= 3, `${pings.length} pings`);
    assert.deepEqual(deaths, []);
});

test('a ping that finds the connection gone: dead at once, with the reason', async () => {
    const { liveness, pings, deaths } = watch(refused);
    await waitFor(() => deaths.length > 0, 10_000, 'the death');
    await sleep(100);
    liveness.stop();
    assert.equal(pings.length, 1);
    assert.deepEqual(deaths, ['request failed (ECONNREFUSED)']);
});

test('request timeouts in a row: dead on the third; anything heard in between starts the count over', () => {
    const { liveness, deaths } = watch(() => undefined, { pingIntervalMs: 0 });
    liveness.requestTimedOut();
    liveness.requestTimedOut();
    liveness.heard();
    liveness.requestTimedOut();
    liveness.requestTimedOut();
    assert.deepEqual(deaths, []);
    liveness.requestTimedOut();
    liveness.requestTimedOut();
    assert.deepEqual(deaths, ['no answer to 3 requests in a row']);
});

test('suspect(): one short ping for a burst; silence or a lost connection is death, other errors are not', async () => {
    const outcomes: [() => Error | undefined, string[]][] = [
        [() => undefined, []],
        [methodNotFound, []],
        [http500, []],
        [timeout, ['no answer to ping within 500 ms']],
        [refused, ['request failed (ECONNREFUSED)']]
    ];
    for (const [answer, expected] of outcomes) {
        const { liveness, pings, deaths } = watch(answer, { pingIntervalMs: 0 });
        for (let i = 0; i < 5; i++) liveness.suspect();
        await waitFor(() => pings.length > 0 && deaths.length === expected.length, 10_000, 'the check to be done');
        await sleep(20);
        liveness.stop();
        assert.deepEqual(pings, [500], 'one check, with the short timeout');
        assert.deepEqual(deaths, expected);
    }
});

test('stop(): no more pings, and no death reported', async () => {
    const { liveness, pings, deaths } = watch(timeout);
    liveness.stop();
    liveness.requestTimedOut();
    liveness.requestTimedOut();
    liveness.requestTimedOut();
    await sleep(100);
    assert.deepEqual(pings, []);
    assert.deepEqual(deaths, []);
});
