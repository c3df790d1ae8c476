/**
 * The package as users get it (issue 17, point 5): `npm pack` builds it (prepack), `npm install` puts it in an empty
 * prefix with its production dependencies only, and the installed bin prints its help, checks and serves the config
 * the package ships (examples/gateway.json, whose upstream is the example prompt server beside it); `npx` runs the
 * tarball too.
 *
 * The pack runs in a copy of the source tree: prepack deletes and rebuilds dist/, which the other test files run
 * meanwhile. npm uses the machine's cache (--prefer-offline); the npm registry is asked only for what it lacks.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, readdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { test, type TestContext } from 'node:test';
import { closeAfter, connectHttp, getJson, ROOT, stopChild, waitFor } from './helpers.js';

const PACKAGE = 'mcp-prompt-gateway';
/** What a clean checkout lacks (installed, built or written by runs), by path from the root. */
const NOT_SOURCE = new Set(['node_modules', 'dist', '.test-build', '.git', 'runtimes', '.scratch', '.bench', 'test-results', 'coverage', 'conformance/results']);
/** A tsc build on a loaded machine, or an install that must fetch what the cache lacks. */
const SLOW_STEP = { timeout: 300_000 };
const STEP = { timeout: 60_000 };

interface Finished {
    code: number | null;
    stdout: string;
    stderr: string;
}

/** Runs a command to its end; the child dies with the test if the test ends first. */
async function run(t: TestContext, command: string, args: string[], cwd: string): Promise<Finished> {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    closeAfter(t, () => stopChild(child));
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, stdout, stderr };
}

function succeeded(result: Finished, what: string): Finished {
    assert.equal(result.code, 0, `${what} exited with ${result.code}:\n${result.stderr}\n${result.stdout}`);
    return result;
}

/** A copy of the source tree to pack from, with this checkout's node_modules for the build's compiler. */
function copySource(into: string): string {
    const source = path.join(into, 'source');
    cpSync(ROOT, source, { recursive: true, filter: from => !NOT_SOURCE.has(path.relative(ROOT, from).split(path.sep).join('/')) });
    symlinkSync(realpathSync(path.join(ROOT, 'node_modules')), path.join(source, 'node_modules'));
    return source;
}

/** Resolves once the process prints `<prefix> <url>` on stderr; rejects if it exits first. */
function announced(child: ChildProcess, prefix: string): Promise<string> {
    let stderr = '';
    return new Promise((resolve, reject) => {
        createInterface({ input: child.stderr! }).on('line', line => {
            stderr += `${line}\n`;
            if (line.startsWith(`${prefix} `)) resolve(line.slice(prefix.length + 1));
        });
        child.once('exit', code => reject(new Error(`exited with ${code} before "${prefix}":\n${stderr}`)));
    });
}

/** The npx cache entries that installed this tarball (`<cache>/_npx/<hash>/`, its package.json names the tarball). */
function npxEntriesOf(cache: string, tarball: string): string[] {
    const root = path.join(cache, '_npx');
    if (!existsSync(root)) return [];
    return readdirSync(root)
        .map(entry => path.join(root, entry))
        .filter(entry => {
            try {
                const manifest = JSON.parse(readFileSync(path.join(entry, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
                const spec = manifest.dependencies?.[PACKAGE];
                return spec?.startsWith('file:') === true && path.resolve(entry, spec.slice('file:'.length)) === tarball;
            } catch {
                return false;
            }
        });
}

test('the npm package installs into an empty prefix and runs with its production dependencies only', { timeout: 900_000 }, async t => {
    const work = await mkdtemp(path.join(tmpdir(), 'gateway-package-'));
    t.after(() => rm(work, { recursive: true, force: true }));

    let tarball = '';
    await t.test('npm pack builds the package (prepack) and packs what runs, not the sources', SLOW_STEP, async t => {
        const source = copySource(work);
        const packed = succeeded(await run(t, 'npm', ['pack', '--json', '--pack-destination', work], source), 'npm pack');
        const [report] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
        tarball = path.join(work, report!.filename);
        const files = new Set(report!.files.map(file => file.path));
        for (const needed of [
            'LICENSE',
            'CHANGELOG.md',
            'dist/cli.js',
            'dist/observability/dashboard/index.html',
            'dist/downstream/http/catalog-page/index.html',
            'config/gateway.schema.json',
            'examples/gateway.json',
            'examples/prompt-server.mjs'
        ]) {
            assert.ok(files.has(needed), `${needed} is in the tarball`);
        }
        assert.deepEqual(
            [...files].filter(file => /^(src|test|bench|scripts|conformance|runtimes)\//.test(file)),
            [],
            'no sources or tests'
        );
    });

    const prefix = path.join(work, 'prefix');
    const installed = path.join(prefix, 'node_modules', PACKAGE);
    const bin = path.join(prefix, 'node_modules', '.bin', PACKAGE);
    const example = path.join(installed, 'examples', 'gateway.json');
    await t.test('npm install puts it in an empty prefix, on this Node (engines, checked strictly), without dev dependencies', SLOW_STEP, async t => {
        assert.ok(tarball, 'packed');
        // --engine-strict: an install on a Node that `engines` leaves out fails instead of warning.
        const args = ['install', '--prefix', prefix, '--prefer-offline', '--engine-strict', '--no-audit', '--no-fund', tarball];
        succeeded(await run(t, 'npm', args, work), 'npm install');
        const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
        const resolvable = createRequire(path.join(installed, 'package.json'));
        for (const dev of ['@modelcontextprotocol/express', '@modelcontextprotocol/server-everything', 'tsx', 'typescript']) {
            assert.ok(dev in manifest.devDependencies, `${dev} is a dev dependency`);
            assert.throws(() => resolvable.resolve(`${dev}/package.json`), { code: 'MODULE_NOT_FOUND' }, `${dev} cannot be found from the installed package`);
        }
    });

    await t.test("the installed bin prints its help and package.json's version, and checks the shipped example config", STEP, async t => {
        assert.ok(existsSync(bin), 'npm linked the bin');
        const help = succeeded(await run(t, bin, ['--help'], work), '--help');
        assert.match(help.stdout, /^Usage: mcp-prompt-gateway \[--config <file>\]/);
        const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
        assert.equal(succeeded(await run(t, bin, ['--version'], work), '--version').stdout, `${version}\n`);
        const check = succeeded(await run(t, bin, ['--config', example, '--check'], work), '--check');
        assert.match(check.stderr, /is valid \(1 upstream\(s\)\)/);
        assert.doesNotMatch(check.stderr, /warning/, "the example upstream's command exists");
    });

    await t.test('the installed gateway serves the shipped example config: its prompts through the SDK client over HTTP', STEP, async t => {
        const gateway = spawn(bin, ['--config', example, '--port', '0'], { cwd: work, stdio: ['ignore', 'ignore', 'pipe'] });
        closeAfter(t, () => stopChild(gateway));
        // Both listened for before either comes: the catalog's line follows "listening on".
        const [url, catalogUrl] = await Promise.all([announced(gateway, 'listening on'), announced(gateway, 'catalog at')]);
        const origin = new URL(url).origin;
        assert.equal(catalogUrl, `${origin}/catalog`);
        await waitFor(async () => (await getJson(`${origin}/readyz`)).status === 200, 30_000, 'the example upstream to connect');

        const client = await connectHttp(url);
        closeAfter(t, () => client.close());
        const { prompts } = await client.listPrompts();
        assert.deepEqual(prompts.map(prompt => prompt.name).sort(), ['examples__code-review', 'examples__commit-message', 'examples__summarize']);
        const { messages } = await client.getPrompt({ name: 'examples__summarize', arguments: { text: 'The build is green.' } });
        assert.match(JSON.stringify(messages), /The build is green\./);

        const dashboard = await fetch(`${origin}/dashboard`);
        assert.equal(dashboard.status, 200, "the dashboard's page files are in dist/");
        assert.match(await dashboard.text(), /<html/i);
        const catalog = await fetch(catalogUrl);
        assert.equal(catalog.status, 200, "the catalog's page files are in dist/");
        assert.match(await catalog.text(), /<meta name="catalog-endpoint" content="\/mcp">/);
        for (const file of readdirSync(path.join(ROOT, 'src/downstream/http/catalog-page')).filter(name => /\.(?:js|css)$/.test(name))) {
            const asset = await fetch(`${catalogUrl}/${file}`);
            assert.equal(asset.status, 200, file);
            await asset.body?.cancel();
        }

        await client.close();
        const exited = once(gateway, 'exit');
        gateway.kill('SIGTERM');
        assert.deepEqual(await exited, [0, null], 'a graceful stop');
    });

    await t.test('the shipped example prompt server serves Streamable HTTP as well', STEP, async t => {
        const server = spawn(process.execPath, [path.join(installed, 'examples', 'prompt-server.mjs'), '--http', '--port', '0'], {
            cwd: work,
            stdio: ['ignore', 'ignore', 'pipe']
        });
        closeAfter(t, () => stopChild(server));
        const client = await connectHttp(await announced(server, 'listening on'));
        closeAfter(t, () => client.close());
        const { prompts } = await client.listPrompts();
        assert.deepEqual(prompts.map(prompt => prompt.name).sort(), ['code-review', 'commit-message', 'summarize']);
    });

    await t.test('npx runs the tarball', SLOW_STEP, async t => {
        const cache = succeeded(await run(t, 'npm', ['config', 'get', 'cache'], work), 'npm config get cache').stdout.trim();
        // npx installs the tarball into an entry of the npm cache: this run's entry goes with the test.
        t.after(() => Promise.all(npxEntriesOf(cache, tarball).map(entry => rm(entry, { recursive: true, force: true }))));
        // As a user types it, from the tarball's folder: `npx ./<file>` (npx takes an absolute path for a command).
        const help = succeeded(await run(t, 'npx', ['--yes', '--prefer-offline', `./${path.basename(tarball)}`, '--help'], work), 'npx');
        assert.match(help.stdout, /^Usage: mcp-prompt-gateway \[--config <file>\]/);
        assert.equal(npxEntriesOf(cache, tarball).length, 1, 'npx installed this tarball (not some other copy)');
    });
});
