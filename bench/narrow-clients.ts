/**
 * Narrow clients over a huge catalog: what one prompts/list page costs when a
 * client sees 1 of 200,000 prompts, and how 8 such clients listing in a loop
 * slow a wide client's pages down. In process: the gateway's catalog over real
 * stdio fixture upstreams, its policy, and PromptService, called directly, so
 * what is timed is the gateway's own work per page (no HTTP).
 *
 * "Cut per page" is the same service with the visible slice cut again on every
 * page: the policy tested against every prompt of the view each time, which is
 * what every page cost before slices were cached (issue 13).
 *
 *   node --import tsx bench/narrow-clients.ts   # this scenario alone, its section of BENCHMARKS.md rewritten
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import type { CatalogView, Visibility } from '../src/catalog/catalog.js';
import { CursorCodec } from '../src/catalog/cursor.js';
import type { VisibleSlice } from '../src/catalog/paginate.js';
import { PromptService, type Caller } from '../src/catalog/service.js';
import { VisibleSlices } from '../src/catalog/visible-slices.js';
import { parseConfig } from '../src/config/load.js';
import { startGateway } from '../src/gateway.js';
import { compilePolicy } from '../src/policy/policy.js';
import { ROOT, stdioFixture } from '../test/helpers.js';

const UPSTREAMS = 4;
const PROMPTS_PER_UPSTREAM = 50_000;
const PAGE_SIZE = 50;
const WALKERS = 8;
const PAGES = Number(process.env.BENCH_NARROW_PAGES ?? 200);
const HEADING = '## Narrow clients over a huge catalog';

export interface NarrowClientsResult {
    prompts: number;
    /** ms per page: [p50, p90] */
    narrowCut: [number, number];
    narrowCached: [number, number];
    wideCached: [number, number];
    /** ms a wide client's page takes, from its arrival, while 8 narrow clients list in a loop. */
    wideUnderCut: [number, number];
    wideUnderCached: [number, number];
    /** Bytes of its own a slice holds, for a client that sees every other prompt. */
    halfSliceBytes: number;
}

/** Cuts the slice again for every page (each page brings rules of its own): the cost of a page before slices were cached. */
class CutPerPage extends VisibleSlices {
    override of(view: CatalogView, scope: string, visible: Visibility): VisibleSlice {
        return super.of(view, scope, entry => visible(entry));
    }
}

const percentiles = (samples: number[]): [number, number] => {
    samples.sort((a, b) => a - b);
    const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
    return [at(0.5), at(0.9)];
};

/** A request arriving as one from the network would: behind whatever the event loop has queued. */
async function arriving(run: () => Promise<unknown>): Promise<number> {
    const start = performance.now();
    await new Promise(resolve => setImmediate(resolve));
    await run();
    return performance.now() - start;
}

async function sample(count: number, run: () => Promise<unknown>): Promise<[number, number]> {
    for (let i = 0; i < Math.min(20, count); i++) await run();
    const samples: number[] = [];
    for (let i = 0; i < count; i++) samples.push(await arriving(run));
    return percentiles(samples);
}

/** Narrow clients listing in a loop while `measure` runs. */
async function whileWalking<T>(service: PromptService, narrow: Caller, measure: () => Promise<T>): Promise<T> {
    let walking = true;
    const walkers = Array.from({ length: WALKERS }, async () => {
        while (walking) await arriving(() => service.list(undefined, narrow));
    });
    try {
        return await measure();
    } finally {
        walking = false;
        await Promise.all(walkers);
    }
}

export async function measureNarrowClients(): Promise<NarrowClientsResult> {
    const config = parseConfig(
        JSON.stringify({
            listen: { port: 0 },
            clients: [
                { id: 'narrow', prompts: { allow: ['up0__prompt-12345'] } },
                { id: 'half', prompts: { allow: ['*[02468]'] } },
                { id: 'wide', prompts: {} }
            ],
            upstreams: Array.from({ length: UPSTREAMS }, (_, i) =>
                stdioFixture(`up${i}`, { prompts: PROMPTS_PER_UPSTREAM, pageSize: 2000 }, { timeoutMs: 120_000 })
            )
        }),
        'narrow-clients bench',
        process.env
    );
    const gateway = await startGateway(config, { logger: pino({ level: 'silent' }) });
    try {
        const policy = compilePolicy(config);
        const caller = (scope: string): Caller => ({ scope, visible: policy.access.visibility(scope) });
        const [narrow, half, wide] = [caller('narrow'), caller('half'), caller('wide')];
        const options = { pageSize: PAGE_SIZE, maxArguments: 64, maxArgumentBytes: 65_536, maxResultBytes: 4_194_304, maxJsonDepth: 64, passUnknownArguments: () => false };
        const codec = new CursorCodec('bench-secret-of-16-chars');
        const slices = new VisibleSlices();
        const cached = new PromptService(gateway.catalog, codec, options, slices);
        const cutPerPage = new PromptService(gateway.catalog, codec, options, new CutPerPage());

        const view = await gateway.catalog.view();
        const prompts = view.segments.reduce((sum, segment) => sum + segment.entries.length, 0);
        const halfSlice = slices.of(view, half.scope, half.visible);
        const everything = slices.of(view, wide.scope, wide.visible);
        const halfSliceBytes = halfSlice.offsets.reduce((sum, offsets, i) => sum + (offsets === everything.offsets[i] ? 0 : offsets.byteLength), 0);

        // A wide client's page from the middle of the catalog.
        let middle: string | undefined;
        for (let i = 0; i < 2000; i++) middle = (await cached.list(middle, wide)).nextCursor;
        const widePage = () => cached.list(middle, wide);

        return {
            prompts,
            halfSliceBytes,
            narrowCut: await sample(Math.max(20, PAGES / 10), () => cutPerPage.list(undefined, narrow)),
            narrowCached: await sample(PAGES, () => cached.list(undefined, narrow)),
            wideCached: await sample(PAGES, widePage),
            wideUnderCut: await whileWalking(cutPerPage, narrow, () => sample(Math.max(20, PAGES / 4), widePage)),
            wideUnderCached: await whileWalking(cached, narrow, () => sample(PAGES, widePage))
        };
    } finally {
        await gateway.close();
    }
}

export function narrowClientsSection(result: NarrowClientsResult): string {
    const ms = ([p50, p90]: [number, number]) => `${p50.toFixed(3)} / ${p90.toFixed(3)}`;
    return `${HEADING}

${result.prompts.toLocaleString('en')} prompts from ${UPSTREAMS} stdio fixture upstreams, one
in-process catalog and \`PromptService\` called directly (no HTTP), pages of
${PAGE_SIZE}, the gateway's own policy: a narrow client allowed 1 prompt, a wide
client allowed everything. "Cut per page" is the same service with the client's
visible slice cut again for every page, as every page cost before slices were
cached per view and client. Each time runs from the request's arrival (a
\`setImmediate\`, as a request from the network waits for the event loop).
Milliseconds, p50 / p90.

| page | cut per page | cached slice |
| --- | --- | --- |
| narrow client (its only page: 1 prompt) | ${ms(result.narrowCut)} | ${ms(result.narrowCached)} |
| wide client, a page from the middle | | ${ms(result.wideCached)} |
| wide client, a page from the middle, while ${WALKERS} narrow clients list in a loop | ${ms(result.wideUnderCut)} | ${ms(result.wideUnderCached)} |

A client's slice is cut once per view (any upstream's list change makes a new
view) and client, at about the cost of a "cut per page" page. It holds 4 bytes
per prompt the client sees in an upstream it sees in part; upstreams seen whole
or not at all share arrays: a client seeing every other prompt holds
${(result.halfSliceBytes / 1024).toFixed(0)} KiB, the narrow and the wide client next to nothing.

\`\`\`sh
node --import tsx bench/narrow-clients.ts   # this section alone (npm run bench runs it too)
\`\`\`
`;
}

/** Run alone: measures and rewrites this section of BENCHMARKS.md, leaving the others as they are. */
async function standalone(): Promise<void> {
    const section = narrowClientsSection(await measureNarrowClients());
    const file = path.join(ROOT, 'BENCHMARKS.md');
    const text = await readFile(file, 'utf8');
    const start = text.indexOf(HEADING);
    const end = start === -1 ? -1 : text.indexOf('\n## ', start + HEADING.length);
    const reproduce = text.indexOf('\n## Reproduce');
    const next =
        start !== -1
            ? `${text.slice(0, start)}${section}${end === -1 ? '' : text.slice(end + 1)}`
            : reproduce !== -1
              ? `${text.slice(0, reproduce + 1)}${section}\n${text.slice(reproduce + 1)}`
              : `${text}\n${section}`;
    await writeFile(file, next);
    process.stdout.write(section);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
    standalone().then(
        () => process.exit(0),
        (error: unknown) => {
            process.stderr.write(`benchmark failed: ${String(error)}\n`);
            process.exit(1);
        }
    );
}
