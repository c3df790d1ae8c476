/**
 * Memory of the gateway while HTTP upstream answers far over the limits arrive: 8 prompts/get at once, each
 * answered with a 50 MiB result (default limits: maxResultBytes 4 MiB, maxUpstreamMessageBytes 16 MiB), as JSON
 * bodies and as SSE events. The gateway is the built CLI in its own process, one per framing; its VmRSS is read
 * before, its VmHWM (peak) and VmRSS after; the upstream (test/fixtures/raw-server.ts --huge-result) says how many
 * bytes it could write of each answer before the gateway stopped reading.
 *
 *   node --import tsx bench/http-memory.ts                 # this tree's dist/cli.js (npm run build first)
 *   GATEWAY_ROOT=/other/checkout node --import tsx bench/http-memory.ts   # another build, e.g. before a change
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { connectHttp, ROOT, startRawHttp, stopChild } from '../test/helpers.js';

const PARALLEL = 8;
const RESULT_BYTES = 50 * 1024 * 1024;

export interface HttpMemory {
    framing: 'JSON' | 'SSE';
    rssBeforeMiB: number;
    rssPeakMiB: number;
    rssAfterMiB: number;
    /** What the upstream could write of each answer before the gateway closed it, on average. */
    writtenMiB: number;
    failed: number;
}

async function status(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
    const text = await readFile(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1]) / 1024;
}

async function startGateway(root: string, upstreamUrl: string): Promise<{ url: string; child: ChildProcess }> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-memory-'));
    const file = path.join(dir, 'gateway.json');
    await writeFile(file, JSON.stringify({ listen: { port: 0 }, upstreams: [{ id: 'big', transport: 'streamable-http', url: upstreamUrl, timeoutMs: 120_000 }] }));
    const child = spawn(process.execPath, [path.join(root, 'dist/cli.js'), '--config', file], {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, LOG_LEVEL: 'warn' }
    });
    const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stderr }).on('line', line => {
            const match = /^listening on (\S+)$/.exec(line);
            if (match) resolve(match[1]!);
        });
        child.once('exit', code => reject(new Error(`gateway exited with ${code}`)));
    });
    return { url, child };
}

async function measureOne(root: string, framing: HttpMemory['framing']): Promise<HttpMemory> {
    const fixture = await startRawHttp(['--huge-result', String(RESULT_BYTES), ...(framing === 'SSE' ? ['--sse-answers'] : [])]);
    let gateway: { url: string; child: ChildProcess } | undefined;
    let client: Client | undefined;
    try {
        gateway = await startGateway(root, fixture.url);
        const connected = (client = await connectHttp(gateway.url));
        const pid = gateway.child.pid!;
        await connected.listPrompts();
        const rssBeforeMiB = await status(pid, 'VmRSS');
        const outcomes = await Promise.allSettled(Array.from({ length: PARALLEL }, () => connected.getPrompt({ name: 'big__ok-0' })));
        const rssPeakMiB = await status(pid, 'VmHWM');
        await new Promise(resolve => setTimeout(resolve, 2000));
        const rssAfterMiB = await status(pid, 'VmRSS');
        const stats = (await (await fetch(new URL('/stats', fixture.url))).json()) as { hugeWritten: number[] };
        const writtenMiB = stats.hugeWritten.reduce((sum, bytes) => sum + bytes, 0) / Math.max(1, stats.hugeWritten.length) / 1024 / 1024;
        return { framing, rssBeforeMiB, rssPeakMiB, rssAfterMiB, writtenMiB, failed: outcomes.filter(outcome => outcome.status === 'rejected').length };
    } finally {
        await client?.close();
        if (gateway !== undefined) await stopChild(gateway.child);
        await fixture.close();
    }
}

export async function measureHttpMemory(root = ROOT): Promise<HttpMemory[]> {
    return [await measureOne(root, 'JSON'), await measureOne(root, 'SSE')];
}

export function httpMemoryRows(results: HttpMemory[]): string {
    return results
        .map(r => {
            const rss = [r.rssBeforeMiB, r.rssPeakMiB, r.rssAfterMiB].map(mib => mib.toFixed(0)).join(' / ');
            return `| ${r.framing} | ${rss} MiB | ${r.writtenMiB.toFixed(1)} MiB | ${r.failed} of ${PARALLEL} |`;
        })
        .join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
    const root = process.env.GATEWAY_ROOT ?? ROOT;
    measureHttpMemory(root).then(
        results => {
            const header = '| answers | gateway RSS before / peak / after | written per answer | failed |\n| --- | --- | --- | --- |';
            process.stdout.write(`gateway: ${root}\n${header}\n${httpMemoryRows(results)}\n`);
            process.exit(0);
        },
        (error: unknown) => {
            process.stderr.write(`benchmark failed: ${String(error)}\n`);
            process.exit(1);
        }
    );
}
