/**
 * The catalog page's MCP client against lists and streams a hostile or broken upstream (or a proxy) can make the
 * gateway pass on: entries without names, arguments of any shape, a cursor loop repeating a page, a listen stream
 * that goes silent without closing. The client's `fetch` is given answers as real Response objects (the page's own
 * injection point); the silent stream's 45 s run on mock timers. Its other behaviour is test/unit/catalog-client.test.ts's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CatalogRequestError, createCatalogClient, LISTEN_IDLE_MS, sseMessages } from '../../src/downstream/http/catalog-page/mcp-client.js';

const ENDPOINT = 'http://127.0.0.1:1/mcp';

interface Sent {
    method: string;
    params: Record<string, unknown>;
    id: string | number;
}

/** A fetch whose answers `answer` makes from each request's JSON-RPC body. */
function scriptedFetch(answer: (sent: Sent) => Response): typeof fetch {
    return (_url, init) => Promise.resolve(answer(JSON.parse(init?.body as string) as Sent));
}

const json = (id: string | number, result: unknown) => Response.json({ jsonrpc: '2.0', id, result });

test('a list walk keeps entries with a usable name, arguments that are objects with distinct names, and each name once', async () => {
    const long = 'x'.repeat(1025);
    const page = [
        { name: 'team__a', arguments: [{ name: 'topic' }, 'text', null, { name: 7 }, { description: 'no name' }, { name: 'topic', required: true }, { name: '' }] },
        { name: 'team__b', arguments: 'not a list' },
        { name: 'team__c' },
        { title: 'no name' },
        { name: 42 },
        { name: '' },
        { name: long },
        'a string',
        null,
        ['an', 'array'],
        { name: 'team__a', description: 'a second team__a' }
    ];
    const client = createCatalogClient({ endpoint: ENDPOINT, clientVersion: '1', fetch: scriptedFetch(sent => json(sent.id, { prompts: page })) });
    const { prompts, truncated } = await client.listPrompts();
    assert.equal(truncated, false);
    assert.deepEqual(prompts, [
        { name: 'team__a', arguments: [{ name: 'topic' }] },
        { name: 'team__b', arguments: [] },
        { name: 'team__c', arguments: [] }
    ]);
});

test('a cursor loop repeating a page is one page: its prompts once, and the walk ends', async () => {
    let requests = 0;
    const fetch = scriptedFetch(sent => {
        requests++;
        return json(sent.id, { prompts: [{ name: 'loop__one' }], nextCursor: 'again' });
    });
    const { prompts, truncated } = await createCatalogClient({ endpoint: ENDPOINT, clientVersion: '1', fetch }).listPrompts();
    assert.deepEqual(
        prompts.map(prompt => prompt.name),
        ['loop__one']
    );
    assert.equal(truncated, false);
    assert.equal(requests, 2, 'the first page, then the cursor it names, which names itself again');
});

test('a list that is not a list is a protocol error, not a page stuck loading', async () => {
    const fetch = scriptedFetch(sent => json(sent.id, { prompts: { name: 'x' } }));
    await assert.rejects(createCatalogClient({ endpoint: ENDPOINT, clientVersion: '1', fetch }).listPrompts(), (error: unknown) => {
        assert.ok(error instanceof CatalogRequestError);
        assert.equal(error.kind, 'protocol');
        return true;
    });
});

test('sseMessages with idleMs: a stream that sends nothing that long is cut (network), and cancelled', async t => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
        start(controller) {
            controller.enqueue(new TextEncoder().encode(': keepalive\n\ndata: {"a":1}\n\n'));
        },
        cancel() {
            cancelled = true;
        }
    });
    const messages = sseMessages(stream, { idleMs: 1000 });
    assert.deepEqual((await messages.next()).value, { a: 1 });
    const next = messages.next();
    // Each read waits on its own timer: the mock clock moves only once the read is waiting.
    await new Promise(resolve => setImmediate(resolve));
    t.mock.timers.tick(999);
    t.mock.timers.tick(1);
    await assert.rejects(next, (error: unknown) => error instanceof CatalogRequestError && error.kind === 'network' && /sent nothing for 1 s/.test(error.message));
    assert.ok(cancelled, 'the silent stream is given up');
});

test('a listen stream silent for 45 s after its acknowledgement is opened again', async t => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const streams: { cancelled: boolean }[] = [];
    const fetch = scriptedFetch(sent => {
        const state = { cancelled: false };
        streams.push(state);
        const ack = { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: { 'io.modelcontextprotocol/subscriptionId': sent.id } } };
        const body = new ReadableStream<Uint8Array>({
            start(controller) {
                controller.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(ack)}\n\n`));
            },
            cancel() {
                state.cancelled = true;
            }
        });
        return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    });
    const controller = new AbortController();
    t.after(() => controller.abort());
    const states: [string, string | undefined][] = [];
    let onReconnecting: () => void = () => undefined;
    let onListening: () => void = () => undefined;
    const reconnecting = new Promise<void>(resolve => (onReconnecting = resolve));
    const listening = new Promise<void>(resolve => (onListening = resolve));
    const client = createCatalogClient({ endpoint: ENDPOINT, clientVersion: '1', fetch, random: () => 0.5 });
    const loop = client.listen({
        signal: controller.signal,
        onState: (state, error) => {
            states.push([state, error?.kind]);
            if (state === 'listening') onListening();
            if (state === 'reconnecting') onReconnecting();
        }
    });
    await listening;
    await new Promise(resolve => setImmediate(resolve));
    t.mock.timers.tick(LISTEN_IDLE_MS - 1);
    assert.deepEqual(states, [
        ['connecting', undefined],
        ['listening', undefined]
    ]);
    t.mock.timers.tick(1);
    await reconnecting;
    assert.deepEqual(states.at(-1), ['reconnecting', 'network']);
    assert.ok(streams[0]!.cancelled, 'the silent stream is closed');
    assert.equal(LISTEN_IDLE_MS, 45_000, 'three keepalives (every 15 s) missed');
    controller.abort();
    await loop;
});
