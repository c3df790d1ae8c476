/**
 * Run by the prompt-files scenario in a process of its own, so its first load is a cold one (nothing compiled yet):
 * writes nothing, loads the folder given into a files upstream `rounds` times, interleaved with the floor (reading
 * every file's bytes with fs), then times one-file changes reaching the catalog. Prints its measures as JSON.
 *
 *   node --import tsx bench/prompt-files-load.ts <folder> <rounds> <changes>
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { pino } from 'pino';
import { GatewayConfigSchema, type FilesUpstreamConfig, type UpstreamConfig } from '../src/config/schema.js';
import { FilesUpstream } from '../src/upstream/files/files-upstream.js';

const [folder, roundsText, changesText] = process.argv.slice(2);
if (folder === undefined) throw new Error('usage: prompt-files-load.ts <folder> <rounds> <changes>');
const rounds = Number(roundsText ?? 5);
const changes = Number(changesText ?? 5);

const config = GatewayConfigSchema.parse({ upstreams: [{ id: 'team', transport: 'files', path: folder }] });
const upstreamConfig = filesConfig(config.upstreams[0]!);
const limits = () => config.limits;
const logger = pino({ level: 'silent' });

function filesConfig(upstream: UpstreamConfig): FilesUpstreamConfig {
    if (upstream.transport !== 'files') throw new Error('not a files upstream');
    return upstream;
}

/** Wall time, and the CPU time of the whole process (the fs thread pool included): on a shared machine the steadier. */
interface Timed {
    ms: number;
    cpuMs: number;
}

const timed = async (run: () => Promise<unknown>): Promise<Timed> => {
    const start = performance.now();
    const cpu = process.cpuUsage();
    await run();
    const used = process.cpuUsage(cpu);
    return { ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000 };
};

/** The floor: every file's bytes, found and read as the upstream finds and reads them, nothing parsed. */
async function readAllBytes(): Promise<number> {
    const entries = await readdir(folder!, { recursive: true, withFileTypes: true });
    const limit = pLimit(64);
    const sizes = await Promise.all(
        entries.filter(entry => entry.isFile() && entry.name.endsWith('.md')).map(entry => limit(async () => (await readFile(path.join(entry.parentPath, entry.name))).length))
    );
    return sizes.length;
}

async function loadOnce(): Promise<Timed & { prompts: number }> {
    const upstream = new FilesUpstream(upstreamConfig, { logger, limits });
    const time = await timed(() => upstream.start());
    const prompts = (await upstream.listPrompts()).items.length;
    await upstream.close();
    return { ...time, prompts };
}

async function main(): Promise<void> {
    const loads: Timed[] = [];
    const floor: Timed[] = [];
    let prompts = 0;
    for (let round = 0; round < rounds; round++) {
        const loaded = await loadOnce();
        loads.push(loaded);
        prompts = loaded.prompts;
        floor.push(await timed(readAllBytes));
    }
    const upstream = new FilesUpstream(upstreamConfig, { logger, limits });
    await upstream.start();
    const changeMs: number[] = [];
    const target = path.join(folder!, 'group-0', 'prompt-0.md');
    const original = await readFile(target, 'utf8');
    for (let change = 0; change < changes; change++) {
        const description = `changed ${change}`;
        // The watchers do not keep the process alive (the gateway's server does): this timer does, and bounds the wait.
        const seen = new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error('a one-file change did not reach the catalog within 30 s')), 30_000);
            const stop = upstream.events.subscribe(event => {
                if (event.type !== 'prompts-changed') return;
                stop();
                clearTimeout(timer);
                resolve();
            });
        });
        const start = performance.now();
        await writeFile(target, original.replace(/^description: .*$/m, `description: ${description}`));
        await seen;
        changeMs.push(performance.now() - start);
        const listed = (await upstream.listPrompts()).items.find(prompt => prompt.prompt.name === 'prompt-0');
        if (listed?.prompt.description !== description) throw new Error('the change did not reach the listing');
    }
    await writeFile(target, original);
    await upstream.close();
    process.stdout.write(`${JSON.stringify({ prompts, loads, floor, changeMs })}\n`);
}

await main();
