/**
 * Client side of `npm run conformance`: what the conformance suite's
 * `conformance client --command "..." --scenario NAME` runs. The suite starts a
 * scenario server and appends its URL as the last argument (and sets
 * MCP_CONFORMANCE_SCENARIO); the "client" under test is the gateway's upstream
 * client. This wrapper:
 *
 *   1. starts the built gateway (dist/cli.js) with that URL as its one upstream
 *      (transport `http`, `"namespace": false`), listening on 127.0.0.1:0;
 *   2. waits for GET /readyz (every upstream has had its first connection
 *      attempt), then reads GET /healthz: an upstream that did not connect is a
 *      failure (exit 1, its state and last error on stderr);
 *   3. lists every prompt page through the gateway with an SDK client and gets
 *      each prompt (dummy values for its arguments), so requests flow upstream;
 *   4. lingers briefly (background traffic such as the upstream GET stream),
 *      stops the gateway and exits 0.
 *
 *   node --import tsx conformance/client-wrapper.ts <server-url>
 *   node .test-build/<hash>/conformance/client-wrapper.js <server-url>   (compiled: how run.ts starts it)
 *
 * Run by conformance/run.ts; the gateway runs on the Node that runs this file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

/** The repository: the nearest folder up with a package.json (this file also runs compiled, from .test-build/<hash>/conformance/). */
function repositoryRoot(from: string): string {
    return existsSync(path.join(from, 'package.json')) || path.dirname(from) === from ? from : repositoryRoot(path.dirname(from));
}

const ROOT = repositoryRoot(path.dirname(fileURLToPath(import.meta.url)));
const SCENARIO = process.env.MCP_CONFORMANCE_SCENARIO ?? '(unknown scenario)';
/** Longest wait for the gateway to listen and for its upstream's first connection attempt. */
const READY_TIMEOUT_MS = Number(process.env.CONFORMANCE_READY_TIMEOUT_MS ?? 15_000);
/** After the prompt calls: time for background upstream traffic (GET stream, its retry delay) before stopping. */
const LINGER_MS = Number(process.env.CONFORMANCE_LINGER_MS ?? 300);

const log = (message: string) => process.stderr.write(`client-wrapper [${SCENARIO}]: ${message}\n`);

let gateway: ChildProcess | undefined;
let workDir: string | undefined;

async function startGateway(upstreamUrl: string): Promise<{ child: ChildProcess; url: string }> {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'gateway-conformance-client-'));
    const config = path.join(workDir, 'gateway.json');
    await writeFile(
        config,
        JSON.stringify({
            listen: { host: '127.0.0.1', port: 0 },
            // Short first retry: the scenario server is the only upstream and the run is short.
            reconnect: { initialMs: 250, maxMs: 2_000 },
            upstreams: [{ id: 'conformance', transport: 'http', url: upstreamUrl, namespace: false, timeoutMs: 10_000 }]
        })
    );
    const child = spawn(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--config', config], {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' }
    });
    gateway = child;
    const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`gateway did not listen within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
        createInterface({ input: child.stderr }).on('line', line => {
            const match = /^listening on (\S+)$/.exec(line);
            if (match) {
                clearTimeout(timer);
                resolve(match[1]!);
            } else {
                process.stderr.write(`gateway: ${line}\n`);
            }
        });
        child.once('exit', (code, signal) => {
            clearTimeout(timer);
            reject(new Error(`gateway exited early (code ${code}, signal ${signal})`));
        });
    });
    return { child, url };
}

async function waitReady(base: URL): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
        const response = await fetch(new URL('/readyz', base));
        await response.body?.cancel();
        if (response.status === 200) return;
        if (Date.now() > deadline) throw new Error(`GET /readyz still ${response.status} after ${READY_TIMEOUT_MS} ms`);
        await new Promise(resolve => setTimeout(resolve, 50));
    }
}

interface UpstreamHealth {
    id: string;
    state: string;
    error?: unknown;
}

async function upstreamConnected(base: URL): Promise<void> {
    const response = await fetch(new URL('/healthz', base));
    const body = (await response.json()) as { upstreams?: UpstreamHealth[] };
    const upstream = body.upstreams?.[0];
    if (upstream?.state !== 'ready') {
        throw new Error(`the gateway did not connect to the scenario server: ${JSON.stringify(upstream ?? body)}`);
    }
}

async function exercise(url: string): Promise<void> {
    const client = new Client({ name: 'gateway-conformance-wrapper', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
        let cursor: string | undefined;
        let count = 0;
        do {
            const page = await client.listPrompts(cursor === undefined ? {} : { cursor });
            for (const prompt of page.prompts) {
                const args = Object.fromEntries((prompt.arguments ?? []).map(argument => [argument.name, `value-of-${argument.name}`]));
                await client.getPrompt({ name: prompt.name, arguments: args });
                count++;
            }
            cursor = page.nextCursor;
        } while (cursor !== undefined);
        log(`listed and got ${count} prompt(s) through the gateway`);
    } finally {
        await client.close();
    }
}

async function stopGateway(): Promise<void> {
    const child = gateway;
    gateway = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
    }
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
}

async function main(): Promise<void> {
    const upstreamUrl = process.argv.at(-1);
    if (process.argv.length < 3 || upstreamUrl === undefined || !/^https?:\/\//.test(upstreamUrl)) {
        throw new Error('usage: client-wrapper.ts <server-url> (the conformance harness appends it)');
    }
    const { url } = await startGateway(upstreamUrl);
    const base = new URL(url);
    await waitReady(base);
    await upstreamConnected(base);
    await exercise(url);
    await new Promise(resolve => setTimeout(resolve, LINGER_MS));
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
        void stopGateway().finally(() => process.exit(1));
    });
}

main().then(
    async () => {
        await stopGateway();
        process.exit(0);
    },
    async (error: unknown) => {
        log(error instanceof Error ? error.message : String(error));
        await stopGateway();
        process.exit(1);
    }
);
