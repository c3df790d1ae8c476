/**
 * A screenshot of the dashboard with some life in it, for the README (docs/dashboard.png):
 *
 *   node --import tsx scripts/dashboard-screenshot.ts docs/dashboard.png
 *
 * Starts a gateway in this process with three clients and three upstreams (an HTTP fixture, a stdio fixture, and
 * one that is never reachable), sends ~30 s of made-up traffic in bursts (a few hundred gets with a seeded random
 * spread, some failing), has the HTTP upstream announce a new prompt, then photographs /dashboard at 1280x800
 * while a trickle of traffic goes on. The mix is seeded, so runs look alike; exact counts follow the timing.
 *
 * The browser is the one the tests use (test/browser.ts): the Chromium of @sparticuz/chromium, or CHROMIUM_PATH.
 */
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../test/browser.js';
import { connectHttp, freePort, sleep, startHttpFixture, startTestGateway, stdioFixture, waitFor, type HttpFixture } from '../test/helpers.js';
import type { RunningGateway } from '../src/gateway.js';

const VIEWPORT = { width: 1280, height: 800 };
/** Gets per second in each 5 s stretch: the sparkline's shape (the dashboard samples every 5 s). */
const RATES = [8, 18, 6, 24, 12, 9];
const TICK_MS = 200;
const keyOf = (clientId: string) => `screenshot-key-${clientId}-0123456789abcdef`;
/** With auth on, the dashboard is served on the MCP listener only behind metrics.bearerToken (operator-access.ts). */
const METRICS_TOKEN = 'screenshot-metrics-token-0123456789abcdef';
/** Where the page keeps the token it was given (dashboard.js). */
const TOKEN_KEY = 'mcp-prompt-gateway.metrics-token';

const CLIENTS = [
    { id: 'web-app', weight: 5 },
    { id: 'ci-pipeline', weight: 3 },
    { id: 'notebook', weight: 2 }
] as const;
type ClientId = (typeof CLIENTS)[number]['id'];
/** notebook may not use it: its tries are counted as denied. */
const DENIED_TO_NOTEBOOK = 'code__write-tests';

/** Prompt weights per client: who asks for what, most for a few. */
const PROMPTS: Record<ClientId, [string, number][]> = {
    'web-app': [
        ['docs__summarize-page', 30],
        ['docs__explain-api', 18],
        ['code__explain-error', 14],
        ['docs__translate', 12],
        ['code__review-diff', 6]
    ],
    'ci-pipeline': [
        ['code__review-diff', 40],
        ['code__write-tests', 20],
        ['code__explain-error', 8]
    ],
    notebook: [
        ['docs__summarize-page', 10],
        ['code__explain-error', 10],
        ['docs__explain-api', 6],
        [DENIED_TO_NOTEBOOK, 1]
    ]
};

/** Seeded, so every run sends the same mix (mulberry32). */
function random(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

function pick<T>(choices: readonly (readonly [T, number])[], next: () => number): T {
    const total = choices.reduce((sum, [, weight]) => sum + weight, 0);
    let roll = next() * total;
    for (const [choice, weight] of choices) {
        roll -= weight;
        if (roll < 0) return choice;
    }
    return choices[choices.length - 1]![0];
}

async function main(out: string): Promise<void> {
    const next = random(20_250_901);
    const sent = { gets: 0, failed: 0, lists: 0, completions: 0 };
    let docs: HttpFixture | undefined;
    let gateway: RunningGateway | undefined;
    const clients = new Map<ClientId, Client>();
    let announcer: Client | undefined;
    let browser: Browser | undefined;
    try {
        docs = await startHttpFixture('streamable-http', {
            name: 'docs',
            prompts: 0,
            extraPrompts: ['summarize-page', 'explain-api', { name: 'translate', arguments: [{ name: 'language', required: true }] }]
        });
        gateway = await startTestGateway({
            auth: { mode: 'apiKey' },
            metrics: { bearerToken: METRICS_TOKEN },
            limits: { rateLimit: { requestsPerSecond: 0, burst: 1 } },
            notifications: { debounceMs: 20, maxDelayMs: 100 },
            reconnect: { initialMs: 1000, maxMs: 5000 },
            clients: CLIENTS.map(({ id }) => ({ id, apiKey: keyOf(id), ...(id === 'notebook' ? { prompts: { deny: [DENIED_TO_NOTEBOOK] } } : {}) })),
            upstreams: [
                { id: 'docs', transport: 'streamable-http', url: docs.url },
                stdioFixture('code', { name: 'code', prompts: 0, extraPrompts: ['review-diff', 'explain-error', 'write-tests'] }),
                // Nothing listens there: the dashboard shows it down, retrying.
                { id: 'search', transport: 'streamable-http', url: `http://127.0.0.1:${await freePort()}/mcp` }
            ]
        });
        const running = gateway;
        await waitFor(() => running.upstreams.filter(upstream => upstream.id !== 'search').every(upstream => upstream.state === 'ready'), 20_000, 'docs and code ready');
        for (const { id } of CLIENTS) clients.set(id, await connectHttp(running.url!, { headers: { 'x-api-key': keyOf(id) } }));
        // A client of the docs server itself, not of the gateway: it makes docs announce new prompts.
        announcer = await connectHttp(docs.url);

        const list = async (id: ClientId) => {
            sent.lists++;
            await clients.get(id)!.request({ method: 'prompts/list', params: {} });
        };
        const oneGet = async () => {
            const id = pick(
                CLIENTS.map(client => [client.id, client.weight] as const),
                next
            );
            let name = pick(PROMPTS[id], next);
            const roll = next();
            // Now and then a typo, or a translation without its language.
            if (roll < 0.015) name = name.replace('__', '__x-');
            const args = name === 'docs__translate' && roll > 0.12 ? { language: 'de' } : undefined;
            sent.gets++;
            try {
                await clients.get(id)!.getPrompt({ name, ...(args === undefined ? {} : { arguments: args }) });
            } catch {
                sent.failed++;
            }
        };
        for (const { id } of CLIENTS) await list(id);

        const started = Date.now();
        const announced = new Set<number>();
        for (let elapsed = 0; elapsed < RATES.length * 5000; elapsed = Date.now() - started) {
            const rate = RATES[Math.floor(elapsed / 5000)]!;
            const burst = Math.max(0, Math.round(rate * (TICK_MS / 1000) * (0.4 + next() * 1.2)));
            const work: Promise<void>[] = Array.from({ length: burst }, () => oneGet());
            if (next() < 0.08)
                work.push(
                    list(
                        pick(
                            CLIENTS.map(client => [client.id, client.weight] as const),
                            next
                        )
                    )
                );
            if (next() < 0.05) {
                sent.completions++;
                work.push(
                    clients
                        .get('web-app')!
                        .complete({ ref: { type: 'ref/prompt', name: 'docs__translate' }, argument: { name: 'language', value: 'd' } })
                        .then(() => undefined)
                );
            }
            // Once docs gets a new prompt (one event in, one out: the activity list fits the picture); once a caller with a
            // stale key is turned away.
            if (elapsed >= 13_000 && !announced.has(13_000)) {
                announced.add(13_000);
                work.push(announcer.getPrompt({ name: 'emit-list-changed', arguments: { add: 'onboarding-guide' } }).then(() => undefined));
            }
            if (elapsed >= 16_000 && !announced.has(16_000)) {
                announced.add(16_000);
                work.push(
                    fetch(running.url!, { method: 'POST', headers: { 'x-api-key': 'stale-key-0123456789abcdef', 'content-type': 'application/json' }, body: '{}' }).then(
                        () => undefined
                    )
                );
            }
            await Promise.all(work);
            await sleep(Math.max(0, TICK_MS - ((Date.now() - started) % TICK_MS)));
        }

        // A trickle goes on while the page loads, as on a live gateway.
        let trickling = true;
        const trickle = (async () => {
            while (trickling) {
                await oneGet();
                await sleep(400);
            }
        })();
        try {
            browser = await launchBrowser();
            const page = await browser.newPage({ viewport: VIEWPORT, deviceScaleFactor: 1, colorScheme: 'light' });
            // As if the operator had entered the token once in this tab.
            await page.addInitScript({ content: `sessionStorage.setItem(${JSON.stringify(TOKEN_KEY)}, ${JSON.stringify(METRICS_TOKEN)});` });
            const dashboardUrl = running.operatorUrls.dashboard;
            if (dashboardUrl === undefined) throw new Error('the dashboard is not served: see the withheld reason in the start-up log');
            await page.goto(dashboardUrl);
            await page.waitForSelector('body[data-state="ready"]', { timeout: 10_000 });
            // The second poll: the page has settled (chart sized, rows in order).
            const first = await page.getAttribute('body', 'data-generated-at');
            await waitFor(async () => (await page.getAttribute('body', 'data-generated-at')) !== first, 10_000, 'the next poll');
            mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
            await page.screenshot({ path: out });
        } finally {
            trickling = false;
            await trickle;
        }
        const bytes = statSync(out).size;
        console.log(`${out}: ${VIEWPORT.width}x${VIEWPORT.height}, ${(bytes / 1024).toFixed(0)} KiB`);
        console.log(`sent ${sent.gets} gets (${sent.failed} failed), ${sent.lists} lists, ${sent.completions} completions`);
    } finally {
        await browser?.close();
        await Promise.all([...clients.values(), ...(announcer === undefined ? [] : [announcer])].map(client => client.close()));
        await gateway?.close();
        await docs?.close();
    }
}

const out = process.argv[2];
if (out === undefined) {
    console.error('usage: node --import tsx scripts/dashboard-screenshot.ts <out.png>');
    process.exitCode = 2;
} else {
    await main(out);
}
