/**
 * A `files` upstream's folder read once as the gateway reads it, for
 * `--check`: the same scan, the same parse per format, the same rules for
 * names and limits (PromptSet), and no watcher. What the gateway would leave
 * out, report or warn of is returned, for a prompt repository's CI.
 */
import type { FilesUpstreamConfig } from '../../config/schema.js';
import { forEachBounded } from '../../lib/for-each-bounded.js';
import { oneLine } from '../../lib/one-line.js';
import type { UpstreamLimits } from '../connection.js';
import type { UpstreamProblem } from '../upstream.js';
import { READ_CONCURRENCY, readPromptFile } from './file-read.js';
import { FolderUnreadable, scanFolder } from './folder.js';
import { PromptSet } from './prompt-set.js';

export type FolderCheck =
    /** The folder missing or not a folder: the upstream would be down. */
    | { ok: false; reason: string }
    /** `problems` with `warning` are served; the others are files left out. Their text is on one line (lib/one-line.ts). */
    | { ok: true; prompts: number; problems: UpstreamProblem[]; truncated: boolean };

export async function checkPromptFolder(config: FilesUpstreamConfig, limits: UpstreamLimits): Promise<FolderCheck> {
    let scan;
    try {
        scan = await scanFolder(config.path, limits.maxPromptsPerUpstream, config.format);
    } catch (error) {
        if (error instanceof FolderUnreadable) return { ok: false, reason: error.message };
        throw error;
    }
    const files = new PromptSet();
    await forEachBounded([...scan.files], READ_CONCURRENCY, async ([path, entry]) => {
        const read = await readPromptFile(entry, path, undefined, config.format);
        if (read.kind === 'read') files.set(path, read.stamp, read.outcome);
    });
    const served = files.serve(limits);
    // Printed as text, not JSON as in /healthz: a file's name is shown on one line, as written.
    const problems = [...served.problems, ...scan.problems].map(problem => ({ ...problem, source: oneLine(problem.source), message: oneLine(problem.message) }));
    return { ok: true, prompts: served.listed.length, problems, truncated: scan.truncated };
}
