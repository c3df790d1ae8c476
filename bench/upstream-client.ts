/**
 * The gateway's CPU per upstream request: its upstream side alone (UpstreamConnection: client, transport,
 * result validation), against the SDK's own Client and transport, to the same fast upstream
 * (test/fixtures/raw-server.ts, plain node:http or stdio, in its own process), over stdio and Streamable HTTP.
 * CPU is this process's (process.cpuUsage, all threads), per prompts/get, in microseconds.
 *
 *   node --import tsx bench/upstream-client.ts [gets=10000] [concurrency=8]
 *   BENCH_ONLY=<part of a target's name> runs only the targets that match (e.g. for --cpu-prof)
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/observability/logger.js';
import { UpstreamConnection } from '../src/upstream/connection.js';
import { RAW_SERVER, ROOT, stopChild } from '../test/helpers.js';

const GETS = Number(process.argv[2] ?? 10_000);
const CONCURRENCY = Number(process.argv[3] ?? 8);
const WARM_UP = 1000;

type Get = () => Promise<unknown>;

interface Target {
    name: string;
    open(): Promise<{ get: Get; close: () => Promise<unknown> }>;
}

async function startRawHttp(): Promise<{ url: string; close: () => Promise<void> }> {
    const child = spawn(process.execPath, ['--import', 'tsx', RAW_SERVER, '--transport', 'streamable-http'], { cwd: ROOT, stdio: ['pipe', 'ignore', 'pipe'] });
    const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stderr }).on('line', line => {
            const match = /^FIXTURE_URL=(\S+)/.exec(line);
            if (match) resolve(match[1]!);
        });
        child.once('exit', code => reject(new Error(`raw-server exited with ${code}`)));
    });
    return { url, close: () => stopChild(child) };
}

const STDIO = { command: process.execPath, args: ['--import', 'tsx', RAW_SERVER], cwd: ROOT };
const PARAMS = { name: 'ok-0', arguments: { topic: 'bench' } };

function sdkTarget(name: string, transport: () => Promise<{ transport: StdioClientTransport | StreamableHTTPClientTransport; close: () => Promise<unknown> }>): Target {
    return {
        name,
        async open() {
            const opened = await transport();
            const client = new Client({ name: 'bench', version: '1.0.0' }, { capabilities: {} });
            await client.connect(opened.transport);
            return { get: () => client.getPrompt(PARAMS), close: async () => (await client.close(), await opened.close()) };
        }
    };
}

function connectionTarget(name: string, upstream: () => Promise<{ config: Record<string, unknown>; close: () => Promise<unknown> }>): Target {
    return {
        name,
        async open() {
            const opened = await upstream();
            const config = parseConfig(JSON.stringify({ upstreams: [{ id: 'bench', maxConcurrency: 64, pingIntervalMs: 0, ...opened.config }] }), 'bench.json', {});
            const connection = new UpstreamConnection(config.upstreams[0]!, {
                logger: createLogger({ level: 'warn', format: 'json' }),
                limits: () => config.limits,
                clientInfo: { name: 'bench', version: '1.0.0' },
                reconnect: { initialMs: 1000, maxMs: 1000 }
            });
            await connection.start();
            if (connection.state !== 'ready') throw new Error(`${name}: ${connection.lastError}`);
            return { get: () => connection.getPrompt(PARAMS.name, PARAMS.arguments), close: async () => (await connection.close(), await opened.close()) };
        }
    };
}

const TARGETS: Target[] = [
    sdkTarget('SDK Client, stdio', () => Promise.resolve({ transport: new StdioClientTransport({ ...STDIO, stderr: 'ignore' }), close: async () => {} })),
    connectionTarget('gateway UpstreamConnection, stdio', () => Promise.resolve({ config: { transport: 'stdio', ...STDIO }, close: async () => {} })),
    sdkTarget('SDK Client, Streamable HTTP', async () => {
        const server = await startRawHttp();
        return { transport: new StreamableHTTPClientTransport(new URL(server.url)), close: server.close };
    }),
    connectionTarget('gateway UpstreamConnection, Streamable HTTP', async () => {
        const server = await startRawHttp();
        return { config: { transport: 'streamable-http', url: server.url }, close: server.close };
    })
];

/** `count` gets, `concurrency` at a time. */
async function run(get: Get, count: number, concurrency: number): Promise<void> {
    let left = count;
    const worker = async () => {
        while (left-- > 0) await get();
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
}

async function measure(target: Target): Promise<{ cpuUs: number; wallUs: number }> {
    const { get, close } = await target.open();
    try {
        await run(get, WARM_UP, CONCURRENCY);
        const started = performance.now();
        const cpu = process.cpuUsage();
        await run(get, GETS, CONCURRENCY);
        const used = process.cpuUsage(cpu);
        return { cpuUs: (used.user + used.system) / GETS, wallUs: ((performance.now() - started) * 1000) / GETS };
    } finally {
        await close();
    }
}

console.log(`${GETS} prompts/get per target, ${CONCURRENCY} at a time, after ${WARM_UP} to warm up; node ${process.version}`);
console.log('| target | CPU per get (us) | wall per get (us) |\n| --- | ---: | ---: |');
const only = process.env.BENCH_ONLY;
for (const target of TARGETS.filter(target => only === undefined || target.name.includes(only))) {
    const { cpuUs, wallUs } = await measure(target);
    console.log(`| ${target.name} | ${cpuUs.toFixed(0)} | ${wallUs.toFixed(0)} |`);
}
