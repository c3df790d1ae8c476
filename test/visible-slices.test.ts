/**
 * What a page costs: a client's visible slice of a view is cut once, so a
 * client listing page after page tests the policy once per prompt and view,
 * not once per prompt and page (issue 13: a narrow client over a huge catalog
 * paid a full scan per page). The catalog and its upstream are the gateway's
 * own, over a real stdio fixture; the service is built beside it with a caller
 * whose visibility counts its calls.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { CatalogEntry } from '../src/catalog/catalog.js';
import { CursorCodec } from '../src/catalog/cursor.js';
import { RequestStates } from '../src/catalog/request-state.js';
import { viewFingerprint } from '../src/catalog/fingerprint.js';
import { visibleSlice } from '../src/catalog/paginate.js';
import { PromptService, type Caller } from '../src/catalog/service.js';
import { VisibleSlices } from '../src/catalog/visible-slices.js';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, startTestGateway, stdioFixture, waitFor } from './helpers.js';
import { BOUNDS } from './unit/input-ports.js';

const OPTIONS = { pageSize: 2, maxArguments: 64, maxArgumentBytes: 65536, maxResultBytes: 1 << 20, maxJsonDepth: 64, passUnknownArguments: () => false, input: BOUNDS };

interface Counted extends Caller {
    calls: () => number;
}

/** A caller seeing the prompts `sees` lets through, counting how often its visibility is asked. */
function counting(scope: string, sees: (name: string) => boolean): Counted {
    let calls = 0;
    const visible = (entry: CatalogEntry) => {
        calls++;
        return sees(entry.exposedName);
    };
    return { scope, visible, calls: () => calls };
}

async function setUp(t: TestContext): Promise<{ gateway: RunningGateway; service: PromptService; slices: VisibleSlices }> {
    const gateway = await startTestGateway({ upstreams: [stdioFixture('big', { prompts: 60 }), stdioFixture('small', { prompts: 3 })] });
    t.after(() => gateway.close());
    const slices = new VisibleSlices();
    const service = new PromptService(gateway.catalog, new CursorCodec('a-secret-of-at-least-16-chars'), OPTIONS, slices, new RequestStates('a-secret-of-at-least-16-chars'));
    return { gateway, service, slices };
}

async function walk(service: PromptService, caller: Caller): Promise<{ names: string[]; pages: number }> {
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
        const page = await service.list(cursor, caller);
        names.push(...page.prompts.map(prompt => prompt.name));
        cursor = page.nextCursor;
        pages++;
        assert.ok(pages < 1000, 'the walk does not end');
    } while (cursor !== undefined);
    return { names, pages };
}

const viewSize = async (gateway: RunningGateway) => (await gateway.catalog.view()).segments.reduce((sum, segment) => sum + segment.entries.length, 0);

test('a walk tests the policy once per prompt of the view, however many pages it lists', { timeout: 60_000 }, async t => {
    const { gateway, service } = await setUp(t);
    const size = await viewSize(gateway);
    const narrow = counting('narrow', name => name.endsWith('prompt-007') || name.endsWith('prompt-050') || name.startsWith('small__'));
    const wide = counting('wide', () => true);

    const seenByNarrow = await walk(service, narrow);
    assert.equal(seenByNarrow.names.filter(name => name.startsWith('big__')).length, 2);
    assert.ok(seenByNarrow.pages > 3);
    const seenByWide = await walk(service, wide);
    assert.ok(seenByWide.pages > 30);
    assert.equal(narrow.calls(), size, 'narrow: once per prompt');
    assert.equal(wide.calls(), size, 'wide: once per prompt');

    // Walking again, and from another session of the same client, costs no test at all.
    await walk(service, narrow);
    await walk(service, { scope: 'narrow', visible: narrow.visible });
    assert.equal(narrow.calls(), size);
    // What a client sees is the same filtered walk either way.
    assert.deepEqual(
        seenByNarrow.names,
        seenByWide.names.filter(name => name.endsWith('prompt-007') || name.endsWith('prompt-050') || name.startsWith('small__'))
    );
});

test("a scope's fingerprint comes from the same slice, and the slice is cut again when the rules or the view change", { timeout: 60_000 }, async t => {
    const { gateway, service, slices } = await setUp(t);
    const size = await viewSize(gateway);
    const caller = counting('c', name => name.startsWith('small__'));
    await walk(service, caller);
    const view = await gateway.catalog.view();
    const fingerprint = slices.fingerprint(view, caller.scope, caller.visible);
    assert.equal(caller.calls(), size, 'the fingerprint tested nothing again');
    assert.equal(
        fingerprint,
        viewFingerprint(
            view,
            visibleSlice(view.segments, (entry: CatalogEntry) => entry.exposedName.startsWith('small__'))
        )
    );

    // New rules for the scope (a reload's policy): cut again, once.
    const renewed = counting('c', name => name.startsWith('small__'));
    await walk(service, renewed);
    await walk(service, renewed);
    assert.equal(renewed.calls(), size);

    // The view changes (an upstream's list): cut again for the new view.
    const client = await connectHttp(gateway.url!);
    t.after(() => client.close());
    await client.getPrompt({ name: 'small__mutate', arguments: { add: 'late' } });
    await waitFor(async () => (await gateway.catalog.view()) !== view, 10_000, 'the new view');
    const { names } = await walk(service, renewed);
    assert.ok(names.includes('small__late'));
    assert.equal(renewed.calls(), size + (await viewSize(gateway)));
});
