/**
 * Narrow clients over a huge catalog, in the bench process (no HTTP): what one prompts/list page costs when a client
 * sees 1 of `upstreams x promptsEach` prompts, and how 8 such clients listing in a loop slow a wide client's pages
 * down. The gateway's own catalog, policy, cursor codec and PromptService, called directly, over in-memory upstreams
 * behind the catalog's port (their lists are read once and cached, so what is timed is the gateway's work per page).
 *
 * "Cut per page" is the same service with the client's visible slice cut again on every page: the policy tested
 * against every prompt of the view each time, which is what every page cost before slices were cached (issue 13).
 * Each time runs from the request's arrival (a `setImmediate`, as a request from the network waits for the event
 * loop).
 */
import { Catalog, type CatalogView, type Visibility } from '../../src/catalog/catalog.js';
import { CursorCodec } from '../../src/catalog/cursor.js';
import { RequestStates } from '../../src/catalog/request-state.js';
import type { VisibleSlice } from '../../src/catalog/paginate.js';
import { PromptService, type Caller } from '../../src/catalog/service.js';
import { VisibleSlices } from '../../src/catalog/visible-slices.js';
import { parseConfig } from '../../src/config/load.js';
import { compilePolicy } from '../../src/policy/policy.js';
import { FakeUpstream, silentLogger } from '../../test/unit/fake-upstream.js';
import { BOUNDS } from '../../test/unit/input-ports.js';
import { httpUpstream } from '../lib/gateway.js';
import { percentiles, type Percentiles } from '../lib/stats.js';
import { benchPrompt, promptName } from '../servers/prompt-names.js';

export interface NarrowClientsOptions {
    upstreams: number;
    promptsEach: number;
    /** Pages timed per row (fewer for the slow "cut per page" rows). */
    pages: number;
}

export interface NarrowClientsResult {
    prompts: number;
    upstreams: number;
    pageSize: number;
    walkers: number;
    /** Microseconds from a page's arrival until it is ready. */
    narrowCut: Percentiles;
    narrowCached: Percentiles;
    wideCached: Percentiles;
    /** A wide client's page from the middle while `walkers` narrow clients list in a loop. */
    wideUnderCut: Percentiles;
    wideUnderCached: Percentiles;
    /** Bytes of its own a slice holds, for a client that sees every other prompt. */
    halfSliceBytes: number;
}

const PAGE_SIZE = 50;
const WALKERS = 8;
const SERVICE_OPTIONS = {
    pageSize: PAGE_SIZE,
    maxArguments: 64,
    maxArgumentBytes: 65_536,
    maxResultBytes: 4_194_304,
    maxJsonDepth: 64,
    passUnknownArguments: () => false,
    input: BOUNDS
};

/** Cuts the slice again for every page (each page brings rules of its own): the cost of a page before slices were cached. */
class CutPerPage extends VisibleSlices {
    override of(view: CatalogView, scope: string, visible: Visibility): VisibleSlice {
        return super.of(view, scope, entry => visible(entry));
    }
}

/** Microseconds from a request's arrival, as one from the network would arrive: behind whatever the event loop has queued. */
async function arriving(run: () => Promise<unknown>): Promise<number> {
    const start = performance.now();
    await new Promise(resolve => setImmediate(resolve));
    await run();
    return (performance.now() - start) * 1000;
}

async function sample(count: number, run: () => Promise<unknown>): Promise<Percentiles> {
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

function policyFor(options: NarrowClientsOptions) {
    const ids = Array.from({ length: options.upstreams }, (_, i) => `up${i}`);
    const config = parseConfig(
        JSON.stringify({
            clients: [
                { id: 'narrow', prompts: { allow: [`up0__${promptName(Math.floor(options.promptsEach / 2))}`] } },
                { id: 'half', prompts: { allow: ['*[02468]'] } },
                { id: 'wide', prompts: {} }
            ],
            // Configured so that the policy knows them; never connected: the catalog gets in-memory upstreams.
            upstreams: ids.map(id => httpUpstream(id, 'http://127.0.0.1:9/mcp'))
        }),
        'narrow-clients bench',
        {}
    );
    const policy = compilePolicy(config);
    const caller = (scope: string): Caller => ({ scope, visible: policy.access.visibility(scope) });
    return {
        ids,
        separator: config.namespace.separator,
        notifications: config.notifications,
        relist: config.caching,
        narrow: caller('narrow'),
        half: caller('half'),
        wide: caller('wide')
    };
}

export async function measureNarrowClients(options: NarrowClientsOptions): Promise<NarrowClientsResult> {
    const { ids, separator, notifications, relist, narrow, half, wide } = policyFor(options);
    const prompts = Array.from({ length: options.promptsEach }, (_, i) => benchPrompt(i));
    const catalog = new Catalog({ naming: { separator }, logger: silentLogger, notifications, relist: () => relist });
    try {
        catalog.setUpstreams(ids.map(id => new FakeUpstream(id, prompts)));
        await catalog.warm();
        const codec = new CursorCodec('bench-secret-of-16-chars');
        const slices = new VisibleSlices();
        const cached = new PromptService(catalog, codec, SERVICE_OPTIONS, slices, new RequestStates('bench-secret-of-16-chars'));
        const cutPerPage = new PromptService(catalog, codec, SERVICE_OPTIONS, new CutPerPage(), new RequestStates('bench-secret-of-16-chars'));

        const view = await catalog.view();
        const everything = slices.of(view, wide.scope, wide.visible).offsets;
        const halfSliceBytes = slices.of(view, half.scope, half.visible).offsets.reduce((sum, offsets, i) => sum + (offsets === everything[i] ? 0 : offsets.byteLength), 0);

        // A wide client's page from the middle of the catalog.
        let middle: string | undefined;
        for (let i = 0; i < (ids.length * options.promptsEach) / PAGE_SIZE / 2; i++) middle = (await cached.list(middle, wide)).nextCursor;
        const widePage = () => cached.list(middle, wide);
        const { pages } = options;
        return {
            prompts: ids.length * options.promptsEach,
            upstreams: ids.length,
            pageSize: PAGE_SIZE,
            walkers: WALKERS,
            halfSliceBytes,
            narrowCut: await sample(Math.max(20, pages / 10), () => cutPerPage.list(undefined, narrow)),
            narrowCached: await sample(pages, () => cached.list(undefined, narrow)),
            wideCached: await sample(pages, widePage),
            wideUnderCut: await whileWalking(cutPerPage, narrow, () => sample(Math.max(20, pages / 4), widePage)),
            wideUnderCached: await whileWalking(cached, narrow, () => sample(pages, widePage))
        };
    } finally {
        catalog.close();
    }
}
