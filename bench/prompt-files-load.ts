/**
 * Run by the prompt-files scenario in a process of its own, so its first load is a cold one (nothing compiled yet):
 * writes nothing; loads each folder given into a files upstream of its format `rounds` times, each load followed by
 * the floor (reading every file's bytes with fs), the folders taking turns round by round; then, folder by folder,
 * times one-file changes reaching the catalog and weighs what the loaded upstream holds. Prints its measures as
 * JSON, one entry per folder. A full run gives a process one folder to time its cold load, and one process every
 * folder for the warm loads; a quick run, that one process only.
 *
 *   node --expose-gc --import tsx bench/prompt-files-load.ts <rounds> <changes> <format>=<folder>...
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { pino } from 'pino';
import { PROMPT_FORMATS, type PromptFormat } from '../src/config/prompt-formats.js';
import { GatewayConfigSchema, type FilesUpstreamConfig } from '../src/config/schema.js';
import type { UpstreamLimits } from '../src/upstream/connection.js';
import { FilesUpstream } from '../src/upstream/files/files-upstream.js';
import { isPromptFileOf } from '../src/upstream/files/formats/names.js';
import { PROMPT_FILE_FIXTURES } from './lib/prompt-file-fixtures.js';

const USAGE = 'usage: prompt-files-load.ts <rounds> <changes> <format>=<folder>...';
const logger = pino({ level: 'silent' });

/** Wall time, and the CPU time of the whole process (the fs thread pool included): on a shared machine the steadier. */
interface Timed {
    ms: number;
    cpuMs: number;
}

/** What one folder's loads measured, as printed. */
export interface FolderMeasures {
    prompts: number;
    loads: Timed[];
    floor: Timed[];
    changeMs: number[];
    heldByUpstreamBytes: number;
    peakRssBytes: number;
}

const timed = async (run: () => Promise<unknown>): Promise<Timed> => {
    const start = performance.now();
    const cpu = process.cpuUsage();
    await run();
    const used = process.cpuUsage(cpu);
    return { ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000 };
};

/** Heap and off-heap bytes left after full collections. */
function heldBytes(): number {
    const { gc } = globalThis;
    if (gc === undefined) throw new Error('run with node --expose-gc');
    for (let round = 0; round < 2; round++) gc();
    const usage = process.memoryUsage();
    return usage.heapUsed + usage.external;
}

/** One folder of one format, and the upstreams that load it. */
class FolderLoad {
    readonly #config: FilesUpstreamConfig;
    readonly #limits: () => UpstreamLimits;

    constructor(
        readonly format: PromptFormat,
        readonly folder: string
    ) {
        const config = GatewayConfigSchema.parse({ upstreams: [{ id: 'team', transport: 'files', path: folder, format }] });
        const upstream = config.upstreams[0]!;
        if (upstream.transport !== 'files') throw new Error('not a files upstream');
        this.#config = upstream;
        this.#limits = () => config.limits;
    }

    newUpstream(): FilesUpstream {
        return new FilesUpstream(this.#config, { logger, limits: this.#limits });
    }

    async loadOnce(): Promise<Timed & { prompts: number }> {
        const upstream = this.newUpstream();
        const time = await timed(() => upstream.start());
        const prompts = (await upstream.listPrompts()).items.length;
        await upstream.close();
        return { ...time, prompts };
    }

    /** The floor: every file the format reads, found and read as the upstream finds and reads them, nothing parsed. */
    async readAllBytes(): Promise<number> {
        const entries = await readdir(this.folder, { recursive: true, withFileTypes: true });
        const below = (file: string) => path.relative(this.folder, file).split(path.sep).join('/');
        const files = entries.map(entry => path.join(entry.parentPath, entry.name)).filter(file => isPromptFileOf(this.format, below(file)));
        const limit = pLimit(64);
        const sizes = await Promise.all(files.map(file => limit(async () => (await readFile(file)).length)));
        return sizes.length;
    }
}

/** From the write of file 0 with a new description to the upstream's change event, each checked in the listing. */
async function timeChanges(load: FolderLoad, upstream: FilesUpstream, changes: number): Promise<number[]> {
    const fixture = PROMPT_FILE_FIXTURES[load.format];
    const target = path.join(load.folder, fixture.pathOf(0));
    const original = await readFile(target, 'utf8');
    const changeMs: number[] = [];
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
        await writeFile(target, fixture.textOf(0, description));
        await seen;
        changeMs.push(performance.now() - start);
        const listed = (await upstream.listPrompts()).items.filter(prompt => prompt.prompt.description === description);
        if (listed.length !== 1) throw new Error(`${load.format}: the change did not reach the listing`);
    }
    await writeFile(target, original);
    return changeMs;
}

/** Changes timed on a loaded upstream, and the process weighed with it; then closed, and nothing here refers to it. */
async function changesThenWeigh(load: FolderLoad, changes: number): Promise<{ changeMs: number[]; withUpstreamBytes: number; closed: WeakRef<FilesUpstream> }> {
    const upstream = load.newUpstream();
    await upstream.start();
    const changeMs = await timeChanges(load, upstream, changes);
    const withUpstreamBytes = heldBytes();
    await upstream.close();
    return { changeMs, withUpstreamBytes, closed: new WeakRef(upstream) };
}

/**
 * Until the closed upstream is collected: a closed watcher keeps its listener (and so the upstream) until libuv has
 * closed its handle, a turn of the event loop or more later.
 */
async function untilCollected(closed: WeakRef<FilesUpstream>): Promise<void> {
    for (let turn = 0; turn < 100; turn++) {
        heldBytes();
        if (closed.deref() === undefined) return;
        await new Promise(resolve => setTimeout(resolve, 10));
    }
    throw new Error('the closed upstream is still held after 100 turns: what it holds cannot be weighed');
}

/** Each folder loaded `rounds` times, the folders taking turns round by round (the machine's load hits them alike). */
async function interleavedLoads(folders: FolderLoad[], rounds: number): Promise<Pick<FolderMeasures, 'prompts' | 'loads' | 'floor'>[]> {
    const measured = folders.map(() => ({ prompts: 0, loads: [] as Timed[], floor: [] as Timed[] }));
    for (let round = 0; round < rounds; round++) {
        for (const [index, folder] of folders.entries()) {
            const loaded = await folder.loadOnce();
            measured[index]!.loads.push(loaded);
            measured[index]!.prompts = loaded.prompts;
            measured[index]!.floor.push(await timed(() => folder.readAllBytes()));
        }
    }
    return measured;
}

async function changesAndMemory(folder: FolderLoad, changes: number): Promise<Pick<FolderMeasures, 'changeMs' | 'heldByUpstreamBytes' | 'peakRssBytes'>> {
    const { changeMs, withUpstreamBytes, closed } = await changesThenWeigh(folder, changes);
    await untilCollected(closed);
    // What the loaded upstream holds: the same process with and without it (compiled code and modules in both).
    const heldByUpstreamBytes = withUpstreamBytes - heldBytes();
    return { changeMs, heldByUpstreamBytes, peakRssBytes: process.resourceUsage().maxRSS * 1024 };
}

function parseFolders(pairs: string[]): FolderLoad[] {
    return pairs.map(pair => {
        const [format, folder] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
        if (!PROMPT_FORMATS.includes(format as PromptFormat) || folder === '') throw new Error(USAGE);
        return new FolderLoad(format as PromptFormat, folder);
    });
}

async function main(): Promise<void> {
    const [roundsText, changesText, ...pairs] = process.argv.slice(2);
    if (pairs.length === 0) throw new Error(USAGE);
    const folders = parseFolders(pairs);
    const loads = await interleavedLoads(folders, Number(roundsText));
    const measured: FolderMeasures[] = [];
    for (const [index, folder] of folders.entries()) measured.push({ ...loads[index]!, ...(await changesAndMemory(folder, Number(changesText))) });
    process.stdout.write(`${JSON.stringify(measured)}\n`);
}

await main();
