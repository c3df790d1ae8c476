/**
 * The input engine (src/catalog/interaction.ts) through the prompt service, over in-memory ports: every row of the
 * table (a 2026-07-28 or 2025 upstream, a 2026-07-28 or 2025 client), refusals, rounds, bounds and held questions.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { ProtocolError } from '@modelcontextprotocol/client';
import { Catalog } from '../../src/catalog/catalog.js';
import { CursorCodec } from '../../src/catalog/cursor.js';
import type { ClientInput, InputEvent, InteractionBounds } from '../../src/catalog/interaction.js';
import { RequestStates } from '../../src/catalog/request-state.js';
import { PromptService, type Caller, type GetRequest } from '../../src/catalog/service.js';
import type { InputRequired } from '../../src/catalog/upstream-port.js';
import type { InputRequest } from '../../src/protocol/input-requests.js';
import type { UsageEvent } from '../../src/catalog/usage.js';
import { VisibleSlices } from '../../src/catalog/visible-slices.js';
import { RELIST, silentLogger } from './fake-upstream.js';
import { ACCEPTED, BOUNDS, clientOf, CONFIRM, EVERYTHING, OPEN_URL, SAMPLE, ScriptedUpstream } from './input-ports.js';

const SECRET = 'interaction test secret';
const alice: Caller = { scope: 'alice', visible: () => true };
const erin: Caller = { scope: 'erin', visible: () => true };
const NAME = 'up__ask';

function setup(t: TestContext, bounds: Partial<InteractionBounds> = {}, instance = 'G1') {
    const catalog = new Catalog({ naming: { separator: '__' }, logger: silentLogger, notifications: { debounceMs: 10, maxDelayMs: 100 }, relist: () => RELIST });
    t.after(() => catalog.close());
    const upstream = new ScriptedUpstream('up');
    catalog.setUpstreams([upstream]);
    const options = {
        pageSize: 10,
        maxArguments: 4,
        maxArgumentBytes: 64,
        maxResultBytes: 100_000,
        maxJsonDepth: 32,
        passUnknownArguments: () => false,
        input: { ...BOUNDS, ...bounds }
    };
    const states = new RequestStates(SECRET);
    const service = new PromptService(catalog, new CursorCodec(SECRET), options, new VisibleSlices(), states, instance);
    t.after(() => service.held.cancelAll('test over'));
    const usage: UsageEvent[] = [];
    const inputs: InputEvent[] = [];
    service.usage.subscribe(event => usage.push(event));
    service.inputs.subscribe(event => inputs.push(event));
    const get = (input: ClientInput | undefined, extra: Partial<GetRequest> = {}) => service.get({ name: NAME, args: { who: 'alice' }, caller: alice, input, ...extra });
    return { service, upstream, usage, inputs, get, states };
}

async function rpcError(call: Promise<unknown>): Promise<{ code: number; message: string; data?: unknown }> {
    const error: unknown = await call.then(
        () => assert.fail('expected an error'),
        (failure: unknown) => failure
    );
    assert.ok(error instanceof ProtocolError, `expected a ProtocolError, got ${String(error)}`);
    return { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) };
}

function inputRequired(result: unknown): InputRequired {
    assert.equal((result as InputRequired).resultType, 'input_required', JSON.stringify(result));
    return result as InputRequired;
}

/** A 2026-07-28 upstream asking `requests` in each of `rounds` rounds, then answering with what it got. */
function modernScript(upstream: ScriptedUpstream, rounds: number, requests: Record<string, unknown> = { ok: CONFIRM }) {
    upstream.script = ({ continuation }) => {
        const round = continuation?.requestState === undefined ? 0 : Number(continuation.requestState.slice(1));
        if (round >= rounds) return Promise.resolve({ messages: [{ role: 'user', content: { type: 'text', text: JSON.stringify(continuation?.inputResponses) } }] });
        return Promise.resolve({ resultType: 'input_required', inputRequests: requests, requestState: `R${round + 1}` });
    };
}

const refusedElicitation = {
    code: -32021,
    message: 'The upstream asks for elicitation, which this client did not declare',
    data: { requiredCapabilities: { elicitation: { form: {} } } }
};

describe('row mrtr: a 2026-07-28 upstream, a 2026-07-28 client', () => {
    test("its input_required is passed checked, the upstream's state sealed to caller, prompt and arguments, the round counted", async t => {
        const { upstream, get, usage, inputs } = setup(t);
        modernScript(upstream, 1);
        const carol = clientOf('2026-07-28', EVERYTHING);
        const first = inputRequired(await get(carol.input));
        assert.deepEqual(first.inputRequests, { ok: CONFIRM });
        assert.ok(first.requestState !== undefined && first.requestState !== 'R1', 'the upstream state never leaves the gateway as it is');
        const answers = { ok: ACCEPTED };
        const stolen = get(carol.input, { caller: erin, continuation: { inputResponses: answers, requestState: first.requestState } });
        assert.deepEqual(await rpcError(stolen), { code: -32602, message: 'Invalid requestState' });
        const otherArgs = get(carol.input, { args: { who: 'mallory' }, continuation: { inputResponses: answers, requestState: first.requestState } });
        assert.deepEqual(await rpcError(otherArgs), { code: -32602, message: 'Invalid requestState' });
        const otherAddress = get({ ...carol.input, holder: '127.0.0.3' }, { continuation: { inputResponses: answers, requestState: first.requestState } });
        assert.deepEqual(await rpcError(otherAddress), { code: -32602, message: 'Invalid requestState' });
        assert.equal(upstream.gets.length, 1, 'no refused retry reached the upstream');
        const done = await get(carol.input, { continuation: { inputResponses: answers, requestState: first.requestState } });
        assert.deepEqual(upstream.continuations[1], { inputResponses: answers, requestState: 'R1' });
        assert.equal((done as { messages: unknown[] }).messages.length, 1);
        assert.equal(usage[0]?.path, 'mrtr');
        assert.deepEqual(
            usage.map(event => [event.outcome, event.rounds]),
            [
                ['ok', 1],
                ['invalid_params', undefined],
                ['invalid_params', undefined],
                ['invalid_params', undefined],
                ['ok', undefined]
            ]
        );
        assert.deepEqual(inputs, [{ upstream: 'up', client: 'alice', path: 'mrtr', method: 'elicitation/create', outcome: 'passed' }]);
    });

    test('a request the client did not declare is refused -32021; past maxRounds the upstream is at fault', async t => {
        const { upstream, get } = setup(t, { maxRounds: 2 });
        modernScript(upstream, 5, { go: OPEN_URL });
        assert.deepEqual(await rpcError(get(clientOf('2026-07-28', { elicitation: { form: {} } }).input)), {
            code: -32021,
            message: 'The upstream asks for elicitation (url mode), which this client did not declare',
            data: { requiredCapabilities: { elicitation: { url: {} } } }
        });
        const carol = clientOf('2026-07-28', EVERYTHING);
        let state = inputRequired(await get(carol.input)).requestState;
        assert.deepEqual(
            inputRequired(await get(carol.input)).inputRequests,
            { go: { method: 'elicitation/create', params: { mode: 'url', message: 'Sign in', url: 'https://example.com/login' } } },
            'no elicitationId for 2026-07-28'
        );
        state = inputRequired(await get(carol.input, { continuation: { inputResponses: { go: { action: 'accept' } }, requestState: state } })).requestState;
        const third = await rpcError(get(carol.input, { continuation: { inputResponses: { go: { action: 'accept' } }, requestState: state } }));
        assert.deepEqual(third, { code: -32603, message: 'Upstream up failed: asked for input more than 2 rounds (inputRequests.maxRounds)' });
        assert.deepEqual(upstream.faults, ['input_rounds']);
    });

    test("more requests in a round than maxPerRound, or a malformed one, is the upstream's fault", async t => {
        const { upstream, get } = setup(t, { maxPerRound: 2 });
        modernScript(upstream, 1, { a: CONFIRM, b: CONFIRM, c: CONFIRM });
        const carol = clientOf('2026-07-28', EVERYTHING);
        assert.match((await rpcError(get(carol.input))).message, /3 input requests in one round, more than inputRequests.maxPerRound \(2\)/);
        modernScript(upstream, 1, { a: { method: 'tools/call', params: {} } });
        assert.equal((await rpcError(get(carol.input))).code, -32603);
        assert.deepEqual(upstream.faults, ['invalid_result', 'invalid_result']);
    });

    test('without a client input (the prompts command) the input_required is returned sealed, as it came', async t => {
        const { upstream, get } = setup(t);
        modernScript(upstream, 1);
        const result = inputRequired(await get(undefined));
        assert.deepEqual(result.inputRequests, { ok: CONFIRM });
        assert.notEqual(result.requestState, 'R1');
    });
});

describe('row mrtr_to_request: a 2026-07-28 upstream, a 2025 client asked on its stream', () => {
    test('each round is asked, the upstream retried with the answers and its own state, until it completes', async t => {
        const { upstream, get, usage } = setup(t);
        modernScript(upstream, 2, { ok: CONFIRM, s: SAMPLE });
        const bob = clientOf('2025-11-25', EVERYTHING);
        const result = get(bob.input);
        for (let round = 0; round < 2; round++) {
            const [confirm, sample] = [await bob.next(), await bob.next()];
            assert.deepEqual([confirm.request, sample.request], [CONFIRM, SAMPLE], 'both at once');
            sample.answer({ result: { role: 'assistant', content: { type: 'text', text: 'yes' }, model: 'm', _meta: { secret: 1 } } });
            confirm.answer({ result: ACCEPTED });
        }
        assert.deepEqual(await result, {
            messages: [
                { role: 'user', content: { type: 'text', text: JSON.stringify({ ok: ACCEPTED, s: { role: 'assistant', content: { type: 'text', text: 'yes' }, model: 'm' } }) } }
            ]
        });
        assert.deepEqual(
            upstream.continuations.map(continuation => continuation?.requestState),
            [undefined, 'R1', 'R2'],
            "the upstream's own state, never the client's to see"
        );
        assert.deepEqual([usage.at(-1)?.rounds, usage.at(-1)?.path], [2, 'mrtr_to_request']);
    });

    test('refused before anyone is asked: what the client did not declare (-32021), what its revision cannot carry', async t => {
        const { upstream, get } = setup(t);
        modernScript(upstream, 1, { s: SAMPLE, ok: CONFIRM });
        const samplingOnly = clientOf('2025-11-25', { sampling: {} });
        assert.deepEqual(await rpcError(get(samplingOnly.input)), refusedElicitation);
        const audio = { ...SAMPLE, params: { ...SAMPLE.params, messages: [{ role: 'user', content: { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' } }] } };
        modernScript(upstream, 1, { a: audio });
        const old = clientOf('2024-11-05', EVERYTHING);
        assert.deepEqual(await rpcError(get(old.input)), { code: -32603, message: 'The upstream asks for sampling with audio, which MCP 2024-11-05 cannot carry' });
        assert.deepEqual([samplingOnly.asked, old.asked], [[], []]);
        assert.equal(upstream.gets.length, 2, 'no retry');
    });

    test("an error answer ends it; a malformed answer is one; the client's other questions are cancelled", async t => {
        const { upstream, get, usage } = setup(t);
        modernScript(upstream, 1, { ok: CONFIRM, s: SAMPLE });
        const bob = clientOf('2025-11-25', EVERYTHING);
        const failed = rpcError(get(bob.input));
        const [confirm, sample] = [await bob.next(), await bob.next()];
        confirm.answer({ error: { code: -1, message: 'user closed the window' } });
        assert.deepEqual(await failed, { code: -32603, message: 'The client answered elicitation/create with error -1: user closed the window' });
        assert.equal(sample.signal.aborted, true, 'the question still out is withdrawn');
        const malformed = rpcError(get(bob.input));
        (await bob.next()).answer({ result: { action: 'maybe' } });
        assert.match((await malformed).message, /malformed/);
        assert.equal(upstream.gets.length, 2, 'no retry');
        assert.equal(usage.at(-1)?.outcome, 'upstream_error');
    });

    test('past maxRounds the upstream is at fault; the answers together are bounded', async t => {
        const { upstream, get } = setup(t, { maxRounds: 1, maxAnswerBytes: 100 });
        modernScript(upstream, 2);
        const bob = clientOf('2025-11-25', EVERYTHING);
        const tooMany = rpcError(get(bob.input));
        (await bob.next()).answer({ result: ACCEPTED });
        assert.match((await tooMany).message, /asked for input more than 1 rounds/);
        assert.deepEqual(upstream.faults, ['input_rounds']);
        modernScript(upstream, 1);
        const large = rpcError(get(bob.input));
        (await bob.next()).answer({ result: { action: 'accept', content: { text: 'x'.repeat(200) } } });
        assert.deepEqual(await large, { code: -32603, message: "The client's answers are larger than 100 bytes (limits.maxBodyBytes)" });
    });

    test('answerTimeoutMs per round and maxTotalMs in all (mock timers)', async t => {
        t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
        const { upstream, get, usage } = setup(t, { answerTimeoutMs: 60_000, maxTotalMs: 90_000 });
        modernScript(upstream, 2);
        const bob = clientOf('2025-11-25', EVERYTHING);
        const late = rpcError(get(bob.input));
        const first = await bob.next();
        t.mock.timers.tick(50_000);
        first.answer({ result: ACCEPTED });
        const second = await bob.next();
        t.mock.timers.tick(40_000);
        assert.deepEqual(await late, { code: -32603, message: 'The client gave no answer within 40 s' }, 'what was left of maxTotalMs');
        assert.equal(second.signal.aborted, true);
        assert.equal(usage.at(-1)?.outcome, 'timeout');
    });

    test('the client going away ends it; a caller who no longer sees the prompt is not retried for', async t => {
        const { upstream, get } = setup(t);
        modernScript(upstream, 1);
        const bob = clientOf('2025-11-25', EVERYTHING);
        const gone = new AbortController();
        const cancelled = rpcError(get(bob.input, { control: { signal: gone.signal } }));
        const asked = await bob.next();
        gone.abort();
        assert.deepEqual(await cancelled, { code: -32603, message: 'The client request was cancelled' });
        assert.equal(asked.signal.aborted, true);
        let visible = true;
        const fickle: Caller = { scope: 'alice', visible: () => visible };
        const hidden = rpcError(get(bob.input, { caller: fickle }));
        visible = false;
        (await bob.next()).answer({ result: ACCEPTED });
        assert.match((await hidden).message, /Unknown prompt/);
        assert.equal(upstream.gets.length, 2, 'no retry for a hidden prompt');
    });
});

/** A 2025 upstream asking each of `requests` in turn (a list per step: asked together), answering with the answers. */
function legacyScript(upstream: ScriptedUpstream, steps: InputRequest[][]) {
    upstream.script = async ({ ask }) => {
        const answers = [];
        for (const step of steps) answers.push(...(await Promise.all(step.map(request => ask(request)))));
        return { messages: [{ role: 'user', content: { type: 'text', text: JSON.stringify(answers) } }] };
    };
}

const text = (result: unknown) => JSON.parse((result as { messages: [{ content: { text: string } }] }).messages[0].content.text) as unknown;

describe('row request: a 2025 upstream, a 2025 client', () => {
    test("each of the upstream's requests is put to the client and its answer (or error) sent back", async t => {
        const { upstream, get, usage, inputs } = setup(t);
        legacyScript(upstream, [[CONFIRM], [SAMPLE]]);
        const bob = clientOf('2025-06-18', EVERYTHING);
        const result = get(bob.input);
        const confirm = await bob.next();
        assert.deepEqual(confirm.request, CONFIRM, 'the port adapts it to the revision');
        confirm.answer({ result: ACCEPTED });
        (await bob.next()).answer({ error: { code: -1, message: 'no model' } });
        assert.deepEqual(text(await result), [{ result: ACCEPTED }, { error: { code: -1, message: 'no model' } }]);
        assert.deepEqual([usage.at(-1)?.rounds, usage.at(-1)?.path], [2, 'request']);
        assert.deepEqual(
            inputs.map(event => [event.path, event.method, event.outcome]),
            [
                ['request', 'elicitation/create', 'answered'],
                ['request', 'sampling/createMessage', 'answered']
            ]
        );
    });

    test('a request the client did not declare: refused to the upstream, its call cancelled, the client told -32021', async t => {
        const { upstream, get, inputs, usage } = setup(t);
        legacyScript(upstream, [[CONFIRM]]);
        const old = clientOf('2025-03-26', EVERYTHING);
        assert.deepEqual(await rpcError(get(old.input)), refusedElicitation);
        assert.equal(upstream.cancelled, 1);
        assert.deepEqual(old.asked, []);
        assert.deepEqual(
            inputs.map(event => event.outcome),
            ['refused']
        );
        assert.equal(usage.at(-1)?.outcome, 'invalid_params', "a refusal is about the client's request");
    });

    test('no answer within answerTimeoutMs cancels the question and the call (mock timers)', async t => {
        t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
        const { upstream, get } = setup(t, { answerTimeoutMs: 2000 });
        legacyScript(upstream, [[CONFIRM]]);
        const bob = clientOf('2025-11-25', EVERYTHING);
        const late = rpcError(get(bob.input));
        const asked = await bob.next();
        t.mock.timers.tick(2000);
        assert.deepEqual(await late, { code: -32603, message: 'The client gave no answer within 2 s' });
        assert.equal(asked.signal.aborted, true);
        assert.equal(upstream.cancelled, 1);
    });

    test('the upstream withdrawing its request withdraws the question; past maxRounds it is at fault', async t => {
        const { upstream, get } = setup(t, { maxRounds: 2 });
        legacyScript(upstream, [[CONFIRM]]);
        const bob = clientOf('2025-11-25', EVERYTHING);
        const withdrawn = get(bob.input).catch(() => undefined);
        const asked = await bob.next();
        upstream.withdraw();
        assert.equal(asked.signal.aborted, true);
        await withdrawn;
        legacyScript(upstream, [[CONFIRM], [CONFIRM], [CONFIRM]]);
        const tooMany = rpcError(get(bob.input));
        (await bob.next()).answer({ result: ACCEPTED });
        (await bob.next()).answer({ result: ACCEPTED });
        assert.deepEqual(await tooMany, { code: -32603, message: 'Upstream up failed: asked for input more than 2 rounds (inputRequests.maxRounds)' });
    });
});

describe('row request_to_mrtr: a 2025 upstream, a 2026-07-28 client (held questions)', () => {
    const carol = clientOf('2026-07-28', EVERYTHING);
    const retry = (state: string | undefined, inputResponses: Record<string, unknown>, extra: Partial<GetRequest> = {}) => ({
        continuation: { inputResponses, requestState: state },
        ...extra
    });

    test("the upstream's requests become input_required rounds while its call stays open; the retries answer them", async t => {
        const { service, upstream, get, usage, inputs } = setup(t);
        legacyScript(upstream, [[CONFIRM], [OPEN_URL]]);
        const first = inputRequired(await get(carol.input));
        assert.deepEqual(first.inputRequests, { q1: CONFIRM });
        assert.equal(service.held.size, 1);
        const second = inputRequired(await get(carol.input, retry(first.requestState, { q1: ACCEPTED })));
        assert.deepEqual(
            second.inputRequests,
            { q2: { method: 'elicitation/create', params: { mode: 'url', message: 'Sign in', url: 'https://example.com/login' } } },
            "a 2025 upstream's elicitationId is left out"
        );
        const done = await get(carol.input, retry(second.requestState, { q2: { action: 'accept' } }));
        assert.deepEqual(text(done), [{ result: ACCEPTED }, { result: { action: 'accept' } }]);
        assert.equal(upstream.gets.length, 1, 'one upstream call for the three client requests');
        assert.equal(service.held.size, 0);
        assert.deepEqual(
            usage.map(event => [event.rounds, event.path]),
            [
                [1, 'request_to_mrtr'],
                [1, 'request_to_mrtr'],
                [undefined, undefined]
            ],
            'each round counted once'
        );
        assert.deepEqual(
            inputs.map(event => [event.path, event.outcome]),
            [
                ['request_to_mrtr', 'passed'],
                ['request_to_mrtr', 'answered'],
                ['request_to_mrtr', 'passed'],
                ['request_to_mrtr', 'answered']
            ]
        );
    });

    test('requests sent together are one round; an answer left out (or malformed) is asked again', async t => {
        const { upstream, get } = setup(t);
        legacyScript(upstream, [[CONFIRM, SAMPLE]]);
        const first = inputRequired(await get(carol.input));
        assert.deepEqual(Object.keys(first.inputRequests ?? {}), ['q1', 'q2']);
        const again = inputRequired(await get(carol.input, retry(first.requestState, { q1: ACCEPTED, q2: { role: 'nobody' } })));
        assert.deepEqual(again.inputRequests, { q2: SAMPLE });
        const sampled = { role: 'assistant', content: { type: 'text', text: 'yes' }, model: 'm' };
        assert.deepEqual(text(await get(carol.input, retry(again.requestState, { q2: sampled }))), [{ result: ACCEPTED }, { result: sampled }]);
    });

    test('a state is for its own client, arguments and round, once', async t => {
        const { upstream, get } = setup(t);
        legacyScript(upstream, [[CONFIRM], [CONFIRM]]);
        const first = inputRequired(await get(carol.input));
        const invalid = { code: -32602, message: 'Invalid requestState' };
        assert.deepEqual(await rpcError(get(carol.input, retry(first.requestState, { q1: ACCEPTED }, { caller: erin }))), invalid);
        assert.deepEqual(await rpcError(get({ ...carol.input, holder: '127.0.0.3' }, retry(first.requestState, { q1: ACCEPTED }))), invalid);
        const [second, replay] = await Promise.allSettled([
            get(carol.input, retry(first.requestState, { q1: ACCEPTED })),
            get(carol.input, retry(first.requestState, { q1: ACCEPTED }))
        ]);
        assert.equal(second.status, 'fulfilled');
        assert.equal(replay.status, 'rejected', 'the same state twice at once');
        assert.deepEqual(await rpcError(get(carol.input, retry(first.requestState, { q1: ACCEPTED }))), invalid, "a past round's state");
        assert.equal(upstream.gets.length, 1);
    });

    test("no retry within answerTimeoutMs: the upstream's request refused, its call cancelled; a late retry is told it expired (mock timers)", async t => {
        t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
        const { service, upstream, get, inputs } = setup(t, { answerTimeoutMs: 2000 });
        legacyScript(upstream, [[CONFIRM]]);
        const first = inputRequired(await get(carol.input));
        t.mock.timers.tick(2000);
        await new Promise(resolve => setImmediate(resolve));
        assert.equal(upstream.cancelled, 1);
        assert.equal(service.held.size, 0);
        assert.equal(inputs.at(-1)?.outcome, 'timeout');
        const late = await rpcError(get(carol.input, retry(first.requestState, { q1: ACCEPTED })));
        assert.deepEqual(late, { code: -32602, message: 'The question expired (inputRequests.answerTimeoutMs, 2 s); get the prompt again without requestState' });
    });

    test("another gateway instance's state is refused naming the replica; its own still answers it", async t => {
        const here = setup(t);
        const there = setup(t, {}, 'G2');
        legacyScript(here.upstream, [[CONFIRM]]);
        const first = inputRequired(await here.get(carol.input));
        const elsewhere = await rpcError(there.get(carol.input, retry(first.requestState, { q1: ACCEPTED })));
        assert.deepEqual(elsewhere, { code: -32602, message: 'This question was asked by another gateway replica; get the prompt again without requestState' });
        assert.deepEqual(text(await here.get(carol.input, retry(first.requestState, { q1: ACCEPTED }))), [{ result: ACCEPTED }]);
    });

    test('bounded: maxHeldPerClient per client and address, maxHeld in all (0: never hold)', async t => {
        const { service, upstream, get } = setup(t, { maxHeldPerClient: 1 });
        legacyScript(upstream, [[CONFIRM]]);
        inputRequired(await get(carol.input));
        const refused = await rpcError(get(carol.input));
        assert.deepEqual(refused, { code: -32603, message: 'Too many questions waiting (inputRequests.maxHeldPerClient, 1); try again later' });
        inputRequired(await get(carol.input, { caller: erin }));
        inputRequired(await get({ ...carol.input, holder: '127.0.0.2' }));
        assert.equal(service.held.size, 3);
        const none = setup(t, { maxHeld: 0 });
        legacyScript(none.upstream, [[CONFIRM]]);
        assert.match((await rpcError(none.get(carol.input))).message, /inputRequests.maxHeld, 0/);
        assert.equal(none.upstream.cancelled, 1);
    });

    test('a request the client did not declare is refused (-32021) and nothing is held', async t => {
        const { service, upstream, get } = setup(t);
        legacyScript(upstream, [[SAMPLE]]);
        assert.deepEqual(await rpcError(get(clientOf('2026-07-28', { elicitation: {} }).input)), {
            code: -32021,
            message: 'The upstream asks for sampling, which this client did not declare',
            data: { requiredCapabilities: { sampling: {} } }
        });
        assert.equal(upstream.cancelled, 1);
        assert.equal(service.held.size, 0);
    });

    test('the retry going away, or cancelAll (shutdown), ends the held call', async t => {
        const { service, upstream, get } = setup(t);
        legacyScript(upstream, [[CONFIRM], [CONFIRM]]);
        const first = inputRequired(await get(carol.input));
        const gone = new AbortController();
        const waiting = rpcError(get(carol.input, retry(first.requestState, { q1: ACCEPTED }, { control: { signal: gone.signal } })));
        await new Promise(resolve => setImmediate(resolve));
        gone.abort();
        assert.deepEqual(await waiting, { code: -32603, message: 'The client request was cancelled' });
        assert.equal(service.held.size, 0);
        inputRequired(await get(carol.input));
        service.held.cancelAll('gateway shutting down');
        await new Promise(resolve => setImmediate(resolve));
        assert.equal(service.held.size, 0);
        assert.equal(upstream.cancelled, 2);
    });
});
