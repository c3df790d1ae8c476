/**
 * JSON-RPC batches over Streamable HTTP. MCP 2025-03-26 added batching and 2025-06-18 removed it; 2024-11-05 never
 * had it. A batch is refused on a session whose revision has none; where allowed, every message in it counts
 * against the client's rate limit (all or nothing) and its size is bounded. Nothing refused reaches an upstream.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, fixtureStats, startTestGateway, stdioFixture } from './helpers.js';
import { deleteSession, messagesOf, openRawSession, post, type RawSession } from './raw-http.js';

const BATCHER = 'batcher-key-0123456789abcdef';
const OBSERVER = 'observer-key-0123456789abcdef';
const UNLIMITED = 'unlimited-key-0123456789abcdef';
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Burst of the batching client; its bucket refills one token per 1000 s, so nothing refills during a test. */
const BURST = 6;

const get = (id: number) => ({ jsonrpc: '2.0', id, method: 'prompts/get', params: { name: 'up__prompt-000' } });

describe('JSON-RPC batches', () => {
    let gateway: RunningGateway;
    let observer: Client;

    before(async () => {
        gateway = await startTestGateway({
            auth: { mode: 'apiKey' },
            clients: [
                { id: 'batcher', apiKey: BATCHER, rateLimit: { requestsPerSecond: 0.001, burst: BURST } },
                { id: 'observer', apiKey: OBSERVER },
                { id: 'unlimited', apiKey: UNLIMITED, rateLimit: { requestsPerSecond: 0 } }
            ],
            upstreams: [stdioFixture('up', { prompts: 1 })]
        });
        observer = await connectHttp(gateway.url!, { headers: bearer(OBSERVER) });
    });

    after(async () => {
        await observer?.close();
        await gateway?.close();
    });

    const gets = async () => (await fixtureStats(observer, 'up__stats')).requests.get;

    for (const revision of ['2024-11-05', '2025-06-18', '2025-11-25']) {
        test(`a batch on a ${revision} session is HTTP 400 -32600 naming the revision; nothing runs`, { timeout: 20_000 }, async () => {
            const session = await openRawSession(gateway.url!, revision, bearer(UNLIMITED));
            const before = await gets();
            const response = await post(gateway.url!, [get(2), get(3)], session.headers);
            const text = await response.text();
            assert.equal(response.status, 400, text);
            const body = JSON.parse(text) as { id: unknown; error: { code: number; message: string } };
            assert.equal(body.error.code, -32600);
            assert.equal(body.id, null);
            assert.match(body.error.message, new RegExp(`batch.*${revision}`, 'i'));
            assert.equal(await gets(), before, 'nothing reached the upstream');
            // The session itself still works.
            const single = await post(gateway.url!, get(4), session.headers);
            assert.equal(single.status, 200);
            assert.equal((await messagesOf(single))[0]?.error, undefined);
            assert.equal((await deleteSession(gateway.url!, session.headers)).status, 200);
        });
    }

    describe('on a 2025-03-26 session', () => {
        let session: RawSession;

        before(async () => {
            // initialize and notifications/initialized take 2 of the batcher's BURST tokens.
            session = await openRawSession(gateway.url!, '2025-03-26', bearer(BATCHER));
        });

        test('every message counts: a batch of N takes N tokens, and one that does not fit is 429 with nothing run', { timeout: 20_000 }, async () => {
            const before = await gets();
            const first = await post(gateway.url!, [get(10), get(11), get(12)], session.headers);
            assert.equal(first.status, 200, await first.clone().text());
            const answers = await messagesOf(first);
            assert.deepEqual(answers.map(answer => answer.id).sort(), [10, 11, 12]);
            assert.ok(answers.every(answer => answer.error === undefined));
            assert.equal(await gets(), before + 3);

            // 5 of 6 tokens are gone: a batch of 3 does not fit, and none of it runs.
            const refused = await post(gateway.url!, [get(20), get(21), get(22)], session.headers);
            const text = await refused.text();
            assert.equal(refused.status, 429, text);
            assert.match(refused.headers.get('retry-after') ?? '', /^\d+$/);
            assert.match(text, /"code":-32000/);
            assert.equal(await gets(), before + 3, 'nothing of the refused batch reached the upstream');
        });
    });

    describe('size', () => {
        let session: RawSession;

        before(async () => {
            session = await openRawSession(gateway.url!, '2025-03-26', bearer(UNLIMITED));
        });

        after(async () => {
            await deleteSession(gateway.url!, session.headers);
        });

        test('a batch of 100 is served; 101 and an empty batch are HTTP 400 -32600 with nothing run', { timeout: 30_000 }, async () => {
            const full = await post(
                gateway.url!,
                Array.from({ length: 100 }, (_, index) => ({ jsonrpc: '2.0', id: index + 1, method: 'ping' })),
                session.headers
            );
            assert.equal(full.status, 200);
            assert.equal((await messagesOf(full)).length, 100);

            const before = await gets();
            for (const batch of [Array.from({ length: 101 }, (_, index) => get(index + 1)), []]) {
                const response = await post(gateway.url!, batch, session.headers);
                const text = await response.text();
                assert.equal(response.status, 400, text);
                assert.match(text, /"code":-32600/);
            }
            assert.equal(await gets(), before);
        });
    });
});
