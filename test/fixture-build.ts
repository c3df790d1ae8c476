/**
 * The fixture servers (test/fixtures/*.ts), compiled once to plain JavaScript, so a test starts them as
 * `node <file>.js` rather than `node --import tsx <file>.ts`: tsx compiles every module of a fixture and of the SDK
 * it loads at each start, which costs about 0.4 s of CPU per child on an idle machine and many seconds on a loaded
 * one (a test that starts dozens of children waits on that, and its bounds fire).
 *
 * The output folder is named by a hash of the sources (the fixtures and src/, which reaper-driver imports), so an
 * edited fixture is never run stale: the first test that asks for a fixture after an edit compiles again. Compiling
 * writes to a private folder that is then renamed into place, so test processes that compile at once (a direct run
 * of several files) cannot see a half-written folder. `npm test` compiles before the test runner starts (see
 * package.json's pretest:unit), so its test processes only hash.
 *
 *   node --import tsx test/fixture-build.ts    # compile now, print the folder
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Git-ignored; one folder per source hash. */
const BUILD_ROOT = path.join(ROOT, '.test-build');
/** Where what tsconfig.fixtures.json compiles lives: the sources whose hash names the output. */
const SOURCE_FOLDERS = ['test/fixtures', 'conformance', 'src'];
const TSCONFIG = path.join(ROOT, 'tsconfig.fixtures.json');

function sourceFiles(folder: string): string[] {
    return readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })
        .filter(file => file.endsWith('.ts'))
        .map(file => path.join(folder, file))
        .sort();
}

function sourceHash(): string {
    const hash = createHash('sha256');
    // The config it extends too: a change of target or module changes the output.
    for (const file of [path.relative(ROOT, TSCONFIG), 'tsconfig.json', ...SOURCE_FOLDERS.flatMap(sourceFiles)]) {
        hash.update(file)
            .update('\0')
            .update(readFileSync(path.join(ROOT, file)))
            .update('\0');
    }
    return hash.digest('hex').slice(0, 16);
}

function compileInto(target: string): void {
    const scratch = `${target}.tmp-${process.pid}`;
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    try {
        execFileSync(process.execPath, [tsc, '-p', TSCONFIG, '--outDir', scratch], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
        renameSync(scratch, target);
    } catch (error) {
        if (!existsSync(target)) throw error; // else another process compiled the same sources first
    } finally {
        rmSync(scratch, { recursive: true, force: true });
    }
    for (const old of readdirSync(BUILD_ROOT)) {
        if (!old.includes('.tmp-') && path.join(BUILD_ROOT, old) !== target) rmSync(path.join(BUILD_ROOT, old), { recursive: true, force: true });
    }
}

let built: string | undefined;

/** The folder holding the compiled fixtures of the current sources, compiling them first if needed. */
export function fixtureBuild(): string {
    if (built === undefined) {
        const target = path.join(BUILD_ROOT, sourceHash());
        if (!existsSync(target)) {
            mkdirSync(BUILD_ROOT, { recursive: true });
            compileInto(target);
        }
        built = target;
    }
    return built;
}

/** The compiled JavaScript of test/fixtures/<name>.ts, to start as `node <path>`. */
export function compiledFixture(name: string): string {
    return path.join(fixtureBuild(), 'test/fixtures', `${name}.js`);
}

/** The compiled conformance/client-wrapper.ts. */
export function compiledConformanceWrapper(): string {
    return path.join(fixtureBuild(), 'conformance/client-wrapper.js');
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
    console.log(fixtureBuild());
}
