/**
 * A folder of prompt files (issue 18: "a folder of 10,000 files loads in under a second"): how long a files upstream
 * takes to load it, the first time in a fresh process (cold: nothing compiled yet; the files are in the page cache)
 * and again (warm), beside the floor measured in the same process between the loads (listing the folder and reading
 * every file's bytes with fs, nothing parsed); and how long a one-file change takes to reach the catalog (from the
 * write to the upstream's change event, its 50 ms settle time included). The load runs in a process of its own
 * (bench/prompt-files-load.ts).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pLimit from 'p-limit';
import { ROOT } from '../lib/processes.js';

export interface PromptFilesOptions {
    files: number;
    /** Loads in the measuring process; the first is the cold one. */
    rounds: number;
    changes: number;
}

export interface PromptFilesResult extends PromptFilesOptions {
    prompts: number;
    /** Milliseconds of wall time; cpu: of the measuring process (the fs thread pool included), steadier on a busy machine. */
    coldLoadMs: number;
    coldLoadCpuMs: number;
    warmLoadMs: number;
    warmLoadCpuMs: number;
    floorMs: number;
    floorCpuMs: number;
    changeMs: number;
}

const FOLDERS = 50;

interface Timed {
    ms: number;
    cpuMs: number;
}

/** A prompt as a team writes one: front matter with arguments and completion values, a body with placeholders. */
function promptFileText(index: number): string {
    return `---
title: Prompt ${index}
description: Reviews a change of service ${index} for correctness, security and clarity.
arguments:
  - name: diff
    description: The change, as a unified diff
    required: true
  - name: focus
    description: What to look at most closely
    values: [security, performance, readability, tests]
---
Review the following change to service ${index}. Pay most attention to {{focus}}.

Point out bugs first, then risky patterns, then style. Quote the lines you mean.

{{diff}}
`;
}

async function writeFolder(folder: string, files: number): Promise<void> {
    for (let group = 0; group < FOLDERS; group++) await mkdir(path.join(folder, `group-${group}`), { recursive: true });
    const limit = pLimit(64);
    await Promise.all(
        Array.from({ length: files }, (_, index) => limit(() => writeFile(path.join(folder, `group-${index % FOLDERS}`, `prompt-${index}.md`), promptFileText(index))))
    );
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function measurePromptFiles(options: PromptFilesOptions): Promise<PromptFilesResult> {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-prompt-files-'));
    try {
        await writeFolder(folder, options.files);
        const { stdout } = await promisify(execFile)(
            process.execPath,
            ['--import', 'tsx', path.join(ROOT, 'bench/prompt-files-load.ts'), folder, String(options.rounds), String(options.changes)],
            {
                cwd: ROOT,
                maxBuffer: 1 << 20
            }
        );
        const measured = JSON.parse(stdout) as { prompts: number; loads: Timed[]; floor: Timed[]; changeMs: number[] };
        const warm = measured.loads.slice(1);
        if (measured.prompts !== options.files) throw new Error(`prompt files: ${measured.prompts} prompts served of ${options.files} files`);
        return {
            ...options,
            prompts: measured.prompts,
            coldLoadMs: measured.loads[0]!.ms,
            coldLoadCpuMs: measured.loads[0]!.cpuMs,
            warmLoadMs: median(warm.map(load => load.ms)),
            warmLoadCpuMs: median(warm.map(load => load.cpuMs)),
            floorMs: median(measured.floor.map(floor => floor.ms)),
            floorCpuMs: median(measured.floor.map(floor => floor.cpuMs)),
            changeMs: median(measured.changeMs)
        };
    } finally {
        await rm(folder, { recursive: true, force: true });
    }
}
