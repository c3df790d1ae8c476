/**
 * With auth.mode none every caller is the client `anonymous`; its quotas (sessions per client, rate limit) are kept
 * per remote address, so one caller cannot lock the others out. Callers are told apart by binding client sockets
 * to different loopback addresses (127.0.0.2, 127.0.0.3, ...). Behind a proxy listed in listen.trustProxy the
 * address it puts in X-Forwarded-For counts; otherwise the header is ignored.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../src/gateway.js';
import { startTestGateway, stdioFixture } from './helpers.js';
import { labelValues, scrape } from './prometheus.js';
import { initializeBody, JSON_AND_SSE, sessionHeaders } from './raw-http.js';

interface Answer {
    status: number;
    sessionId: string | undefined;
    text: string;
}

/** A POST from a socket bound to `from`. */
function postFrom(from: string, url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const text = JSON.stringify(body);
    return new Promise((resolve, reject) => {
        const req = request(url, { method: 'POST', localAddress: from, headers: { ...JSON_AND_SSE, ...headers, 'content-length': Buffer.byteLength(text) } }, res => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => {
                const sessionId = res.headers['mcp-session-id'];
                resolve({ status: res.statusCode ?? 0, sessionId: typeof sessionId === 'string' ? sessionId : undefined, text: Buffer.concat(chunks).toString() });
            });
            res.on('error', reject);
        });
        req.on('error', reject);
        req.end(text);
    });
}

/** initialize (+ notifications/initialized) from `from`: the session's headers, or the refusal's status. */
async function openFrom(from: string, url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers?: Record<string, string> }> {
    const init = await postFrom(from, url, initializeBody(), headers);
    if (init.status !== 200 || init.sessionId === undefined) return { status: init.status };
    const session = { ...headers, ...sessionHeaders(init.sessionId, '2025-06-18') };
    const initialized = await postFrom(from, url, { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
    assert.equal(initialized.status, 202);
    return { status: 200, headers: session };
}

const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

/** Sends requests that need no session (each answered 400, each costing a token) until one is rate limited. */
async function exhaust(from: string, url: string, headers: Record<string, string> = {}, most = 50): Promise<number> {
    for (let sent = 1; sent <= most; sent++) {
        const answer = await postFrom(from, url, ping, headers);
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

    test('one address at its session limit does not lock another address out', { timeout: 20_000 }, async () => {
        const url = gateway.url!;
        assert.equal((await openFrom('127.0.0.2', url)).status, 200);
        assert.equal((await openFrom('127.0.0.2', url)).status, 200);
        assert.equal((await openFrom('127.0.0.2', url)).status, 429, 'the third session from 127.0.0.2');
        const other = await openFrom('127.0.0.3', url);
        assert.equal(other.status, 200, 'a session from 127.0.0.3');
        const listed = await postFrom('127.0.0.3', url, { jsonrpc: '2.0', id: 2, method: 'prompts/list', params: {} }, other.headers);
        assert.equal(listed.status, 200);
        // Metrics keep one client label: addresses never become label values.
        assert.deepEqual([...labelValues(await scrape(gateway.operatorUrls.metrics!), 'mcp_gateway_prompt_lists_total', 'client')], ['anonymous']);
    });

    test('one address out of rate-limit tokens does not slow another down', { timeout: 20_000 }, async () => {
        const url = gateway.url!;
        assert.equal(await exhaust('127.0.0.4', url), BURST + 1);
        assert.equal((await postFrom('127.0.0.5', url, ping)).status, 400, 'served (and refused for lack of a session), not 429');
    });

    test('without listen.trustProxy a forged X-Forwarded-For is ignored', { timeout: 20_000 }, async () => {
        const url = gateway.url!;
        assert.equal(await exhaust('127.0.0.6', url, { 'x-forwarded-for': '203.0.113.1' }), BURST + 1);
        assert.equal((await postFrom('127.0.0.6', url, ping, { 'x-forwarded-for': '203.0.113.2' })).status, 429);
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

    test('behind a trusted proxy the X-Forwarded-For address counts, not the proxy\'s own', { timeout: 20_000 }, async () => {
        const url = gateway.url!;
        const client = (address: string) => ({ 'x-forwarded-for': address });
        assert.equal(await exhaust('127.0.0.2', url, client('203.0.113.7')), BURST + 1);
        // Another client behind the same proxy has its own quota.
        assert.equal((await postFrom('127.0.0.2', url, ping, client('203.0.113.8'))).status, 400);
        // What a client writes in front of the proxy's entry is not believed.
        assert.equal((await postFrom('127.0.0.2', url, ping, { 'x-forwarded-for': '198.51.100.9, 203.0.113.7' })).status, 429);
        // IPv6 callers share a quota per /64.
        assert.equal(await exhaust('127.0.0.2', url, client('2001:db8:1:2::1')), BURST + 1);
        assert.equal((await postFrom('127.0.0.2', url, ping, client('2001:db8:1:2:ffff::9'))).status, 429);
        assert.equal((await postFrom('127.0.0.2', url, ping, client('2001:db8:1:3::1'))).status, 400);
    });

    test('a socket that is not a trusted proxy is the client itself, whatever its X-Forwarded-For says', { timeout: 20_000 }, async () => {
        const url = gateway.url!;
        assert.equal(await exhaust('127.0.0.3', url, { 'x-forwarded-for': '203.0.113.20' }), BURST + 1);
        assert.equal((await postFrom('127.0.0.3', url, ping, { 'x-forwarded-for': '203.0.113.21' })).status, 429);
    });
});
