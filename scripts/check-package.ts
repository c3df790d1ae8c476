/**
 * Checks the npm package as it would be published, without building or publishing anything (CI runs it, in .ci/run):
 *
 *   npm run build && npm run check:package
 *
 * 1. `npm pack --dry-run --json`: the file list against scripts/package-contents.ts (required files present, nothing
 *    of test/, bench/, conformance/, scripts/ ..., nothing outside the allow-list, no stale build output); the size
 *    and file count are printed, and a packed size over MAX_PACKED_BYTES fails.
 * 2. `mcp-prompt-gateway --version` (the built CLI) prints package.json's version.
 * 3. `npm publish --dry-run --json`: passes, and would publish the very tarball of step 1.
 *
 * Both npm runs take --ignore-scripts: `prepack` deletes dist/ and rebuilds it (a full tsc run, over a minute of CPU
 * on CI's 2 cores), and CI's test phase has just built it from the same sources. The check therefore reads the dist/
 * that exists; a dist/ left from older sources shows as stale files (a real `npm pack`/`npm publish` rebuilds it).
 * `npm publish --dry-run` needs no login (npm warns and goes on); --offline keeps it off the network: online, npm
 * asks the registry about the package, and an unreachable registry costs a minute of retries for nothing the dry run
 * needs (the release workflow's real publish asks the registry itself).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PAGE_FOLDERS, packageProblems, type SourceTree } from './package-contents.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** About four times the package's size at 0.1.0 (0.5 MB): room to grow, but a stray folder of fixtures fails. */
const MAX_PACKED_BYTES = 2 * 1024 * 1024;
const NPM_FLAGS = ['--dry-run', '--json', '--ignore-scripts'];

const run = promisify(execFile);

interface PackReport {
    id: string;
    size: number;
    unpackedSize: number;
    entryCount: number;
    integrity: string;
    files: { path: string }[];
}

/** Files below `folder` (relative to src/, '/' separated) that pass `keep`. */
function sourceFiles(folder: string, keep: (name: string) => boolean): string[] {
    const base = path.join(ROOT, 'src');
    return readdirSync(path.join(base, folder), { recursive: true, withFileTypes: true })
        .filter(entry => entry.isFile() && keep(entry.name))
        .map(entry => path.relative(base, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
}

function sourceTree(): SourceTree {
    return {
        modules: sourceFiles('.', name => name.endsWith('.ts') && !name.endsWith('.d.ts')),
        pageFiles: PAGE_FOLDERS.flatMap(folder => sourceFiles(folder, () => true))
    };
}

async function npmReport(command: 'pack' | 'publish', extra: string[] = []): Promise<PackReport> {
    const { stdout } = await run('npm', [command, ...NPM_FLAGS, ...extra], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    const parsed = JSON.parse(stdout) as PackReport[] | Record<string, PackReport>;
    // pack answers an array of reports, publish an object keyed by package name.
    const report = Array.isArray(parsed) ? parsed[0] : Object.values(parsed)[0];
    if (report === undefined) throw new Error(`npm ${command} --json reported no package`);
    return report;
}

const kibibytes = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

async function main(): Promise<number> {
    if (!existsSync(path.join(ROOT, 'dist/cli.js'))) {
        console.error('dist/ is not built: run `npm run build` first (the check packs with --ignore-scripts, see its header).');
        return 1;
    }
    const packed = await npmReport('pack');
    const problems = packageProblems(
        packed.files.map(file => file.path),
        sourceTree()
    );
    if (packed.size > MAX_PACKED_BYTES)
        problems.push(`packed size ${kibibytes(packed.size)} is over ${kibibytes(MAX_PACKED_BYTES)} (MAX_PACKED_BYTES in scripts/check-package.ts)`);

    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const { stdout: printed } = await run(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--version']);
    if (printed.trim() !== manifest.version) problems.push(`--version prints "${printed.trim()}", package.json says "${manifest.version}"`);

    const published = await npmReport('publish', ['--offline']);
    if (published.integrity !== packed.integrity) problems.push(`npm publish --dry-run would publish another tarball than npm pack made (${published.id})`);

    console.log(`package ${packed.id}: ${packed.entryCount} files, ${kibibytes(packed.size)} packed, ${kibibytes(packed.unpackedSize)} unpacked`);
    if (problems.length > 0) {
        console.error(`the package is not clean (${problems.length} problem(s)):\n${problems.map(problem => `  ${problem}`).join('\n')}`);
        return 1;
    }
    console.log('package contents, --version and npm publish --dry-run: ok');
    return 0;
}

process.exitCode = await main();
