/**
 * A folder of prompt files (issue 18: "a folder of 10,000 files loads in under a second"; issue 26: in every format a
 * files upstream reads): how long a files upstream takes to load it, the first time in a fresh process (cold:
 * nothing compiled yet; the files are in the page cache) and again (warm), beside the floor measured in the same
 * process between the loads (listing the folder and reading every file's bytes with fs, nothing parsed); how long a
 * one-file change takes to reach the catalog (from the write to the upstream's change event, its 50 ms settle time
 * included); and the memory the loaded upstream holds. Each format is loaded in a process of its own (in a quick
 * run, all in one: bench/prompt-files-load.ts), from files of comparable content (bench/lib/prompt-file-fixtures.ts).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pLimit from 'p-limit';
import { PROMPT_FORMATS, type PromptFormat } from '../../src/config/prompt-formats.js';
import { fixtureText, PROMPT_FILE_FIXTURES } from '../lib/prompt-file-fixtures.js';
import { ROOT } from '../lib/processes.js';
import type { FolderMeasures } from '../prompt-files-load.js';

export interface PromptFilesOptions {
    /** Files of each format. */
    files: number;
    /** Loads in each measuring process; the first is the cold one. */
    rounds: number;
    changes: number;
    /** Every format in one process (a quick run, whose numbers only show that the scenario runs: only the first load there is cold). */
    oneProcess?: boolean;
}

/** One format's folder loaded. Milliseconds of wall time; cpu: of the measuring process (the fs thread pool included), steadier on a busy machine. */
export interface FormatLoad {
    format: PromptFormat;
    layout: string;
    prompts: number;
    /** Absent from runs before issue 26, as are the memory figures. */
    meanFileBytes?: number;
    coldLoadMs: number;
    coldLoadCpuMs: number;
    warmLoadMs: number;
    warmLoadCpuMs: number;
    floorMs: number;
    floorCpuMs: number;
    changeMs: number;
    /** What the loaded upstream holds (heap and off-heap, after full collections). */
    heldBytes?: number;
    /** The measuring process's peak resident set. */
    peakRssBytes?: number;
}

export interface PromptFilesResult extends Omit<PromptFilesOptions, 'oneProcess'> {
    /** Markdown first: the others are compared with it. */
    formats: FormatLoad[];
}

/** Writes the folder; gives the files' total bytes. */
async function writeFolder(folder: string, format: PromptFormat, files: number): Promise<number> {
    const fixture = PROMPT_FILE_FIXTURES[format];
    const paths = Array.from({ length: files }, (_, index) => fixture.pathOf(index));
    for (const parent of new Set(paths.map(file => path.dirname(file)))) await mkdir(path.join(folder, parent), { recursive: true });
    const limit = pLimit(64);
    const sizes = await Promise.all(
        paths.map((file, index) =>
            limit(async () => {
                const text = fixtureText(format, index);
                await writeFile(path.join(folder, file), text);
                return Buffer.byteLength(text);
            })
        )
    );
    return sizes.reduce((sum, size) => sum + size, 0);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Runs bench/prompt-files-load.ts on the folders given, each of its format, in one process. */
async function loadInProcess(folders: { format: PromptFormat; folder: string }[], options: PromptFilesOptions): Promise<FolderMeasures[]> {
    const { stdout } = await promisify(execFile)(
        process.execPath,
        [
            '--expose-gc',
            '--import',
            'tsx',
            path.join(ROOT, 'bench/prompt-files-load.ts'),
            String(options.rounds),
            String(options.changes),
            ...folders.map(({ format, folder }) => `${format}=${folder}`)
        ],
        { cwd: ROOT, maxBuffer: 1 << 20 }
    );
    return JSON.parse(stdout) as FolderMeasures[];
}

function summarised(format: PromptFormat, totalBytes: number, measured: FolderMeasures, options: PromptFilesOptions): FormatLoad {
    if (measured.prompts !== options.files) throw new Error(`prompt files (${format}): ${measured.prompts} prompts served of ${options.files} files`);
    const warm = measured.loads.slice(1);
    return {
        format,
        layout: PROMPT_FILE_FIXTURES[format].layout,
        prompts: measured.prompts,
        meanFileBytes: totalBytes / options.files,
        coldLoadMs: measured.loads[0]!.ms,
        coldLoadCpuMs: measured.loads[0]!.cpuMs,
        warmLoadMs: median(warm.map(load => load.ms)),
        warmLoadCpuMs: median(warm.map(load => load.cpuMs)),
        floorMs: median(measured.floor.map(floor => floor.ms)),
        floorCpuMs: median(measured.floor.map(floor => floor.cpuMs)),
        changeMs: median(measured.changeMs),
        heldBytes: measured.heldByUpstreamBytes,
        peakRssBytes: measured.peakRssBytes
    };
}

/** `formats` loaded in one process, each from a folder of its own written for it. */
async function measureFormats(formats: readonly PromptFormat[], options: PromptFilesOptions): Promise<FormatLoad[]> {
    const root = await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-prompt-files-'));
    try {
        const folders = formats.map(format => ({ format, folder: path.join(root, format) }));
        const bytes: number[] = [];
        for (const { format, folder } of folders) bytes.push(await writeFolder(folder, format, options.files));
        const measured = await loadInProcess(folders, options);
        return formats.map((format, index) => summarised(format, bytes[index]!, measured[index]!, options));
    } finally {
        await rm(root, { recursive: true, force: true });
    }
}

/** In a full run, each format in a process of its own (its first load cold), one after another; in a quick one, all in one process. */
export async function measurePromptFiles(options: PromptFilesOptions): Promise<PromptFilesResult> {
    const { oneProcess = false, ...sizes } = options;
    if (oneProcess) return { ...sizes, formats: await measureFormats(PROMPT_FORMATS, options) };
    const formats: FormatLoad[] = [];
    for (const format of PROMPT_FORMATS) formats.push(...(await measureFormats([format], options)));
    return { ...sizes, formats };
}

/** A result saved before issue 26: markdown alone, its figures at the top level. */
export type MarkdownOnlyResult = Omit<PromptFilesResult, 'formats'> & Omit<FormatLoad, 'format' | 'layout'>;

export function formatLoads(result: PromptFilesResult | MarkdownOnlyResult): FormatLoad[] {
    if ('formats' in result) return result.formats;
    return [{ ...result, format: 'markdown', layout: '50 subfolders' }];
}
