/** BENCHMARKS.md's section on prompt files (issue 18): a folder of prompt files loaded into a files upstream. */
import { table } from './lib/markdown.js';
import { count, ms, ratio } from './lib/stats.js';
import type { Stamped } from './results.js';
import type { PromptFilesResult } from './scenarios/prompt-files.js';

export function promptFilesSection(r: Stamped<PromptFilesResult> | undefined): string {
    if (r === undefined) return '';
    const { measuredOn } = r;
    return `## A folder of ${count(r.files)} prompt files

Measured on **${measuredOn.commit}**, ${measuredOn.date.slice(0, 16).replace('T', ' ')} UTC, load average at start ${measuredOn.loadAtStart.map(l => l.toFixed(2)).join(' / ')}.
${count(r.files)} prompt files of about 600 bytes in 50 subfolders (front matter with a title, a description and two
arguments, one with completion values; a body with two placeholders) loaded into a files upstream in a process of its
own: the first load there is cold (nothing compiled yet; the files are in the page cache), then ${r.rounds - 1} warm
load(s) (median). Between the loads, the floor: listing the folder and reading every file's bytes with \`fs\`, nothing
parsed (median). A one-file change: from the write to the upstream's change event (median of ${r.changes}), with the
50 ms the upstream waits for a burst of changes to settle and a rescan of the whole folder.

${table(
    ['measure', 'wall time', 'vs the floor', 'CPU time', 'vs the floor'],
    [
        ["floor: read every file's bytes", ms(r.floorMs, 0), ratio(1), ms(r.floorCpuMs, 0), ratio(1)],
        ['load, cold', ms(r.coldLoadMs, 0), ratio(r.coldLoadMs / r.floorMs), ms(r.coldLoadCpuMs, 0), ratio(r.coldLoadCpuMs / r.floorCpuMs)],
        ['load, warm', ms(r.warmLoadMs, 0), ratio(r.warmLoadMs / r.floorMs), ms(r.warmLoadCpuMs, 0), ratio(r.warmLoadCpuMs / r.floorCpuMs)],
        ['a one-file change reaches the catalog', ms(r.changeMs, 0), ratio(r.changeMs / r.floorMs), '', '']
    ]
)}

CPU time is the measuring process's (the fs thread pool included): on a machine shared with other work, whose load
average is given above, it varies less than wall time.

\`npm run bench -- --only prompt-files --merge bench/results/<run>.json\` measures this again, added to that run.

`;
}
