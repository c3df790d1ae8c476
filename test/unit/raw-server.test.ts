/**
 * Smoke tests of the fault-injection fixture test/fixtures/raw-server.ts, over real processes:
 * it serves real SDK clients when well-behaved and misbehaves exactly as its options say.
 * (Self-contained on purpose: no test/helpers.ts, so it does not load the gateway.)
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { compiledFixture } from '../fixture-build.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RAW_SERVER = compiledFixture('raw-server');
const rawArgs = (flags: string[]) => [RAW_SERVER, ...flags];

function newClient(): Client {
    return new Client({ name: 'raw-server-test', version: '1.0.0' });
}

async function connectStdio(flags: string[] = []): Promise<Client> {
    const client = newClient();
    await client.connect(new StdioClientTransport({ command: process.execPath, args: rawArgs(flags), cwd: ROOT, stderr: 'pipe' }));
    return client;
}

/** Starts the fixture over Streamable HTTP and reads its URL from the FIXTURE_URL line on stderr. */
async function startHttp(flags: string[] = []): Promise<{ url: URL; child: ChildProcess; close(): Promise<void> }> {
    const child = spawn(process.execPath, rawArgs(['--transport', 'streamable-http', ...flags]), { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    const url = await new Promise<URL>((resolve, reject) => {
        createInterface({ input: child.stderr }).on('line', line => {
            const match = /^FIXTURE_URL=(\S+)/.exec(line);
            if (match) resolve(new URL(match[1]!));
        });
        child.once('exit', code => reject(new Error(`raw-server exited with ${code}`)));
    });
    const close = async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
    };
    return { url, child, close };
}

async function connectHttp(url: URL): Promise<Client> {
    const client = newClient();
    await client.connect(new StreamableHTTPClientTransport(url));
    return client;
}

async function waitFor(predicate: () => boolean, ms: number, what: string): Promise<void> {
    const deadline = Date.now() + ms;
    while (!predicate()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise(resolve => setTimeout(resolve, 10));
    }
}

describe('raw-server fixture', { concurrency: true }, () => {
    test('plain, over stdio: initialize, list, get and complete work with the SDK client', async () => {
        const client = await connectStdio(['--prompts', '2']);
        try {
            assert.equal(client.getServerVersion()?.name, 'raw-fixture');
            assert.deepEqual(client.getServerCapabilities(), { prompts: { listChanged: true }, completions: {} });
            const { prompts, nextCursor } = await client.listPrompts();
            assert.deepEqual(
                prompts.map(prompt => prompt.name),
                ['ok-0', 'ok-1']
            );
            assert.equal(nextCursor, undefined);
            const got = await client.getPrompt({ name: 'ok-1', arguments: { topic: 'tea' } });
            assert.deepEqual(got.messages, [{ role: 'user', content: { type: 'text', text: 'ok-1: tell me about tea' } }]);
            const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'ok-0' }, argument: { name: 'topic', value: 'g' } });
            assert.deepEqual(completion.completion.values, ['gamma']);
        } finally {
            await client.close();
        }
    });

    test('plain, over Streamable HTTP: the SDK client connects, lists and gets; GET is 405', async () => {
        const server = await startHttp();
        try {
            const client = await connectHttp(server.url);
            try {
                const { prompts } = await client.listPrompts();
                assert.deepEqual(
                    prompts.map(prompt => prompt.name),
                    ['ok-0', 'ok-1', 'ok-2']
                );
                const got = await client.getPrompt({ name: 'ok-2' });
                assert.equal(got.messages.length, 1);
            } finally {
                await client.close();
            }
            assert.equal((await fetch(server.url)).status, 405);
        } finally {
            await server.close();
        }
    });

    test('--cursor loop hands out "a", "b", "a", ... forever', async () => {
        const client = await connectStdio(['--cursor', 'loop']);
        try {
            const cursors: (string | undefined)[] = [];
            let cursor: string | undefined;
            for (let page = 0; page < 4; page++) {
                const result = await client.request({ method: 'prompts/list', params: cursor === undefined ? {} : { cursor } });
                cursor = result.nextCursor;
                cursors.push(cursor);
            }
            assert.deepEqual(cursors, ['a', 'b', 'a', 'b']);
        } finally {
            await client.close();
        }
    });

    test('--invalid-get / --invalid-list make the SDK client reject getPrompt / prompts/list', async () => {
        const client = await connectStdio(['--invalid-get', '--invalid-list']);
        try {
            await assert.rejects(client.getPrompt({ name: 'ok-0' }), /Invalid result for prompts\/get/);
            await assert.rejects(client.request({ method: 'prompts/list', params: {} }), /Invalid result for prompts\/list/);
        } finally {
            await client.close();
        }
    });

    test('--flood 100 delivers 100 list_changed before the answer, over stdio and over HTTP (SSE)', async () => {
        const server = await startHttp(['--flood', '100']);
        const clients = [await connectStdio(['--flood', '100']), await connectHttp(server.url)];
        try {
            for (const client of clients) {
                let notified = 0;
                client.setNotificationHandler('notifications/prompts/list_changed', () => void notified++);
                const got = await client.getPrompt({ name: 'flood' });
                assert.equal(got.messages.length, 1);
                await waitFor(() => notified >= 100, 30_000, '100 list_changed');
                assert.equal(notified, 100);
            }
        } finally {
            await Promise.all(clients.map(client => client.close()));
            await server.close();
        }
    });

    test('--http-error 500: connect succeeds, later requests fail; with --http-error-initialize connect fails', async () => {
        const late = await startHttp(['--http-error', '500']);
        const early = await startHttp(['--http-error', 'html', '--http-error-initialize']);
        try {
            const client = await connectHttp(late.url);
            try {
                await assert.rejects(client.listPrompts(), /500/);
            } finally {
                await client.close();
            }
            await assert.rejects(connectHttp(early.url), /content type/i);
        } finally {
            await Promise.all([late.close(), early.close()]);
        }
    });

    test('--huge-result N with --sse-answers: a text of N bytes in one SSE event; GET /stats counts sockets and answers', async () => {
        const server = await startHttp(['--huge-result', '100000', '--sse-answers']);
        try {
            const client = await connectHttp(server.url);
            try {
                const got = await client.getPrompt({ name: 'ok-0' });
                assert.deepEqual(got.messages, [{ role: 'user', content: { type: 'text', text: 'x'.repeat(100_000) } }]);
            } finally {
                await client.close();
            }
            const stats = (await (await fetch(new URL('/stats', server.url))).json()) as Record<string, unknown>;
            const [written] = stats.hugeWritten as number[];
            assert.ok(written !== undefined && written > 100_000 && written < 100_200, `the text, and the envelope before it: ${written}`);
            assert.deepEqual(stats.answers, { started: 2, finished: 2, closedEarly: 0 }, 'initialize and prompts/get');
            assert.ok(typeof stats.connections === 'number' && typeof stats.peakConnections === 'number');
        } finally {
            await server.close();
        }
    });

    test('--unauthorized-echo: 401 with the request headers in the body, credentials first', async () => {
        const server = await startHttp(['--unauthorized-echo']);
        try {
            const response = await fetch(server.url, { method: 'POST', headers: { authorization: 'Bearer t0ken', 'x-api-key': 'k3y' }, body: '{}' });
            assert.equal(response.status, 401);
            assert.match(await response.text(), /^Unauthorized; you sent: authorization=Bearer t0ken; x-api-key=k3y; /);
        } finally {
            await server.close();
        }
    });

    test('--garbage interleaves non-JSON lines with valid responses on stdout', async () => {
        const child = spawn(process.execPath, rawArgs(['--garbage']), { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
        const lines: string[] = [];
        createInterface({ input: child.stdout }).on('line', line => lines.push(line));
        const exited = once(child, 'exit');
        try {
            const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
            send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
            send({ jsonrpc: '2.0', method: 'notifications/initialized' });
            send({ jsonrpc: '2.0', id: 2, method: 'prompts/list' });

            const parsed = () =>
                lines.map(line => {
                    try {
                        return JSON.parse(line) as unknown;
                    } catch {
                        return undefined;
                    }
                });
            const response = (id: number) => parsed().find(value => typeof value === 'object' && value !== null && 'id' in value && value.id === id);
            await waitFor(() => response(1) !== undefined && response(2) !== undefined, 30_000, 'both responses');

            assert.ok(
                lines.some(line => line === '{not json'),
                'a broken JSON line'
            );
            assert.ok(
                lines.some(line => line === ''),
                'an empty line'
            );
            assert.ok(
                lines.some(line => line.length >= 100_000 && parsed()[lines.indexOf(line)] === undefined),
                'a ~100 KB non-JSON line'
            );
            assert.ok(
                parsed().some(value => JSON.stringify(value) === '{"hello":1}'),
                'JSON that is not JSON-RPC'
            );
            assert.deepEqual(response(1), {
                jsonrpc: '2.0',
                id: 1,
                result: {
                    protocolVersion: '2025-06-18',
                    capabilities: { prompts: { listChanged: true }, completions: {} },
                    serverInfo: { name: 'raw-fixture', version: '1.0.0' }
                }
            });
            const list = response(2) as { result: { prompts: { name: string }[] } };
            assert.deepEqual(
                list.result.prompts.map(prompt => prompt.name),
                ['ok-0', 'ok-1', 'ok-2']
            );
        } finally {
            child.stdin.end();
            const [code] = (await exited) as [number | null];
            assert.equal(code, 0, 'exits cleanly when stdin ends');
        }
    });
});
