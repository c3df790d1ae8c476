/**
 * Streams clients hold open, over real HTTP (and stdio): what a request id may weigh before anything stores it, and
 * what a reload does to the streams of a client it removes or gives new credentials (API keys and JWT alike): their
 * sessions, GET streams and subscriptions/listen streams end, their quotas are free again, other clients carry on.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { loadConfigFile } from '../src/config/load.js';
import { ConfigReloader } from '../src/config/reload.js';
import { startGateway, type RunningGateway } from '../src/gateway.js';
import { capturingLogger, closeAfter, connectHttp, ROOT, startTestGateway, stdioFixture, stopChild, upstreamsReady, waitFor, type TeardownScope } from './helpers.js';
import { parseExposition, value } from './prometheus.js';
import { call, getStream, initializeBody, modernHeaders, modernMeta, openRawSession, post, SseReader, type JsonRpcMessage, type RawSession } from './raw-http.js';

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
/** A string id over the bound (256 bytes), in the range the issue measured. */
const HUGE_ID = 'i'.repeat(900_000);
const JWT_SECRET = 'a-test-secret-of-at-least-32-characters!';

const keyOf = (clientId: string, generation = 0) => `key-${generation}-of-${clientId}-0123456789abcdef`;

async function tempDir(t: TeardownScope): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-streams-'));
    closeAfter(t, () => rm(dir, { recursive: true, force: true }));
    return dir;
}

/** Writes the file as editors do: a new file renamed over the old one. */
async function writeConfig(file: string, config: unknown): Promise<void> {
    const temporary = `${file}.${randomUUID()}.tmp`;
    await writeFile(temporary, JSON.stringify(config, null, 2));
    await rename(temporary, file);
}

/** One session and one subscription per client, so that a stream that outlived its client would hold its quota. */
function gatewayConfig(folder: string, auth: Record<string, unknown>, clients: Record<string, unknown>[]) {
    return {
        listen: { port: 0 },
        metrics: { listen: { port: 0 } },
        auth,
        clients,
        limits: { maxSessionsPerClient: 1, rateLimit: { requestsPerSecond: 0, burst: 1 } },
        subscriptions: { maxPerClient: 1 },
        notifications: { debounceMs: 20, maxDelayMs: 100 },
        upstreams: [{ id: 'team', transport: 'files', path: folder }]
    };
}

interface Running {
    gateway: RunningGateway;
    url: string;
    /** Writes the config file, then reloads it as SIGHUP does. */
    rewrite: (config: unknown) => Promise<void>;
    logs: () => Record<string, unknown>[];
}

/** The gateway in this process, from a config file, with the reloader the CLI uses. */
async function startFromFile(t: TeardownScope, config: ReturnType<typeof gatewayConfig>): Promise<Running> {
    const dir = await tempDir(t);
    const file = path.join(dir, 'gateway.json');
    await writeConfig(file, config);
    const current = await loadConfigFile(file);
    const { logger, lines } = capturingLogger();
    const gateway = await startGateway(current, { logger });
    closeAfter(t, () => gateway.close());
    const reloader = new ConfigReloader({ files: [file], load: () => loadConfigFile(file), apply: async next => ({ ...(await gateway.reload(next)) }), current, logger });
    closeAfter(t, () => reloader.close());
    return {
        gateway,
        url: gateway.url!,
        logs: lines,
        rewrite: async next => {
            await writeConfig(file, next);
            assert.equal(await reloader.reload('test'), 'applied');
        }
    };
}

async function promptFolder(t: TeardownScope): Promise<string> {
    const folder = await tempDir(t);
    await writeFile(path.join(folder, 'review.md'), '---\ndescription: Review\n---\nReview this.');
    await writeFile(path.join(folder, 'deploy.md'), '---\ndescription: Deploy\n---\nDeploy that.');
    return folder;
}

/** A subscriptions/listen stream, open once acknowledged; its id is `id`. */
async function listen(url: string, headers: Record<string, string>, id: string | number = 'listen-1'): Promise<SseReader> {
    const body = { jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications: { promptsListChanged: true }, _meta: modernMeta() } };
    const response = await post(url, body, { ...modernHeaders(body), ...headers });
    assert.equal(response.status, 200, `listen: HTTP ${response.status} ${response.status === 200 ? '' : await response.text()}`);
    const reader = new SseReader(response);
    assert.equal((await reader.next()).method, 'notifications/subscriptions/acknowledged');
    return reader;
}

/** A 2025-06-18 session with its GET stream open. */
async function sessionWithStream(t: TeardownScope, url: string, headers: Record<string, string>): Promise<{ session: RawSession; stream: SseReader }> {
    const session = await openRawSession(url, '2025-06-18', headers);
    const response = await getStream(url, session.headers);
    assert.equal(response.status, 200, `GET stream: HTTP ${response.status}`);
    const stream = new SseReader(response);
    closeAfter(t, () => stream.cancel());
    return { session, stream };
}

/** Both kinds of stream of one client. */
async function streamsOf(t: TeardownScope, url: string, headers: Record<string, string>) {
    const held = await sessionWithStream(t, url, headers);
    const subscription = await listen(url, headers);
    closeAfter(t, () => subscription.cancel());
    return { ...held, subscription };
}

const isListChanged = (message: JsonRpcMessage) => message.method === 'notifications/prompts/list_changed';

async function streamsClosed(gateway: RunningGateway, reason: string): Promise<number> {
    return value(parseExposition((await gateway.metrics!.exposition()).body), 'mcp_gateway_streams_closed_total', { reason });
}

/** The ended listen stream's last message: the listen request's answer, `complete`, as the revision's graceful end. */
function assertGracefulEnd(subscription: SseReader, id: string | number): void {
    const last = subscription.messages.at(-1);
    assert.deepEqual(last, { jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID]: id } } });
}

/** A POST on a session whose answer the client stops reading as soon as it starts: the kernel buffers fill, then the gateway's. */
async function postAndStopReading(t: TeardownScope, url: string, session: RawSession, body: unknown): Promise<IncomingMessage> {
    const text = JSON.stringify(body);
    const sent = request(url, {
        method: 'POST',
        agent: false,
        headers: { ...session.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(text) }
    });
    closeAfter(t, () => sent.destroy());
    sent.end(text);
    const [response] = (await once(sent, 'response')) as [IncomingMessage];
    response.pause();
    return response;
}

describe('a client that stops reading', () => {
    test('its stream is cut once its backlog passes the bound: logged once, counted, its request cancelled; other clients are served on', { timeout: 120_000 }, async t => {
        const { logger, lines } = capturingLogger();
        const gateway = await startTestGateway({ notifications: { debounceMs: 20, maxDelayMs: 100 }, upstreams: [stdioFixture('up', { flags: ['--progress-prompt'] })] }, logger);
        closeAfter(t, () => gateway.close());
        await upstreamsReady(gateway);
        const url = gateway.url!;
        const other = await sessionWithStream(t, url, {});
        const stuck = await openRawSession(url);
        // Progress notifications of 60 kB each, as fast as the upstream can send them, until the request is cancelled.
        const flood = { name: 'up__progress', arguments: { steps: 'forever', intervalMs: '0', message: 'm'.repeat(60_000) }, _meta: { progressToken: 'flood' } };
        const response = await postAndStopReading(t, url, stuck, { jsonrpc: '2.0', id: 9, method: 'prompts/get', params: flood });
        assert.equal(response.headers['content-type'], 'text/event-stream');
        const metrics = gateway.operatorUrls.metrics!;
        await waitFor(
            async () => value(parseExposition(await (await fetch(metrics)).text()), 'mcp_gateway_streams_closed_total', { reason: 'slow_consumer' }) === 1,
            60_000,
            'the stalled stream counted'
        );
        const cut = lines().filter(line => line.msg === 'stream closed: its client stopped reading');
        assert.equal(cut.length, 1, 'logged once');
        assert.equal(cut[0]!.stream, 'answer');
        const backlog = cut[0]!.backlogBytes as number;
        // Over the bound (1 MiB) by what one turn of the event loop wrote at most: a few of those notifications.
        assert.ok(backlog > 1_048_576 && backlog < 2 * 1_048_576, `over the bound, and no further: ${backlog}`);
        // What the kernel still held reaches the client, then the end.
        const ended = once(response.socket, 'close');
        response.resume();
        await ended;
        // The upstream was told to stop, and everyone else is served: a new request, and the other session's stream.
        const client = await connectHttp(url);
        closeAfter(t, () => client.close());
        await waitFor(
            async () => {
                const result = await client.getPrompt({ name: 'up__stats' });
                const text = result.messages[0]?.content.type === 'text' ? result.messages[0].content.text : '{}';
                return ((JSON.parse(text) as { progress?: { cancelled: number } }).progress?.cancelled ?? 0) === 1;
            },
            30_000,
            'the flooding request cancelled upstream'
        );
        assert.equal(other.stream.ended, false);
    });
});

describe('a request id larger than the bound', () => {
    test('HTTP: refused with -32600 before it is stored (the subscription it asked for holds no quota), nothing echoed; 256 bytes pass', { timeout: 60_000 }, async t => {
        const folder = await promptFolder(t);
        const { url } = await startFromFile(t, gatewayConfig(folder, { mode: 'none' }, []));
        const body = { jsonrpc: '2.0', id: HUGE_ID, method: 'subscriptions/listen', params: { notifications: { promptsListChanged: true }, _meta: modernMeta() } };
        const response = await post(url, body, modernHeaders(body));
        assert.equal(response.status, 400);
        const refusal = (await response.json()) as JsonRpcMessage;
        assert.equal(refusal.error?.code, -32600);
        assert.match(refusal.error?.message ?? '', /id longer than 256 bytes/);
        assert.equal(refusal.id ?? null, null, 'the id is not echoed');
        // A stored subscription would hold the one this caller may open.
        const subscription = await listen(url, {}, 'small-id');
        closeAfter(t, () => subscription.cancel());
        const session = await openRawSession(url);
        const { status, messages } = await call(url, session, 'prompts/list', {}, HUGE_ID);
        assert.equal(status, 400);
        assert.equal(messages[0]?.error?.code, -32600);
        const initialize = await post(url, initializeBody('2025-06-18', 'x'.repeat(257)));
        assert.equal(initialize.status, 400, 'just over the bound');
        await initialize.body?.cancel();
        assert.equal((await call(url, session, 'prompts/list', {}, 'y'.repeat(256))).status, 200, 'at the bound');
    });

    test('stdio: the same refusal, and the channel carries on', { timeout: 60_000 }, async t => {
        const folder = await promptFolder(t);
        const dir = await tempDir(t);
        const file = path.join(dir, 'gateway.json');
        await writeConfig(file, { upstreams: [{ id: 'team', transport: 'files', path: folder }] });
        const child = spawn(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--config', file, '--stdio'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'ignore'] });
        closeAfter(t, () => stopChild(child));
        const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
        const next = async (): Promise<JsonRpcMessage> => {
            const line = await lines.next();
            assert.equal(line.done, false, 'the gateway answers');
            return JSON.parse(String(line.value)) as JsonRpcMessage;
        };
        child.stdin.write(`${JSON.stringify(initializeBody('2025-06-18', HUGE_ID))}\n`);
        const refusal = await next();
        assert.equal(refusal.error?.code, -32600);
        assert.match(refusal.error?.message ?? '', /id longer than 256 bytes/);
        assert.equal(refusal.id, null);
        child.stdin.write(`${JSON.stringify(initializeBody('2025-06-18', 1))}\n`);
        assert.equal((await next()).id, 1);
    });
});

describe('a reload that removes a client or changes its credentials', () => {
    test("apiKey: a re-keyed client's GET and listen streams end (the listen one answered), its quota is free, others carry on", { timeout: 90_000 }, async t => {
        const folder = await promptFolder(t);
        const clients = (aliceKey: number, carolAllow: string[]) => [
            { id: 'alice', apiKey: keyOf('alice', aliceKey) },
            { id: 'carol', apiKey: keyOf('carol'), prompts: { allow: carolAllow } }
        ];
        const { gateway, url, rewrite, logs } = await startFromFile(t, gatewayConfig(folder, { mode: 'apiKey' }, clients(0, ['*'])));
        const alice = await streamsOf(t, url, { authorization: `Bearer ${keyOf('alice', 0)}` });
        const carol = await streamsOf(t, url, { authorization: `Bearer ${keyOf('carol')}` });

        await rewrite(gatewayConfig(folder, { mode: 'apiKey' }, clients(1, ['*'])));
        await alice.stream.closed();
        await alice.subscription.closed();
        assertGracefulEnd(alice.subscription, 'listen-1');
        assert.equal(await streamsClosed(gateway, 'client_revoked'), 2);
        assert.ok(
            logs().some(
                line => line.msg === 'clients removed or given new credentials by the reload: their sessions and streams ended' && JSON.stringify(line.clients) === '["alice"]'
            )
        );
        // The old session is over, whichever key asks.
        const newKey = { authorization: `Bearer ${keyOf('alice', 1)}` };
        const old = await call(url, { ...alice.session, headers: { ...alice.session.headers, ...newKey } }, 'prompts/list');
        assert.equal(old.status, 404);
        // Its quota (one session, one subscription) is free for the new key.
        const renewed = await streamsOf(t, url, newKey);
        assert.equal(renewed.stream.ended, false);

        // Carol kept both streams: a change to what she sees reaches each of them.
        await rewrite(gatewayConfig(folder, { mode: 'apiKey' }, clients(1, ['team__review'])));
        await carol.stream.next(isListChanged);
        await carol.subscription.next(isListChanged);
        assert.equal(carol.stream.ended || carol.subscription.ended, false);
    });

    test("apiKey: a removed client's streams end and its session is gone; re-added, it has its quota back", { timeout: 90_000 }, async t => {
        const folder = await promptFolder(t);
        const bob = { id: 'bob', apiKey: keyOf('bob') };
        const other = { id: 'other', apiKey: keyOf('other') };
        const { gateway, url, rewrite } = await startFromFile(t, gatewayConfig(folder, { mode: 'apiKey' }, [bob, other]));
        const headers = { authorization: `Bearer ${keyOf('bob')}` };
        const held = await streamsOf(t, url, headers);
        await rewrite(gatewayConfig(folder, { mode: 'apiKey' }, [other]));
        await held.stream.closed();
        await held.subscription.closed();
        assertGracefulEnd(held.subscription, 'listen-1');
        assert.equal(await streamsClosed(gateway, 'client_revoked'), 2);
        await rewrite(gatewayConfig(folder, { mode: 'apiKey' }, [bob, other]));
        assert.equal((await call(url, held.session, 'prompts/list')).status, 404, "a removed client's session does not come back with it");
        await streamsOf(t, url, headers);
    });

    test('jwt: a client removed from the config loses its streams, though its token is still valid', { timeout: 90_000 }, async t => {
        const folder = await promptFolder(t);
        const auth = { mode: 'jwt', secret: JWT_SECRET };
        const { gateway, url, rewrite } = await startFromFile(t, gatewayConfig(folder, auth, [{ id: 'dave' }, { id: 'erin' }]));
        const token = (sub: string) => new SignJWT({ sub }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(JWT_SECRET));
        const dave = await streamsOf(t, url, { authorization: `Bearer ${await token('dave')}` });
        const erin = await streamsOf(t, url, { authorization: `Bearer ${await token('erin')}` });
        await rewrite(gatewayConfig(folder, auth, [{ id: 'erin' }]));
        await dave.stream.closed();
        await dave.subscription.closed();
        assertGracefulEnd(dave.subscription, 'listen-1');
        assert.equal(await streamsClosed(gateway, 'client_revoked'), 2);
        assert.equal(erin.stream.ended || erin.subscription.ended, false);
        // Back in the config, the same token opens a session and a subscription again: nothing of the old ones holds the quota.
        await rewrite(gatewayConfig(folder, auth, [{ id: 'dave' }, { id: 'erin' }]));
        await streamsOf(t, url, { authorization: `Bearer ${await token('dave')}` });
        assert.equal(erin.stream.ended || erin.subscription.ended, false, "a reload that changes nothing of erin's leaves her streams");
    });
});
