/**
 * The gateway's CPU per upstream request: its upstream side alone (UpstreamConnection: client, transport,
 * result validation), against the SDK's own Client and transport, to the same fast upstream
 * (test/fixtures/raw-server.ts, plain node:http or stdio, in its own process), over stdio and Streamable HTTP.
 * CPU is this process's (process.cpuUsage, all threads), per prompts/get, in microseconds.
 * Then the result checks alone: zod (the SDK's schemas, and the loose zod schema the gateway had for list
 * pages) against the hand-written checks of src/upstream/result-schemas.ts, per result, in microseconds.
 *
 *   node --import tsx bench/upstream-client.ts [gets=10000] [concurrency=8]
 *   BENCH_ONLY=<part of a target's name> runs only the targets that match (e.g. for --cpu-prof);
 *   BENCH_ONLY=checks only the result checks
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client, specTypeSchemas, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/diagnostics/logger.js';
import { UpstreamConnection } from '../src/upstream/connection.js';
import type { ServerUpstreamConfig } from '../src/config/schema.js';
import { isCompleteResult, isGetPromptResult, isPromptPage } from '../src/upstream/result-schemas.js';
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
            const connection = new UpstreamConnection(config.upstreams[0] as ServerUpstreamConfig, {
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

const only = process.env.BENCH_ONLY;
const targets = TARGETS.filter(target => only === undefined || target.name.includes(only));
if (targets.length > 0) {
    console.log(`${GETS} prompts/get per target, ${CONCURRENCY} at a time, after ${WARM_UP} to warm up; node ${process.version}`);
    console.log('| target | CPU per get (us) | wall per get (us) |\n| --- | ---: | ---: |');
}
for (const target of targets) {
    const { cpuUs, wallUs } = await measure(target);
    console.log(`| ${target.name} | ${cpuUs.toFixed(0)} | ${wallUs.toFixed(0)} |`);
}

// ---------------------------------------------------------------------------------------------------------------
// The result checks alone

/** The zod schema the gateway read list pages with before its checks were written by hand. */
const ZodIcon = z.looseObject({ src: z.string(), mimeType: z.string().optional(), sizes: z.array(z.string()).optional(), theme: z.enum(['light', 'dark']).optional() });
const ZodPromptPage = z.looseObject({
    prompts: z.array(
        z.looseObject({
            name: z.string(),
            title: z.string().optional(),
            description: z.string().optional(),
            arguments: z.array(z.looseObject({ name: z.string(), title: z.string().optional(), description: z.string().optional(), required: z.boolean().optional() })).optional(),
            icons: z.array(ZodIcon).optional(),
            _meta: z.looseObject({}).optional()
        })
    ),
    nextCursor: z.string().optional(),
    _meta: z.looseObject({}).optional()
});

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const annotations = { audience: ['user'], priority: 0.5, lastModified: '2025-01-12T15:00:58Z' };
const GET_RESULT = {
    description: 'every content type',
    messages: [
        { role: 'user', content: { type: 'text', text: 'Write about validation.', annotations } },
        { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
        { role: 'assistant', content: { type: 'audio', data: PNG, mimeType: 'audio/wav' } },
        { role: 'user', content: { type: 'resource_link', name: 'doc', uri: 'file:///doc.md', title: 'Doc', mimeType: 'text/markdown', annotations } },
        { role: 'user', content: { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'embedded' } } }
    ]
};
const LIST_PAGE = {
    prompts: Array.from({ length: 1000 }, (_, i) => ({
        name: `prompt-${i}`,
        title: `Prompt ${i}`,
        description: 'A generic prompt of the benchmark',
        arguments: [
            { name: 'topic', description: 'What about', required: true },
            { name: 'tone', required: false }
        ]
    })),
    nextCursor: 'next'
};
const COMPLETION = { completion: { values: ['alpha', 'alpine', 'also'], total: 3, hasMore: false } };

type Check = (value: unknown) => boolean;
const sdk =
    (schema: (typeof specTypeSchemas)['GetPromptResult' | 'ListPromptsResult' | 'CompleteResult']): Check =>
    value => {
        const outcome = schema['~standard'].validate(value);
        return !(outcome instanceof Promise) && outcome.issues === undefined;
    };
const CHECKS: [string, unknown, [string, Check][]][] = [
    [
        'prompts/get result, 5 content blocks',
        GET_RESULT,
        [
            ['zod (SDK GetPromptResult)', sdk(specTypeSchemas.GetPromptResult)],
            ['hand-written', isGetPromptResult]
        ]
    ],
    [
        'prompts/list page, 1,000 prompts',
        LIST_PAGE,
        [
            ['zod (SDK ListPromptsResult)', sdk(specTypeSchemas.ListPromptsResult)],
            ['zod (loose, as the gateway had)', value => ZodPromptPage.safeParse(value).success],
            ['hand-written', isPromptPage]
        ]
    ],
    [
        'completion/complete result',
        COMPLETION,
        [
            ['zod (SDK CompleteResult)', sdk(specTypeSchemas.CompleteResult)],
            ['hand-written', isCompleteResult]
        ]
    ]
];

/** Microseconds per check, over about half a second. */
function perCheck(check: Check, value: unknown): number {
    for (let i = 0; i < 200; i++) if (!check(value)) throw new Error('the benchmark result does not pass');
    let runs = 0;
    const started = performance.now();
    while (performance.now() - started < 500) {
        for (let i = 0; i < 50; i++) check(value);
        runs += 50;
    }
    return ((performance.now() - started) * 1000) / runs;
}

if (only === undefined || only === 'checks') {
    console.log('\n| result | check | us per result |\n| --- | --- | ---: |');
    for (const [what, value, checks] of CHECKS) {
        for (const [name, check] of checks) console.log(`| ${what} | ${name} | ${perCheck(check, value).toFixed(2)} |`);
    }
}
