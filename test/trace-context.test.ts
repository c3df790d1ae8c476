/**
 * W3C trace context passes through the gateway with tracing off: a client's `_meta.traceparent`, `tracestate` and
 * `baggage` (or its HTTP request's headers) reach every upstream, of both eras over stdio and HTTP, in `_meta`, and
 * over HTTP as headers too. Upstreams are test/fixtures/trace-recorder.ts, which answer a get with what they received.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { compiledFixture } from './fixture-build.js';
import { closeAfter, connectHttp, connectModernHttp, ROOT, spawnHttpFixture, startTestGateway, upstreamsReady, type HttpFixture } from './helpers.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const HEADER_TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const TRACE = { traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7', baggage: 'userId=alice' };
const UPSTREAMS = ['s25', 's26', 'h25', 'h26'] as const;

interface Seen {
    meta: Record<string, string>;
    headers?: Record<string, string>;
}

async function seenBy(client: Client, upstream: string, meta?: Record<string, unknown>): Promise<Seen> {
    const result = await client.getPrompt({ name: `${upstream}__echo`, ...(meta === undefined ? {} : { _meta: meta }) });
    const content = result.messages[0]!.content;
    assert.equal(content.type, 'text');
    return JSON.parse(content.text) as Seen;
}

async function gatewayWithRecorders(t: TestContext): Promise<string> {
    const recorder = compiledFixture('trace-recorder');
    const http25: HttpFixture = await spawnHttpFixture([recorder, '--era', '2025', '--transport', 'streamable-http']);
    closeAfter(t, () => http25.close());
    const http26: HttpFixture = await spawnHttpFixture([recorder, '--era', '2026', '--transport', 'streamable-http']);
    closeAfter(t, () => http26.close());
    const stdio = (id: string, era: string) => ({
        id,
        transport: 'stdio',
        command: process.execPath,
        args: [recorder, '--era', era],
        cwd: ROOT,
        protocol: era === '2026' ? '2026-07-28' : '2025'
    });
    const gateway = await startTestGateway({
        upstreams: [
            stdio('s25', '2025'),
            stdio('s26', '2026'),
            { id: 'h25', transport: 'streamable-http', url: http25.url, protocol: '2025' },
            { id: 'h26', transport: 'streamable-http', url: http26.url, protocol: '2026-07-28' }
        ]
    });
    closeAfter(t, () => gateway.close());
    await upstreamsReady(gateway);
    return gateway.url!;
}

describe('trace context passes through with tracing off', () => {
    test("a client's _meta trace context reaches upstreams of both eras over stdio and HTTP, as headers too over HTTP", async t => {
        const url = await gatewayWithRecorders(t);
        for (const connect of [connectHttp, connectModernHttp]) {
            const client = await connect(url);
            closeAfter(t, () => client.close());
            for (const upstream of UPSTREAMS) {
                const seen = await seenBy(client, upstream, TRACE);
                assert.deepEqual(seen.meta, TRACE, `${connect.name} -> ${upstream}`);
                if (upstream.startsWith('h')) assert.deepEqual(seen.headers, TRACE, `${connect.name} -> ${upstream} headers`);
                else assert.equal(seen.headers, undefined);
            }
        }
    });

    test("the HTTP request's traceparent headers are honoured when _meta carries none; _meta wins over them", async t => {
        const url = await gatewayWithRecorders(t);
        const headers = { traceparent: HEADER_TRACEPARENT, tracestate: 'congo=t61rcWkgMzE' };
        for (const connect of [connectHttp, connectModernHttp]) {
            const client = await connect(url, { headers });
            closeAfter(t, () => client.close());
            for (const upstream of UPSTREAMS) {
                assert.deepEqual((await seenBy(client, upstream)).meta, headers, `${connect.name} -> ${upstream}`);
                assert.deepEqual((await seenBy(client, upstream, { traceparent: TRACEPARENT })).meta, { traceparent: TRACEPARENT });
            }
        }
    });

    test('an invalid traceparent is dropped with its companions; no context, nothing is added', async t => {
        const url = await gatewayWithRecorders(t);
        const client = await connectModernHttp(url);
        closeAfter(t, () => client.close());
        for (const upstream of UPSTREAMS) {
            const bad = { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01', tracestate: 'a=b', baggage: 'k=v' };
            assert.deepEqual(await seenBy(client, upstream, bad), upstream.startsWith('h') ? { meta: {}, headers: {} } : { meta: {} });
            assert.deepEqual((await seenBy(client, upstream)).meta, {});
        }
    });
});
