/**
 * Every protocol revision, both directions: downstream clients speaking 2024-11-05, 2025-03-26, 2025-06-18,
 * 2025-11-25 or 2026-07-28 (stateless) in front of upstreams speaking each of them (25 combinations, one gateway
 * with one upstream per revision and one client per revision, all at the same time on one URL). Clients are raw JSON-RPC over fetch (and over a stdio pipe), so the
 * exact wire JSON is seen; every message a client receives is validated against the official JSON Schema of the
 * revision it negotiated (test/fixtures/spec-schemas), and results must be what the upstream itself answers,
 * fitted to the client's revision by the rules in SINCE below.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../src/gateway.js';
import { capturingLogger, ROOT, startTestGateway, stopChild, waitFor } from './helpers.js';
import { compiledFixture } from './fixture-build.js';
import { deleteSession, getStream, modernHeaders, modernMeta, post, sessionHeaders, sseMessages, type JsonRpcMessage as Message } from './raw-http.js';
import { MODERN_REVISION, REVISIONS as LEGACY_REVISIONS, SpecSchema, type Revision } from './spec-schema.js';

const REVISION_SERVER = compiledFixture('revision-server');
const ANSWER_TIMEOUT_MS = 20_000;
const SEPARATOR = '__';

type Obj = Record<string, unknown>;

/** Every revision, the stateless one last. */
const REVISIONS: readonly Revision[] = [...LEGACY_REVISIONS, MODERN_REVISION];
const isModern = (revision: Revision) => revision === MODERN_REVISION;

const SCHEMAS = Object.fromEntries(REVISIONS.map(revision => [revision, new SpecSchema(revision)])) as Record<Revision, SpecSchema>;

// ---------------------------------------------------------------------------------------------------------------
// The fitting rules: what a client of each revision gets, derived from what the upstream sent

/** The first revision that has each field or content type. */
const SINCE = {
    title: '2025-06-18', // title on Prompt, PromptArgument, ResourceLink
    icons: '2025-11-25', // icons on Prompt, ResourceLink
    meta: '2025-06-18', // _meta on Prompt, content blocks, resource contents (result-level _meta is in every revision)
    lastModified: '2025-06-18', // annotations.lastModified
    audio: '2025-03-26', // audio content; before: a text block naming its mimeType
    resourceLink: '2025-06-18' // resource_link content; before: a text block "<title or name>: <uri>[\n<description>]"
} as const satisfies Record<string, Revision>;

const has = (revision: Revision, feature: keyof typeof SINCE) => revision >= SINCE[feature];

/** Stands for a value the rules describe but do not fix; checked by `predicate`. */
class Matching {
    constructor(
        readonly what: string,
        readonly predicate: (value: unknown) => boolean
    ) {}
}

function fitPrompt(prompt: Obj, revision: Revision): Obj {
    const fitted = structuredClone(prompt);
    if (!has(revision, 'title')) delete fitted['title'];
    if (!has(revision, 'icons')) delete fitted['icons'];
    if (!has(revision, 'meta')) delete fitted['_meta'];
    if (Array.isArray(fitted['arguments'])) {
        fitted['arguments'] = (fitted['arguments'] as Obj[]).map(argument => {
            const copy = { ...argument };
            if (!has(revision, 'title')) delete copy['title'];
            return copy;
        });
    }
    return fitted;
}

function fitAnnotations(block: Obj, revision: Revision): void {
    const annotations = block['annotations'] as Obj | undefined;
    if (annotations !== undefined && !has(revision, 'lastModified')) {
        const copy = { ...annotations };
        delete copy['lastModified'];
        block['annotations'] = copy;
    }
}

function fitContent(content: Obj, revision: Revision): Obj {
    const fitted = structuredClone(content);
    if (!has(revision, 'meta')) {
        delete fitted['_meta'];
        if (fitted['type'] === 'resource') delete (fitted['resource'] as Obj)['_meta'];
    }
    fitAnnotations(fitted, revision);
    if (fitted['type'] === 'audio' && !has(revision, 'audio')) {
        const mimeType = String(fitted['mimeType']);
        return {
            type: 'text',
            text: new Matching(`a text naming ${mimeType}`, text => typeof text === 'string' && text.includes(mimeType)),
            ...(fitted['annotations'] === undefined ? {} : { annotations: fitted['annotations'] })
        };
    }
    if (fitted['type'] === 'resource_link') {
        if (!has(revision, 'resourceLink')) {
            const parts = [String(fitted['uri']), String(fitted['title'] ?? fitted['name'])];
            if (typeof fitted['description'] === 'string') parts.push(fitted['description']);
            return {
                type: 'text',
                text: new Matching(`a text with ${parts.join(', ')}`, text => typeof text === 'string' && parts.every(part => text.includes(part))),
                ...(fitted['annotations'] === undefined ? {} : { annotations: fitted['annotations'] })
            };
        }
        if (!has(revision, 'icons')) delete fitted['icons'];
    }
    return fitted;
}

function fitGetResult(result: Obj, revision: Revision): Obj {
    const fitted = structuredClone(result);
    fitted['messages'] = (result['messages'] as Obj[]).map(message => ({ ...message, content: fitContent(message['content'] as Obj, revision) }));
    return fitResult(fitted, revision);
}

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/**
 * What the stateless revision adds to every result, fitted: a 2026-07-28 upstream's `resultType` and caching hints,
 * and the `serverInfo` it names itself by, are its own; the gateway answers with its own (`resultType` and, on lists,
 * the hints for a 2026-07-28 client; nothing for the others). The rest of a result's `_meta` is kept.
 */
function fitResult(result: Obj, revision: Revision): Obj {
    const { resultType: _resultType, ttlMs: _ttlMs, cacheScope: _cacheScope, ...fitted } = result;
    const meta = fitted['_meta'] as Obj | undefined;
    if (meta !== undefined && SERVER_INFO in meta) {
        const { [SERVER_INFO]: _serverInfo, ...rest } = meta;
        if (Object.keys(rest).length > 0) fitted['_meta'] = rest;
        else delete fitted['_meta'];
    }
    if (isModern(revision)) fitted['resultType'] = 'complete';
    return fitted;
}

/**
 * A result as received, without what only the revision's envelope decides: the gateway's own `serverInfo` in `_meta`
 * (a SHOULD of 2026-07-28, checked to name the gateway) and the caching hints (checked in their own test).
 */
function received(result: Obj, revision: Revision): Obj {
    const { ttlMs: _ttlMs, cacheScope: _cacheScope, ...rest } = result;
    const meta = rest['_meta'] as Obj | undefined;
    if (meta === undefined || !(SERVER_INFO in meta)) return rest;
    assert.ok(isModern(revision), `a ${revision} client got ${SERVER_INFO}`);
    assert.equal((meta[SERVER_INFO] as Obj)['name'], 'mcp-prompt-gateway', 'the gateway names itself, not the upstream');
    const { [SERVER_INFO]: _serverInfo, ...others } = meta;
    return Object.keys(others).length > 0 ? { ...rest, _meta: others } : (({ _meta: _dropped, ...bare }) => bare)(rest);
}

/** `expected` with each Matching replaced by the actual value when it matches (so deepEqual shows only real differences). */
function resolve(expected: unknown, actual: unknown): unknown {
    if (expected instanceof Matching) return expected.predicate(actual) ? actual : `<${expected.what}>`;
    if (Array.isArray(expected)) return expected.map((item, index) => resolve(item, Array.isArray(actual) ? actual[index] : undefined));
    if (expected !== null && typeof expected === 'object') {
        const source = actual !== null && typeof actual === 'object' ? (actual as Obj) : {};
        return Object.fromEntries(Object.entries(expected).map(([key, value]) => [key, resolve(value, source[key])]));
    }
    return expected;
}

function assertFits(actual: unknown, expected: unknown, what: string): void {
    assert.deepEqual(actual, resolve(expected, actual), what);
}

/** 2026-07-28 list results say how long they stay fresh, and for whom (the gateway's list depends on who asks). */
function assertCacheHints(page: Obj): void {
    assert.equal(page['resultType'], 'complete');
    assert.ok(Number.isInteger(page['ttlMs']) && (page['ttlMs'] as number) >= 0, `ttlMs ${String(page['ttlMs'])}`);
    assert.ok(page['cacheScope'] === 'public' || page['cacheScope'] === 'private', `cacheScope ${String(page['cacheScope'])}`);
}

/** `ping` is gone in 2026-07-28 (-32601); before, it answers an empty result. */
async function assertPing(client: RawClient): Promise<void> {
    if (client.modern) assert.equal((await client.callFailing('ping')).code, -32601);
    else assert.deepEqual(await client.call('ping'), {});
}

// ---------------------------------------------------------------------------------------------------------------
// Raw JSON-RPC clients that keep every message they receive

interface Received {
    message: Message;
    /** For responses: the method of the request it answers. */
    requestMethod: string | undefined;
}

abstract class RawClient {
    readonly received: Received[] = [];
    readonly #pending = new Map<number, { method: string; resolve: (message: Message) => void }>();
    #nextId = 1;

    /**
     * @param revision the one revision this client offers (and, when `validate`, must get)
     * @param validate check what it receives against the schema of `revision` (off for the fixture's own answers)
     */
    constructor(
        readonly revision: Revision,
        readonly validate = true
    ) {}

    get schema(): SpecSchema {
        return SCHEMAS[this.revision];
    }

    protected abstract send(message: Message): Promise<void>;

    /** Every message from the server comes through here. */
    protected receive(message: Message): void {
        const pending = typeof message.id === 'number' && !('method' in message) ? this.#pending.get(message.id) : undefined;
        this.received.push({ message, requestMethod: pending?.method });
        if (pending) {
            this.#pending.delete(message.id as number);
            pending.resolve(message);
        } else if ('method' in message && 'id' in message) {
            // A request from the server (e.g. ping): answer it so nothing waits.
            void this.send({ jsonrpc: '2.0', id: message.id, result: {} }).catch(() => {});
        }
    }

    /** Speaks 2026-07-28: no handshake, every request names its revision in `_meta`. */
    get modern(): boolean {
        return isModern(this.revision);
    }

    /** Sends a request and resolves with the response message, valid or not. */
    async request(method: string, params: Obj = {}): Promise<Message> {
        const id = this.#nextId++;
        const response = new Promise<Message>((resolve, reject) => {
            // An answer without this id (an HTTP-level refusal has none) would otherwise leave the test waiting.
            const timer = setTimeout(() => reject(new Error(`no answer to ${method} (id ${id}) within ${ANSWER_TIMEOUT_MS} ms`)), ANSWER_TIMEOUT_MS);
            this.#pending.set(id, {
                method,
                resolve: message => {
                    clearTimeout(timer);
                    resolve(message);
                }
            });
        });
        await this.send({ jsonrpc: '2.0', id, method, params: this.modern ? { ...params, _meta: modernMeta(this.revision) } : params });
        return response;
    }

    notify(method: string, params?: Obj): Promise<void> {
        return this.send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
    }

    /** A request that must succeed with a message valid under the client's revision; returns its result. */
    async call(method: string, params: Obj = {}): Promise<Obj> {
        const message = await this.request(method, params);
        this.assertValid(message, method);
        assert.ok(message.result, `${method} failed: ${JSON.stringify(message.error)}`);
        return message.result;
    }

    /** A request that must fail with a valid error response; returns the error. */
    async callFailing(method: string, params: Obj = {}): Promise<{ code: number; message: string }> {
        const message = await this.request(method, params);
        this.assertValid(message, method);
        assert.ok(message.error, `${method} should have failed: ${JSON.stringify(message.result)}`);
        return { code: message.error.code, message: message.error.message };
    }

    assertValid(message: Message, requestMethod: string | undefined): void {
        if (!this.validate) return;
        assert.deepEqual(this.schema.problems(message, requestMethod), [], `${this.revision} client got ${JSON.stringify(message)}`);
    }

    /** initialize + initialized; for a 2026-07-28 client, server/discover (its result, with the revision it will use). */
    async initialize(): Promise<Obj> {
        if (this.modern) {
            const discovered = await this.call('server/discover');
            assert.ok((discovered['supportedVersions'] as string[]).includes(this.revision), JSON.stringify(discovered));
            return { ...discovered, protocolVersion: this.revision };
        }
        const result = await this.call('initialize', {
            protocolVersion: this.revision,
            capabilities: {},
            clientInfo: { name: `raw-${this.revision}`, version: '1.0.0' }
        });
        await this.notify('notifications/initialized');
        return result;
    }

    notifications(method: string): Message[] {
        return this.received.map(entry => entry.message).filter(message => message.method === method && !('id' in message));
    }

    /** Every page of the merged list, each page's result validated. */
    async listAll(): Promise<Obj[]> {
        const prompts: Obj[] = [];
        let cursor: string | undefined;
        for (let pages = 0; ; pages++) {
            assert.ok(pages < 100, 'pagination does not end');
            const page = await this.call('prompts/list', cursor === undefined ? {} : { cursor });
            if (this.modern && this.validate) assertCacheHints(page);
            prompts.push(...(page['prompts'] as Obj[]));
            cursor = page['nextCursor'] as string | undefined;
            if (cursor === undefined) return prompts;
        }
    }
}

/** Streamable HTTP: POST for each message (answer as JSON or SSE), plus the GET stream for notifications. */
class HttpClient extends RawClient {
    /** The session's headers for this client's revision, once initialize has answered with a session id. */
    #session: Record<string, string> | undefined;
    readonly #streams = new AbortController();

    constructor(
        readonly url: string,
        revision: Revision
    ) {
        super(revision);
    }

    protected async send(message: Message): Promise<void> {
        const headers = this.modern ? modernHeaders({ method: message.method ?? '', ...(message.params ? { params: message.params } : {}) }, this.revision) : this.#session;
        const response = await post(this.url, message, headers);
        const sessionId = response.headers.get('mcp-session-id');
        if (sessionId !== null) this.#session ??= sessionHeaders(sessionId, this.revision);
        const type = response.headers.get('content-type') ?? '';
        if (response.status === 202) return void (await response.body?.cancel());
        if (type.startsWith('text/event-stream')) return this.#receiveEach(response);
        const body = (await response.json()) as Message | Message[];
        for (const item of Array.isArray(body) ? body : [body]) this.receive(item);
    }

    /** Every message of an SSE answer or stream, received as it arrives. */
    async #receiveEach(response: Response): Promise<void> {
        for await (const message of sseMessages(response.body!.getReader())) this.receive(message);
    }

    /**
     * Opens the stream of server notifications and resolves once it is open: the session's GET stream, or for a
     * 2026-07-28 client a subscriptions/listen for prompt list changes (acknowledged first).
     */
    async openStream(): Promise<void> {
        if (this.modern) return this.#listen();
        const response = await getStream(this.url, this.#session ?? {}, this.#streams.signal);
        assert.equal(response.status, 200, 'GET stream');
        this.#receiveEach(response).catch(() => {});
    }

    async #listen(): Promise<void> {
        const message: Message = {
            jsonrpc: '2.0',
            id: 'listen',
            method: 'subscriptions/listen',
            params: { notifications: { promptsListChanged: true }, _meta: modernMeta(this.revision) }
        };
        const response = await post(this.url, message, modernHeaders({ method: 'subscriptions/listen' }, this.revision), { signal: this.#streams.signal });
        assert.equal(response.status, 200, `subscriptions/listen: ${response.status}`);
        assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
        this.#receiveEach(response).catch(() => {});
        await waitFor(() => this.notifications('notifications/subscriptions/acknowledged').length > 0, 10_000, 'the subscription to be acknowledged');
    }

    async close(): Promise<void> {
        this.#streams.abort();
        if (this.#session !== undefined && !this.modern) await deleteSession(this.url, this.#session).catch(() => {});
    }
}

/** Newline-delimited JSON-RPC over a child's stdin/stdout. */
class StdioClient extends RawClient {
    readonly stderr: string[] = [];

    constructor(
        readonly child: ChildProcess,
        revision: Revision,
        validate = true
    ) {
        super(revision, validate);
        createInterface({ input: child.stdout! }).on('line', line => this.receive(JSON.parse(line) as Message));
        createInterface({ input: child.stderr! }).on('line', line => this.stderr.push(line));
    }

    protected send(message: Message): Promise<void> {
        return new Promise((resolve, reject) => this.child.stdin!.write(`${JSON.stringify(message)}\n`, error => (error ? reject(error) : resolve())));
    }
}

// ---------------------------------------------------------------------------------------------------------------
// What the upstreams answer when asked directly: the exact wire JSON, read by a raw client offering the latest
// revision (the SDK's Client would not do: its schemas drop fields, e.g. PromptArgument.title)

function upstreamId(revision: Revision): string {
    return `v${revision}`;
}

function revisionServer(revision: Revision) {
    return { id: upstreamId(revision), transport: 'stdio', command: process.execPath, args: [REVISION_SERVER, '--revision', revision], cwd: ROOT };
}

const LATEST: Revision = '2025-11-25';
const RICH_ARGS = { topic: 'revisions', tone: 'dry' };
const COMPLETIONS = [{ argument: { name: 'topic', value: 'al' } }, { argument: { name: 'tone', value: 'f' } }];

interface Direct {
    negotiated: unknown;
    prompts: Obj[];
    rich: Obj;
    plain: Obj;
    fails: { code: number; message: string };
    completions: Obj[];
}

async function askDirectly(revision: Revision): Promise<Direct> {
    const config = revisionServer(revision);
    const child = spawn(config.command, config.args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    try {
        const client = new StdioClient(child, isModern(revision) ? MODERN_REVISION : LATEST, false);
        const { protocolVersion } = await client.initialize();
        return {
            negotiated: protocolVersion,
            prompts: await client.listAll(),
            rich: await client.call('prompts/get', { name: 'rich', arguments: RICH_ARGS }),
            plain: await client.call('prompts/get', { name: 'plain' }),
            fails: await client.callFailing('prompts/get', { name: 'fails' }),
            completions: await Promise.all(COMPLETIONS.map(({ argument }) => client.call('completion/complete', { ref: { type: 'ref/prompt', name: 'rich' }, argument })))
        };
    } finally {
        await stopChild(child);
    }
}

/** The merged list a client of `revision` should see: each upstream's prompts in config order, namespaced and fitted. */
function expectedList(direct: Record<Revision, Direct>, revision: Revision): Obj[] {
    return REVISIONS.flatMap(upstream =>
        direct[upstream].prompts.map(prompt => fitPrompt({ ...prompt, name: `${upstreamId(upstream)}${SEPARATOR}${String(prompt['name'])}` }, revision))
    );
}

/** What the fixture sends is rich enough to exercise every rule: a check on the test itself. */
function assertFixtureIsRich(direct: Direct): void {
    const rich = direct.prompts.find(prompt => prompt['name'] === 'rich')!;
    for (const field of ['title', 'icons', '_meta']) assert.ok(field in rich, `fixture prompt has ${field}`);
    assert.ok((rich['arguments'] as Obj[]).every(argument => 'title' in argument));
    const contents = (direct.rich['messages'] as Obj[]).map(message => message['content'] as Obj);
    assert.deepEqual([...new Set(contents.map(content => content['type']))].sort(), ['audio', 'image', 'resource', 'resource_link', 'text']);
    assert.ok(contents.some(content => (content['annotations'] as Obj | undefined)?.['lastModified'] !== undefined));
    assert.ok(contents.some(content => content['type'] === 'resource_link' && 'icons' in content && 'title' in content));
    assert.ok(contents.some(content => content['type'] === 'resource' && '_meta' in (content['resource'] as Obj)));
}

/** The "upstream connected" log line of each upstream id: the revision it negotiated. */
function negotiatedUpstream(lines: Record<string, unknown>[]): Record<string, unknown> {
    return Object.fromEntries(lines.filter(line => line['msg'] === 'upstream connected').map((line): [string, unknown] => [String(line['upstream']), line['protocol']]));
}

// ---------------------------------------------------------------------------------------------------------------

describe('every protocol revision, both directions (Streamable HTTP downstream)', () => {
    let gateway: RunningGateway;
    let log: ReturnType<typeof capturingLogger>;
    const direct = {} as Record<Revision, Direct>;
    const clients = {} as Record<Revision, HttpClient>;
    const initialized = {} as Record<Revision, Obj>;

    before(async () => {
        log = capturingLogger();
        const answers = Promise.all(REVISIONS.map(async revision => (direct[revision] = await askDirectly(revision))));
        gateway = await startTestGateway(
            {
                pagination: { pageSize: 3 },
                notifications: { debounceMs: 20, maxDelayMs: 100 },
                // Five clients at one address share the anonymous client's quota; the rate limit is not what is tested.
                limits: { rateLimit: { requestsPerSecond: 0, burst: 1 } },
                upstreams: REVISIONS.map(revisionServer)
            },
            log.logger
        );
        await answers;
        await Promise.all(
            REVISIONS.map(async revision => {
                const client = (clients[revision] = new HttpClient(gateway.url!, revision));
                initialized[revision] = await client.initialize();
                await client.openStream();
            })
        );
    });

    after(async () => {
        await Promise.all(Object.values(clients).map(client => client.close()));
        await gateway?.close();
    });

    test('the fixture uses every field and content type the rules are about', () => {
        for (const revision of REVISIONS) assertFixtureIsRich(direct[revision]);
    });

    test('each upstream negotiates its own revision, with the gateway as with a direct client', async () => {
        await waitFor(() => Object.keys(negotiatedUpstream(log.lines())).length === REVISIONS.length, 10_000, 'every upstream to connect');
        const expected = Object.fromEntries(REVISIONS.map(revision => [upstreamId(revision), revision]));
        assert.deepEqual(negotiatedUpstream(log.lines()), expected);
        assert.deepEqual(Object.fromEntries(REVISIONS.map(revision => [upstreamId(revision), direct[revision].negotiated])), expected);
    });

    for (const revision of REVISIONS) {
        describe(`${revision} client`, () => {
            test('initialize (server/discover at 2026-07-28): the client gets its own revision, a valid result (checked as it arrived); ping as the revision has it', async () => {
                const client = clients[revision];
                assert.equal(initialized[revision]['protocolVersion'], revision);
                assert.deepEqual((initialized[revision]['capabilities'] as Obj)['prompts'], { listChanged: true });
                await assertPing(client);
            });

            test('prompts/list: every page valid; the merged list is every upstream prompt, fitted to the revision', async () => {
                assertFits(await clients[revision].listAll(), expectedList(direct, revision), 'merged list');
            });

            for (const upstream of REVISIONS) {
                test(`from the ${upstream} upstream: get, complete and errors are valid and fitted`, async () => {
                    const client = clients[revision];
                    const name = (prompt: string) => `${upstreamId(upstream)}${SEPARATOR}${prompt}`;
                    const rich = await client.call('prompts/get', { name: name('rich'), arguments: RICH_ARGS });
                    assertFits(received(rich, revision), fitGetResult(direct[upstream].rich, revision), 'rich');
                    const plain = await client.call('prompts/get', { name: name('plain') });
                    assertFits(received(plain, revision), fitGetResult(direct[upstream].plain, revision), 'plain');
                    assert.match(JSON.stringify(plain), new RegExp(`negotiated ${upstream}`), 'the upstream speaks its own revision');
                    for (const [index, { argument }] of COMPLETIONS.entries()) {
                        const completion = await client.call('completion/complete', { ref: { type: 'ref/prompt', name: name('rich') }, argument });
                        assert.deepEqual(received(completion, revision), fitResult(direct[upstream].completions[index]!, revision));
                    }
                    assert.deepEqual(await client.callFailing('prompts/get', { name: name('fails') }), direct[upstream].fails, "the upstream's -32602 passes through");
                    const missing = await client.callFailing('prompts/get', { name: name('rich') });
                    assert.equal(missing.code, -32602);
                    assert.match(missing.message, /topic/);
                });
            }

            test('an unknown prompt is a valid -32602 error', async () => {
                const error = await clients[revision].callFailing('prompts/get', { name: 'no-such-upstream__x' });
                assert.equal(error.code, -32602);
            });
        });
    }

    test('list_changed from every upstream reaches every client, valid under its revision', async () => {
        for (const upstream of REVISIONS) {
            const before = Object.fromEntries(REVISIONS.map(revision => [revision, clients[revision].notifications('notifications/prompts/list_changed').length]));
            // Any client may trigger it; every client is told.
            const trigger = clients[REVISIONS[(REVISIONS.indexOf(upstream) + 1) % REVISIONS.length]!];
            const answer = await trigger.call('prompts/get', { name: `${upstreamId(upstream)}${SEPARATOR}trigger-change` });
            const added = /added (added-\d+)/.exec(JSON.stringify(answer))?.[1];
            assert.ok(added, JSON.stringify(answer));
            for (const revision of REVISIONS) {
                const client = clients[revision];
                await waitFor(
                    () => client.notifications('notifications/prompts/list_changed').length > before[revision]!,
                    20_000,
                    `${revision} client to be told of ${upstream}'s change`
                );
                for (const notification of client.notifications('notifications/prompts/list_changed')) client.assertValid(notification, undefined);
                const names = (await client.listAll()).map(prompt => prompt['name']);
                assert.ok(names.includes(`${upstreamId(upstream)}${SEPARATOR}${added}`), `${revision} client lists ${added} of ${upstream}`);
            }
        }
    });

    test('every message every client received is valid under its revision', () => {
        for (const revision of REVISIONS) {
            const client = clients[revision];
            assert.ok(client.received.length > 40, `${revision} client received ${client.received.length} messages`);
            const invalid = client.received
                .map(({ message, requestMethod }) => ({ message, problems: client.schema.problems(message, requestMethod) }))
                .filter(entry => entry.problems.length > 0);
            assert.deepEqual(invalid, [], `${revision} client`);
        }
    });
});

describe('every protocol revision: stdio downstream', () => {
    let directory: string;

    before(() => {
        directory = mkdtempSync(path.join(tmpdir(), 'revisions-'));
    });

    after(() => rmSync(directory, { recursive: true, force: true }));

    for (const [client, upstream] of [
        ['2024-11-05', '2025-11-25'],
        [MODERN_REVISION, '2024-11-05'],
        [MODERN_REVISION, MODERN_REVISION]
    ] as const) {
        test(`a ${client} client over stdio in front of a ${upstream} upstream gets valid, fitted messages`, { timeout: 120_000 }, async t => {
            const config = path.join(directory, `gateway-${client}-${upstream}.json`);
            writeFileSync(config, JSON.stringify({ notifications: { debounceMs: 20, maxDelayMs: 100 }, upstreams: [revisionServer(upstream)] }));
            const answers = askDirectly(upstream);
            const child = spawn(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--stdio', '--config', config], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
            t.after(() => stopChild(child));
            const raw = new StdioClient(child, client);
            const result = await raw.initialize();
            assert.equal(result['protocolVersion'], client);
            await assertPing(raw);
            const expected = await answers;
            const name = (prompt: string) => `${upstreamId(upstream)}${SEPARATOR}${prompt}`;
            await waitFor(async () => (await raw.listAll()).length === expected.prompts.length, 10_000, 'the upstream to be listed');
            assertFits(
                await raw.listAll(),
                expected.prompts.map(prompt => fitPrompt({ ...prompt, name: name(String(prompt['name'])) }, client)),
                'list'
            );
            assertFits(received(await raw.call('prompts/get', { name: name('rich'), arguments: RICH_ARGS }), client), fitGetResult(expected.rich, client), 'rich');
            for (const [index, { argument }] of COMPLETIONS.entries()) {
                const completion = await raw.call('completion/complete', { ref: { type: 'ref/prompt', name: name('rich') }, argument });
                assert.deepEqual(received(completion, client), fitResult(expected.completions[index]!, client));
            }
            assert.deepEqual(await raw.callFailing('prompts/get', { name: name('fails') }), expected.fails);
            if (raw.modern) {
                // Stays open: its response comes only when the subscription ends.
                void raw.request('subscriptions/listen', { notifications: { promptsListChanged: true } });
                await waitFor(() => raw.notifications('notifications/subscriptions/acknowledged').length > 0, 10_000, 'the subscription to be acknowledged');
            }
            await raw.call('prompts/get', { name: name('trigger-change') });
            await waitFor(() => raw.notifications('notifications/prompts/list_changed').length > 0, 20_000, 'list_changed');
            const invalid = raw.received.map(({ message, requestMethod }) => raw.schema.problems(message, requestMethod)).filter(problems => problems.length > 0);
            assert.deepEqual(invalid, []);
            // Log lines are written in batches (at most 250 ms late): the line is waited for, not read at once.
            const connectedLine = () => raw.stderr.map(line => JSON.parse(line) as Obj).find(line => line['msg'] === 'upstream connected');
            await waitFor(() => connectedLine() !== undefined, 10_000, 'the "upstream connected" line');
            assert.equal(connectedLine()?.['protocol'], upstream);
        });
    }
});

test(
    'a 2026-07-28-only stdio server that takes 4 s to start is found by the probe on its first connection: its start-up counts against the wait',
    { timeout: 120_000 },
    async t => {
        const server = revisionServer(MODERN_REVISION);
        const log = capturingLogger();
        // Over 3 s (the wait over HTTP, where the server is up already); timeoutMs leaves the probe half of 20 s.
        const gateway = await startTestGateway({ upstreams: [{ ...server, args: [...server.args, '--start-delay', '4000'], timeoutMs: 20_000 }] }, log.logger);
        t.after(() => gateway.close());
        const upstream = gateway.upstreams[0]!;
        await waitFor(() => upstream.state === 'ready' || Object.keys(gateway.faults.of(upstream.id)).length > 0, 60_000, 'the first connection to succeed or fail');
        assert.deepEqual(gateway.faults.of(upstream.id), {}, 'no failed connection, no stray answer');
        assert.equal(upstream.state, 'ready');
        assert.deepEqual(negotiatedUpstream(log.lines()), { [upstream.id]: MODERN_REVISION });
    }
);
