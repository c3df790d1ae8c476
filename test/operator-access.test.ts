/**
 * Operator endpoints when callers must authenticate (auth.mode apiKey or jwt). Metrics and the dashboard show
 * client ids and prompt names a client's policy may hide, so on the MCP listener they are served only behind
 * metrics.bearerToken (or apart, on metrics.listen); without either they are not served at all (404, as any unknown
 * path) and the gateway says so at start. /healthz and /readyz keep answering there, but upstream ids, states and
 * errors only to the operator token. auth.mode none keeps everything as it was.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../src/config/load.js';
import type { RunningGateway } from '../src/gateway.js';
import { capturingLogger, getJson, ROOT, startTestGateway, stdioFixture, stopChild, upstreamsReady } from './helpers.js';

const KEY = 'client-key-0123456789abcdef';
const TOKEN = 'operator-token-0123456789abcdef';
const OPERATOR_PATHS = ['/metrics', '/dashboard', '/dashboard/', '/dashboard/data', '/dashboard/dashboard.js'];

const withKeys = (extra: Record<string, unknown> = {}) => ({
    auth: { mode: 'apiKey' },
    clients: [{ id: 'alice', apiKey: KEY }],
    upstreams: [stdioFixture('up', { prompts: 1 })],
    ...extra
});

async function statusAndText(url: string | URL, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
    const response = await fetch(url, { headers });
    return { status: response.status, text: await response.text() };
}

/** A path nothing serves, for comparison: an operator path that is not served must look just like it. */
async function unknownPath(base: string): Promise<{ status: number; text: string }> {
    return statusAndText(new URL('/no-such-path', base));
}

describe('auth on, no metrics.bearerToken, no metrics.listen', () => {
    let gateway: RunningGateway;
    const log = capturingLogger();

    before(async () => {
        gateway = await startTestGateway(withKeys(), log.logger);
        await upstreamsReady(gateway);
    });

    after(async () => {
        await gateway?.close();
    });

    test('metrics and the dashboard are not served on the MCP listener: 404 like any unknown path', { timeout: 20_000 }, async () => {
        const unknown = await unknownPath(gateway.url!);
        assert.equal(unknown.status, 404);
        for (const operatorPath of OPERATOR_PATHS) {
            for (const headers of [{}, { authorization: `Bearer ${KEY}` }] as Record<string, string>[]) {
                assert.deepEqual(await statusAndText(new URL(operatorPath, gateway.url), headers), unknown, operatorPath);
            }
        }
        assert.deepEqual(gateway.operatorUrls, {});
    });

    test('the start-up log says so, and names how to turn them on', () => {
        const notice = log.lines().find(line => line['level'] === 'warn' && /not served/.test(String(line['msg'])));
        assert.ok(notice, 'a warning at start');
        assert.match(String(notice['msg']), /metrics\.bearerToken/);
        assert.match(String(notice['msg']), /metrics\.listen/);
        assert.deepEqual(gateway.notices.length, 1);
        assert.match(gateway.notices[0]!, /metrics\.bearerToken.*metrics\.listen/);
    });

    test('/healthz and /readyz answer the status and its code only: no upstream ids, states or errors', { timeout: 20_000 }, async () => {
        const health = await getJson(new URL('/healthz', gateway.url).href);
        assert.deepEqual(health, { status: 200, body: { status: 'ok' } });
        const ready = await getJson(new URL('/readyz', gateway.url).href);
        assert.deepEqual(ready, { status: 200, body: { status: 'ready' } });
        // A client's key is no operator token.
        const withKey = await fetch(new URL('/healthz', gateway.url), { headers: { authorization: `Bearer ${KEY}` } });
        assert.deepEqual(await withKey.json(), { status: 'ok' });
    });
});

describe('auth on, with metrics.bearerToken', () => {
    let gateway: RunningGateway;

    before(async () => {
        gateway = await startTestGateway(withKeys({ metrics: { bearerToken: TOKEN } }));
        await upstreamsReady(gateway);
    });

    after(async () => {
        await gateway?.close();
    });

    test('metrics and dashboard data need the token on the MCP listener', { timeout: 20_000 }, async () => {
        assert.equal(gateway.operatorUrls.metrics, new URL('/metrics', gateway.url).href);
        assert.deepEqual(gateway.notices, []);
        assert.equal((await statusAndText(gateway.operatorUrls.metrics)).status, 401);
        assert.equal((await statusAndText(gateway.operatorUrls.metrics, { authorization: `Bearer ${TOKEN}` })).status, 200);
        assert.equal((await statusAndText(new URL('/dashboard/data', gateway.url), { authorization: `Bearer ${TOKEN}` })).status, 200);
    });

    test('/healthz and /readyz give upstream details to the operator token only', { timeout: 20_000 }, async () => {
        for (const probe of ['/healthz', '/readyz']) {
            const anonymous = (await (await fetch(new URL(probe, gateway.url))).json()) as Record<string, unknown>;
            assert.deepEqual(Object.keys(anonymous), ['status'], probe);
            const wrong = (await (await fetch(new URL(probe, gateway.url), { headers: { authorization: `Bearer ${TOKEN}x` } })).json()) as Record<string, unknown>;
            assert.deepEqual(Object.keys(wrong), ['status'], probe);
            const operator = await fetch(new URL(probe, gateway.url), { headers: { authorization: `Bearer ${TOKEN}` } });
            assert.equal(operator.status, 200);
            const body = (await operator.json()) as { upstreams: { id: string; state: string }[] };
            assert.deepEqual(
                body.upstreams.map(upstream => `${upstream.id}:${upstream.state}`),
                ['up:ready'],
                probe
            );
        }
    });
});

describe('auth on, with metrics.listen', () => {
    test("operator routes and full health live on the operator's own listener, as before", { timeout: 20_000 }, async () => {
        const gateway = await startTestGateway(withKeys({ metrics: { listen: { port: 0 } } }));
        try {
            await upstreamsReady(gateway);
            assert.deepEqual(gateway.notices, []);
            const admin = new URL(gateway.operatorUrls.metrics!).origin;
            assert.notEqual(admin, new URL(gateway.url!).origin);
            assert.equal((await statusAndText(`${admin}/metrics`)).status, 200);
            assert.equal((await statusAndText(`${admin}/dashboard/data`)).status, 200);
            const health = await getJson(`${admin}/healthz`);
            assert.ok(Array.isArray(health.body.upstreams));
            // Nothing of it on the MCP listener, whose health checks give the status only.
            assert.equal((await statusAndText(new URL('/metrics', gateway.url))).status, 404);
            assert.deepEqual((await getJson(new URL('/healthz', gateway.url).href)).body, { status: 'ok' });
        } finally {
            await gateway.close();
        }
    });
});

describe('auth.mode none on loopback', () => {
    test('metrics, dashboard and health details are served as before', { timeout: 20_000 }, async () => {
        const gateway = await startTestGateway({ upstreams: [stdioFixture('up', { prompts: 1 })] });
        try {
            await upstreamsReady(gateway);
            assert.deepEqual(gateway.notices, []);
            assert.equal((await statusAndText(gateway.operatorUrls.metrics!)).status, 200);
            assert.equal((await statusAndText(gateway.operatorUrls.dashboard!)).status, 200);
            const health = await getJson(new URL('/healthz', gateway.url).href);
            assert.ok(Array.isArray(health.body.upstreams));
        } finally {
            await gateway.close();
        }
    });
});

describe('a reload that turns auth on', () => {
    test('closes metrics, the dashboard and the health details on the MCP listener at once', { timeout: 20_000 }, async () => {
        const open = { upstreams: [stdioFixture('up', { prompts: 1 })], log: { level: 'silent' } };
        const gateway = await startTestGateway(open);
        try {
            await upstreamsReady(gateway);
            assert.equal((await statusAndText(gateway.operatorUrls.metrics!)).status, 200);
            await gateway.reload(parseConfig(JSON.stringify({ listen: { port: 0 }, ...withKeys(), log: { level: 'silent' } }), 'test config', process.env));
            const unknown = await unknownPath(gateway.url!);
            for (const operatorPath of OPERATOR_PATHS) assert.deepEqual(await statusAndText(new URL(operatorPath, gateway.url)), unknown, operatorPath);
            assert.deepEqual((await getJson(new URL('/healthz', gateway.url).href)).body, { status: 'ok' });
        } finally {
            await gateway.close();
        }
    });
});

describe('the CLI at start', () => {
    test('prints why metrics and the dashboard are not served, next to "listening on"', { timeout: 30_000 }, async () => {
        const dir = await mkdtemp(path.join(tmpdir(), 'gateway-operator-'));
        const file = path.join(dir, 'gateway.json');
        await writeFile(file, JSON.stringify({ ...withKeys(), log: { level: 'error' } }));
        const child = spawn(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--config', file, '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
        try {
            const lines: string[] = [];
            await new Promise<void>((resolve, reject) => {
                createInterface({ input: child.stderr }).on('line', line => {
                    lines.push(line);
                    if (lines.some(seen => seen.startsWith('listening on')) && lines.some(seen => /not served/.test(seen))) resolve();
                });
                child.once('exit', code => reject(new Error(`gateway exited with ${code}: ${lines.join('\n')}`)));
            });
            const notice = lines.find(line => /not served/.test(line))!;
            assert.match(notice, /^metrics and dashboard not served on http:\/\/127\.0\.0\.1:\d+: /);
            assert.match(notice, /metrics\.bearerToken/);
            assert.match(notice, /metrics\.listen/);
            assert.ok(!lines.some(line => /^(metrics|dashboard) at /.test(line)));
        } finally {
            await stopChild(child);
        }
    });
});
