/**
 * Input requests across protocol eras (issue 28), over the gateway's HTTP endpoint: a prompt whose upstream asks the
 * user something (elicitation, sampling, roots) works for every client that declared it can answer, whichever era
 * each side speaks, and nothing of one client's question or answer ever reaches another.
 *
 * | upstream ↓ / client → | 2025 client (asked on its request's stream) | 2026-07-28 client (input_required + retry) |
 * |-----------------------|---------------------------------------------|-------------------------------------------|
 * | 2026-07-28 (up26)     | row B                                       | row A                                     |
 * | 2025 (up25h, up25s)   | row C                                       | row D                                     |
 *
 * Real parts: test/fixtures/interactive-server.ts (SDK v2 server) in both eras, over Streamable HTTP (one process each
 * for the whole file) and stdio (children of each gateway); SDK v1 and v2 clients (test/input-clients.ts) whose answers
 * carry their own names, so each result shows whose answer reached it. Rows run two clients at once on the fixture's
 * `together` prompt, whose gets wait for each other upstream: the two questions are really out at the same time.
 *
 * The first describe checks the fixture alone (no gateway); the others go through the gateway. Clients: alice (SDK v1,
 * 2025-11-25), bob (SDK v2, 2025-11-25), carol and dave (SDK v2, 2026-07-28).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { GATEWAY_INFO } from '../src/version.js';
import { capturingLogger, closeAfter, connectHttp, startTestGateway, upstreamsReady, waitFor, type TeardownScope } from './helpers.js';
import {
    ALICE,
    assertOwn,
    BOB,
    bothAtOnce,
    CAROL,
    connectInputClient,
    DAVE,
    everyPrompt,
    EVERYTHING,
    failure,
    interactiveStats,
    interactiveStdio,
    startInteractiveHttp,
    type InteractiveFixture,
    type InteractiveStats
} from './input-clients.js';
import { clientAt, initializeBody, openRawSession, post, postModern, SseReader, type JsonRpcMessage } from './raw-http.js';

async function body(response: Response): Promise<JsonRpcMessage> {
    return (await response.json()) as JsonRpcMessage;
}

/** A raw 2026-07-28 prompts/get (its _meta declaring `capabilities`), answered with JSON. */
async function modernGet(
    url: string,
    params: Record<string, unknown>,
    capabilities: Record<string, unknown> = EVERYTHING,
    headers: Record<string, string> = {},
    from?: ReturnType<typeof clientAt>
) {
    const response = await postModern(
        url,
        'prompts/get',
        { ...params, _meta: { 'io.modelcontextprotocol/clientCapabilities': capabilities } },
        headers,
        from === undefined ? {} : { from }
    );
    return { status: response.status, message: await body(response) };
}

const ACCEPTED = { action: 'accept', content: { ok: true, by: 'raw' } };

// The HTTP fixtures, one process per era for the whole file (every describe shares them).
const fileTeardown: (() => unknown)[] = [];
const fileScope: TeardownScope = { after: fn => void fileTeardown.push(fn) };
let fx25: InteractiveFixture;
let fx26: InteractiveFixture;
/**
 * The gateway most rows go through: up26 (2026-07-28), up25h (2025 Streamable HTTP), up25s (2025 stdio, its child);
 * up25hr, the same 2025 server with relayInputRequests: related (only its answer streams' questions are relayed).
 */
let rows: RunningGateway;
before(async () => {
    [fx25, fx26] = await Promise.all([startInteractiveHttp(fileScope, '2025'), startInteractiveHttp(fileScope, '2026-07-28')]);
    rows = await startTestGateway({
        upstreams: [
            { id: 'up26', transport: 'http', url: fx26.url },
            { id: 'up25h', transport: 'http', url: fx25.url },
            { id: 'up25hr', transport: 'http', url: fx25.url, relayInputRequests: 'related' },
            interactiveStdio('up25s')
        ]
    });
    closeAfter(fileScope, () => rows.close());
    await upstreamsReady(rows);
});
after(async () => {
    for (const close of fileTeardown.reverse()) await close();
});

/** A plain client reading a fixture's stats directly (not through a gateway). */
async function statsOf(t: TeardownScope, fixture: InteractiveFixture, era: '2025' | '2026-07-28'): Promise<() => Promise<InteractiveStats>> {
    const client = new Client({ name: 'stats-reader', version: '1.0.0' }, era === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
    await client.connect(new StreamableHTTPClientTransport(new URL(fixture.url)));
    closeAfter(t, () => client.close());
    return () => interactiveStats(client);
}

describe('the interactive fixture, without the gateway', () => {
    test('a 2025 server over Streamable HTTP asks each client on its own request: alice (SDK v1) and bob (SDK v2) at once, every prompt', { timeout: 120_000 }, async t => {
        const alice = await connectInputClient(t, { url: fx25.url }, ALICE);
        const bob = await connectInputClient(t, { url: fx25.url }, BOB);
        await everyPrompt(alice, bob, '', ['confirm', 'twice', 'sample', 'tools', 'roots', 'all', 'url']);
        assert.ok(
            alice.asked.some(ask => ask.params['mode'] === 'url' && typeof ask.params['elicitationId'] === 'string'),
            'a 2025 url elicitation carries its elicitationId'
        );
        const stats = await (await statsOf(t, fx25, '2025'))();
        assert.ok(
            stats.told.some(told => told.client === 'alice' && isDeepStrictEqual(told.capabilities, EVERYTHING)),
            `the fixture records what each initialize declared: ${JSON.stringify(stats.told)}`
        );
    });

    test('a 2025 server refuses, in its own words, what the client did not declare; an unrelated question goes to the GET stream', { timeout: 60_000 }, async t => {
        const samplingOnly = await connectInputClient(t, { url: fx25.url }, { name: 'erin', sdk: 'v2', capabilities: { sampling: {} } });
        const refused = await failure(samplingOnly.get('confirm', { who: 'erin' }));
        assert.match(refused.message, /Client does not support form elicitation/);
        const formOnly = await connectInputClient(t, { url: fx25.url }, { name: 'erin', sdk: 'v2', capabilities: { elicitation: { form: {} } } });
        assert.match((await failure(formOnly.get('url', { who: 'erin' }))).message, /Client does not support url elicitation/);
        assert.match((await failure(samplingOnly.get('tools', { who: 'erin' }))).message, /Client does not support sampling tools capability/);
        // The SDK v1 client opens the session's GET stream after initialize: the unrelated question arrives there.
        const alice = await connectInputClient(t, { url: fx25.url }, ALICE);
        assertOwn(await alice.get('unrelated', { who: 'alice' }), alice, 'unrelated');
    });

    test('a 2025 server counts a prompts/get cancelled while its question is out', { timeout: 60_000 }, async t => {
        const stats = await statsOf(t, fx25, '2025');
        const before = (await stats()).prompts['confirm']?.cancelled ?? 0;
        const bob = await connectInputClient(t, { url: fx25.url }, { ...BOB, hold: true });
        const cancel = new AbortController();
        const pending = bob.get('confirm', { who: 'bob' }, cancel.signal);
        await bob.whenAsked(1);
        cancel.abort('bob gave up');
        await assert.rejects(pending);
        await waitFor(async () => ((await stats()).prompts['confirm']?.cancelled ?? 0) === before + 1, 20_000, 'the fixture to count the cancel');
    });

    test('a 2026-07-28 server answers input_required and takes the retry: carol and dave at once, every prompt', { timeout: 120_000 }, async t => {
        const carol = await connectInputClient(t, { url: fx26.url }, CAROL);
        const dave = await connectInputClient(t, { url: fx26.url }, DAVE);
        await everyPrompt(carol, dave, '', ['confirm', 'twice', 'sample', 'tools', 'roots', 'all', 'url']);
        assert.ok(!carol.asked.some(ask => 'elicitationId' in ask.params), 'a 2026-07-28 url elicitation has no elicitationId');
        assert.match((await failure(carol.get('loop', { who: 'carol' }))).message, /10 rounds/, "loop asks until the client's own bound");
    });

    test('a 2026-07-28 server takes a retry only with a requestState it minted for that prompt and who', { timeout: 60_000 }, async t => {
        const stats = await statsOf(t, fx26, '2026-07-28');
        const rejected = (await stats()).stateRejected;
        const first = await modernGet(fx26.url, { name: 'confirm', arguments: { who: 'carol' } });
        const state = first.message.result?.['requestState'];
        assert.equal(first.message.result?.['resultType'], 'input_required');
        assert.equal(typeof state, 'string');
        const stolen = await modernGet(fx26.url, { name: 'confirm', arguments: { who: 'dave' }, inputResponses: { ok: ACCEPTED }, requestState: state });
        assert.equal(stolen.message.error?.code, -32602);
        assert.equal((await stats()).stateRejected, rejected + 1);
        const missing = await modernGet(fx26.url, { name: 'confirm', arguments: { who: 'carol' }, inputResponses: {}, requestState: state });
        assert.equal(missing.message.result?.['resultType'], 'input_required', 'an unanswered question is asked again');
        const done = await modernGet(fx26.url, { name: 'confirm', arguments: { who: 'carol' }, inputResponses: { ok: ACCEPTED }, requestState: state });
        assert.equal(done.message.result?.['resultType'], 'complete', JSON.stringify(done.message));
    });
});

describe('through the gateway: every row of the table', () => {
    const url = () => rows.url!;

    test('row A (2026-07-28 upstream, 2026-07-28 clients): carol and dave at once, every prompt, each gets its own answers', { timeout: 120_000 }, async t => {
        const carol = await connectInputClient(t, { url: url() }, CAROL);
        const dave = await connectInputClient(t, { url: url() }, DAVE);
        await everyPrompt(carol, dave, 'up26__', ['confirm', 'twice', 'sample', 'tools', 'roots', 'all', 'url']);
    });

    test(
        'row B (2026-07-28 upstream, 2025 clients): alice (v1) and bob (v2) are asked on their own request streams, at once, every prompt',
        {
            timeout: 120_000
        },
        async t => {
            const alice = await connectInputClient(t, { url: url() }, ALICE);
            const bob = await connectInputClient(t, { url: url() }, BOB);
            await everyPrompt(alice, bob, 'up26__', ['confirm', 'twice', 'sample', 'tools', 'roots', 'all', 'url']);
            const urlQuestion = alice.asked.find(asked => asked.params['mode'] === 'url');
            assert.equal(typeof urlQuestion?.params['elicitationId'], 'string', 'a 2025-11-25 client gets a url elicitation with an elicitationId the gateway made up');
        }
    );

    test(
        "row C (2025 Streamable HTTP upstream, 2025 clients): the question on the upstream's answer stream reaches the client whose request caused it",
        {
            timeout: 120_000
        },
        async t => {
            const alice = await connectInputClient(t, { url: url() }, ALICE);
            const bob = await connectInputClient(t, { url: url() }, BOB);
            // roots only with relayRoots (see the options describe).
            await everyPrompt(alice, bob, 'up25h__', ['confirm', 'twice', 'sample', 'tools', 'url']);
        }
    );

    test('row C on a 2025 stdio upstream (relayInputRequests auto): one get in flight, its questions are its own', { timeout: 120_000 }, async t => {
        const alice = await connectInputClient(t, { url: url() }, ALICE);
        const bob = await connectInputClient(t, { url: url() }, BOB);
        for (const prompt of ['confirm', 'twice', 'sample']) {
            assertOwn(await alice.get(`up25s__${prompt}`, { who: 'alice' }), alice, prompt);
            assertOwn(await bob.get(`up25s__${prompt}`, { who: 'bob' }), bob, prompt);
        }
    });

    test(
        'row C on a 2025 stdio upstream (auto) with two gets in flight: the question is refused to the upstream, naming exclusive; nobody is asked',
        { timeout: 120_000 },
        async t => {
            const alice = await connectInputClient(t, { url: url() }, ALICE);
            const bob = await connectInputClient(t, { url: url() }, BOB);
            const outcomes = await Promise.allSettled([alice.get('up25s__together', { who: 'alice', n: '2' }), bob.get('up25s__together', { who: 'bob', n: '2' })]);
            assert.deepEqual(
                outcomes.map(outcome => outcome.status),
                ['rejected', 'rejected']
            );
            assert.deepEqual([...alice.asked, ...bob.asked], [], 'a question that cannot be tied to one request is put to no client');
            const reader = await connectHttp(url());
            closeAfter(t, () => reader.close());
            const stats = await interactiveStats(reader, 'up25s__stats');
            assert.ok(
                stats.errors.some(error => /set relayInputRequests: exclusive/.test(error)),
                `the upstream was told why: ${JSON.stringify(stats.errors)}`
            );
        }
    );

    test("row D (2025 upstreams, 2026-07-28 clients): the upstream's question comes back as input_required; the retry answers it", { timeout: 120_000 }, async t => {
        const carol = await connectInputClient(t, { url: url() }, CAROL);
        const dave = await connectInputClient(t, { url: url() }, DAVE);
        await everyPrompt(carol, dave, 'up25h__', ['confirm', 'twice', 'sample', 'tools', 'url']);
        const urlQuestion = carol.asked.find(asked => asked.params['mode'] === 'url');
        assert.ok(urlQuestion !== undefined && !('elicitationId' in urlQuestion.params), "a 2026-07-28 input request has no elicitationId (the 2025 upstream's is left out)");
        for (const prompt of ['confirm', 'twice']) {
            assertOwn(await carol.get(`up25s__${prompt}`, { who: 'carol' }), carol, prompt);
            assertOwn(await dave.get(`up25s__${prompt}`, { who: 'dave' }), dave, prompt);
        }
    });

    test('rows C and D on one shared upstream session at once: alice (2025) and carol (2026-07-28) each get their own answer', { timeout: 60_000 }, async t => {
        const alice = await connectInputClient(t, { url: url() }, ALICE);
        const carol = await connectInputClient(t, { url: url() }, CAROL);
        await bothAtOnce(alice, carol, 'up25h__together', { n: '2' });
    });

    test('a 2025 Streamable HTTP upstream is told what the gateway can relay (no roots without relayRoots)', { timeout: 60_000 }, async t => {
        const reader = await connectHttp(url());
        closeAfter(t, () => reader.close());
        const told = (await interactiveStats(reader, 'up25h__stats')).told.filter(entry => entry.client === GATEWAY_INFO.name);
        assert.ok(told.length > 0);
        for (const entry of told) assert.deepEqual(entry.capabilities, { elicitation: { form: {}, url: {} }, sampling: { context: {}, tools: {} } });
    });
});

describe('through the gateway: revisions and refusals', () => {
    const url = () => rows.url!;

    test('a 2025-06-18 client is asked elicitation/create without mode (its revision has none)', { timeout: 60_000 }, async t => {
        const bob = await connectInputClient(t, { url: url() }, { ...BOB, revision: '2025-06-18', capabilities: { elicitation: {} } });
        for (const upstream of ['up26', 'up25h']) assertOwn(await bob.get(`${upstream}__confirm`, { who: 'bob' }), bob, 'confirm');
        assert.ok(bob.asked.length >= 2 && bob.asked.every(ask => !('mode' in ask.params)), JSON.stringify(bob.asked));
    });

    test("a client that cannot answer gets -32021 naming the capability, from every upstream, and the 2025 upstream's question is cancelled", { timeout: 60_000 }, async t => {
        const fx = await statsOf(t, fx25, '2025');
        const cancelled = (await fx()).prompts['confirm']?.cancelled ?? 0;
        // 2025-03-26 has no elicitation at all: this client can be asked for sampling only.
        const erin = await connectInputClient(t, { url: url() }, { name: 'erin', sdk: 'v2', revision: '2025-03-26', capabilities: { sampling: {} } });
        for (const upstream of ['up26', 'up25h', 'up25s']) {
            assert.deepEqual(
                await failure(erin.get(`${upstream}__confirm`, { who: 'erin' })),
                {
                    code: -32021,
                    message: 'The upstream asks for elicitation, which this client did not declare',
                    data: { requiredCapabilities: { elicitation: { form: {} } } }
                },
                upstream
            );
        }
        assert.deepEqual(erin.asked, []);
        await waitFor(async () => ((await fx()).prompts['confirm']?.cancelled ?? 0) > cancelled, 20_000, "up25h's get cancelled");
    });

    test('refusals name the feature: "elicitation (url mode)" to a form-only client, "sampling with tools" to one without tools', { timeout: 60_000 }, async t => {
        const erin = await connectInputClient(t, { url: url() }, { name: 'erin', sdk: 'v2', capabilities: { elicitation: { form: {} }, sampling: {} } });
        for (const upstream of ['up26', 'up25h']) {
            assert.deepEqual(
                await failure(erin.get(`${upstream}__url`, { who: 'erin' })),
                {
                    code: -32021,
                    message: 'The upstream asks for elicitation (url mode), which this client did not declare',
                    data: { requiredCapabilities: { elicitation: { url: {} } } }
                },
                upstream
            );
            assert.deepEqual(
                await failure(erin.get(`${upstream}__tools`, { who: 'erin' })),
                {
                    code: -32021,
                    message: 'The upstream asks for sampling with tools, which this client did not declare',
                    data: { requiredCapabilities: { sampling: { tools: {} } } }
                },
                upstream
            );
        }
        assert.deepEqual(erin.asked, []);
    });

    test("a 2026-07-28 client without elicitation asking a 2025 upstream's prompt gets -32021 (400) and nothing is held", { timeout: 60_000 }, async () => {
        const refused = await modernGet(url(), { name: 'up25h__confirm', arguments: { who: 'erin' } }, { sampling: {} });
        assert.equal(refused.status, 400);
        assert.equal(refused.message.error?.code, -32021);
        assert.deepEqual(refused.message.error?.data, { requiredCapabilities: { elicitation: { form: {} } } });
    });

    test('an unrelated question from a 2025 upstream (its GET stream) is refused to the upstream with the fix; the client gets -32603', { timeout: 60_000 }, async t => {
        // relayInputRequests: related: under auto, the question on the GET stream would be the one get's in flight.
        const alice = await connectInputClient(t, { url: url() }, ALICE);
        const refused = await failure(alice.get('up25hr__unrelated', { who: 'alice' }));
        assert.equal(refused.code, -32603);
        assert.deepEqual(alice.asked, []);
        const reader = await connectHttp(url());
        closeAfter(t, () => reader.close());
        const stats = await interactiveStats(reader, 'up25h__stats');
        assert.ok(
            stats.errors.some(error => /unrelated alice: .*relayInputRequests/.test(error)),
            JSON.stringify(stats.errors)
        );
    });
});

/** An unanswered 2026-07-28 first get: its input_required result (requestState and the questions). */
async function firstRound(url: string, prompt: string, who: string, headers: Record<string, string> = {}, from?: ReturnType<typeof clientAt>) {
    const { message } = await modernGet(url, { name: prompt, arguments: { who } }, EVERYTHING, headers, from);
    assert.equal(message.result?.['resultType'], 'input_required', JSON.stringify(message));
    const requests = message.result?.['inputRequests'] as Record<string, unknown>;
    return { state: message.result?.['requestState'] as string, keys: Object.keys(requests) };
}

const KEY_OF = (client: string) => `key-of-${client}-0123456789abcdef`;
const bearer = (client: string) => ({ authorization: `Bearer ${KEY_OF(client)}` });

describe('through the gateway: whose requestState it is', () => {
    let gateway: RunningGateway | undefined;
    before(async () => {
        gateway = await startTestGateway({
            auth: { mode: 'apiKey' },
            clients: [
                { id: 'carol', apiKey: KEY_OF('carol') },
                { id: 'dave', apiKey: KEY_OF('dave'), prompts: { deny: ['up26__confirm'] } },
                { id: 'erin', apiKey: KEY_OF('erin') }
            ],
            upstreams: [
                { id: 'up26', transport: 'http', url: fx26.url },
                { id: 'up25h', transport: 'http', url: fx25.url }
            ]
        });
        await upstreamsReady(gateway);
    });
    after(() => gateway?.close());
    const url = () => gateway!.url!;

    test("row A: another client's requestState is refused -32602 and never reaches the upstream", { timeout: 60_000 }, async t => {
        const fx = await statsOf(t, fx26, '2026-07-28');
        const started = (await fx()).prompts['twice']?.started ?? 0;
        const { state, keys } = await firstRound(url(), 'up26__twice', 'carol', bearer('carol'));
        const retry = (client: string, who = 'carol') =>
            modernGet(
                url(),
                { name: 'up26__twice', arguments: { who }, inputResponses: Object.fromEntries(keys.map(key => [key, ACCEPTED])), requestState: state },
                EVERYTHING,
                bearer(client)
            );
        assert.equal((await retry('erin')).message.error?.code, -32602);
        assert.equal((await fx()).prompts['twice']?.started, started + 1, 'the stolen retry never reached the upstream');
        assert.equal((await retry('carol')).message.result?.['resultType'], 'input_required', 'the second round, for carol');
    });

    test('row A: a retry with other arguments is refused -32602 by the gateway (the state is bound to them)', { timeout: 60_000 }, async t => {
        const fx = await statsOf(t, fx26, '2026-07-28');
        const { state, keys } = await firstRound(url(), 'up26__confirm', 'carol', bearer('carol'));
        const rejected = (await fx()).stateRejected;
        const other = await modernGet(
            url(),
            { name: 'up26__confirm', arguments: { who: 'mallory' }, inputResponses: Object.fromEntries(keys.map(key => [key, ACCEPTED])), requestState: state },
            EVERYTHING,
            bearer('carol')
        );
        assert.deepEqual(other.message.error, { code: -32602, message: 'Invalid requestState' });
        assert.equal((await fx()).stateRejected, rejected, 'it never reached the upstream');
    });

    test('row A: an altered requestState is refused -32602', { timeout: 60_000 }, async () => {
        const { state } = await firstRound(url(), 'up26__confirm', 'carol', bearer('carol'));
        const altered = `${state.slice(0, -2)}${state.endsWith('AA') ? 'BB' : 'AA'}`;
        const refused = await modernGet(
            url(),
            { name: 'up26__confirm', arguments: { who: 'carol' }, inputResponses: { ok: ACCEPTED }, requestState: altered },
            EVERYTHING,
            bearer('carol')
        );
        assert.equal(refused.message.error?.code, -32602);
    });

    test('allow-lists: dave, denied up26__confirm, gets "unknown prompt" on a first get and on a retry carrying carol\'s state', { timeout: 60_000 }, async () => {
        const { state } = await firstRound(url(), 'up26__confirm', 'carol', bearer('carol'));
        const first = await modernGet(url(), { name: 'up26__confirm', arguments: { who: 'dave' } }, EVERYTHING, bearer('dave'));
        const retry = await modernGet(
            url(),
            { name: 'up26__confirm', arguments: { who: 'carol' }, inputResponses: { ok: ACCEPTED }, requestState: state },
            EVERYTHING,
            bearer('dave')
        );
        assert.deepEqual(retry.message.error, first.message.error, 'a hidden prompt looks the same with or without a state');
        assert.equal(first.message.error?.code, -32602);
    });

    test("row D: another client's held question is refused -32602; its owner can still answer it", { timeout: 60_000 }, async () => {
        const { state, keys } = await firstRound(url(), 'up25h__confirm', 'carol', bearer('carol'));
        const answers = Object.fromEntries(keys.map(key => [key, ACCEPTED]));
        const stolen = await modernGet(url(), { name: 'up25h__confirm', arguments: { who: 'carol' }, inputResponses: answers, requestState: state }, EVERYTHING, bearer('erin'));
        assert.equal(stolen.message.error?.code, -32602);
        const own = await modernGet(url(), { name: 'up25h__confirm', arguments: { who: 'carol' }, inputResponses: answers, requestState: state }, EVERYTHING, bearer('carol'));
        assert.equal(own.message.result?.['resultType'], 'complete', JSON.stringify(own.message));
    });
});

describe('through the gateway: anonymous clients are told apart by address (decision Q5)', () => {
    test("an anonymous client's requestState does not work from another address", { timeout: 60_000 }, async t => {
        const here = clientAt('127.0.0.2');
        const there = clientAt('127.0.0.3');
        closeAfter(t, () => Promise.all([here.close(), there.close()]));
        const { state, keys } = await firstRound(rows.url!, 'up26__confirm', 'carol', {}, here);
        const answers = Object.fromEntries(keys.map(key => [key, ACCEPTED]));
        const params = { name: 'up26__confirm', arguments: { who: 'carol' }, inputResponses: answers, requestState: state };
        assert.equal((await modernGet(rows.url!, params, EVERYTHING, {}, there)).message.error?.code, -32602);
        assert.equal((await modernGet(rows.url!, params, EVERYTHING, {}, here)).message.result?.['resultType'], 'complete');
    });
});

/** A 2026-07-28 upstream by hand whose `greedy` prompt asks `count` questions in one round; counts its gets. */
async function startGreedyUpstream(t: TeardownScope, count: number): Promise<{ url: string; gets: () => number }> {
    let gets = 0;
    const questions = Object.fromEntries(
        Array.from({ length: count }, (_, i) => [
            `q${i}`,
            { method: 'elicitation/create', params: { mode: 'form', message: `Question ${i}`, requestedSchema: { type: 'object', properties: {} } } }
        ])
    );
    const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
            const message = JSON.parse(Buffer.concat(chunks).toString()) as { id?: number; method: string; params?: { requestState?: string } };
            if (message.id === undefined) return void res.writeHead(202).end();
            if (message.method === 'prompts/get') gets++;
            const results: Record<string, unknown> = {
                'server/discover': { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { prompts: {} }, ttlMs: 0, cacheScope: 'public' },
                'prompts/list': { resultType: 'complete', prompts: [{ name: 'greedy' }], ttlMs: 0, cacheScope: 'public' },
                'prompts/get':
                    message.params?.requestState === undefined
                        ? { resultType: 'input_required', inputRequests: questions, requestState: 'greedy-state' }
                        : { resultType: 'complete', messages: [{ role: 'user', content: { type: 'text', text: JSON.stringify({ prompt: 'greedy', who: '', answers: {} }) } }] }
            };
            const result = results[message.method];
            const body =
                result === undefined ? { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } } : { jsonrpc: '2.0', id: message.id, result };
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        });
    });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    closeAfter(t, () => {
        server.closeAllConnections();
        return new Promise(resolve => server.close(resolve));
    });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, gets: () => gets };
}

describe('through the gateway: an upstream that asks too much at once', () => {
    test("nine questions in one round (inputRequests.maxPerRound 8) are the upstream's fault: -32603 for every client, nobody is asked, no retry", { timeout: 60_000 }, async t => {
        const upstream = await startGreedyUpstream(t, 9);
        const gateway = await startTestGateway({ upstreams: [{ id: 'greedy', transport: 'http', url: upstream.url }] });
        closeAfter(t, () => gateway.close());
        await upstreamsReady(gateway);
        const carol = await connectInputClient(t, { url: gateway.url! }, CAROL);
        const alice = await connectInputClient(t, { url: gateway.url! }, ALICE);
        for (const client of [carol, alice]) assert.equal((await failure(client.get('greedy__greedy', { who: client.name }))).code, -32603, client.name);
        assert.deepEqual([...carol.asked, ...alice.asked], []);
        assert.equal(upstream.gets(), 2, 'no retry reached the upstream');
    });
});

describe('through the gateway: the options of issue 28', () => {
    let gateway: RunningGateway | undefined;
    let twin: RunningGateway | undefined;
    const SECRET = 'input-requests-cursor-secret-0123456789';
    const bounds = { answerTimeoutMs: 2000, maxRounds: 3 };
    // cluster: the twin opens this gateway's session ids (sealed with a key from cursorSecret).
    const config = () => ({
        cursorSecret: SECRET,
        cluster: {},
        inputRequests: bounds,
        upstreams: [
            { id: 'up26', transport: 'http', url: fx26.url },
            { id: 'up25h', transport: 'http', url: fx25.url },
            { id: 'up25hr', transport: 'http', url: fx25.url, relayRoots: true },
            interactiveStdio('up25x', { relayInputRequests: 'exclusive' }),
            interactiveStdio('up25r', { relayInputRequests: 'related' }),
            interactiveStdio('up25off', { relayInputRequests: 'off' })
        ]
    });
    /** Another replica: the same secret, the one upstream its test needs. */
    const twinConfig = () => ({ cursorSecret: SECRET, cluster: {}, inputRequests: bounds, upstreams: [{ id: 'up25h', transport: 'http', url: fx25.url }] });
    const logs = capturingLogger();
    /** Why the gateways did not start: each test fails on it, and the one that did start is still closed. */
    let refused: Error | undefined;
    before(async () => {
        const started = await Promise.allSettled([startTestGateway(config(), logs.logger), startTestGateway(twinConfig())]);
        [gateway, twin] = started.map(outcome => (outcome.status === 'fulfilled' ? outcome.value : undefined));
        const reason: unknown = started.find(outcome => outcome.status === 'rejected')?.reason;
        refused = reason === undefined ? undefined : reason instanceof Error ? reason : new Error('the gateways did not start');
        if (gateway !== undefined && twin !== undefined) await Promise.all([upstreamsReady(gateway), upstreamsReady(twin)]);
    });
    after(() => Promise.all([gateway?.close(), twin?.close()]));
    const url = () => {
        if (refused !== undefined) throw refused;
        return gateway!.url!;
    };
    const upstreamStats = async (t: TeardownScope, prompt: string) => {
        const reader = await connectHttp(url());
        closeAfter(t, () => reader.close());
        return () => interactiveStats(reader, prompt);
    };

    test('relayRoots: roots/list of a 2025 upstream reaches the client (rows C and D)', { timeout: 60_000 }, async t => {
        const alice = await connectInputClient(t, { url: url() }, ALICE);
        const carol = await connectInputClient(t, { url: url() }, CAROL);
        for (const prompt of ['roots', 'all']) await bothAtOnce(alice, carol, `up25hr__${prompt}`);
    });

    test('exclusive: two clients at once on a 2025 stdio upstream get one after the other, each its own answers', { timeout: 60_000 }, async t => {
        const alice = await connectInputClient(t, { url: url() }, ALICE);
        const bob = await connectInputClient(t, { url: url() }, BOB);
        for (const prompt of ['confirm', 'twice']) await bothAtOnce(alice, bob, `up25x__${prompt}`);
        const order = (await (await upstreamStats(t, 'up25x__stats'))()).order.filter(line => !line.includes('stats'));
        for (let i = 0; i < order.length; i += 2) {
            assert.match(order[i]!, /^start /, JSON.stringify(order));
            assert.equal(order[i + 1], order[i]!.replace('start', 'end'), `one get at a time: ${JSON.stringify(order)}`);
        }
    });

    test('off: the upstream is told nothing and refuses in its own words (the client gets -32603)', { timeout: 60_000 }, async t => {
        const alice = await connectInputClient(t, { url: url() }, ALICE);
        assert.equal((await failure(alice.get('up25off__confirm', { who: 'alice' }))).code, -32603);
        const stats = await (await upstreamStats(t, 'up25off__stats'))();
        assert.deepEqual(stats.told.filter(entry => entry.client === GATEWAY_INFO.name).at(-1)?.capabilities, {});
        assert.ok(
            stats.errors.some(error => /Client does not support form elicitation/.test(error)),
            JSON.stringify(stats.errors)
        );
    });

    test('related over stdio: the upstream is told nothing and asks nothing; its connect log line says how to relay it', { timeout: 60_000 }, async t => {
        const alice = await connectInputClient(t, { url: url() }, ALICE);
        assert.equal((await failure(alice.get('up25r__confirm', { who: 'alice' }))).code, -32603);
        assert.deepEqual(alice.asked, []);
        const stats = await (await upstreamStats(t, 'up25r__stats'))();
        assert.deepEqual(stats.told.filter(entry => entry.client === GATEWAY_INFO.name).at(-1)?.capabilities, {});
        const hint = logs.lines().find(line => JSON.stringify(line).includes('up25r') && JSON.stringify(line).includes('relayInputRequests: exclusive'));
        assert.ok(hint !== undefined, 'one line at connect names the setting');
    });

    test('maxRounds: loop ends with -32603 after 3 rounds in rows A, B, C and D', { timeout: 60_000 }, async t => {
        const alice = await connectInputClient(t, { url: url() }, ALICE);
        const carol = await connectInputClient(t, { url: url() }, CAROL);
        for (const [client, upstream] of [
            [alice, 'up26'],
            [alice, 'up25h'],
            [carol, 'up26'],
            [carol, 'up25h']
        ] as const) {
            const before = client.asked.length;
            assert.equal((await failure(client.get(`${upstream}__loop`, { who: client.name }))).code, -32603, `${client.name} on ${upstream}`);
            assert.ok(client.asked.length - before <= 3, `${client.name} on ${upstream}: asked ${client.asked.length - before} times`);
        }
    });

    test('answerTimeoutMs: a 2025 client that never answers gets -32603 "no answer within 2 s"; the upstream\'s get is cancelled', { timeout: 60_000 }, async t => {
        const fx = await statsOf(t, fx25, '2025');
        const cancelled = (await fx()).prompts['confirm']?.cancelled ?? 0;
        const bob = await connectInputClient(t, { url: url() }, { ...BOB, hold: true });
        const refused = await failure(bob.get('up25h__confirm', { who: 'bob' }));
        assert.equal(refused.code, -32603);
        assert.match(refused.message, /no answer within 2 s/);
        await waitFor(async () => ((await fx()).prompts['confirm']?.cancelled ?? 0) > cancelled, 20_000, "the upstream's get cancelled");
        await bob.whenAborted(1);
    });

    test('answerTimeoutMs: a 2026-07-28 client that never retries lets its held question expire; a late retry is told so', { timeout: 60_000 }, async t => {
        const fx = await statsOf(t, fx25, '2025');
        const cancelled = (await fx()).prompts['twice']?.cancelled ?? 0;
        const { state, keys } = await firstRound(url(), 'up25h__twice', 'carol');
        await waitFor(async () => ((await fx()).prompts['twice']?.cancelled ?? 0) > cancelled, 20_000, 'the held get cancelled at expiry');
        const late = await modernGet(url(), {
            name: 'up25h__twice',
            arguments: { who: 'carol' },
            inputResponses: Object.fromEntries(keys.map(key => [key, ACCEPTED])),
            requestState: state
        });
        assert.equal(late.message.error?.code, -32602);
        assert.match(late.message.error?.message ?? '', /expired/);
    });

    test("another replica: a held question's retry on the twin is refused -32602 naming the replica; on its own gateway it completes", { timeout: 60_000 }, async () => {
        const { state, keys } = await firstRound(url(), 'up25h__confirm', 'carol');
        const params = { name: 'up25h__confirm', arguments: { who: 'carol' }, inputResponses: Object.fromEntries(keys.map(key => [key, ACCEPTED])), requestState: state };
        const elsewhere = await modernGet(url() && twin!.url!, params);
        assert.equal(elsewhere.message.error?.code, -32602);
        assert.match(elsewhere.message.error?.message ?? '', /another gateway replica/);
        assert.equal((await modernGet(url(), params)).message.result?.['resultType'], 'complete');
    });

    test(
        'another replica (a 2025 HTTP client): an answer that reaches a replica that did not ask is refused saying so; the asker gives up at answerTimeoutMs',
        { timeout: 60_000 },
        async t => {
            const initialize = initializeBody('2025-06-18');
            const session = await openRawSession(url(), '2025-06-18', {}, { initialize: { ...initialize, params: { ...initialize.params, capabilities: { elicitation: {} } } } });
            const get = new SseReader(
                await post(url(), { jsonrpc: '2.0', id: 7, method: 'prompts/get', params: { name: 'up25h__confirm', arguments: { who: 'raw' } } }, session.headers)
            );
            closeAfter(t, () => get.cancel());
            const question = await get.next(message => message.method === 'elicitation/create');
            const elsewhere = await post(twin!.url!, { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { ok: true } } }, session.headers);
            assert.notEqual(elsewhere.status, 202, 'refused, not taken');
            assert.match(await elsewhere.text(), /replica/);
            const answer = await get.next(message => message.id === 7);
            assert.equal(answer.error?.code, -32603);
            assert.match(answer.error?.message ?? '', /no answer within 2 s/);
        }
    );

    test("a client going away cancels the upstream's request (row C); a client cancelling its get cancels the gateway's question to it", { timeout: 60_000 }, async t => {
        const fx = await statsOf(t, fx25, '2025');
        const cancelled = (await fx()).prompts['confirm']?.cancelled ?? 0;
        const alice = await connectInputClient(t, { url: url() }, { ...ALICE, hold: true });
        const gone = alice.get('up25h__confirm', { who: 'alice' });
        await alice.whenAsked(1);
        await alice.close();
        await assert.rejects(gone);
        await waitFor(async () => ((await fx()).prompts['confirm']?.cancelled ?? 0) === cancelled + 1, 20_000, "the upstream's get cancelled");
        const bob = await connectInputClient(t, { url: url() }, { ...BOB, hold: true });
        const stop = new AbortController();
        const pending = bob.get('up25h__confirm', { who: 'bob' }, stop.signal);
        await bob.whenAsked(1);
        stop.abort('bob gave up');
        await assert.rejects(pending);
        await bob.whenAborted(1);
        await waitFor(async () => ((await fx()).prompts['confirm']?.cancelled ?? 0) === cancelled + 2, 20_000, "bob's upstream get cancelled");
    });

    test('questions and answers are never logged, at any level', { timeout: 60_000 }, async t => {
        const alice = await connectInputClient(t, { url: url() }, ALICE);
        const carol = await connectInputClient(t, { url: url() }, CAROL);
        await bothAtOnce(alice, carol, 'up25hr__all');
        assertOwn(await alice.get('up26__all', { who: 'alice' }), alice, 'all');
        const logged = JSON.stringify(logs.lines());
        for (const secret of [
            'Confirm for alice',
            'Confirm for carol',
            'sampled by alice',
            'sampled by carol',
            'file:///home/alice',
            'file:///home/carol',
            'Write a greeting for'
        ]) {
            assert.ok(!logged.includes(secret), `the log holds "${secret}"`);
        }
    });
});
