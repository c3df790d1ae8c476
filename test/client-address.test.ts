/**
 * With auth.mode none every caller is the client `anonymous`; its quotas (sessions per client, rate limit) are kept
 * per remote address, so one caller cannot lock the others out. Callers are told apart by binding client sockets
 * to different loopback addresses (127.0.0.2, 127.0.0.3, ...). Behind a proxy listed in listen.trustProxy the
 * address it puts in X-Forwarded-For counts; otherwise the header is ignored.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { Agent } from 'undici';
import type { RunningGateway } from '../src/gateway.js';
import { closeAfter, startTestGateway, stdioFixture } from './helpers.js';
import { labelValues, scrape } from './prometheus.js';
import { call, clientAt, openRawSession, post } from './raw-http.js';

/** A client at `address`, for the rest of the test. */
function clientFrom(t: TestContext, address: string): Agent {
    const agent = clientAt(address);
    // destroy, not close: a request a failed assertion left unread must not hold the teardown up.
    closeAfter(t, () => agent.destroy());
    return agent;
}

const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

/** A ping, which needs no session: its status, the body read. */
async function pingFrom(from: Agent, url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
    const answer = await post(url, ping, headers, { from });
    return { status: answer.status, text: await answer.text() };
}

/** Sends requests that need no session (each answered 400, each costing a token) until one is rate limited. */
async function exhaust(from: Agent, url: string, headers: Record<string, string> = {}, most = 50): Promise<number> {
    for (let sent = 1; sent <= most; sent++) {
        const answer = await pingFrom(from, url, headers);
        if (answer.status === 429) return sent;
        assert.equal(answer.status, 400, answer.text);
    }
    throw new Error(`not rate limited after ${most} requests`);
}

const BURST = 5;
const LIMITS = { maxSessionsPerClient: 2, rateLimit: { requestsPerSecond: 0.001, burst: BURST } };

describe('anonymous quotas by remote address (auth.mode none)', () => {
    let gateway: RunningGateway;

    before(async () => {
        gateway = await startTestGateway({ limits: LIMITS, upstreams: [stdioFixture('up', { prompts: 1 })] });
    });

    after(async () => {
        await gateway?.close();
    });

    test('one address at its session limit does not lock another address out', { timeout: 20_000 }, async t => {
        const url = gateway.url!;
        const [crowded, other] = [clientFrom(t, '127.0.0.2'), clientFrom(t, '127.0.0.3')];
        await openRawSession(url, undefined, {}, { from: crowded });
        await openRawSession(url, undefined, {}, { from: crowded });
        await assert.rejects(openRawSession(url, undefined, {}, { from: crowded }), /initialize answered 429/, 'the third session from 127.0.0.2');
        const session = await openRawSession(url, undefined, {}, { from: other });
        assert.equal((await call(url, session, 'prompts/list')).status, 200, 'a session from 127.0.0.3');
        // Metrics keep one client label: addresses never become label values.
        assert.deepEqual([...labelValues(await scrape(gateway.operatorUrls.metrics!), 'mcp_gateway_prompt_lists_total', 'client')], ['anonymous']);
    });

    test('one address out of rate-limit tokens does not slow another down', { timeout: 20_000 }, async t => {
        const url = gateway.url!;
        assert.equal(await exhaust(clientFrom(t, '127.0.0.4'), url), BURST + 1);
        assert.equal((await pingFrom(clientFrom(t, '127.0.0.5'), url)).status, 400, 'served (and refused for lack of a session), not 429');
    });

    test('without listen.trustProxy a forged X-Forwarded-For is ignored', { timeout: 20_000 }, async t => {
        const url = gateway.url!;
        const forger = clientFrom(t, '127.0.0.6');
        assert.equal(await exhaust(forger, url, { 'x-forwarded-for': '203.0.113.1' }), BURST + 1);
        assert.equal((await pingFrom(forger, url, { 'x-forwarded-for': '203.0.113.2' })).status, 429);
    });
});

describe('listen.trustProxy', () => {
    let gateway: RunningGateway;

    before(async () => {
        gateway = await startTestGateway({ listen: { port: 0, trustProxy: ['127.0.0.2'] }, limits: LIMITS, upstreams: [stdioFixture('up', { prompts: 1 })] });
    });

    after(async () => {
        await gateway?.close();
    });

    test("behind a trusted proxy the X-Forwarded-For address counts, not the proxy's own", { timeout: 20_000 }, async t => {
        const url = gateway.url!;
        const proxy = clientFrom(t, '127.0.0.2');
        const client = (address: string) => ({ 'x-forwarded-for': address });
        assert.equal(await exhaust(proxy, url, client('203.0.113.7')), BURST + 1);
        // Another client behind the same proxy has its own quota.
        assert.equal((await pingFrom(proxy, url, client('203.0.113.8'))).status, 400);
        // What a client writes in front of the proxy's entry is not believed.
        assert.equal((await pingFrom(proxy, url, { 'x-forwarded-for': '198.51.100.9, 203.0.113.7' })).status, 429);
        // IPv6 callers share a quota per /64.
        assert.equal(await exhaust(proxy, url, client('2001:db8:1:2::1')), BURST + 1);
        assert.equal((await pingFrom(proxy, url, client('2001:db8:1:2:ffff::9'))).status, 429);
        assert.equal((await pingFrom(proxy, url, client('2001:db8:1:3::1'))).status, 400);
    });

    test('a socket that is not a trusted proxy is the client itself, whatever its X-Forwarded-For says', { timeout: 20_000 }, async t => {
        const url = gateway.url!;
        const direct = clientFrom(t, '127.0.0.3');
        assert.equal(await exhaust(direct, url, { 'x-forwarded-for': '203.0.113.20' }), BURST + 1);
        assert.equal((await pingFrom(direct, url, { 'x-forwarded-for': '203.0.113.21' })).status, 429);
    });
});
