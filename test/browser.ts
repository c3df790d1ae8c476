/**
 * The one way the tests and scripts get a browser: CHROMIUM_PATH when set (any Chromium or Chrome), else the
 * Chromium that the npm package @sparticuz/chromium ships inside itself, so `npm ci` alone brings one (no system
 * package, no browser download). playwright-core drives either. Below that, the helpers every browser test uses to open
 * a page that records what it logged and asked for, to wait on its state, and to check it stayed clean.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type LaunchOptions, type Page } from 'playwright-core';
import { waitFor } from './helpers.js';

const PACKAGE = '@sparticuz/chromium';

/**
 * This user's own folder in the temp folder, made if missing. The browser is run from it, so no one else may be able
 * to write there: a fixed name shared by all users could be made first by another local user and filled with their
 * own binary. The name holds the uid, and the folder is used only if it is a real folder of this user's that neither
 * group nor others can write to (uids and modes are POSIX; elsewhere the temp folder is the user's own already).
 */
function privateFolder(): string {
    const uid = process.getuid?.();
    const folder = path.join(tmpdir(), `mcp-gateway-${uid ?? 'user'}`);
    try {
        mkdirSync(folder, { mode: 0o700 });
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const stat = lstatSync(folder);
    if (!stat.isDirectory() || (uid !== undefined && (stat.uid !== uid || (stat.mode & 0o022) !== 0))) {
        throw new Error(`${folder} is not a folder of this user's that only this user can write to: remove it, or set CHROMIUM_PATH`);
    }
    return folder;
}

/**
 * The packaged Chromium, unpacked once per user and version into privateFolder(). The package itself unpacks to
 * fixed names in TMPDIR and checks only that the binary exists, so two runs at once could launch a half-written
 * binary: it unpacks into a private folder here (a child process with its own TMPDIR), which is then renamed into
 * place in one step; whoever renames second throws its copy away.
 */
function unpackedChromium(): { executable: string; fontsConfig: string } {
    const entry = fileURLToPath(import.meta.resolve(PACKAGE));
    const root = path.resolve(path.dirname(entry), '..');
    const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
    const home = path.join(privateFolder(), `chromium-${version}`);
    const found = { executable: path.join(home, 'chromium'), fontsConfig: path.join(home, 'fonts.conf') };
    if (existsSync(found.fontsConfig)) return found;

    const staging = mkdtempSync(`${home}.partial-`);
    try {
        const unpack = `const { default: chromium } = await import(${JSON.stringify(entry)}); await chromium.executablePath();`;
        execFileSync(process.execPath, ['--input-type=module', '-e', unpack], { env: { ...process.env, TMPDIR: staging }, stdio: ['ignore', 'ignore', 'inherit'] });
        // The package's own fonts.conf names /tmp/fonts; this one names the fonts it shipped wherever they landed, and
        // the system's fonts after them when there are any (the package's Open Sans alone is enough to read the page).
        writeFileSync(
            path.join(staging, 'fonts.conf'),
            `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
                `  <dir>${path.join(home, 'fonts')}</dir>\n  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n` +
                `  <cachedir>${path.join(home, 'fonts-cache')}</cachedir>\n</fontconfig>\n`
        );
        renameSync(staging, home);
    } catch (error) {
        rmSync(staging, { recursive: true, force: true });
        // Renamed by someone else in the meantime: theirs is as good as ours.
        if (!existsSync(found.fontsConfig)) throw error;
    }
    return found;
}

/** What to launch: CHROMIUM_PATH, or the packaged Chromium with its fonts. */
function launchOptions(): LaunchOptions {
    const override = process.env.CHROMIUM_PATH;
    if (override !== undefined && override !== '') {
        if (!existsSync(override)) throw new Error(`CHROMIUM_PATH=${override}: no such file. Unset it to use the Chromium of ${PACKAGE}.`);
        return { executablePath: override };
    }
    const { executable, fontsConfig } = unpackedChromium();
    return { executablePath: executable, env: { ...process.env, FONTCONFIG_FILE: fontsConfig } };
}

/** A headless Chromium; close it when done. */
export async function launchBrowser(): Promise<Browser> {
    return chromium.launch({ ...launchOptions(), headless: true });
}

/** What a page logged and asked for, to check it used the gateway's origin only and broke no rule. */
export interface PageLog {
    consoleErrors: string[];
    pageErrors: string[];
    requests: string[];
}

/** Records `securitypolicyviolation` events from the first script on, in case one is not logged to the console. */
const RECORD_CSP_VIOLATIONS = `
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', event => {
        window.__cspViolations.push(event.violatedDirective + ' ' + event.blockedURI);
    });
`;

const DEFAULT_VIEWPORT = { width: 1440, height: 900 };

/**
 * A new page that records its console errors, page errors, requests and CSP violations. On a Browser it is a page
 * of its own new context (closed with the page); on a BrowserContext it is one more page of that context.
 */
export async function openPage(owner: Browser | BrowserContext, options: BrowserContextOptions = {}): Promise<{ page: Page; log: PageLog }> {
    const page = 'newContext' in owner ? await owner.newPage({ viewport: DEFAULT_VIEWPORT, ...options }) : await owner.newPage();
    const log: PageLog = { consoleErrors: [], pageErrors: [], requests: [] };
    page.on('console', message => {
        if (message.type() === 'error') log.consoleErrors.push(message.text());
    });
    page.on('pageerror', error => log.pageErrors.push(String(error)));
    page.on('request', request => log.requests.push(request.url()));
    await page.addInitScript({ content: RECORD_CSP_VIOLATIONS });
    return { page, log };
}

export async function cspViolations(page: Page): Promise<string[]> {
    return page.evaluate<string[]>('window.__cspViolations');
}

export function assertOwnOrigin(log: PageLog, origin: string): void {
    assert.ok(log.requests.length > 0, 'the page made no request at all');
    const foreign = log.requests.filter(url => new URL(url).origin !== origin);
    assert.deepEqual(foreign, [], `requests to anything but the gateway (${origin})`);
}

/**
 * The page stayed clean: only requests to `origin`, no page error, no CSP violation, and no console error but
 * `expected` (Chromium logs a refused fetch, e.g. a 401 or 429, as a failed resource load): each pattern is matched
 * by exactly one console error, in any order.
 */
export async function assertCleanPage(page: Page, log: PageLog, origin: string, expected: readonly RegExp[] = []): Promise<void> {
    assertOwnOrigin(log, origin);
    const unmatched = [...log.consoleErrors];
    for (const pattern of expected) {
        const index = unmatched.findIndex(text => pattern.test(text));
        assert.ok(index >= 0, `a console error matching ${pattern} in ${JSON.stringify(log.consoleErrors)}`);
        unmatched.splice(index, 1);
    }
    assert.deepEqual(unmatched, [], 'console errors');
    assert.deepEqual(log.pageErrors, [], 'page errors');
    assert.deepEqual(await cspViolations(page), [], 'CSP violations');
}

/**
 * Polled from here: page.waitForFunction with a string predicate evals in the page, which a CSP without
 * 'unsafe-eval' rightly refuses; page.evaluate goes through the DevTools protocol instead.
 */
export async function waitForPage(page: Page, expression: string, what: string, ms = 10_000): Promise<void> {
    await waitFor(async () => (await page.evaluate<unknown>(expression)) === true, ms, what);
}
