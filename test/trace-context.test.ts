/**
 * W3C trace context passes through the gateway with tracing off: a client's `_meta.traceparent`, `tracestate` and
 * `baggage` (or its HTTP request's headers) reach every upstream, of both eras over stdio and HTTP, in `_meta`, and
 * over HTTP as headers too. Upstreams are test/fixtures/trace-recorder.ts, which answer a get with what they received.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { closeAfter, connectHttp, connectModernHttp, startTestGateway, upstreamsReady } from './helpers.js';
import { RECORDER_IDS, recorderUpstreams, seenBy } from './trace-recorders.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const HEADER_TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const TRACE = { traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7', baggage: 'userId=alice' };
const UPSTREAMS = RECORDER_IDS;

async function gatewayWithRecorders(t: TestContext): Promise<string> {
    const gateway = await startTestGateway({ upstreams: await recorderUpstreams(t) });
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
                const seen = await seenBy(client, `${upstream}__echo`, TRACE);
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
                assert.deepEqual((await seenBy(client, `${upstream}__echo`)).meta, headers, `${connect.name} -> ${upstream}`);
                assert.deepEqual((await seenBy(client, `${upstream}__echo`, { traceparent: TRACEPARENT })).meta, { traceparent: TRACEPARENT });
            }
        }
    });

    test('an invalid traceparent is dropped with its companions; no context, nothing is added', async t => {
        const url = await gatewayWithRecorders(t);
        const client = await connectModernHttp(url);
        closeAfter(t, () => client.close());
        for (const upstream of UPSTREAMS) {
            const bad = { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01', tracestate: 'a=b', baggage: 'k=v' };
            assert.deepEqual(await seenBy(client, `${upstream}__echo`, bad), upstream.startsWith('h') ? { meta: {}, headers: {} } : { meta: {} });
            assert.deepEqual((await seenBy(client, `${upstream}__echo`)).meta, {});
        }
    });
});
