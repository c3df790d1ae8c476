/**
 * A screenshot of the prompt catalog for the README (docs/catalog.png):
 *
 *   node --import tsx scripts/catalog-screenshot.ts docs/catalog.png
 *
 * Starts a gateway in this process serving the repository's example prompts (examples/prompts as `team`, and one
 * folder of each other tool's format in examples/formats), opens /catalog at 1280x800, picks team__code-review,
 * fills its arguments (one through a completion, as a user would), renders it and photographs the page once it is
 * live. Nothing is random: runs look alike.
 *
 * The browser is the one the tests use (test/browser.ts): the Chromium of @sparticuz/chromium, or CHROMIUM_PATH.
 */
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../test/browser.js';
import { ROOT, startTestGateway, upstreamsReady, waitFor } from '../test/helpers.js';
import type { RunningGateway } from '../src/gateway.js';

const VIEWPORT = { width: 1280, height: 800 };
const PROMPT = 'team__code-review';
const FORMATS = ['claude-commands', 'codex-prompts', 'vscode-prompts', 'gemini-commands', 'skills'] as const;

async function main(out: string): Promise<void> {
    let gateway: RunningGateway | undefined;
    let browser: Browser | undefined;
    try {
        gateway = await startTestGateway({
            upstreams: [
                { id: 'team', transport: 'files', path: path.join(ROOT, 'examples/prompts') },
                ...FORMATS.map(format => ({ id: format.split('-')[0], transport: 'files', path: path.join(ROOT, 'examples/formats', format), format }))
            ]
        });
        await upstreamsReady(gateway);
        browser = await launchBrowser();
        const page = await browser.newPage({ viewport: VIEWPORT, deviceScaleFactor: 1, colorScheme: 'light' });
        await page.goto(`${gateway.catalogUrl!}#prompt=${encodeURIComponent(PROMPT)}`);
        await page.waitForSelector('body[data-state="ready"]', { timeout: 10_000 });
        await page.waitForSelector('body[data-live="listening"]', { timeout: 10_000 });
        await page.locator(`section[data-view="prompt"][data-prompt="${PROMPT}"]`).waitFor({ timeout: 10_000 });

        const input = (name: string) => page.locator(`form[data-form="arguments"] [name="${name}"]`);
        await input('diff').fill('-    return cache.get(id);\n+    return cache.get(id) ?? load(id);');
        // The language through its completions, as a user picks it.
        await input('language').pressSequentially('ty');
        await page.getByRole('option', { name: 'typescript', exact: true }).waitFor({ timeout: 10_000 });
        await input('language').press('ArrowDown');
        await input('language').press('Enter');
        await input('focus').fill('correctness');
        await page.getByRole('button', { name: 'Render', exact: true }).click();
        await page.locator('section[data-view="result"] ol[data-list="messages"] > li').first().waitFor({ timeout: 10_000 });
        // Settled: no completion list left open over the form.
        await waitFor(async () => (await page.locator('[role="listbox"]:visible').count()) === 0, 10_000, 'completions closed');

        mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
        await page.screenshot({ path: out });
        const bytes = statSync(out).size;
        console.log(`${out}: ${VIEWPORT.width}x${VIEWPORT.height}, ${(bytes / 1024).toFixed(0)} KiB`);
    } finally {
        await browser?.close();
        await gateway?.close();
    }
}

const out = process.argv[2];
if (out === undefined) {
    console.error('usage: node --import tsx scripts/catalog-screenshot.ts <out.png>');
    process.exitCode = 2;
} else {
    await main(out);
}
