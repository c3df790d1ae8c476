/**
 * Clients that answer input requests (issue 28), for the tests of test/input-requests*.test.ts: SDK v1 (2025 era)
 * and SDK v2 (either era) over Streamable HTTP or stdio, each declaring the capabilities a test chooses and answering
 * every question with its own name, so a test can tell whose answer reached which prompt. Each records what it was
 * asked; in `hold` mode its answers wait until the test releases them (or the request is cancelled), so "the client
 * has not answered yet" is a state the test controls, not a sleep.
 *
 * Also starts test/fixtures/interactive-server.ts as its own HTTP process, and reads that fixture's answers.
 */
import assert from 'node:assert/strict';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2, type ClientCapabilities as ClientCapabilitiesV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, type ClientCapabilities as ClientCapabilitiesV1 } from '@modelcontextprotocol/sdk/types.js';
import { compiledFixture } from './fixture-build.js';
import { closeAfter, ROOT, spawnHttpFixture, type TeardownScope } from './helpers.js';

export const INTERACTIVE_SERVER = compiledFixture('interactive-server');

type InputMethod = 'elicitation/create' | 'sampling/createMessage' | 'roots/list';

/** What a client declares it can be asked (as written in its initialize or its requests' _meta). */
export interface InputCapabilities {
    elicitation?: { form?: object; url?: object };
    sampling?: { context?: object; tools?: object };
    roots?: object;
}

export interface InputClientOptions {
    /** Every answer carries it: elicitation content `by`, the sampled text, the root's name and uri. */
    name: string;
    sdk: 'v1' | 'v2';
    /**
     * v2 only: '2026-07-28' (pinned; answers input_required and retries), or one 2025 revision to offer alone.
     * Default: the SDK's newest 2025 revision (v1 always offers that, 2025-11-25).
     */
    revision?: string;
    capabilities: InputCapabilities;
    /** Answers wait until release() (or the question is cancelled: counted in `aborted`). */
    hold?: boolean;
    /** Sent with every HTTP request (e.g. an API key). */
    headers?: Record<string, string>;
}

export type Target = { url: string } | { command: string; args: string[] };

export interface Asked {
    method: InputMethod;
    params: Record<string, unknown>;
}

/** A prompt's answer as the fixture words it: whose it was and what each question got. */
export interface FixtureAnswer {
    prompt: string;
    who: string;
    answers: Record<string, Record<string, unknown>>;
}

export interface InputClient {
    readonly name: string;
    /** Every question this client was asked, in order. */
    readonly asked: Asked[];
    /** Questions whose request was cancelled while the client held its answer. */
    readonly aborted: () => number;
    /** prompts/get, the fixture's JSON answer parsed; `signal` cancels it (the SDK sends notifications/cancelled). */
    get(prompt: string, args?: Record<string, string>, signal?: AbortSignal): Promise<FixtureAnswer>;
    /** The names of every prompt the server lists (first page). */
    prompts(): Promise<string[]>;
    /** Hold mode: answers every question held so far and every later one. */
    release(): void;
    /** Resolves once `count` questions have been asked (or `count` cancelled, for whenAborted). */
    whenAsked(count: number): Promise<void>;
    whenAborted(count: number): Promise<void>;
    close(): Promise<void>;
}

/** The client's answer to `method`, naming it. */
export function answerOf(name: string, method: InputMethod): Record<string, unknown> {
    switch (method) {
        case 'elicitation/create':
            return { action: 'accept', content: { ok: true, by: name } };
        case 'sampling/createMessage':
            return { role: 'assistant', content: { type: 'text', text: `sampled by ${name}` }, model: `model-of-${name}`, stopReason: 'endTurn' };
        case 'roots/list':
            return { roots: [{ uri: `file:///home/${name}`, name }] };
    }
}

/** Resolves waiters whose count a growing number reached. */
class Counter {
    value = 0;
    #waiters: { count: number; resolve: () => void }[] = [];

    add(): void {
        this.value++;
        this.#waiters = this.#waiters.filter(waiter => (waiter.count <= this.value ? (waiter.resolve(), false) : true));
    }

    when(count: number): Promise<void> {
        return count <= this.value ? Promise.resolve() : new Promise(resolve => this.#waiters.push({ count, resolve }));
    }
}

/** Answers questions as one client: records them, holds them when asked to, stops holding on cancel. */
class Answerer {
    readonly asked: Asked[] = [];
    readonly askedCount = new Counter();
    readonly abortedCount = new Counter();
    #held: (() => void)[] = [];
    #holding: boolean;

    constructor(
        readonly name: string,
        hold: boolean
    ) {
        this.#holding = hold;
    }

    async answer(method: InputMethod, params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
        this.asked.push({ method, params });
        this.askedCount.add();
        if (this.#holding) {
            await new Promise<void>((resolve, reject) => {
                const cancelled = () => {
                    this.abortedCount.add();
                    reject(new Error(`${this.name}: the question was cancelled`));
                };
                if (signal.aborted) return cancelled();
                signal.addEventListener('abort', cancelled, { once: true });
                this.#held.push(() => {
                    signal.removeEventListener('abort', cancelled);
                    resolve();
                });
            });
        }
        return answerOf(this.name, method);
    }

    release(): void {
        this.#holding = false;
        for (const resume of this.#held.splice(0)) resume();
    }
}

function parseAnswer(result: { messages: { content: { type: string; text?: string } }[] }): FixtureAnswer {
    const content = result.messages[0]?.content;
    if (content?.type !== 'text' || content.text === undefined) throw new Error(`not a fixture answer: ${JSON.stringify(result)}`);
    return JSON.parse(content.text) as FixtureAnswer;
}

/** Connects a client of `options.sdk` and era to `target`; closed when the test ends. */
export async function connectInputClient(t: TeardownScope, target: Target, options: InputClientOptions): Promise<InputClient> {
    const answerer = new Answerer(options.name, options.hold ?? false);
    const client = options.sdk === 'v1' ? await connectV1(target, options, answerer) : await connectV2(target, options, answerer);
    closeAfter(t, () => client.close());
    return {
        name: options.name,
        asked: answerer.asked,
        aborted: () => answerer.abortedCount.value,
        get: async (prompt, args = {}, signal) => parseAnswer(await client.getPrompt({ name: prompt, arguments: args }, signal === undefined ? {} : { signal })),
        prompts: async () => (await client.listPrompts()).prompts.map(prompt => prompt.name),
        release: () => answerer.release(),
        whenAsked: count => answerer.askedCount.when(count),
        whenAborted: count => answerer.abortedCount.when(count),
        close: () => client.close()
    };
}

interface PromptClient {
    getPrompt(
        params: { name: string; arguments: Record<string, string> },
        options: { signal?: AbortSignal }
    ): Promise<{ messages: { content: { type: string; text?: string } }[] }>;
    listPrompts(): Promise<{ prompts: { name: string }[] }>;
    close(): Promise<void>;
}

async function connectV1(target: Target, options: InputClientOptions, answerer: Answerer): Promise<PromptClient> {
    if (options.revision !== undefined) throw new Error('the v1 SDK offers 2025-11-25 only');
    const client = new ClientV1({ name: options.name, version: '1.0.0' }, { capabilities: options.capabilities as ClientCapabilitiesV1 });
    const { elicitation, sampling, roots } = options.capabilities;
    // v1 refuses a handler for a capability the client did not declare.
    if (elicitation) client.setRequestHandler(ElicitRequestSchema, (request, extra) => answerer.answer('elicitation/create', request.params, extra.signal) as never);
    if (sampling) client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => answerer.answer('sampling/createMessage', request.params, extra.signal) as never);
    if (roots) client.setRequestHandler(ListRootsRequestSchema, (request, extra) => answerer.answer('roots/list', request.params ?? {}, extra.signal) as never);
    const transport =
        'url' in target
            ? new HttpV1(new URL(target.url), options.headers === undefined ? {} : { requestInit: { headers: options.headers } })
            : new StdioV1({ command: target.command, args: target.args, cwd: ROOT, stderr: 'pipe' });
    await client.connect(transport);
    return client;
}

async function connectV2(target: Target, options: InputClientOptions, answerer: Answerer): Promise<PromptClient> {
    const modern = options.revision === '2026-07-28';
    const client = new ClientV2(
        { name: options.name, version: '1.0.0' },
        {
            capabilities: options.capabilities as ClientCapabilitiesV2,
            ...(modern ? { versionNegotiation: { mode: { pin: '2026-07-28' as const } } } : {}),
            ...(!modern && options.revision !== undefined ? { supportedProtocolVersions: [options.revision] } : {})
        }
    );
    const { elicitation, sampling, roots } = options.capabilities;
    if (elicitation) client.setRequestHandler('elicitation/create', (request, ctx) => answerer.answer('elicitation/create', request.params, ctx.mcpReq.signal) as never);
    if (sampling) client.setRequestHandler('sampling/createMessage', (request, ctx) => answerer.answer('sampling/createMessage', request.params, ctx.mcpReq.signal) as never);
    if (roots) client.setRequestHandler('roots/list', (request, ctx) => answerer.answer('roots/list', request.params ?? {}, ctx.mcpReq.signal) as never);
    const transport =
        'url' in target
            ? new HttpV2(new URL(target.url), options.headers === undefined ? {} : { requestInit: { headers: options.headers } })
            : new StdioV2({ command: target.command, args: target.args, cwd: ROOT, stderr: 'pipe' });
    await client.connect(transport);
    return client;
}

export interface InteractiveFixture {
    url: string;
    close(): Promise<void>;
}

/** test/fixtures/interactive-server.ts over Streamable HTTP, in `era`; stopped when `t` ends. */
export function startInteractiveHttp(t: TeardownScope, era: '2025' | '2026-07-28'): Promise<InteractiveFixture> {
    return spawnHttpFixture([INTERACTIVE_SERVER, '--era', era, '--transport', 'streamable-http'], t);
}

/** The fixture as a stdio upstream of a gateway (2025 era). */
export function interactiveStdio(id: string, extra: Record<string, unknown> = {}) {
    return { id, transport: 'stdio', command: process.execPath, args: [INTERACTIVE_SERVER, '--era', '2025'], cwd: ROOT, timeoutMs: 30_000, ...extra };
}

/** What the fixture's `stats` prompt reports (see interactive-server.ts). */
export interface InteractiveStats {
    era: string;
    prompts: Record<string, { started: number; asked: number; answered: number; cancelled: number; completed: number; failed: number }>;
    /** What each client (by its clientInfo name) declared: 2025 at initialize, 2026-07-28 per prompts/get. */
    told: { client: string; capabilities: Record<string, unknown> }[];
    received: { prompt: string; who: string; answers: Record<string, Record<string, unknown>> }[];
    errors: string[];
    stateRejected: number;
    order: string[];
}

/** The fixture's stats, through any client that reaches it (`prompt` is `stats`, or `<id>__stats` through a gateway). */
export async function interactiveStats(
    client: { getPrompt(params: { name: string }): Promise<{ messages: { content: { type: string; text?: string } }[] }> },
    prompt = 'stats'
): Promise<InteractiveStats> {
    const content = (await client.getPrompt({ name: prompt })).messages[0]?.content;
    if (content?.type !== 'text' || content.text === undefined) throw new Error('the stats prompt returned no text');
    return JSON.parse(content.text) as InteractiveStats;
}

// ---- What the tests of input requests assert ----

/** Every input capability, in the newest shape. */
export const EVERYTHING = { elicitation: { form: {}, url: {} }, sampling: { tools: {} }, roots: {} };
/** alice (SDK v1, 2025-11-25), bob (SDK v2, 2025-11-25), carol and dave (SDK v2, 2026-07-28): all declare everything. */
export const ALICE: InputClientOptions = { name: 'alice', sdk: 'v1', capabilities: EVERYTHING };
export const BOB: InputClientOptions = { name: 'bob', sdk: 'v2', capabilities: EVERYTHING };
export const CAROL: InputClientOptions = { name: 'carol', sdk: 'v2', revision: '2026-07-28', capabilities: EVERYTHING };
export const DAVE: InputClientOptions = { name: 'dave', sdk: 'v2', revision: '2026-07-28', capabilities: EVERYTHING };
/** Every client name the tests use: a question mentioning another's is a leak. */
const NAMES = ['alice', 'bob', 'carol', 'dave', 'erin'];

/** The fixture's prompts that ask something, and the keys of their answers. */
const KEYS: Record<string, string[]> = {
    confirm: ['ok'],
    twice: ['first', 'second'],
    sample: ['sample'],
    tools: ['sample'],
    roots: ['roots'],
    all: ['ok', 'sample', 'roots'],
    url: ['url'],
    unrelated: ['ok'],
    together: ['ok']
};

/** Whose answer `result` is: the name each client writes into every answer (see answerOf). */
function whoAnswered(result: Record<string, unknown> | undefined): string | undefined {
    if (result === undefined) return undefined;
    const content = result['content'] as Record<string, unknown> | undefined;
    if (typeof content?.['by'] === 'string') return content['by'];
    if (typeof content?.['text'] === 'string') return /^sampled by (\w+)$/.exec(content['text'])?.[1];
    const roots = result['roots'] as { name?: string }[] | undefined;
    return roots?.[0]?.name;
}

/** `answer` is `prompt` for `client`, every key answered by that client; and the client saw only its own questions. */
export function assertOwn(answer: FixtureAnswer, client: InputClient, prompt: string): void {
    const bare = prompt.includes('__') ? prompt.slice(prompt.indexOf('__') + 2) : prompt;
    assert.equal(answer.who, client.name, `${prompt}: whose prompt`);
    assert.deepEqual(Object.keys(answer.answers).sort(), [...(KEYS[bare] ?? [])].sort(), `${prompt}: the answers it got`);
    for (const [key, result] of Object.entries(answer.answers)) assert.equal(whoAnswered(result), client.name, `${prompt}: ${key} answered by ${client.name}`);
    for (const { method, params } of client.asked) {
        const text = JSON.stringify(params);
        for (const other of NAMES.filter(name => name !== client.name)) assert.ok(!text.includes(other), `${client.name} was asked ${method} about ${other}: ${text}`);
    }
}

/** `a` and `b` get `prompt` at once, each for itself; each result is its own. */
export async function bothAtOnce(a: InputClient, b: InputClient, prompt: string, extra: Record<string, string> = {}): Promise<void> {
    const [ofA, ofB] = await Promise.all([a.get(prompt, { who: a.name, ...extra }), b.get(prompt, { who: b.name, ...extra })]);
    assertOwn(ofA, a, prompt);
    assertOwn(ofB, b, prompt);
}

/** Every prompt of `prompts` by both clients at once: `together` first (the questions overlap), then the others. */
export async function everyPrompt(a: InputClient, b: InputClient, upstream: string, prompts: readonly string[]): Promise<void> {
    await bothAtOnce(a, b, `${upstream}together`, { n: '2' });
    for (const prompt of prompts) await bothAtOnce(a, b, `${upstream}${prompt}`);
}

/** The JSON-RPC error a request fails with, its data included. */
export async function failure(promise: Promise<unknown>): Promise<{ code: number; message: string; data?: unknown }> {
    try {
        await promise;
    } catch (error) {
        const { code, message, data } = error as { code: number; message: string; data?: unknown };
        return { code, message, ...(data === undefined ? {} : { data }) };
    }
    throw new Error('expected the request to fail');
}
