/**
 * Three gateway processes behind nginx (round robin, no affinity) with a real redis-server for their shared state,
 * one Streamable HTTP upstream they all watch. Clients of both eras walk cursors, get and complete prompts, hold
 * their notification streams and keep 2025 sessions while consecutive requests land on different replicas; one
 * replica is killed mid-run and started again. Nothing fails but what was in flight on the killed replica (retried
 * once, as a client would), a rate limit holds across the replicas, a DELETEd session is refused by every replica,
 * and the streams on the surviving replicas hear of a list change.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusterToolsAvailable, CLUSTER_SKIP_MESSAGE, startNginx, startRedis, startReplica, type RunningReplica } from './cluster-harness.js';
import { closeAfter, startHttpFixture } from './helpers.js';
import { deleteSession, getStream, messagesOf, modernHeaders, modernRequest, openRawSession, post, SseReader, type JsonRpcMessage, type RawSession } from './raw-http.js';

const FREE = 'free-client-key-0123456789abcdef';
const TIGHT = 'tight-client-key-0123456789abcdef';
const BURST = 8;
const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const LIST_CHANGED = (message: JsonRpcMessage) => message.method === 'notifications/prompts/list_changed';

/** One request as a client sends it, retried once when the replica it reached died under it (nginx: 502). */
async function request(
    url: string,
    body: Record<string, unknown>,
    headers: Record<string, string>
): Promise<{ status: number; answer: JsonRpcMessage | undefined; replica: string | null }> {
    for (let attempt = 0; ; attempt++) {
        const response = await post(url, body, headers).catch(() => undefined);
        if ((response === undefined || response.status === 502) && attempt === 0) {
            await response?.body?.cancel();
            continue;
        }
        if (response === undefined) return { status: 0, answer: undefined, replica: null };
        const messages = await messagesOf(response);
        return { status: response.status, answer: messages.find(message => message.id === body['id']), replica: response.headers.get('x-upstream') };
    }
}

/** Every prompt name, page by page; each page may be served by another replica. */
async function walk(url: string, session: RawSession | undefined): Promise<{ names: string[]; replicas: Set<string> }> {
    const names: string[] = [];
    const replicas = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < 50; page++) {
        const params = cursor === undefined ? {} : { cursor };
        const body = session === undefined ? modernRequest('prompts/list', params, `list-${page}`) : { jsonrpc: '2.0', id: `list-${page}`, method: 'prompts/list', params };
        const headers = session === undefined ? { ...auth(FREE), ...modernHeaders(body) } : session.headers;
        const { status, answer, replica } = await request(url, body, headers);
        assert.equal(status, 200, JSON.stringify(answer));
        if (replica !== null) replicas.add(replica);
        const result = answer?.result as { prompts: { name: string }[]; nextCursor?: string };
        names.push(...result.prompts.map(prompt => prompt.name));
        cursor = result.nextCursor;
        if (cursor === undefined) return { names, replicas };
    }
    throw new Error('the walk did not end');
}

/** Gets and completes through the endpoint: every answer a result. */
async function useSession(url: string, session: RawSession | undefined, round: number): Promise<string[]> {
    const calls = [
        { method: 'prompts/get', params: { name: 'shared__with-required', arguments: { topic: `round ${round}` } } },
        { method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'shared__with-required' }, argument: { name: 'topic', value: 'a' } } }
    ];
    const failures: string[] = [];
    for (const [index, { method, params }] of calls.entries()) {
        const id = `${method}-${round}-${index}`;
        const body = session === undefined ? modernRequest(method, params, id) : { jsonrpc: '2.0', id, method, params };
        const headers = session === undefined ? { ...auth(FREE), ...modernHeaders(body) } : session.headers;
        const { status, answer } = await request(url, body, headers);
        if (status !== 200 || answer?.result === undefined)
            failures.push(`${method} (${session === undefined ? '2026-07-28' : '2025'}): ${status} ${JSON.stringify(answer?.error)}`);
    }
    return failures;
}

test(
    'three replicas behind nginx serve clients of both eras as one gateway, through a replica dying',
    { skip: clusterToolsAvailable() ? false : CLUSTER_SKIP_MESSAGE, timeout: 300_000 },
    async t => {
        const redis = await startRedis(t);
        const upstream = await startHttpFixture('streamable-http', { prompts: 7 });
        closeAfter(t, () => upstream.close());
        const config = {
            cursorSecret: 'a cursor secret of 32 characters',
            sessions: { secrets: ['a session secret of 32 character'] },
            cluster: { redis: { url: redis.url } },
            auth: { mode: 'apiKey' },
            clients: [
                { id: 'free', apiKey: FREE, rateLimit: { requestsPerSecond: 0 } },
                { id: 'tight', apiKey: TIGHT, rateLimit: { requestsPerSecond: 0.001, burst: BURST } }
            ],
            pagination: { pageSize: 2 },
            notifications: { debounceMs: 30, maxDelayMs: 150 },
            upstreams: [{ id: 'shared', transport: 'streamable-http', url: upstream.url }]
        };
        const replicas: RunningReplica[] = [];
        for (let index = 0; index < 3; index++) replicas.push(await startReplica(t, config));
        const nginx = await startNginx(
            t,
            replicas.map(replica => replica.port)
        );
        const url = `${nginx.url}/mcp`;

        // Cursors, gets and completions of both eras while consecutive requests go to different replicas.
        const session = await openRawSession(url, '2025-06-18', auth(FREE));
        const legacy = await walk(url, session);
        const modern = await walk(url, undefined);
        assert.ok(legacy.names.length >= 7 && legacy.names.includes('shared__with-required'), legacy.names.join(' '));
        assert.deepEqual(modern.names, legacy.names, 'one view, whichever replica served each page');
        assert.equal(legacy.replicas.size, 3, 'a 2025 session served by every replica in turn');
        assert.deepEqual(await useSession(url, session, 0), []);
        assert.deepEqual(await useSession(url, undefined, 0), []);

        // Notification streams, one 2025 GET stream per session and one 2026 subscription, spread over the replicas.
        const streams: { reader: SseReader; replica: string }[] = [];
        const owners: RawSession[] = [];
        for (let index = 0; index < 3; index++) owners.push(await openRawSession(url, '2025-06-18', auth(FREE)));
        // Three requests in a row: round robin gives each to another replica.
        for (const owner of owners) {
            const response = await getStream(url, owner.headers);
            assert.equal(response.status, 200);
            const reader = new SseReader(response);
            closeAfter(t, () => reader.cancel());
            streams.push({ reader, replica: response.headers.get('x-upstream')! });
        }
        const listenBody = modernRequest('subscriptions/listen', { notifications: { promptsListChanged: true } }, 'listen');
        const listen = await post(url, listenBody, { ...auth(FREE), ...modernHeaders(listenBody) });
        const subscription = new SseReader(listen);
        closeAfter(t, () => subscription.cancel());
        await subscription.next(message => message.method === 'notifications/subscriptions/acknowledged');
        const held = new Set(streams.map(stream => stream.replica));
        assert.equal(held.size, 3, `the GET streams landed on every replica: ${[...held].join(' ')}`);

        // One replica dies while clients of both eras keep going; it is started again.
        const victim = replicas.find(replica => streams[0]!.replica.endsWith(`:${replica.port}`))!;
        const work = (async () => {
            const failures: string[] = [];
            for (let round = 1; round <= 12; round++) failures.push(...(await useSession(url, session, round)), ...(await useSession(url, undefined, round)));
            return failures;
        })();
        await victim.kill('SIGKILL');
        await streams[0]!.reader.closed(20_000);
        assert.deepEqual(await work, [], 'nothing failed but what the retry covered');

        // A list change reaches the streams on the surviving replicas (each watches the upstream itself).
        const trigger = await request(
            url,
            { jsonrpc: '2.0', id: 'trigger', method: 'prompts/get', params: { name: 'shared__emit-list-changed', arguments: { add: 'added-during-the-run' } } },
            session.headers
        );
        assert.equal(trigger.status, 200);
        for (const stream of streams.slice(1)) await stream.reader.next(LIST_CHANGED, 30_000);
        // The subscription hears it too, unless the replica that died held it: then it ended, as any stream there did.
        if (listen.headers.get('x-upstream')!.endsWith(`:${victim.port}`)) await subscription.closed(20_000);
        else await subscription.next(LIST_CHANGED, 30_000);

        await victim.restart();
        const after = await walk(url, session);
        assert.ok(after.names.includes('shared__added-during-the-run'), 'the restarted replica serves the session and the new list');
        assert.equal(after.replicas.size, 3);

        // A rate limit holds across the replicas: BURST requests in all, not per replica.
        const statuses: number[] = [];
        for (let index = 0; index < BURST + 3; index++) {
            const body = modernRequest('prompts/list', {}, `tight-${index}`);
            statuses.push((await request(url, body, { ...auth(TIGHT), ...modernHeaders(body) })).status);
        }
        assert.equal(statuses.filter(status => status === 200).length, BURST, statuses.join(' '));

        // DELETE through nginx: every replica refuses the session from then on (each asked directly).
        assert.equal((await deleteSession(url, session.headers)).status, 200);
        for (const replica of replicas) {
            const refused = await post(replica.url, { jsonrpc: '2.0', id: 'after-delete', method: 'ping' }, session.headers);
            await refused.body?.cancel();
            assert.equal(refused.status, 404, `replica on port ${replica.port}`);
        }
    }
);
