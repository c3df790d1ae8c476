/**
 * The catalog page in a real browser against what a hostile or careless upstream sends (test/fixtures/
 * hostile-catalog-upstream.cjs): argument names named like Object.prototype's properties, a
 * description pages long, links with a user name, values Claude Code cannot pass by position. Each test checks the
 * page shows them as data, with no script error. (Content types named like Object.prototype's properties never reach
 * the page: the gateway refuses such a result; test/unit/catalog-render.test.ts covers the page's side.) The page's ordinary behaviour is test/catalog.test.ts's.
 *
 * CPU: one Chromium and one gateway for the file, one context per test; waits on the page's own state.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { RunningGateway } from '../src/gateway.js';
import { assertCleanPage, launchBrowser, openPage, waitForPage } from './browser.js';
import { ROOT, startTestGateway, upstreamsReady } from './helpers.js';

/** A bound for a loaded machine: a wait ends on the page's state, this only turns a hang into a failure. */
const PAGE_WAIT_MS = 15_000;

let browser: Browser;
let gateway: RunningGateway;

before(async () => {
    gateway = await startTestGateway({
        upstreams: [{ id: 'evil', transport: 'stdio', command: process.execPath, args: [path.join(ROOT, 'test/fixtures/hostile-catalog-upstream.cjs')], timeoutMs: 30_000 }]
    });
    await upstreamsReady(gateway);
    browser = await launchBrowser();
});

after(async () => {
    await browser?.close();
    await gateway?.close();
});

/** A fresh context with the page open at `hash` and ready; at the test's end the page must be clean (no script error, CSP violation or foreign request). */
async function openCatalog(t: TestContext, hash = ''): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    let checked: () => Promise<void> = async () => {};
    // One hook, as t.after runs hooks in the order they were added: the page is checked before its context closes.
    t.after(async () => {
        try {
            await checked();
        } finally {
            await context.close();
        }
    });
    const { page, log } = await openPage(context);
    checked = () => assertCleanPage(page, log, new URL(gateway.catalogUrl!).origin);
    await page.goto(`${gateway.catalogUrl!}${hash}`);
    await waitForPage(page, "document.body.dataset.state === 'ready'", 'the catalog ready', PAGE_WAIT_MS);
    return page;
}

const text = (page: Page, field: string) => page.locator(`[data-field="${field}"]`).innerText();

async function render(page: Page): Promise<void> {
    await page.getByRole('button', { name: 'Render', exact: true }).click();
    await waitForPage(page, `!/Rendering/.test(document.querySelector('[data-field="render-status"]').textContent)`, 'the render done', PAGE_WAIT_MS);
}

test('arguments named constructor, toString and __proto__ start empty and are sent as typed', async t => {
    const page = await openCatalog(t, `#prompt=${encodeURIComponent('evil__protos')}`);
    const inputs = page.locator('[data-form="arguments"] textarea');
    assert.equal(await inputs.count(), 4);
    for (const input of await inputs.all()) assert.equal(await input.inputValue(), '', `${await input.getAttribute('name')} starts empty`);
    for (const input of await inputs.all()) await input.fill(`v-${await input.getAttribute('name')}`);
    await render(page);
    assert.equal(await text(page, 'render-error'), '');
    const echoed = JSON.parse((await page.locator('[data-list="messages"] pre').innerText()).replace(/^ARGS /, '')) as Record<string, string>;
    assert.deepEqual(
        Object.entries(echoed).sort(([a], [b]) => (a < b ? -1 : 1)),
        [
            ['__proto__', 'v-__proto__'],
            ['constructor', 'v-constructor'],
            ['plain', 'v-plain'],
            ['toString', 'v-toString']
        ]
    );
});

test('a link is shown by the href it goes to; one with a user name or password is text', async t => {
    const page = await openCatalog(t, `#prompt=${encodeURIComponent('evil__links')}`);
    await render(page);
    assert.equal(await page.locator('[data-list="messages"] span[data-field="resource-uri"]').count(), 2, 'the two with a user name stay text');
    const link = page.locator('[data-list="messages"] a[data-field="resource-uri"]');
    assert.equal(await link.count(), 1);
    assert.equal(await link.innerText(), 'https://example.com/a%20b');
    assert.equal(await link.getAttribute('href'), 'https://example.com/a%20b');
});

test('a long description is three lines in the list and whole in the prompt view', async t => {
    const page = await openCatalog(t, `#prompt=${encodeURIComponent('evil__big')}`);
    // A string, not a function: tsx would wrap a function's inner arrows in a helper the page does not have.
    const heights = await page.evaluate<{ description: number; argument: number; full: number }>(`(() => {
        const row = document.querySelector('li[data-prompt="evil__big"]');
        const lines = node => node.clientHeight / Number.parseFloat(getComputedStyle(node).lineHeight);
        return {
            description: lines(row.querySelector('[data-field="description"]')),
            argument: lines(row.querySelector('li[data-argument="a"]')),
            full: lines(document.querySelector('[data-field="prompt-description"]'))
        };
    })()`);
    assert.ok(heights.description <= 3.05, `row description: ${heights.description} lines`);
    assert.ok(heights.argument <= 3.05, `row argument: ${heights.argument} lines`);
    assert.ok(heights.full > 20, `the prompt view shows it whole: ${heights.full} lines`);
});

test('Copy for Claude Code says when Claude Code cannot pass the values as they are', async t => {
    const page = await openCatalog(t, `#prompt=${encodeURIComponent('evil__order')}`);
    // The optional first argument left empty: the filled second would take its place.
    await page.locator('textarea[name="diff"]').fill('fix');
    await page.getByRole('button', { name: 'Copy for Claude Code', exact: true }).click();
    await waitForPage(page, `document.querySelector('[data-field="copy-status"]').textContent !== ''`, 'a copy status', PAGE_WAIT_MS);
    assert.match(await text(page, 'copy-status'), /Claude Code cannot pass these values as they are.*Inspector.*VS Code/s);
    await page.locator('textarea[name="language"]').fill('python');
    await page.getByRole('button', { name: 'Copy for Claude Code', exact: true }).click();
    await waitForPage(page, `!/cannot pass/.test(document.querySelector('[data-field="copy-status"]').textContent)`, 'the caveat gone', PAGE_WAIT_MS);
    const copied = await page.evaluate<string>(`document.querySelector('.copy-fallback')?.value ?? navigator.clipboard.readText()`);
    assert.equal(copied, '/mcp__prompts__evil__order python fix');
});
