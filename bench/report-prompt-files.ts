/** BENCHMARKS.md's section on prompt files (issues 18 and 26): a folder of prompt files in each format loaded into a files upstream. */
import { table } from './lib/markdown.js';
import { count, mib, ms, ratio } from './lib/stats.js';
import { stamp } from './report-scale-out.js';
import type { BenchResults, Stamped } from './results.js';
import { formatLoads, type FormatLoad } from './scenarios/prompt-files.js';

/** A format's warm load, in CPU time, at most this many times markdown's in the same run (issue 26: "as today's prompt files"). */
const WARM_LOAD_VS_MARKDOWN = 1.5;

const optional = (value: number | undefined, show: (n: number) => string) => (value === undefined ? 'n/a' : show(value));
const bytes = (n: number) => `${count(n)} B`;

function loadTable(loads: FormatLoad[], markdown: FormatLoad): string {
    return table(
        ['format', 'layout', 'mean file', 'floor: read the bytes', 'load, cold', 'load, warm', 'warm vs the floor', 'warm vs markdown', 'a one-file change'],
        loads.map(load => [
            `\`${load.format}\``,
            load.layout,
            optional(load.meanFileBytes, bytes),
            `${ms(load.floorMs, 0)} / ${ms(load.floorCpuMs, 0)}`,
            `${ms(load.coldLoadMs, 0)} / ${ms(load.coldLoadCpuMs, 0)}`,
            `${ms(load.warmLoadMs, 0)} / ${ms(load.warmLoadCpuMs, 0)}`,
            `${ratio(load.warmLoadMs / load.floorMs)} / ${ratio(load.warmLoadCpuMs / load.floorCpuMs)}`,
            `${ratio(load.warmLoadMs / markdown.warmLoadMs)} / **${ratio(load.warmLoadCpuMs / markdown.warmLoadCpuMs)}**`,
            ms(load.changeMs, 0)
        ])
    );
}

function memoryTable(loads: FormatLoad[]): string {
    return table(
        ['format', 'held by the loaded upstream', 'per prompt', 'peak RSS of the measuring process'],
        loads.map(load => [`\`${load.format}\``, optional(load.heldBytes, mib), optional(load.heldBytes, held => bytes(held / load.prompts)), optional(load.peakRssBytes, mib)])
    );
}

/** Each format's warm CPU time against markdown's, judged. */
function verdictLine(loads: FormatLoad[], markdown: FormatLoad): string {
    const others = loads.filter(load => load !== markdown);
    if (others.length === 0) return '';
    const missed = others.filter(load => load.warmLoadCpuMs / markdown.warmLoadCpuMs > WARM_LOAD_VS_MARKDOWN);
    const verdict =
        missed.length === 0
            ? 'met by every format'
            : `**missed** by ${missed.map(load => `\`${load.format}\` (${ratio(load.warmLoadCpuMs / markdown.warmLoadCpuMs)})`).join(', ')}`;
    return `**Target: each format's warm load within ${ratio(WARM_LOAD_VS_MARKDOWN)} of markdown's, in CPU time, measured in the same run: ${verdict}.**
Expected: every format near markdown. They share the folder scan, the reads, the watchers and the plain front-matter
reader; what differs is a regular-expression pass over the body for the placeholders, TOML (smol-toml after a bounding
scan) in place of YAML, and skills' folder per prompt (a listing and a watcher per skill, which its floor pays too).
Before 043fed5 \`claude-commands\`, \`codex-prompts\` and \`skills\` read 1.58x, 1.19x and 1.27x (2,000 files each,
interleaved as here; 1.09x, 0.97x and 1.05x after it): a CPU profile put the difference in the \`yaml\` parser, as the
quoted \`argument-hint\` sent every command file to it and looking up the hint's line for a warning not given parsed
every skill and command again. (A first run with each format's warm loads in a process of its own, one after
another, read 2.47x, 2.12x and 2.11x: the load on the machine changed between the processes.)

`;
}

/** Said when the machine was busier than its cores when the scenario started. */
function loadNote(r: Stamped<object>, cores: number): string {
    const [load] = r.measuredOn.loadAtStart;
    if (load === undefined || load <= cores) return '';
    return `Taken under load (load average ${load.toFixed(1)} on ${cores} cores: other work shared the machine), which stretches
wall times and, less, CPU times: compare the formats by their ratios to markdown, from one run and so under the same load.

`;
}

export function promptFilesSection(results: BenchResults): string {
    const r = results.promptFiles;
    if (r === undefined) return '';
    const loads = formatLoads(r);
    const markdown = loads.find(load => load.format === 'markdown')!;
    return `## A folder of ${count(r.files)} prompt files, in each format

${stamp(r)}.
${count(r.files)} prompt files of about 600 bytes in each format a files upstream reads, of comparable content
(bench/lib/prompt-file-fixtures.ts): a review prompt with a description and two argument slots in the format's own
syntax (markdown: front matter with a title and two declared arguments, one with completion values, and \`{{name}}\`;
\`claude-commands\`: \`argument-hint: [diff] [focus]\`, \`allowed-tools\`, \`model\`, \`$1\` and \`$2\`; \`codex-prompts\`:
\`argument-hint\`, \`$1\` and \`$ARGUMENTS\`; \`vscode-prompts\`: \`mode\`, \`model\` and \`\${input:name:placeholder}\`;
\`gemini-commands\`: TOML with \`description\` and a multi-line \`prompt\` holding \`{{args}}\`; \`skills\`: \`name\`,
\`description\`, \`license\` and \`$ARGUMENTS\`), laid out as each tool keeps them, loaded into a files upstream of
that format. Cold: each format's first load in a process of its own, one after another (nothing compiled yet; the
files are in the page cache). Warm: ${r.rounds - 1} loads of each format (median) in one process, after a first round not
counted, the formats taking turns round by round so that the machine's changing load weighs on each alike; after
each load, the floor: listing the folder and reading every file of the format with \`fs\`, nothing parsed (median).
A one-file change: from the write of a new description to the upstream's change event (median of ${r.changes}), with
the 50 ms the upstream waits for a burst of changes to settle and a rescan of the whole folder. Times are wall / CPU
time of the measuring process (the fs thread pool included): on a machine shared with other work, whose load
average is given above, CPU time varies less.

${loadNote(r, results.machine.cores)}${verdictLine(loads, markdown)}${loadTable(loads, markdown)}

Memory, in each format's process of its own: what the loaded upstream holds (heap and off-heap bytes after full
collections, with the upstream loaded and once it is closed and collected), and the process's peak resident set.

${memoryTable(loads)}

\`npm run bench -- --only prompt-files --merge bench/results/<run>.json\` measures this again, added to that run.

`;
}
