/**
 * The dashboard page in a real browser (Chromium, driven by playwright-core): after a known mix of
 * traffic, every number the page shows equals what /metrics says, read through the same parser as the metrics
 * tests; the page loads nothing from anywhere but the gateway, logs no error and breaks no CSP rule; and with a
 * metrics bearer token it asks for the token, refuses a wrong one and shows the data with the right one.
 *
 * Expected values are derived from /metrics, never from the dashboard's JSON, and a few are also checked against
 * the traffic the test made, so both sides being wrong the same way fails too.
 *
 * The browser is the Chromium of @sparticuz/chromium (an npm package) or CHROMIUM_PATH (see browser.ts). The first
 * dashboard is saved as test-results/dashboard.png.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { Browser, Page } from 'playwright-core';
import type { RunningGateway } from '../src/gateway.js';
import { assertOwnOrigin, cspViolations, launchBrowser, openPage, waitForPage, type PageLog } from './browser.js';
import { connectHttp, ROOT, rpcError, startTestGateway, stdioFixture, waitFor } from './helpers.js';
import { histogramQuantile } from '../src/lib/histogram-quantile.js';
import { labelValues, sampleList, scrape, value, type Families } from './prometheus.js';

const SCREENSHOT = path.join(ROOT, 'test-results/dashboard.png');
const keyOf = (clientId: string) => `dash-key-of-${clientId}-0123456789abcdef`;
const CLIENTS = ['alice', 'bob', 'carol'] as const;
type ClientId = (typeof CLIENTS)[number];
const DENIED = 'code__prompt-001';

interface Row {
    key: string;
    cells: Record<string, string>;
}

/** Everything the page shows, read in one go (one render's worth: rendering is synchronous). */
interface PageSnapshot {
    state: string;
    connection: string;
    generatedAt: string;
    totals: Record<string, string>;
    upstreamCount: string;
    upstreams: (Row & { lastError: string; lastErrorVisible: boolean; pillTitle: string })[];
    prompts: Row[];
    clients: Row[];
    activity: string[];
    chart: { exists: boolean; line: string; caption: string };
}

// A string, not a function: the project's typecheck has no DOM types, and tsx (esbuild's keepNames) would put
// `__name(...)` calls into a serialized function, which the page does not define.
const READ_DASHBOARD = `(() => {
    const text = node => (node ? node.textContent : '').trim();
    const cells = row => Object.fromEntries(Array.from(row.querySelectorAll('[data-field]'), cell => [cell.dataset.field, text(cell)]));
    const rows = (selector, key) => Array.from(document.querySelectorAll(selector), row => ({ key: row.dataset[key], cells: cells(row) }));
    const svg = document.querySelector('svg[data-chart="prompt-gets"]');
    return {
        state: document.body.dataset.state,
        connection: document.body.dataset.connection,
        generatedAt: document.body.dataset.generatedAt || '',
        totals: Object.fromEntries(Array.from(document.querySelectorAll('[data-total]'), node => [node.dataset.total, text(node)])),
        upstreamCount: text(document.querySelector('[data-count="upstreams"]')),
        upstreams: rows('tr[data-upstream]', 'upstream').map((row, index) => {
            const element = document.querySelectorAll('tr[data-upstream]')[index];
            const lastError = element.querySelector('[data-field="last-error"]');
            return {
                ...row,
                lastError: text(lastError),
                lastErrorVisible: !!lastError && lastError.getClientRects().length > 0,
                pillTitle: element.querySelector('.pill').title
            };
        }),
        prompts: rows('tr[data-prompt]', 'prompt'),
        clients: rows('tr[data-client]', 'client'),
        activity: Array.from(document.querySelectorAll('[data-list="list-changed"] li'), text),
        chart: {
            exists: !!svg,
            line: svg ? svg.querySelector('.spark-line').getAttribute('points') : '',
            caption: text(document.querySelector('[data-field="history-caption"]'))
        }
    };
})()`;

async function readDashboard(page: Page): Promise<PageSnapshot> {
    return page.evaluate<PageSnapshot>(READ_DASHBOARD);
}

/** Waits for the page to render data the gateway generated after `since` (epoch ms). */
async function waitForDataAfter(page: Page, since: number): Promise<void> {
    await waitForPage(page, `Date.parse(document.body.dataset.generatedAt || '') > ${since}`, `data generated after ${new Date(since).toISOString()}`);
}

/** A count as the page formats it: digits with thousands separators. */
function shownCount(text: string | undefined, what: string): number {
    assert.match(text ?? '', /^\d{1,3}(,\d{3})*$/, `${what}: "${text}" is not a formatted count`);
    return Number(text!.replaceAll(',', ''));
}

/** A latency cell ("0.42 ms", "3.1 ms", "1,204 ms") equals `ms` to the precision shown. */
function assertLatency(text: string | undefined, ms: number, what: string): void {
    const match = /^(\d{1,3}(?:,\d{3})*)(?:\.(\d+))? ms$/.exec(text ?? '');
    assert.ok(match, `${what}: "${text}" is not a latency in ms`);
    const decimals = match[2]?.length ?? 0;
    const shown = Number(`${match[1]!.replaceAll(',', '')}.${match[2] ?? '0'}`);
    const tolerance = 0.5 * 10 ** -decimals + 1e-6;
    assert.ok(Math.abs(shown - ms) <= tolerance, `${what}: shows ${text}, /metrics says ${ms} ms`);
}

// --- what /metrics implies the page shows ---

interface Sample {
    labels: Record<string, string>;
    value: number;
}

const sum = (list: readonly Sample[]) => list.reduce((total, sample) => total + sample.value, 0);

function sumBy(list: readonly Sample[], label: string): Map<string, number> {
    const sums = new Map<string, number>();
    for (const sample of list) sums.set(sample.labels[label]!, (sums.get(sample.labels[label]!) ?? 0) + sample.value);
    return sums;
}

const TOTALS = ['promptGets', 'promptGetErrors', 'promptLists', 'completions', 'listChangedReceived', 'listChangedSent', 'rejected', 'sessions'] as const;
type TotalKey = (typeof TOTALS)[number];

interface Expected {
    totals: Record<TotalKey, number>;
    upstreams: Map<string, { state: string; prompts: number; gets: number; errors: number; reconnects: number; listChanged: number; inputRounds: number }>;
    /** The top ten by gets (ties by name), as the page orders them. */
    prompts: { name: string; upstream: string; gets: number; errors: number; p50Ms: number | null; p95Ms: number | null }[];
    clients: Map<string, { gets: number; lists: number; errors: number }>;
}

const TOP_PROMPTS = 10;
const UPSTREAM_FAILURES = new Set(['upstream_error', 'timeout']);

function expectedFrom(families: Families): Expected {
    const gets = sampleList(families, 'mcp_gateway_prompt_gets_total');
    const failed = gets.filter(sample => sample.labels.outcome !== 'ok');
    const lists = sampleList(families, 'mcp_gateway_prompt_lists_total');
    const totals: Record<TotalKey, number> = {
        promptGets: sum(gets),
        promptGetErrors: sum(failed),
        promptLists: sum(lists),
        completions: sum(sampleList(families, 'mcp_gateway_completions_total')),
        listChangedReceived: sum(sampleList(families, 'mcp_gateway_list_changed_received_total')),
        listChangedSent: value(families, 'mcp_gateway_list_changed_sent_total'),
        rejected: sum(sampleList(families, 'mcp_gateway_requests_rejected_total')),
        sessions: sum(sampleList(families, 'mcp_gateway_sessions'))
    };

    const getsByUpstream = sumBy(gets, 'upstream');
    const failuresByUpstream = sumBy(
        gets.filter(sample => UPSTREAM_FAILURES.has(sample.labels.outcome!)),
        'upstream'
    );
    const upstreams: Expected['upstreams'] = new Map();
    for (const id of labelValues(families, 'mcp_gateway_upstream_up', 'upstream')) {
        upstreams.set(id, {
            state: value(families, 'mcp_gateway_upstream_up', { upstream: id }) === 1 ? 'ready' : 'down',
            prompts: value(families, 'mcp_gateway_upstream_prompts', { upstream: id }),
            gets: getsByUpstream.get(id) ?? 0,
            errors: failuresByUpstream.get(id) ?? 0,
            reconnects: value(families, 'mcp_gateway_upstream_reconnects_total', { upstream: id }),
            listChanged: value(families, 'mcp_gateway_list_changed_received_total', { upstream: id }),
            inputRounds: sum(sampleList(families, 'mcp_gateway_input_rounds_total').filter(sample => sample.labels.upstream === id))
        });
    }

    const byPrompt = new Map<string, Expected['prompts'][number]>();
    for (const sample of gets) {
        const name = sample.labels.prompt!;
        if (name === '_unknown') continue;
        const row = byPrompt.get(name) ?? { name, upstream: sample.labels.upstream!, gets: 0, errors: 0, p50Ms: null, p95Ms: null };
        row.gets += sample.value;
        if (sample.labels.outcome !== 'ok') row.errors += sample.value;
        byPrompt.set(name, row);
    }
    const prompts = [...byPrompt.values()].sort((a, b) => b.gets - a.gets || (a.name < b.name ? -1 : 1)).slice(0, TOP_PROMPTS);
    for (const row of prompts) {
        // The successful gets' buckets: only they carry the prompt label.
        const buckets = sampleList(families, 'mcp_server_operation_duration_seconds_bucket')
            .filter(({ labels }) => labels.prompt === row.name && labels.method === 'prompts/get' && labels.outcome === 'ok')
            .map(({ labels, value: count }) => ({ le: labels.le === '+Inf' ? Infinity : Number(labels.le), count }));
        const [p50, p95] = [0.5, 0.95].map(quantile => histogramQuantile(quantile, buckets));
        if (p50 === null || p95 === null || p50 === undefined || p95 === undefined) continue;
        [row.p50Ms, row.p95Ms] = [p50 * 1000, p95 * 1000];
    }

    const clients: Expected['clients'] = new Map();
    const client = (id: string) => {
        const row = clients.get(id) ?? { gets: 0, lists: 0, errors: 0 };
        clients.set(id, row);
        return row;
    };
    for (const sample of gets) {
        client(sample.labels.client!).gets += sample.value;
        if (sample.labels.outcome !== 'ok') client(sample.labels.client!).errors += sample.value;
    }
    for (const sample of lists) client(sample.labels.client!).lists += sample.value;
    return { totals, upstreams, prompts, clients };
}

/** The scrape before and after a page snapshot: counters only grow, so what the page shows lies between them. */
interface Sandwich {
    before: Expected;
    after: Expected;
    page: PageSnapshot;
}

/**
 * Scrape, wait for the page's next poll, read the page, scrape again. The broken upstream's reconnect attempts keep
 * counting meanwhile; everything else stood still since the traffic ended. Retried while the broken upstream is in a
 * reconnect attempt (state "connecting" for a moment a second).
 */
async function sandwich(page: Page, metricsUrl: string): Promise<Sandwich> {
    for (let attempt = 1; ; attempt++) {
        const first = await scrape(metricsUrl);
        await waitForDataAfter(page, Date.now());
        const snapshot = await readDashboard(page);
        const second = await scrape(metricsUrl);
        const broken = snapshot.upstreams.find(row => row.key === 'broken');
        if (broken?.cells.state === 'down' || attempt === 10) return { before: expectedFrom(first), after: expectedFrom(second), page: snapshot };
    }
}

// --- the first gateway: known traffic, then the page ---

/** What the test sent, counted on its own side (each failing call is checked to fail). */
interface Made {
    gets: number;
    failedGets: number;
    lists: number;
    completions: number;
    getsByClient: Map<ClientId, number>;
    errorsByClient: Map<ClientId, number>;
    listsByClient: Map<ClientId, number>;
    getsByPrompt: Map<string, number>;
    notified: Map<ClientId, number>;
    docsPromptsListed: number;
    codePromptsListed: number;
}

/** Successful gets, unevenly spread, so the top-prompts table has a clear order. */
const GOOD_GETS: [ClientId, string, number][] = [
    ['alice', 'docs__prompt-000', 9],
    ['bob', 'docs__prompt-000', 3],
    ['alice', 'code__prompt-000', 4],
    ['bob', 'code__prompt-000', 2],
    ['carol', 'code__prompt-000', 1],
    ['alice', 'docs__prompt-001', 2],
    ['carol', 'docs__prompt-001', 3],
    ['carol', 'code__prompt-001', 2],
    ['bob', 'docs__prompt-002', 1],
    ['carol', 'docs__prompt-002', 1]
];

/** Gets that fail: a missing argument, made-up names, an upstream failure, a denied prompt. */
const FAILING_GETS: [ClientId, string, Record<string, string> | undefined][] = [
    ['alice', 'docs__with-required', {}],
    ['alice', 'nope-1', undefined],
    ['alice', 'docs__nope', undefined],
    ['bob', 'code__prompt-999', undefined],
    ['carol', 'docs__fail-internal', undefined],
    ['bob', DENIED, undefined]
];

async function makeTraffic(gatewayUrl: string, clients: Map<ClientId, Client>): Promise<Made> {
    const made: Made = {
        gets: 0,
        failedGets: 0,
        lists: 0,
        completions: 0,
        getsByClient: new Map(),
        errorsByClient: new Map(),
        listsByClient: new Map(),
        getsByPrompt: new Map(),
        notified: new Map(CLIENTS.map(id => [id, 0])),
        docsPromptsListed: 0,
        codePromptsListed: 0
    };
    const bump = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1);
    const of = (id: ClientId) => clients.get(id)!;
    for (const id of CLIENTS) of(id).setNotificationHandler('notifications/prompts/list_changed', () => void bump(made.notified, id));

    const list = async (id: ClientId) => {
        const page = await of(id).request({ method: 'prompts/list', params: {} });
        made.lists++;
        bump(made.listsByClient, id);
        return page.prompts.map(prompt => prompt.name);
    };
    const get = async (id: ClientId, name: string, args?: Record<string, string>) => {
        await of(id).getPrompt({ name, ...(args === undefined ? {} : { arguments: args }) });
        made.gets++;
        bump(made.getsByClient, id);
        bump(made.getsByPrompt, name);
    };
    const failingGet = async (id: ClientId, name: string, args?: Record<string, string>) => {
        await rpcError(of(id).getPrompt({ name, ...(args === undefined ? {} : { arguments: args }) }));
        made.gets++;
        made.failedGets++;
        bump(made.getsByClient, id);
        bump(made.errorsByClient, id);
        bump(made.getsByPrompt, name);
    };

    await list('alice');
    await list('bob');
    await list('carol');
    // Interleaved rather than in blocks, as real traffic would be.
    const queue = GOOD_GETS.flatMap(([id, name, times]) => Array.from({ length: times }, (_, i) => ({ id, name, i })));
    queue.sort((a, b) => a.i - b.i);
    for (const { id, name } of queue) await get(id, name);
    for (const [id, name, args] of FAILING_GETS) await failingGet(id, name, args);
    await list('alice');

    await of('alice').complete({ ref: { type: 'ref/prompt', name: 'docs__with-required' }, argument: { name: 'topic', value: 'm' } });
    made.completions++;

    // docs announces a new prompt: one list_changed in, one out to each session.
    await get('bob', 'docs__emit-list-changed', { add: 'prompt-new' });
    await waitFor(() => CLIENTS.every(id => made.notified.get(id) === 1), 10_000, 'every session told about the new prompt');
    const names = await list('alice');
    made.docsPromptsListed = names.filter(name => name.startsWith('docs__')).length;
    made.codePromptsListed = names.filter(name => name.startsWith('code__')).length;
    assert.ok(names.includes('docs__prompt-new'));

    // Turned away before MCP: a wrong key.
    const wrongKey = await fetch(gatewayUrl, {
        method: 'POST',
        headers: { 'x-api-key': 'wrong-key-0123456789abcdef', 'content-type': 'application/json' },
        body: '{}'
    });
    assert.equal(wrongKey.status, 401);
    return made;
}

describe('dashboard in a browser: the numbers of /metrics, from the gateway alone', () => {
    let gateway: RunningGateway | undefined;
    const clients = new Map<ClientId, Client>();
    let browser: Browser | undefined;
    let page: Page;
    let log: PageLog;
    let made: Made;
    let trafficEnded: number;
    let shown: Sandwich;

    before(async () => {
        browser = await launchBrowser();
        gateway = await startTestGateway({
            auth: { mode: 'apiKey' },
            // With auth on, the dashboard is served apart (or behind metrics.bearerToken), never open on the MCP listener.
            metrics: { listen: { port: 0 } },
            limits: { rateLimit: { requestsPerSecond: 0, burst: 1 } },
            notifications: { debounceMs: 20, maxDelayMs: 100 },
            reconnect: { initialMs: 500, maxMs: 1000 },
            clients: [
                { id: 'alice', apiKey: keyOf('alice') },
                { id: 'bob', apiKey: keyOf('bob'), prompts: { deny: [DENIED] } },
                { id: 'carol', apiKey: keyOf('carol') }
            ],
            upstreams: [
                stdioFixture('docs', { prompts: 3 }, { timeoutMs: 5000 }),
                stdioFixture('code', { prompts: 2 }, { timeoutMs: 5000 }),
                // Fails to start at once (no such command), so it is hardly ever caught mid-attempt in state "connecting".
                { id: 'broken', transport: 'stdio', command: 'no-such-command-for-the-dashboard-test' }
            ]
        });
        const started = gateway;
        await waitFor(() => started.upstreams.filter(upstream => upstream.id !== 'broken').every(upstream => upstream.state === 'ready'), 20_000, 'docs and code ready');
        for (const id of CLIENTS) clients.set(id, await connectHttp(gateway.url!, { headers: { 'x-api-key': keyOf(id) } }));
        made = await makeTraffic(gateway.url!, clients);
        trafficEnded = Date.now();

        ({ page, log } = await openPage(browser));
        await page.goto(gateway.operatorUrls.dashboard!);
        await page.waitForSelector('body[data-state="ready"]', { timeout: 10_000 });
        await waitForDataAfter(page, trafficEnded);
        shown = await sandwich(page, gateway.operatorUrls.metrics!);
        mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
        await page.screenshot({ path: SCREENSHOT, fullPage: true });
    });

    after(async () => {
        await browser?.close();
        await Promise.all([...clients.values()].map(client => client.close()));
        await gateway?.close();
    });

    test('the page loads from the gateway alone: no other origin, no console error, no CSP violation', async () => {
        assertOwnOrigin(log, new URL(gateway!.operatorUrls.dashboard!).origin);
        assert.deepEqual(log.consoleErrors, []);
        assert.deepEqual(log.pageErrors, []);
        assert.deepEqual(await cspViolations(page), []);
        assert.equal(shown.page.state, 'ready');
        assert.equal(shown.page.connection, 'live');
        assert.ok(Date.parse(shown.page.generatedAt) > trafficEnded, 'the snapshot is of data generated after the traffic');
    });

    test("between the two scrapes only the broken upstream's reconnect attempts moved", () => {
        const still = (expected: Expected) => ({
            ...expected,
            upstreams: new Map([...expected.upstreams].map(([id, row]) => [id, id === 'broken' ? { ...row, reconnects: 0 } : row]))
        });
        assert.deepEqual(still(shown.after), still(shown.before));
    });

    test('summary tiles equal /metrics', () => {
        for (const key of TOTALS) {
            assert.equal(shownCount(shown.page.totals[key], `tile ${key}`), shown.before.totals[key], `tile ${key}`);
        }
    });

    test('each upstream row equals /metrics; the broken one is down', () => {
        const { before: expected, after: later, page: snapshot } = shown;
        assert.deepEqual(snapshot.upstreams.map(row => row.key).sort(), [...expected.upstreams.keys()].sort());
        assert.deepEqual(
            snapshot.upstreams.map(row => row.key),
            ['docs', 'code', 'broken'],
            'rows in the configured order'
        );
        for (const row of snapshot.upstreams) {
            const want = expected.upstreams.get(row.key)!;
            const what = (field: string) => `upstream ${row.key}: ${field}`;
            assert.equal(row.cells.state, want.state, what('state'));
            assert.equal(shownCount(row.cells.prompts, what('prompts')), want.prompts, what('prompts'));
            assert.equal(shownCount(row.cells.gets, what('gets')), want.gets, what('gets'));
            assert.equal(shownCount(row.cells.errors, what('errors')), want.errors, what('errors'));
            assert.equal(shownCount(row.cells['list-changed'], what('list-changed')), want.listChanged, what('list-changed'));
            assert.equal(shownCount(row.cells['input-rounds'], what('input-rounds')), want.inputRounds, what('input-rounds'));
            const reconnects = shownCount(row.cells.reconnects, what('reconnects'));
            const most = later.upstreams.get(row.key)!.reconnects;
            assert.ok(reconnects >= want.reconnects && reconnects <= most, `${what('reconnects')}: ${reconnects}, /metrics ${want.reconnects}..${most}`);
        }
        const broken = snapshot.upstreams.find(row => row.key === 'broken')!;
        assert.equal(broken.cells.state, 'down');
        assert.equal(broken.pillTitle, 'not up');
        assert.ok(expected.upstreams.get('broken')!.reconnects >= 1, 'the broken upstream has been retried');
        assert.equal(snapshot.upstreamCount, '2 of 3 up');
    });

    test('the broken upstream shows its last error', async () => {
        const broken = shown.page.upstreams.find(row => row.key === 'broken')!;
        // The same text /healthz gives for it.
        const health = (await (await fetch(new URL('/healthz', gateway!.operatorUrls.dashboard))).json()) as { upstreams: { id: string; error?: string }[] };
        const error = health.upstreams.find(upstream => upstream.id === 'broken')?.error;
        assert.ok(error !== undefined && error.length > 0, '/healthz gives the broken upstream an error');
        assert.equal(broken.lastError, error, 'last error of the broken upstream on the page');
        assert.ok(broken.lastErrorVisible, 'the last error is visible');
        for (const id of ['docs', 'code']) {
            const row = shown.page.upstreams.find(candidate => candidate.key === id)!;
            assert.equal(row.lastError, '');
            assert.ok(!row.lastErrorVisible);
        }
    });

    test('top prompts: gets and errors equal /metrics, ordered by gets; latency shown for successful gets', () => {
        const { before: expected, page: snapshot } = shown;
        assert.deepEqual(
            snapshot.prompts.map(row => row.key),
            expected.prompts.map(row => row.name),
            'rows and their order'
        );
        const gets = snapshot.prompts.map(row => shownCount(row.cells.gets, `${row.key} gets`));
        assert.deepEqual(
            gets,
            [...gets].sort((a, b) => b - a),
            'gets descending'
        );
        for (const [index, want] of expected.prompts.entries()) {
            const row = snapshot.prompts[index]!;
            const what = (field: string) => `prompt ${want.name}: ${field}`;
            assert.equal(row.cells.prompt, want.name, what('name'));
            assert.equal(row.cells.upstream, want.upstream, what('upstream'));
            assert.equal(shownCount(row.cells.gets, what('gets')), want.gets, what('gets'));
            assert.equal(shownCount(row.cells.errors, what('errors')), want.errors, what('errors'));
            for (const [field, ms] of [
                ['p50', want.p50Ms],
                ['p95', want.p95Ms]
            ] as const) {
                if (ms === null) assert.equal(row.cells[field], '–', `${what(field)}: no successful get, no latency`);
                else assertLatency(row.cells[field], ms, what(field));
            }
        }
        // The prompts that only ever failed show no latency; the others do.
        assert.ok(expected.prompts.some(row => row.p50Ms === null) && expected.prompts.some(row => row.p50Ms !== null));
    });

    test('client rows equal /metrics', () => {
        const { before: expected, page: snapshot } = shown;
        assert.deepEqual(snapshot.clients.map(row => row.key).sort(), [...expected.clients.keys()].sort());
        for (const row of snapshot.clients) {
            const want = expected.clients.get(row.key)!;
            assert.equal(row.cells.client, row.key);
            assert.equal(shownCount(row.cells.gets, `client ${row.key} gets`), want.gets, `client ${row.key} gets`);
            assert.equal(shownCount(row.cells.lists, `client ${row.key} lists`), want.lists, `client ${row.key} lists`);
            assert.equal(shownCount(row.cells.errors, `client ${row.key} errors`), want.errors, `client ${row.key} errors`);
        }
    });

    test('list_changed activity and the sparkline', () => {
        const { before: expected, page: snapshot } = shown;
        assert.ok(
            snapshot.activity.some(item => /received (?:[\d,]+ )?from docs$/.test(item)),
            `an item "received from docs" in ${JSON.stringify(snapshot.activity)}`
        );
        // However the sends were merged into items, they add up to the counter.
        const sent = snapshot.activity.map(item => /sent to (\d+) sessions?$/.exec(item)).reduce((total, match) => total + Number(match?.[1] ?? 0), 0);
        assert.equal(sent, expected.totals.listChangedSent);
        assert.ok(snapshot.chart.exists, 'svg[data-chart="prompt-gets"]');
        assert.notEqual(snapshot.chart.line, '', 'the sparkline has points');
        assert.match(snapshot.chart.caption, /^prompt gets per 5 s/);
    });

    test('cross-check with the traffic made: the same numbers counted on the client side', () => {
        const { before: expected, page: snapshot } = shown;
        const tile = (key: TotalKey) => shownCount(snapshot.totals[key], key);
        assert.equal(tile('promptGets'), made.gets);
        assert.equal(tile('promptGetErrors'), made.failedGets);
        assert.equal(tile('promptLists'), made.lists);
        assert.equal(tile('completions'), made.completions);
        assert.equal(tile('listChangedReceived'), 1);
        assert.equal(
            tile('listChangedSent'),
            [...made.notified.values()].reduce((a, b) => a + b, 0)
        );
        assert.equal(tile('rejected'), 1);
        assert.equal(tile('sessions'), CLIENTS.length);

        const upstream = (id: string, field: string) => shownCount(snapshot.upstreams.find(row => row.key === id)?.cells[field], `${id} ${field}`);
        const madeFor = (prefix: string) => [...made.getsByPrompt].filter(([name]) => name.startsWith(prefix)).reduce((total, [, n]) => total + n, 0);
        assert.equal(upstream('docs', 'gets'), madeFor('docs__') - 1, 'docs: its gets but the made-up docs__nope');
        assert.equal(upstream('code', 'gets'), madeFor('code__') - 1, 'code: its gets but the made-up code__prompt-999');
        assert.equal(upstream('docs', 'errors'), 1, 'docs: fail-internal');
        assert.equal(upstream('code', 'errors'), 0, "code: a denied get is not the upstream's fault");
        assert.equal(upstream('broken', 'gets'), 0);
        assert.equal(upstream('docs', 'prompts'), made.docsPromptsListed);
        assert.equal(upstream('code', 'prompts'), made.codePromptsListed);
        assert.equal(upstream('docs', 'list-changed'), 1);

        const top = snapshot.prompts[0]!;
        assert.equal(top.key, 'docs__prompt-000');
        assert.equal(shownCount(top.cells.gets, 'top gets'), made.getsByPrompt.get('docs__prompt-000'));
        for (const row of snapshot.prompts) assert.equal(shownCount(row.cells.gets, row.key), made.getsByPrompt.get(row.key), `${row.key} gets`);
        const denied = snapshot.prompts.find(row => row.key === DENIED)!;
        assert.equal(shownCount(denied.cells.errors, 'denied errors'), 1);

        for (const id of CLIENTS) {
            const row = snapshot.clients.find(candidate => candidate.key === id)!;
            assert.equal(shownCount(row.cells.gets, `${id} gets`), made.getsByClient.get(id) ?? 0, `${id} gets`);
            assert.equal(shownCount(row.cells.lists, `${id} lists`), made.listsByClient.get(id) ?? 0, `${id} lists`);
            assert.equal(shownCount(row.cells.errors, `${id} errors`), made.errorsByClient.get(id) ?? 0, `${id} errors`);
        }
        assert.equal(expected.prompts.length, made.getsByPrompt.size - 3, 'every prompt got but the three made-up names');
    });
});

// --- the second gateway: the metrics bearer token ---

describe('dashboard in a browser: behind the metrics bearer token', () => {
    const token = 'dash-token-0123456789abcdef';
    let gateway: RunningGateway | undefined;
    let browser: Browser | undefined;

    before(async () => {
        browser = await launchBrowser();
        gateway = await startTestGateway({ metrics: { bearerToken: token }, upstreams: [stdioFixture('solo', { prompts: 1 })] });
    });

    after(async () => {
        await browser?.close();
        await gateway?.close();
    });

    test('asks for the token, refuses a wrong one, shows the data with the right one', async () => {
        const { page, log } = await openPage(browser!);
        const form = page.locator('form[data-view="auth"]');
        const message = page.locator('[data-field="auth-message"]');
        await page.goto(gateway!.operatorUrls.dashboard!);

        await form.waitFor({ state: 'visible', timeout: 10_000 });
        assert.ok(await page.locator('main[data-view="main"]').isHidden(), 'no data view before the token');
        assert.equal(await page.locator('body').getAttribute('data-state'), 'loading');
        assert.match((await message.textContent()) ?? '', /protected by the metrics bearer token/);

        await page.fill('#auth-token', `${token}-wrong`);
        await page.click('form[data-view="auth"] button[type="submit"]');
        await waitForPage(page, `/not accepted/.test(document.querySelector('[data-field="auth-message"]').textContent)`, 'the wrong token refused');
        assert.ok(await form.isVisible(), 'the form again after a wrong token');
        assert.match((await message.getAttribute('class')) ?? '', /\bis-bad\b/);
        assert.equal(await page.inputValue('#auth-token'), '', 'the wrong token is cleared');
        assert.equal(await page.locator('body').getAttribute('data-state'), 'loading');

        const submitted = Date.now();
        await page.fill('#auth-token', token);
        await page.click('form[data-view="auth"] button[type="submit"]');
        await page.waitForSelector('body[data-state="ready"]', { timeout: 10_000 });
        await waitForDataAfter(page, submitted);
        assert.ok(await form.isHidden());
        const snapshot = await readDashboard(page);
        assert.equal(snapshot.connection, 'live');
        assert.deepEqual(
            snapshot.upstreams.map(row => [row.key, row.cells.state]),
            [['solo', 'ready']]
        );

        // Both refusals (no token, then the wrong one) are counted and shown; nothing else was refused.
        const families = await scrape(gateway!.operatorUrls.metrics!, { authorization: `Bearer ${token}` });
        assert.equal(value(families, 'mcp_gateway_requests_rejected_total', { reason: 'unauthorized' }), 2);
        assert.equal(shownCount(snapshot.totals.rejected, 'rejected'), 2);

        assertOwnOrigin(log, new URL(gateway!.operatorUrls.dashboard!).origin);
        // The two 401s are logged by Chromium as failed resource loads; nothing else may be.
        assert.equal(log.consoleErrors.length, 2, JSON.stringify(log.consoleErrors));
        for (const error of log.consoleErrors) assert.match(error, /status of 401/);
        assert.deepEqual(log.pageErrors, []);
        assert.deepEqual(await cspViolations(page), []);
    });
});
