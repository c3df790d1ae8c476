/**
 * A folder of prompt files (issue 18: "a folder of 10,000 files loads in under a second"; issue 26: in every format a
 * files upstream reads): how long a files upstream takes to load it, the first time in a fresh process (cold:
 * nothing compiled yet; the files are in the page cache) and again (warm), beside the floor measured in the same
 * process between the loads (listing the folder and reading every file's bytes with fs, nothing parsed); how long a
 * one-file change takes to reach the catalog (from the write to the upstream's change event, its 50 ms settle time
 * included); and the memory the loaded upstream holds. The loads run in processes of their own
 * (bench/prompt-files-load.ts; see measurePromptFiles), from files of comparable content (bench/lib/prompt-file-fixtures.ts).
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
    /** Loads of each format in the process that times the warm ones; the first is not counted. */
    rounds: number;
    changes: number;
    /** No process per format for the cold loads (a quick run, whose numbers only show that the scenario runs): the first load in the shared one stands for it. */
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
async function loadInProcess(folders: { format: PromptFormat; folder: string }[], rounds: number, changes: number): Promise<FolderMeasures[]> {
    const { stdout } = await promisify(execFile)(
        process.execPath,
        [
            '--expose-gc',
            '--import',
            'tsx',
            path.join(ROOT, 'bench/prompt-files-load.ts'),
            String(rounds),
            String(changes),
            ...folders.map(({ format, folder }) => `${format}=${folder}`)
        ],
        { cwd: ROOT, maxBuffer: 1 << 20 }
    );
    return JSON.parse(stdout) as FolderMeasures[];
}

/** `cold`: the format's first load in a fresh process, and its memory; `warm`: the loads after the first in the shared one. */
function summarised(format: PromptFormat, totalBytes: number, cold: FolderMeasures, warm: FolderMeasures, files: number): FormatLoad {
    for (const measured of [cold, warm]) if (measured.prompts !== files) throw new Error(`prompt files (${format}): ${measured.prompts} prompts served of ${files} files`);
    const warmLoads = warm.loads.slice(1);
    return {
        format,
        layout: PROMPT_FILE_FIXTURES[format].layout,
        prompts: warm.prompts,
        meanFileBytes: totalBytes / files,
        coldLoadMs: cold.loads[0]!.ms,
        coldLoadCpuMs: cold.loads[0]!.cpuMs,
        warmLoadMs: median(warmLoads.map(load => load.ms)),
        warmLoadCpuMs: median(warmLoads.map(load => load.cpuMs)),
        floorMs: median(warm.floor.map(floor => floor.ms)),
        floorCpuMs: median(warm.floor.map(floor => floor.cpuMs)),
        changeMs: median(warm.changeMs),
        heldBytes: cold.heldByUpstreamBytes,
        peakRssBytes: cold.peakRssBytes
    };
}

/**
 * Every format's folder written, then each format's cold load in a process of its own, one after another; then the
 * warm loads in one process, the formats taking turns round by round, so that the machine's load, which changes
 * from minute to minute on a shared machine, weighs on each alike. A quick run has that one process only.
 */
export async function measurePromptFiles(options: PromptFilesOptions): Promise<PromptFilesResult> {
    const { oneProcess = false, ...sizes } = options;
    const root = await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-prompt-files-'));
    try {
        const folders = PROMPT_FORMATS.map(format => ({ format, folder: path.join(root, format) }));
        const bytes: number[] = [];
        for (const { format, folder } of folders) bytes.push(await writeFolder(folder, format, options.files));
        const cold: FolderMeasures[] = [];
        if (!oneProcess) for (const folder of folders) cold.push(...(await loadInProcess([folder], 1, 0)));
        const warm = await loadInProcess(folders, options.rounds, options.changes);
        const formats = PROMPT_FORMATS.map((format, index) => summarised(format, bytes[index]!, (oneProcess ? warm : cold)[index]!, warm[index]!, options.files));
        return { ...sizes, formats };
    } finally {
        await rm(root, { recursive: true, force: true });
    }
}

/** A result saved before issue 26: markdown alone, its figures at the top level. */
export type MarkdownOnlyResult = Omit<PromptFilesResult, 'formats'> & Omit<FormatLoad, 'format' | 'layout'>;

export function formatLoads(result: PromptFilesResult | MarkdownOnlyResult): FormatLoad[] {
    if ('formats' in result) return result.formats;
    return [{ ...result, format: 'markdown', layout: '50 subfolders' }];
}
