/**
 * Requests in flight on the stdio channel (the built CLI with --stdio, in front of an HTTP fixture this test watches):
 * its 2025 session and its 2026-07-28 requests are one id space, the client closing stdin cancels every one of them
 * upstream, and a shutdown answers those it stops waiting for.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, test, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { closeAfter, connectHttp, fixtureStats, ROOT, startHttpFixture, stopChild, waitFor, type FixtureStats } from './helpers.js';
import { initializeBody, modernRequest, type JsonRpcMessage } from './raw-http.js';

const CLI = path.join(ROOT, 'dist/cli.js');

interface Channel {
    child: ChildProcessWithoutNullStreams;
    send(message: unknown): void;
    /** The next answer naming `id`. */
    answerTo(id: string | number): Promise<JsonRpcMessage>;
    /** The fixture's counters, read directly from it. */
    stats(): Promise<FixtureStats>;
}

/** A `--stdio` gateway (with `shutdownTimeoutMs`) in front of a fresh HTTP fixture, everything closed after the test. */
async function stdioGateway(t: TestContext, shutdownTimeoutMs: number): Promise<Channel> {
    assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` (npm test does)');
    const fixture = await startHttpFixture('streamable-http', { prompts: 1 });
    closeAfter(t, () => fixture.close());
    const direct: Client = await connectHttp(fixture.url);
    closeAfter(t, () => direct.close());
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-stdio-requests-'));
    closeAfter(t, () => rm(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'gateway.json');
    await writeFile(file, JSON.stringify({ shutdownTimeoutMs, upstreams: [{ id: 'up', transport: 'streamable-http', url: fixture.url, pingIntervalMs: 0, timeoutMs: 300_000 }] }));
    const child = spawn(process.execPath, [CLI, '--stdio', '--config', file], {
        cwd: ROOT,
        stdio: ['pipe', 'pipe', process.env.GATEWAY_STDERR ? 'inherit' : 'ignore']
    }) as unknown as ChildProcessWithoutNullStreams;
    closeAfter(t, () => stopChild(child));
    const waiting = new Map<string | number, (message: JsonRpcMessage) => void>();
    const early = new Map<string | number, JsonRpcMessage>();
    createInterface({ input: child.stdout }).on('line', line => {
        const message = JSON.parse(line) as JsonRpcMessage;
        if (message.id === undefined || message.id === null) return;
        const resolve = waiting.get(message.id);
        if (resolve === undefined) early.set(message.id, message);
        else resolve(message);
        waiting.delete(message.id);
    });
    const channel: Channel = {
        child,
        send: message => child.stdin.write(`${JSON.stringify(message)}\n`),
        answerTo: id => {
            const came = early.get(id);
            early.delete(id);
            return came !== undefined ? Promise.resolve(came) : new Promise(resolve => waiting.set(id, resolve));
        },
        stats: () => fixtureStats(direct, 'stats')
    };
    channel.send(initializeBody('2025-11-25', 'init'));
    assert.ok((await channel.answerTo('init')).result !== undefined);
    channel.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // The upstream is connected once a list names its prompts.
    await waitFor(
        async () => {
            channel.send({ jsonrpc: '2.0', id: 'ready', method: 'prompts/list', params: {} });
            const list = await channel.answerTo('ready');
            return ((list.result as { prompts?: unknown[] } | undefined)?.prompts?.length ?? 0) > 0;
        },
        30_000,
        'the upstream to be connected'
    );
    return channel;
}

const slowGet = (id: string | number, ms = 60_000) => ({ jsonrpc: '2.0', id, method: 'prompts/get', params: { name: 'up__slow', arguments: { ms: String(ms) } } });
const modernSlowGet = (id: string | number) => modernRequest('prompts/get', { name: 'up__slow', arguments: { ms: '60000' } }, id);

async function slowStarted(channel: Channel, count: number): Promise<void> {
    await waitFor(async () => (await channel.stats()).slowStarted === count, 30_000, `${count} slow prompt(s) to reach the upstream`);
}

describe('requests in flight on stdio', () => {
    test('the client closing stdin cancels a 2026-07-28 prompts/get in flight upstream', { timeout: 120_000 }, async t => {
        // Long enough that only the end of the channel, not the shutdown's wait, can cancel it in time.
        const channel = await stdioGateway(t, 100_000);
        channel.send(modernSlowGet('m1'));
        await slowStarted(channel, 1);
        channel.child.stdin.end();
        await waitFor(async () => (await channel.stats()).slowCancelled === 1, 30_000, 'the upstream to see the request cancelled');
    });

    test('one id space: a 2026-07-28 request reusing the id of a session request in flight is -32600, and the other way round', { timeout: 120_000 }, async t => {
        const channel = await stdioGateway(t, 100_000);
        channel.send(slowGet(7));
        channel.send(modernSlowGet('m'));
        await slowStarted(channel, 2);
        channel.send(modernRequest('prompts/list', {}, 7));
        const modern = await channel.answerTo(7);
        assert.equal(modern.error?.code, -32600, JSON.stringify(modern));
        assert.match(modern.error.message, /already in use/);
        channel.send({ jsonrpc: '2.0', id: 'm', method: 'ping' });
        assert.equal((await channel.answerTo('m')).error?.code, -32600);
        // One cancellation names either era's request.
        channel.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
        channel.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'm' } });
        await waitFor(async () => (await channel.stats()).slowCancelled === 2, 30_000, 'both requests to be cancelled upstream');
    });

    test('draining, new requests are refused as over HTTP (-32000, with their id) and the process exits once the one in flight is over', { timeout: 120_000 }, async t => {
        const channel = await stdioGateway(t, 100_000);
        channel.send(slowGet('slow'));
        await slowStarted(channel, 1);
        const exited = once(channel.child, 'exit');
        channel.child.kill('SIGTERM');
        let pings = 0;
        let refused: JsonRpcMessage | undefined;
        // The signal is handled between two lines: the first ping answered with an error is the first one after it.
        await waitFor(
            async () => {
                channel.send({ jsonrpc: '2.0', id: ++pings, method: 'ping' });
                const answer = await channel.answerTo(pings);
                if (answer.error !== undefined) refused = answer;
                return refused !== undefined;
            },
            30_000,
            'a request to be refused'
        );
        assert.deepEqual(refused, { jsonrpc: '2.0', id: pings, error: { code: -32000, message: 'Gateway is shutting down; try again later' } });
        channel.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow' } });
        await exited;
    });

    test('a shutdown answers the requests it stops waiting for, of both eras, before the process exits', { timeout: 120_000 }, async t => {
        const channel = await stdioGateway(t, 500);
        channel.send(slowGet(1));
        channel.send(modernSlowGet(2));
        await slowStarted(channel, 2);
        const answers = Promise.all([channel.answerTo(1), channel.answerTo(2)]);
        const exited = once(channel.child, 'exit');
        channel.child.kill('SIGTERM');
        const [session, modern] = await answers;
        for (const answer of [session, modern]) {
            assert.equal(answer.error?.code, -32603, JSON.stringify(answer));
            assert.match(answer.error.message, /shutting down/);
        }
        await exited;
    });
});
