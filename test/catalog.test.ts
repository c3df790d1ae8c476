/**
 * The prompt catalog page (GET /catalog) in a real browser: it lists what the visitor may use, searches, filters,
 * renders a prompt with arguments and completions, shows every content type and every error with its message,
 * gives copy texts, follows list changes live, works with the keyboard alone and on a phone, and with auth on asks
 * for a credential, keeps it in the tab's session storage only and shows exactly that client's view.
 *
 * The page is an MCP client of the gateway: what it should show is read from an SDK client of the same endpoint
 * (never from the page's own requests). The HTTP side (headers, paths, Host/Origin, disabled) is
 * test/catalog-http.test.ts.
 *
 * CPU is what CI runs short of: one Chromium for the whole file, one context per test (fresh session storage), one
 * gateway per describe, files upstreams but one stdio fixture (the content types and the upstream errors), waits on
 * page state only.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { SignJWT } from 'jose';
import type { Browser, BrowserContext, BrowserContextOptions, Page, Request, Response } from 'playwright-core';
import type { RunningGateway } from '../src/gateway.js';
import { assertCleanPage, cspViolations, launchBrowser, openPage, waitForPage, type PageLog } from './browser.js';
import { connectModernHttp, rpcError, startTestGateway, stdioFixture, upstreamsReady, waitFor } from './helpers.js';

const STORAGE_KEY = 'mcp-prompt-gateway.catalog-credential';
const FAST_NOTIFICATIONS = { debounceMs: 20, maxDelayMs: 100 };
/** A bound for a loaded machine: a wait ends on the page's state, this only turns a hang into a failure. */
const PAGE_WAIT_MS = 15_000;

let browser: Browser;
const folders: string[] = [];

before(async () => {
    browser = await launchBrowser();
});

after(async () => {
    await browser?.close();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

// ---------------------------------------------------------------- fixtures

/** A folder of prompt files (the gateway's Markdown format), removed after the file's tests. */
function promptFolder(files: Record<string, string>): string {
    const folder = mkdtempSync(path.join(tmpdir(), 'catalog-test-'));
    folders.push(folder);
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(folder, name), text);
    return folder;
}

const CODE_REVIEW = `---
title: Code review
description: Review a change the way our team does.
arguments:
  - name: diff
    description: The change to review
    required: true
  - name: language
    description: Programming language of the change
    values: [typescript, python, go]
---
Review this {{language}} change:

{{diff}}
`;

const summarize = (description: string) => `---
title: Summarize
description: ${description}
arguments:
  - name: text
    description: What to summarize
    required: true
---
Summarize in three bullets: {{text}}
`;
const SUMMARIZE_DESCRIPTION = 'Condense any text into three bullet points.';

const plain = (title: string, body: string) => `---\ntitle: ${title}\n---\n${body}\n`;
/** Long enough to overflow a phone's width unless it wraps. */
const LONG_NAME = 'handover-checklist-for-the-weekend-on-call-rotation-with-every-step-written-out';

// ---------------------------------------------------------------- what the gateway says (SDK client)

interface Prompt {
    name: string;
    title?: string;
    description?: string;
    arguments?: { name: string; description?: string; required?: boolean }[];
}

async function listAll(client: Client): Promise<Prompt[]> {
    const prompts: Prompt[] = [];
    let cursor: string | undefined;
    do {
        const page = await client.request({ method: 'prompts/list', params: cursor === undefined ? {} : { cursor } });
        prompts.push(...page.prompts);
        cursor = page.nextCursor;
    } while (cursor !== undefined);
    return prompts;
}

/** The text the catalog shows as a prompt's upstream: before the first separator, else "(no prefix)". */
const upstreamOf = (name: string) => (name.includes('__') ? name.slice(0, name.indexOf('__')) : '(no prefix)');

/** The catalog's search, as the contract states it: every term, case-insensitive, in name, title, description or argument names. */
function matches(prompt: Prompt, query: string): boolean {
    const haystack = [prompt.name, prompt.title ?? '', prompt.description ?? '', ...(prompt.arguments ?? []).map(argument => argument.name)].join('\n').toLowerCase();
    return query
        .toLowerCase()
        .split(/\s+/)
        .filter(term => term !== '')
        .every(term => haystack.includes(term));
}

const countText = (shown: number, total: number) => (shown === total ? `${total} prompts` : `${shown} of ${total} prompts`);

// ---------------------------------------------------------------- reading the page

interface Row {
    name: string;
    shownName: string;
    title: string | null;
    description: string | null;
    upstream: string;
    arguments: { name: string; text: string; required: boolean }[];
}

// Strings, not functions: the project's typecheck has no DOM types, and tsx (esbuild's keepNames) would put
// `__name(...)` calls into a serialized function, which the page does not define.
const READ_ROWS = `(() => {
    const text = node => (node ? node.textContent : '').trim();
    const own = (row, field) => Array.from(row.querySelectorAll('[data-field="' + field + '"]')).find(node => !node.closest('[data-argument]'));
    const optional = node => (node ? text(node) : null);
    return Array.from(document.querySelectorAll('ul[data-list="prompts"] > li[data-prompt]'), row => ({
        name: row.dataset.prompt,
        shownName: text(own(row, 'name')),
        title: optional(own(row, 'title')),
        description: optional(own(row, 'description')),
        upstream: text(own(row, 'upstream')),
        arguments: Array.from(row.querySelectorAll('ul[data-field="arguments"] > li[data-argument]'), item => ({
            name: item.dataset.argument,
            text: text(item),
            required: text(item.querySelector('[data-field="required"]')) === 'required'
        }))
    }));
})()`;

const READ_NAMES = `Array.from(document.querySelectorAll('ul[data-list="prompts"] > li[data-prompt]'), row => row.dataset.prompt)`;
const field = (name: string) => `(document.querySelector('[data-field="${name}"]') || { textContent: '' }).textContent.trim()`;
const CHANGES = `Array.from(document.querySelectorAll('ol[data-list="changes"] > li'), item => item.textContent.trim())`;

interface Message {
    role: string;
    content: string;
    text: string;
    pre: string[];
    links: string[];
    images: { src: string; alt: string }[];
    audio: string[];
}

const READ_MESSAGES = `Array.from(document.querySelectorAll('section[data-view="result"] ol[data-list="messages"] > li'), item => ({
    role: item.dataset.role,
    content: item.dataset.content,
    text: item.textContent,
    pre: Array.from(item.querySelectorAll('pre'), node => node.textContent),
    links: Array.from(item.querySelectorAll('a'), node => node.getAttribute('href')),
    images: Array.from(item.querySelectorAll('img'), node => ({ src: node.getAttribute('src'), alt: node.getAttribute('alt') })),
    audio: Array.from(item.querySelectorAll('audio'), node => node.getAttribute('src'))
}))`;

/** Polls `expression` in the page until `ok` holds; fails with the last value seen. */
async function until<T>(page: Page, expression: string, ok: (value: T) => boolean, what: string): Promise<T> {
    let last: T | undefined;
    try {
        await waitFor(async () => ok((last = await page.evaluate<T>(expression))), PAGE_WAIT_MS, what);
    } catch {
        assert.fail(`timed out waiting for ${what}; last seen: ${JSON.stringify(last)}`);
    }
    return last as T;
}

const untilEqual = <T>(page: Page, expression: string, expected: T, what: string) => until<T>(page, expression, value => JSON.stringify(value) === JSON.stringify(expected), what);

const untilText = (page: Page, name: string, pattern: RegExp, what = `[data-field="${name}"] to match ${pattern}`) =>
    until<string>(page, field(name), value => pattern.test(value), what);

const state = (page: Page) => page.evaluate<string>('document.body.dataset.state');

async function untilState(page: Page, wanted: string): Promise<void> {
    await until<string>(page, 'document.body.dataset.state', value => value === wanted || value === 'error', `data-state="${wanted}"`);
    if ((await state(page)) === 'error') assert.fail(`data-state="error": ${await page.evaluate<string>(field('page-error'))}`);
}

const untilListening = (page: Page) => until<string>(page, 'document.body.dataset.live', value => value === 'listening', 'data-live="listening"');

// ---------------------------------------------------------------- driving the page

interface Opened {
    context: BrowserContext;
    page: Page;
    log: PageLog;
}

/** A page in a context of its own (fresh session storage), closed when the test ends. */
async function newTab(t: TestContext, options: BrowserContextOptions = {}): Promise<Opened> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
    t.after(() => context.close());
    const { page, log } = await openPage(context);
    return { context, page, log };
}

async function openCatalog(t: TestContext, url: string, options: BrowserContextOptions = {}): Promise<Opened> {
    const opened = await newTab(t, options);
    await opened.page.goto(url);
    await untilState(opened.page, 'ready');
    return opened;
}

const row = (page: Page, name: string) => page.locator(`ul[data-list="prompts"] > li[data-prompt="${name}"]`);

/** Opens a prompt from its row and waits for its view. */
async function openPrompt(page: Page, name: string): Promise<void> {
    await row(page, name).locator('button[data-action="open"]').click();
    await page.locator(`section[data-view="prompt"][data-prompt="${name}"]`).waitFor({ state: 'visible', timeout: PAGE_WAIT_MS });
}

const renderButton = (page: Page) => page.getByRole('button', { name: 'Render', exact: true });

/** Clicks Render and waits for messages or an error, whichever the page shows. */
async function render(page: Page): Promise<void> {
    await page.evaluate(`(() => {
        const result = document.querySelector('section[data-view="result"] ol[data-list="messages"]');
        if (result) result.replaceChildren();
        const alert = document.querySelector('[data-field="render-error"]');
        if (alert) alert.textContent = '';
    })()`);
    await renderButton(page).click();
    await until<boolean>(
        page,
        `document.querySelectorAll('section[data-view="result"] ol[data-list="messages"] > li').length > 0 || ${field('render-error')} !== ''`,
        shown => shown,
        'a rendered result or a render error'
    );
}

/** An expression of `node`, the argument field named `name`. */
const onField = (name: string, expression: string) => `(node => ${expression})(document.querySelector('[data-form="arguments"] [name="${name}"]'))`;

const messages = (page: Page) => page.evaluate<Message[]>(READ_MESSAGES);
const renderError = (page: Page) => page.evaluate<string>(field('render-error'));
const rows = (page: Page) => page.evaluate<Row[]>(READ_ROWS);

/** The rows equal what the SDK client listed: names in order, title, description, upstream and arguments. */
function assertRowsEqual(shown: readonly Row[], expected: readonly Prompt[]): void {
    assert.deepEqual(
        shown.map(item => item.name),
        expected.map(prompt => prompt.name),
        'rows, in list order'
    );
    for (const [index, prompt] of expected.entries()) {
        const item = shown[index]!;
        const what = (part: string) => `${prompt.name}: ${part}`;
        assert.equal(item.shownName, prompt.name, what('name'));
        assert.equal(item.title ?? '', prompt.title ?? '', what('title'));
        assert.equal(item.description ?? '', prompt.description ?? '', what('description'));
        assert.equal(item.upstream, upstreamOf(prompt.name), what('upstream'));
        assert.deepEqual(
            item.arguments.map(argument => [argument.name, argument.required]),
            (prompt.arguments ?? []).map(argument => [argument.name, argument.required === true]),
            what('arguments and which are required')
        );
        for (const argument of prompt.arguments ?? []) {
            const text = item.arguments.find(candidate => candidate.name === argument.name)!.text;
            assert.ok(text.includes(argument.name), what(`argument ${argument.name} shows its name`));
            if (argument.description !== undefined) assert.ok(text.includes(argument.description), what(`argument ${argument.name} shows its description`));
        }
    }
}

/** The words a POSIX shell would make of `line` (single quotes, double quotes, backslash outside quotes). */
function shellWords(line: string): string[] {
    const words: string[] = [];
    let word: string | undefined;
    for (let index = 0; index < line.length; index++) {
        const char = line[index]!;
        if (char === "'") {
            const end = line.indexOf("'", index + 1);
            assert.ok(end > index, `unclosed single quote in ${line}`);
            word = (word ?? '') + line.slice(index + 1, end);
            index = end;
        } else if (char === '"') {
            const end = line.indexOf('"', index + 1);
            assert.ok(end > index, `unclosed double quote in ${line}`);
            word = (word ?? '') + line.slice(index + 1, end);
            index = end;
        } else if (char === '\\') {
            word = (word ?? '') + line[++index];
        } else if (/\s/.test(char)) {
            if (word !== undefined) words.push(word);
            word = undefined;
        } else {
            word = (word ?? '') + char;
        }
    }
    if (word !== undefined) words.push(word);
    return words;
}

async function copied(page: Page, kind: string): Promise<string> {
    await page.evaluate(`navigator.clipboard.writeText('')`);
    await page.locator(`[data-copy="${kind}"]`).click();
    await untilText(page, 'copy-status', /^Copied/);
    const text = await until<string>(page, 'navigator.clipboard.readText()', value => value !== '', `the clipboard filled by "${kind}"`);
    // Reset the status, so the next copy waits for its own "Copied".
    await page.evaluate(`document.querySelector('[data-field="copy-status"]').textContent = ''`);
    return text;
}

// ---------------------------------------------------------------- auth off

describe('catalog in a browser: auth off', { timeout: 180_000 }, () => {
    let gateway: RunningGateway;
    let sdk: Client;
    let team: string;
    let url: string;
    let expected: Prompt[];

    before(async () => {
        team = promptFolder({ 'code-review.md': CODE_REVIEW, 'summarize.md': summarize(SUMMARIZE_DESCRIPTION) });
        const ops = promptFolder({ 'incident.md': plain('Incident summary', 'Summarize the incident.'), [`${LONG_NAME}.md`]: plain('Handover', 'Hand over the shift.') });
        gateway = await startTestGateway({
            notifications: FAST_NOTIFICATIONS,
            // Pages of 5: the page walks the list by cursor.
            pagination: { pageSize: 5 },
            upstreams: [
                { id: 'team', transport: 'files', path: team },
                { id: 'ops', transport: 'files', path: ops },
                stdioFixture('lab', { prompts: 1, extraPrompts: [{ name: 'café', arguments: [{ name: 'x' }] }] })
            ]
        });
        await upstreamsReady(gateway);
        url = gateway.catalogUrl!;
        sdk = await connectModernHttp(gateway.url!);
        expected = await listAll(sdk);
    });

    after(async () => {
        await sdk?.close();
        await gateway?.close();
    });

    test('lists every prompt the SDK lists, with title, description, upstream and arguments; goes live; clean page', async t => {
        const { page, log } = await openCatalog(t, url);
        assert.ok(expected.length > 10, 'more than two pages of prompts');
        assertRowsEqual(await rows(page), expected);
        assert.equal(await page.evaluate(field('count')), countText(expected.length, expected.length));
        // The open button is named by the title, else the name.
        for (const name of ['team__code-review', 'lab__café']) {
            const prompt = expected.find(candidate => candidate.name === name)!;
            assert.equal(
                await row(page, name)
                    .getByRole('button', { name: prompt.title ?? prompt.name, exact: true })
                    .count(),
                1,
                `${name}: open button's name`
            );
        }
        await untilListening(page);
        await assertCleanPage(page, log, new URL(url).origin);
    });

    test('search: as you type, over names, titles, descriptions; every term; an empty state; cleared, all again', async t => {
        const { page, log } = await openCatalog(t, url);
        const search = page.getByRole('searchbox', { name: 'Search' });
        const cases: [string, string[] | undefined][] = [
            ['review', ['team__code-review']],
            ['REVIEW', ['team__code-review']],
            // In summarize's description only.
            ['bullet', ['team__summarize']],
            ['team code', ['team__code-review']],
            ['lab content', ['lab__all-content']],
            ['no-such-thing-anywhere', []],
            // Every term must match: "team" and "incident" never meet in one prompt.
            ['team incident', []],
            ['', undefined]
        ];
        for (const [query, names] of cases) {
            const want = expected.filter(prompt => matches(prompt, query)).map(prompt => prompt.name);
            if (names !== undefined) assert.deepEqual(want, names, `the fixtures give "${query}" these matches`);
            await search.fill(query);
            await untilEqual(page, READ_NAMES, want, `rows for "${query}"`);
            assert.equal(await page.evaluate(field('count')), countText(want.length, expected.length), `count for "${query}"`);
            const empty = page.locator('[data-empty="prompts"]');
            if (want.length === 0) {
                assert.ok(await empty.isVisible(), `the empty state for "${query}"`);
                assert.match((await empty.textContent()) ?? '', /No prompt matches/);
            } else {
                assert.ok(!(await empty.isVisible()), `no empty state for "${query}"`);
            }
        }
        await assertCleanPage(page, log, new URL(url).origin);
    });

    test('filter by upstream: one option per upstream with its count; combines with search', async t => {
        const { page } = await openCatalog(t, url);
        const select = page.getByLabel('Upstream', { exact: true });
        const upstreams = [...new Set(expected.map(prompt => upstreamOf(prompt.name)))];
        const options = upstreams.map(id => `${id} (${expected.filter(prompt => upstreamOf(prompt.name) === id).length})`);
        assert.deepEqual(upstreams, ['team', 'ops', 'lab']);
        assert.deepEqual(options.slice(0, 2), ['team (2)', 'ops (2)']);
        assert.deepEqual(
            (await select.locator('option').allTextContents()).map(text => text.trim()),
            ['All upstreams', ...options]
        );

        await select.selectOption({ label: 'ops (2)' });
        const ops = expected.filter(prompt => upstreamOf(prompt.name) === 'ops').map(prompt => prompt.name);
        assert.deepEqual([...ops].sort(), ['ops__incident', `ops__${LONG_NAME}`].sort());
        await untilEqual(page, READ_NAMES, ops, 'only ops');
        assert.equal(await page.evaluate(field('count')), countText(2, expected.length));

        await page.getByRole('searchbox', { name: 'Search' }).fill('handover');
        await untilEqual(page, READ_NAMES, [`ops__${LONG_NAME}`], 'ops and "handover"');
        await select.selectOption({ label: 'team (2)' });
        await untilEqual(page, READ_NAMES, [], 'team and "handover": nothing');
        await select.selectOption({ label: 'All upstreams' });
        await untilEqual(page, READ_NAMES, [`ops__${LONG_NAME}`], 'all upstreams and "handover"');
    });

    test('the form: one labelled field per argument, required marked; completions as you type, picked with the keyboard', async t => {
        const { page, log } = await openCatalog(t, url);
        await openPrompt(page, 'team__code-review');
        const form = page.locator('form[data-form="arguments"]');
        assert.equal(await form.getAttribute('novalidate'), '', 'the form does not block a missing field: the gateway names it');
        const diff = page.getByLabel('diff (required)', { exact: true });
        assert.equal(await diff.getAttribute('name'), 'diff');
        assert.equal(await diff.getAttribute('aria-required'), 'true');
        // A textarea (the implicit textbox role: a pasted value keeps its lines), never role=combobox (ARIA in HTML
        // forbids it on a textarea); the autocomplete attributes make it the listbox's owner.
        assert.equal(await page.evaluate<string>(onField('diff', 'node.tagName')), 'TEXTAREA');
        assert.equal(await diff.getAttribute('rows'), '1');
        const language = page.getByRole('textbox', { name: 'language', exact: true });
        assert.equal(await language.getAttribute('name'), 'language');
        assert.notEqual(await language.getAttribute('aria-required'), 'true');
        assert.equal(await page.locator('[data-form="arguments"] [role="combobox"]').count(), 0, 'no combobox role on a field');
        assert.equal(await language.getAttribute('aria-autocomplete'), 'list');
        const listboxOf = (name: string) => `document.querySelector('[data-completions-for="${name}"]')`;
        const isOpen = (name: string) => `!${listboxOf(name)}.hidden`;

        // Closed: ArrowDown on the last line asks for suggestions.
        await language.press('ArrowDown');
        await until<boolean>(page, isOpen('language'), open => open, 'ArrowDown opened the suggestions');
        assert.ok((await page.locator('[data-completions-for="language"] [role="option"]').allTextContents()).includes('python'));
        await language.press('Escape');
        await until<boolean>(page, isOpen('language'), open => !open, 'Escape closed them');

        await language.pressSequentially('py');
        const listbox = page.getByRole('listbox');
        await listbox.getByRole('option', { name: 'python', exact: true }).waitFor({ state: 'visible', timeout: PAGE_WAIT_MS });
        assert.equal(await listbox.getAttribute('data-completions-for'), 'language');
        assert.equal(await language.getAttribute('aria-controls'), await listbox.getAttribute('id'));
        assert.deepEqual(await listbox.getByRole('option').allTextContents(), ['python']);
        await language.press('ArrowDown');
        const active = await language.getAttribute('aria-activedescendant');
        assert.ok(active !== null && active !== '', 'ArrowDown makes an option active');
        assert.equal(await page.locator(`[id="${active}"]`).textContent(), 'python');
        assert.equal(await page.locator(`[id="${active}"]`).getAttribute('aria-selected'), 'true');
        await language.press('Enter');
        assert.equal(await language.inputValue(), 'python', 'Enter picked the option, no new line');
        await until<boolean>(page, isOpen('language'), open => !open, 'the listbox closed');
        assert.equal(await language.getAttribute('aria-activedescendant'), null);

        // Closed: Enter is a new line, and ArrowDown off the last line moves the caret (the browser's own move).
        await language.press('Enter');
        assert.equal(await language.inputValue(), 'python\n');
        await page.evaluate(onField('language', 'node.setSelectionRange(0, 0)'));
        await language.press('ArrowDown');
        assert.equal(await page.evaluate<number>(onField('language', 'node.selectionStart')), 'python\n'.length, 'the caret moved down a line');
        await language.fill('python');

        // The stdio fixture's completions, through the gateway.
        await openPrompt(page, 'lab__with-required');
        const topic = page.getByRole('textbox', { name: 'topic (required)', exact: true });
        await topic.pressSequentially('m');
        const offered = page.locator('[data-completions-for="topic"] [role="option"]');
        await until<string[]>(
            page,
            `Array.from(document.querySelectorAll('[data-completions-for="topic"] [role="option"]'), node => node.textContent)`,
            values => values.length === 3,
            'three topics offered'
        );
        assert.deepEqual(await offered.allTextContents(), ['mcp', 'music', 'math']);
        await topic.press('Escape');
        await until<boolean>(page, isOpen('topic'), open => !open, 'Escape closed it');
        assert.equal(await topic.inputValue(), 'm', 'Escape picks nothing');
        await assertCleanPage(page, log, new URL(url).origin);
    });

    test('Render: the messages equal what an SDK client gets for the same arguments', async t => {
        const { page, log } = await openCatalog(t, url);
        await openPrompt(page, 'team__code-review');
        await page.getByLabel('diff (required)', { exact: true }).fill('- a + b');
        await page.getByLabel('language', { exact: true }).fill('go');
        await render(page);
        const want = await sdk.getPrompt({ name: 'team__code-review', arguments: { diff: '- a + b', language: 'go' } });
        assert.equal(want.messages.length, 1);
        const shown = await messages(page);
        assert.deepEqual(
            shown.map(message => [message.role, message.content, message.pre]),
            [['user', 'text', [(want.messages[0]!.content as { text: string }).text]]]
        );
        assert.equal(await renderError(page), '');
        await assertCleanPage(page, log, new URL(url).origin);
    });

    test('a multi-line value keeps every line: typed and pasted into diff, rendered with Ctrl+Enter as an SDK client gets it; on a phone', async t => {
        const { page, log } = await openCatalog(t, url, { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
        await openPrompt(page, 'team__code-review');
        const diff = page.getByLabel('diff (required)', { exact: true });
        const oneLine = await page.evaluate<number>(onField('diff', 'node.offsetHeight'));
        // Typed: two lines, Enter between them. Pasted: the rest, with a blank line, trailing spaces, a tab and a
        // line longer than the phone is wide.
        const typed = '--- a/src/app.ts\n+++ b/src/app.ts\n';
        const pasted = `@@ -1,3 +1,5 @@\n const a = 1;   \n-const b = 2;\n+const b = 3;\t\n\n+// ${'x'.repeat(120)}\n+done  `;
        const value = typed + pasted;
        await diff.pressSequentially(typed);
        await diff.focus();
        await page.keyboard.insertText(pasted);
        assert.equal(await diff.inputValue(), value, 'the field holds every line as typed and pasted');

        const box = await page.evaluate<{ height: number; scrollWidth: number; clientWidth: number }>(
            onField('diff', '({ height: node.offsetHeight, scrollWidth: node.scrollWidth, clientWidth: node.clientWidth })')
        );
        assert.ok(box.height > oneLine * 3, `the field grew with its lines: ${oneLine} px, then ${box.height} px`);
        assert.ok(box.scrollWidth <= box.clientWidth, 'long lines wrap inside the field');
        assert.ok(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth'), 'no horizontal scroll at 360 px');
        assert.match(await page.locator('[data-field="render-hint"]').innerText(), /Ctrl\+Enter/, 'the shortcut is said near Render');

        await page.keyboard.press('Control+Enter');
        await until<Message[]>(page, READ_MESSAGES, shown => shown.length > 0, 'the result of Ctrl+Enter');
        assert.equal(await diff.inputValue(), value, 'Ctrl+Enter added no new line');
        assert.equal(await renderError(page), '');
        const want = await sdk.getPrompt({ name: 'team__code-review', arguments: { diff: value } });
        const wantText = (want.messages[0]!.content as { text: string }).text;
        assert.ok(wantText.includes(value), 'the SDK client gets the diff back whole');
        assert.deepEqual(
            (await messages(page)).map(message => message.pre),
            [[wantText]]
        );

        // Forty lines: twelve shown, the rest a scroll away.
        await diff.fill(Array.from({ length: 40 }, (_, index) => `line ${index}`).join('\n'));
        const tall = await page.evaluate<{ height: number; scrollHeight: number; clientHeight: number }>(
            onField('diff', '({ height: node.offsetHeight, scrollHeight: node.scrollHeight, clientHeight: node.clientHeight })')
        );
        assert.ok(tall.height < oneLine * 14, `capped near twelve lines: ${tall.height} px (one line ${oneLine} px)`);
        assert.ok(tall.scrollHeight > tall.clientHeight, 'the rest scrolls');
        await assertCleanPage(page, log, new URL(url).origin);
    });

    test('without field-sizing (Firefox, older Safari), the field still grows with its lines up to twelve', async t => {
        // The page's CSP allows no injected style: bypassed here only, to turn field-sizing off as such a browser has it.
        const { context, page } = await newTab(t, { bypassCSP: true });
        await context.addInitScript({
            content: `const supports = CSS.supports.bind(CSS); CSS.supports = (...args) => !args.join(' ').includes('field-sizing') && supports(...args);`
        });
        await page.goto(url);
        await untilState(page, 'ready');
        await page.addStyleTag({ content: 'textarea.argument { field-sizing: fixed !important; }' });
        await openPrompt(page, 'team__code-review');
        const diff = page.getByLabel('diff (required)', { exact: true });
        const oneLine = await page.evaluate<number>(onField('diff', 'node.offsetHeight'));
        await diff.fill(Array.from({ length: 5 }, (_, index) => `line ${index}`).join('\n'));
        const five = await page.evaluate<{ height: number; scrollHeight: number; clientHeight: number }>(
            onField('diff', '({ height: node.offsetHeight, scrollHeight: node.scrollHeight, clientHeight: node.clientHeight })')
        );
        assert.ok(five.height > oneLine * 3, `grew with five lines: ${oneLine} px, then ${five.height} px`);
        assert.ok(five.scrollHeight <= five.clientHeight, 'five lines need no scroll');
        await diff.fill(Array.from({ length: 40 }, (_, index) => `line ${index}`).join('\n'));
        const tall = await page.evaluate<{ height: number; scrollHeight: number; clientHeight: number }>(
            onField('diff', '({ height: node.offsetHeight, scrollHeight: node.scrollHeight, clientHeight: node.clientHeight })')
        );
        assert.ok(tall.height < oneLine * 14, `capped near twelve lines: ${tall.height} px`);
        assert.ok(tall.scrollHeight > tall.clientHeight, 'the rest scrolls');
    });

    test('Render shows every content type; a non-web resource link is text, not a link', async t => {
        const { page, log } = await openCatalog(t, url);
        await openPrompt(page, 'lab__all-content');
        await render(page);
        const shown = await messages(page);
        assert.deepEqual(
            shown.map(message => [message.role, message.content]),
            [
                ['user', 'text'],
                ['assistant', 'image'],
                ['user', 'audio'],
                ['assistant', 'resource'],
                ['user', 'resource'],
                ['assistant', 'resource_link']
            ]
        );
        const [text, image, audio, embedded, blob, link] = shown as [Message, Message, Message, Message, Message, Message];
        assert.deepEqual(text.pre, ['annotated text']);
        assert.equal(image.images.length, 1);
        assert.match(image.images[0]!.src, /^data:image\/png;base64,/);
        assert.equal(image.images[0]!.alt, 'image (image/png)');
        assert.equal(audio.audio.length, 1, 'an audio player (decision Q5)');
        assert.match(audio.audio[0]!, /^data:audio\/wav;base64,/);
        assert.ok(embedded.text.includes('file:///a.txt'), 'the embedded resource shows its URI');
        assert.deepEqual(embedded.pre, ['hello']);
        assert.match(blob.text, /binary/);
        assert.ok(blob.text.includes('file:///c.bin'));
        assert.ok(link.text.includes('file:///b.txt'), 'the link shows its URI');
        assert.deepEqual(link.links, [], 'a file: link is not made clickable');
        assert.equal(await page.evaluate(field('result-description')), 'Every content type');
        await assertCleanPage(page, log, new URL(url).origin);
    });

    test("errors are shown with the gateway's message: missing arguments named, an upstream's secrets not", async t => {
        const { page, log } = await openCatalog(t, url);
        const cases: [string, RegExp][] = [
            ['lab__with-required', /topic/],
            ['team__code-review', /diff/],
            ['lab__fail-internal', /./]
        ];
        for (const [name, names] of cases) {
            const { message } = await rpcError(sdk.getPrompt({ name }));
            await openPrompt(page, name);
            await render(page);
            const alert = await renderError(page);
            assert.ok(alert.includes(message), `${name}: the alert "${alert}" shows the gateway's message "${message}"`);
            assert.match(alert, names, name);
            assert.deepEqual(await messages(page), [], `${name}: no messages`);
            assert.equal(await page.locator('[data-field="render-error"]').getAttribute('role'), 'alert');
            assert.ok(!/s3cr3t|\/srv\/secret/.test(alert), `${name}: nothing of what the upstream threw`);
        }
        await assertCleanPage(page, log, new URL(url).origin);
    });

    test('a name that is not plain ASCII renders (Mcp-Name in its base64 form)', async t => {
        const { page, log } = await openCatalog(t, url);
        await openPrompt(page, 'lab__café');
        await page.getByLabel('x', { exact: true }).fill('crème brûlée');
        await render(page);
        const want = await sdk.getPrompt({ name: 'lab__café', arguments: { x: 'crème brûlée' } });
        assert.equal(await renderError(page), '');
        assert.deepEqual(
            (await messages(page)).map(message => message.pre),
            [[(want.messages[0]!.content as { text: string }).text]]
        );
        await assertCleanPage(page, log, new URL(url).origin);
    });

    test('copy buttons: the rendered text, the Claude Code and VS Code commands, the Inspector command', async t => {
        const { context, page, log } = await openCatalog(t, url);
        await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(url).origin });
        await openPrompt(page, 'team__code-review');
        // No space in the diff: Claude Code splits arguments on spaces. A quote: the Inspector command must quote it.
        const diff = "+return'42';";
        await page.getByLabel('diff (required)', { exact: true }).fill(diff);
        await page.getByLabel('language', { exact: true }).fill('python');
        await render(page);
        const want = await sdk.getPrompt({ name: 'team__code-review', arguments: { diff, language: 'python' } });

        assert.equal(await copied(page, 'text'), (want.messages[0]!.content as { text: string }).text);
        assert.equal(await copied(page, 'claude-code'), `/mcp__prompts__team__code-review ${diff} python`);
        assert.equal(await copied(page, 'vscode'), '/mcp.prompts.team__code-review');
        assert.deepEqual(shellWords(await copied(page, 'inspector')), [
            'npx',
            '@modelcontextprotocol/inspector',
            '--cli',
            gateway.url!,
            '--method',
            'prompts/get',
            '--prompt-name',
            'team__code-review',
            '--prompt-args',
            `diff=${diff}`,
            'language=python'
        ]);
        for (const [kind, label] of [
            ['text', 'Copy text'],
            ['claude-code', 'Copy for Claude Code'],
            ['vscode', 'Copy for VS Code'],
            ['inspector', 'Copy Inspector command']
        ]) {
            assert.equal(await page.getByRole('button', { name: label, exact: true }).getAttribute('data-copy'), kind);
        }
        await assertCleanPage(page, log, new URL(url).origin);

        // Without navigator.clipboard (plain HTTP off loopback is not a secure context): the text shown, selected.
        const fallback = await context.newPage();
        await fallback.addInitScript({ content: 'delete Navigator.prototype.clipboard;' });
        await fallback.goto(`${url}#prompt=${encodeURIComponent('team__code-review')}`);
        await untilState(fallback, 'ready');
        await fallback.locator('section[data-view="prompt"][data-prompt="team__code-review"]').waitFor({ state: 'visible', timeout: PAGE_WAIT_MS });
        await fallback.locator('[data-copy="vscode"]').click();
        await untilText(fallback, 'copy-status', /^Select and copy/);
        assert.equal(await fallback.locator('textarea[readonly]').inputValue(), '/mcp.prompts.team__code-review');
    });

    test('live: an added, a removed and a changed prompt appear without a reload, each announced', async t => {
        const { page, log } = await openCatalog(t, url);
        await untilListening(page);
        const marker = await page.evaluate<number>('window.__mark = Math.random()');
        const total = expected.length;
        t.after(() => writeFileSync(path.join(team, 'summarize.md'), summarize(SUMMARIZE_DESCRIPTION)));

        writeFileSync(path.join(team, 'new-one.md'), plain('New one', 'Just added.'));
        // Gone again whatever happens below: the later tests count the list.
        t.after(() => rmSync(path.join(team, 'new-one.md'), { force: true }));
        await untilText(page, 'live-announcement', /1 added \(team__new-one\)/);
        await untilEqual(page, field('count'), countText(total + 1, total + 1), 'the count with the new prompt');
        assert.ok((await page.evaluate<string[]>(READ_NAMES)).includes('team__new-one'));
        await openPrompt(page, 'team__new-one');

        unlinkSync(path.join(team, 'new-one.md'));
        await untilText(page, 'live-announcement', /1 removed \(team__new-one\)/);
        await untilEqual(page, field('count'), countText(total, total), 'the count without it');
        // The open prompt stays open, saying it is gone.
        await until<string>(
            page,
            `(document.querySelector('section[data-view="prompt"][data-prompt="team__new-one"]') || { innerText: '' }).innerText`,
            text => text.includes('This prompt is no longer available to you'),
            'the removed prompt still open, saying it is gone'
        );

        writeFileSync(path.join(team, 'summarize.md'), summarize('Now in five bullet points.'));
        await untilText(page, 'live-announcement', /1 changed \(team__summarize\)/);
        const summarizeRow = (await rows(page)).find(item => item.name === 'team__summarize');
        assert.equal(summarizeRow?.description, 'Now in five bullet points.');

        assert.equal(await page.evaluate<number>('window.__mark'), marker, 'the same document: no reload, no navigation');
        const changes = await page.evaluate<string[]>(CHANGES);
        for (const pattern of [/1 added \(team__new-one\)/, /1 removed \(team__new-one\)/, /1 changed \(team__summarize\)/]) {
            assert.ok(
                changes.some(item => pattern.test(item)),
                `${pattern} in ${JSON.stringify(changes)}`
            );
        }
        assert.equal(await page.locator('[data-field="live-announcement"]').getAttribute('role'), 'status');
        await assertCleanPage(page, log, new URL(url).origin);
    });

    test('keyboard only: search, open, fill with a completion, render; focus on the heading when opened', async t => {
        const { page, log } = await openCatalog(t, url);
        const focused = `(() => { const node = document.activeElement; return node ? [node.tagName, node.id, node.getAttribute('name') || '', node.dataset.action || '', (node.closest('[data-prompt]') || { dataset: {} }).dataset.prompt || '', node.textContent.trim()].join('|') : ''; })()`;
        /** Presses Tab until `wanted` holds for the focused element (at most `max` times). */
        const tabTo = async (wanted: (focus: string[]) => boolean, what: string, max = 30) => {
            for (let presses = 0; presses < max; presses++) {
                await page.keyboard.press('Tab');
                if (wanted((await page.evaluate<string>(focused)).split('|'))) return;
            }
            assert.fail(`${what}: not reached with ${max} Tabs (focus on ${await page.evaluate<string>(focused)})`);
        };

        await tabTo(([, id]) => id === 'catalog-search', 'the search box');
        await page.keyboard.type('review');
        await untilEqual(page, READ_NAMES, ['team__code-review'], 'the search typed');
        await tabTo(([tag, , , action, prompt]) => tag === 'BUTTON' && action === 'open' && prompt === 'team__code-review', 'the row');
        await page.keyboard.press('Enter');
        await page.locator('section[data-view="prompt"][data-prompt="team__code-review"]').waitFor({ state: 'visible', timeout: PAGE_WAIT_MS });
        await until<string>(page, focused, focus => focus.startsWith('H2|'), 'focus on the heading');
        assert.equal(await page.locator('section[data-view="prompt"] h2').getAttribute('tabindex'), '-1');

        await tabTo(([, , name]) => name === 'diff', 'the diff field');
        await page.keyboard.type('+x');
        await tabTo(([, , name]) => name === 'language', 'the language field');
        await page.keyboard.type('ty');
        await page.getByRole('option', { name: 'typescript', exact: true }).waitFor({ state: 'visible', timeout: PAGE_WAIT_MS });
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('Enter');
        assert.equal(await page.getByLabel('language', { exact: true }).inputValue(), 'typescript');
        await tabTo(([tag, , , , , text]) => tag === 'BUTTON' && text === 'Render', 'the Render button');
        await page.keyboard.press('Enter');
        await until<Message[]>(page, READ_MESSAGES, shown => shown.length > 0, 'the result');
        const want = await sdk.getPrompt({ name: 'team__code-review', arguments: { diff: '+x', language: 'typescript' } });
        assert.deepEqual(
            (await messages(page)).map(message => message.pre),
            [[(want.messages[0]!.content as { text: string }).text]]
        );
        await assertCleanPage(page, log, new URL(url).origin);
    });

    test('a phone (360x740): no horizontal scroll; list and prompt reachable; the opened prompt scrolled into view', async t => {
        const { page, log } = await openCatalog(t, url, { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
        const fits = `document.documentElement.scrollWidth <= window.innerWidth`;
        assert.ok(await page.evaluate<boolean>(fits), 'no horizontal scroll with the list (a long name wraps)');
        assert.ok(await row(page, `ops__${LONG_NAME}`).isVisible());
        await row(page, 'lab__all-content').locator('button[data-action="open"]').tap();
        const heading = page.locator('section[data-view="prompt"][data-prompt="lab__all-content"] h2');
        await heading.waitFor({ state: 'visible', timeout: PAGE_WAIT_MS });
        await waitForPage(
            page,
            `(() => { const box = document.querySelector('section[data-view="prompt"] h2').getBoundingClientRect(); return box.top >= 0 && box.bottom <= window.innerHeight; })()`,
            'the heading scrolled into view',
            PAGE_WAIT_MS
        );
        await render(page);
        assert.equal((await messages(page)).length, 6);
        assert.ok(await page.evaluate<boolean>(fits), 'no horizontal scroll with the result');
        await assertCleanPage(page, log, new URL(url).origin);
    });
});

// ---------------------------------------------------------------- apiKey

const keyOf = (client: string) => `catalog-key-of-${client}-${randomBytes(12).toString('hex')}`;

describe('catalog in a browser: API keys', { timeout: 180_000 }, () => {
    const keys = { alice: keyOf('alice'), bob: keyOf('bob'), carol: keyOf('carol') };
    let gateway: RunningGateway;
    let team: string;
    let url: string;
    let endpoint: string;
    const lists = new Map<string, Prompt[]>();

    before(async () => {
        team = promptFolder({
            'code-review.md': CODE_REVIEW,
            'summarize.md': summarize(SUMMARIZE_DESCRIPTION),
            'secret-plan.md': plain('Secret plan', 'Only for some.')
        });
        gateway = await startTestGateway({
            auth: { mode: 'apiKey' },
            notifications: FAST_NOTIFICATIONS,
            clients: [
                { id: 'alice', apiKey: keys.alice },
                { id: 'bob', apiKey: keys.bob, prompts: { deny: ['team__secret-*'] } },
                { id: 'carol', apiKey: keys.carol, rateLimit: { requestsPerSecond: 0.001, burst: 3 } }
            ],
            upstreams: [{ id: 'team', transport: 'files', path: team }]
        });
        await upstreamsReady(gateway);
        url = gateway.catalogUrl!;
        endpoint = gateway.url!;
        for (const client of ['alice', 'bob'] as const) {
            const sdk = await connectModernHttp(endpoint, { headers: { authorization: `Bearer ${keys[client]}` } });
            lists.set(client, await listAll(sdk));
            await sdk.close();
        }
        assert.ok(lists.get('alice')!.some(prompt => prompt.name === 'team__secret-plan'));
        assert.ok(!lists.get('bob')!.some(prompt => prompt.name === 'team__secret-plan'));
    });

    after(async () => {
        await gateway?.close();
    });

    /** Opens the page, waits for the key form and connects with `key`. */
    async function signIn(t: TestContext, key: string, options: BrowserContextOptions = {}): Promise<Opened> {
        const opened = await newTab(t, options);
        await opened.page.goto(url);
        await untilState(opened.page, 'auth');
        await opened.page.getByLabel('API key', { exact: true }).fill(key);
        await opened.page.getByRole('button', { name: 'Connect', exact: true }).click();
        await untilState(opened.page, 'ready');
        return opened;
    }

    test('asks for the key first and sends nothing before it', async t => {
        const { page, log } = await newTab(t);
        await page.goto(url);
        await untilState(page, 'auth');
        const input = page.getByLabel('API key', { exact: true });
        assert.ok(await input.isVisible());
        // Masked on screen: type=password, or a text field masked by the style sheet (so that no password manager
        // offers to save an API key).
        assert.ok(
            await page.evaluate<boolean>(
                `(() => { const input = document.getElementById('catalog-credential'); return input.type === 'password' || getComputedStyle(input).webkitTextSecurity === 'disc'; })()`
            ),
            'the credential field is masked'
        );
        assert.equal(await input.getAttribute('autocomplete'), 'off');
        assert.ok(await page.locator('form[data-view="auth"]').isVisible());
        assert.match(await page.locator('form[data-view="auth"]').innerText(), /session storage only/);
        assert.deepEqual(await page.evaluate<string[]>(READ_NAMES), []);
        assert.deepEqual(
            log.requests.filter(request => request.startsWith(endpoint)),
            [],
            'no request to the MCP endpoint without a key'
        );
        await assertCleanPage(page, log, new URL(url).origin);
    });

    test("a wrong key is refused and cleared; alice's key shows alice's list", async t => {
        const { page, log } = await newTab(t);
        await page.goto(url);
        await untilState(page, 'auth');
        const input = page.getByLabel('API key', { exact: true });
        await input.fill(`${keys.alice}-wrong`);
        await page.getByRole('button', { name: 'Connect', exact: true }).click();
        await untilText(page, 'auth-message', /not accepted/);
        assert.equal(await input.inputValue(), '', 'the refused key is cleared');
        assert.equal(await state(page), 'auth');
        assert.equal(await page.evaluate<string | null>(`sessionStorage.getItem('${STORAGE_KEY}')`), null, 'a refused key is not kept');

        await input.fill(keys.alice);
        await page.getByRole('button', { name: 'Connect', exact: true }).click();
        await untilState(page, 'ready');
        assertRowsEqual(await rows(page), lists.get('alice')!);
        // The one refusal is the one 401 Chromium logs as a failed load.
        await assertCleanPage(page, log, new URL(url).origin, [/status of 401/]);
    });

    test("two clients at once: bob sees bob's list, alice's page stays alice's", async t => {
        const alice = await signIn(t, keys.alice);
        const bob = await signIn(t, keys.bob);
        assertRowsEqual(await rows(bob.page), lists.get('bob')!);
        assertRowsEqual(await rows(alice.page), lists.get('alice')!);
        await assertCleanPage(bob.page, bob.log, new URL(url).origin);
    });

    test("where the key lives: this tab's session storage and the Authorization header, nowhere else", async t => {
        const key = keys.alice;
        const opened = await newTab(t);
        const { context, page, log } = opened;
        await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(url).origin });
        const posts: { url: string; authorization: string | undefined }[] = [];
        page.on('request', (request: Request) => {
            if (request.method() === 'POST') posts.push({ url: request.url(), authorization: request.headers().authorization });
        });
        await page.goto(url);
        await untilState(page, 'auth');
        await page.getByLabel('API key', { exact: true }).fill(key);
        await page.getByRole('button', { name: 'Connect', exact: true }).click();
        await untilState(page, 'ready');
        await untilListening(page);

        assert.equal(await page.evaluate<string | null>(`sessionStorage.getItem('${STORAGE_KEY}')`), key);
        assert.equal(await page.evaluate<number>('localStorage.length'), 0, 'nothing in localStorage');
        assert.equal(await page.evaluate<string>('document.cookie'), '', 'no cookie');

        // A render and the Inspector command: a placeholder for the key, never the key.
        await openPrompt(page, 'team__code-review');
        await page.getByLabel('diff (required)', { exact: true }).fill('+x');
        await render(page);
        const inspector = await copied(page, 'inspector');
        assert.ok(!inspector.includes(key), 'the Inspector command holds no key');
        const words = shellWords(inspector);
        assert.equal(words[words.indexOf('--header') + 1], 'Authorization: Bearer $GATEWAY_KEY');

        for (const where of [await page.evaluate<string>('location.href'), await page.evaluate<string>('document.referrer'), ...log.requests]) {
            assert.ok(!where.includes(key), `the key in ${where}`);
        }
        assert.ok(posts.length >= 4, `discover, list, listen, get: ${posts.length} POSTs`);
        for (const post of posts) {
            assert.equal(post.url, endpoint, 'every POST goes to the MCP endpoint');
            assert.equal(post.authorization, `Bearer ${key}`, 'every POST carries the key');
        }

        // The same tab after a reload: still connected, without asking.
        await page.reload();
        await untilState(page, 'ready');
        assert.ok(!(await page.locator('form[data-view="auth"]').isVisible()));

        // Another tab asks again.
        const other = await newTab(t);
        await other.page.goto(url);
        await untilState(other.page, 'auth');

        await page.locator('[data-action="forget-credential"]').click();
        await untilState(page, 'auth');
        assert.equal(await page.evaluate<string | null>(`sessionStorage.getItem('${STORAGE_KEY}')`), null, 'forgotten');
        assert.ok(await page.getByLabel('API key', { exact: true }).isVisible());
        await assertCleanPage(page, log, new URL(url).origin);
    });

    test('hidden == missing: a denied prompt and a made-up one get the same answer, on the page and on the wire', async t => {
        const { page } = await signIn(t, keys.bob);
        const answers: Promise<{ name: string | undefined; status: number; body: string }>[] = [];
        page.on('response', (response: Response) => {
            const request = response.request();
            if (request.method() === 'POST' && request.headers()['mcp-method'] === 'prompts/get') {
                answers.push(response.text().then(body => ({ name: request.headers()['mcp-name'], status: response.status(), body })));
            }
        });
        const shown: string[] = [];
        for (const [index, name] of ['team__secret-plan', 'team__no-such-prompt'].entries()) {
            await page.goto(`${url}#prompt=${encodeURIComponent(name)}`);
            await page.reload();
            await untilState(page, 'ready');
            await page.locator(`section[data-view="prompt"][data-prompt="${name}"]`).waitFor({ state: 'visible', timeout: PAGE_WAIT_MS });
            await render(page);
            const alert = await renderError(page);
            assert.ok(alert.includes(name), `the alert names ${name}: ${alert}`);
            shown.push(alert.replaceAll(name, '<name>'));
            // Read before the next reload discards the body.
            await waitFor(() => answers.length === index + 1, PAGE_WAIT_MS, `the answer for ${name}`);
            await answers[index];
        }
        assert.equal(shown[0], shown[1]);
        const [secret, missing] = (await Promise.all(answers)).map(answer => ({
            status: answer.status,
            body: JSON.parse(answer.body.replaceAll(answer.name!, '<name>')) as { id?: unknown }
        }));
        assert.deepEqual({ ...secret!, body: { ...secret!.body, id: 0 } }, { ...missing!, body: { ...missing!.body, id: 0 } });
    });

    test("live per client: a prompt hidden from bob never shows on bob's page, the next visible one does", async t => {
        const alice = await signIn(t, keys.alice);
        const bob = await signIn(t, keys.bob);
        await untilListening(alice.page);
        await untilListening(bob.page);

        writeFileSync(path.join(team, 'secret-two.md'), plain('Secret two', 'Also only for some.'));
        await until<string[]>(alice.page, CHANGES, changes => changes.some(item => item.includes('team__secret-two')), 'alice told of secret-two');
        writeFileSync(path.join(team, 'open-two.md'), plain('Open two', 'For everyone.'));
        await until<string[]>(alice.page, CHANGES, changes => changes.some(item => item.includes('team__open-two')), 'alice told of open-two');
        const bobChanges = await until<string[]>(bob.page, CHANGES, changes => changes.some(item => item.includes('team__open-two')), 'bob told of open-two');

        assert.ok(!bobChanges.some(item => item.includes('secret-two')), `bob's announcements: ${JSON.stringify(bobChanges)}`);
        assert.ok(!(await bob.page.evaluate<string[]>(READ_NAMES)).some(name => name.includes('secret')));
        assert.ok(!(await bob.page.locator('body').innerText()).includes('secret-two'));
        await assertCleanPage(bob.page, bob.log, new URL(url).origin);
    });

    test('a rate-limited client sees "Too many requests" in the alert, not a broken page', async t => {
        const { page, log } = await newTab(t);
        let refused = 0;
        page.on('response', (response: Response) => {
            if (response.status() === 429) refused++;
        });
        await page.goto(url);
        await untilState(page, 'auth');
        await page.getByLabel('API key', { exact: true }).fill(keys.carol);
        await page.getByRole('button', { name: 'Connect', exact: true }).click();
        // Its burst of 3 (discover, the list, the listen stream) is spent; the next request is refused for ~1000 s.
        await untilText(page, 'page-error', /^Too many requests; retrying in \d+ s$/);
        assert.equal(await page.locator('[data-field="page-error"]').getAttribute('role'), 'alert');
        assert.ok(refused > 0, 'the gateway refused a request');
        // Each refusal is logged by Chromium as a failed load; nothing else may be.
        await waitFor(() => log.consoleErrors.length >= refused, PAGE_WAIT_MS, 'each refusal logged');
        assert.equal(log.consoleErrors.length, refused, JSON.stringify(log.consoleErrors));
        for (const error of log.consoleErrors) assert.match(error, /status of 429/);
        assert.deepEqual(log.pageErrors, []);
        assert.deepEqual(await cspViolations(page), []);
    });
});

// ---------------------------------------------------------------- jwt

describe('catalog in a browser: bearer tokens (jwt)', { timeout: 120_000 }, () => {
    const secret = `catalog-jwt-${randomBytes(24).toString('hex')}`;
    let gateway: RunningGateway;
    let url: string;
    let expected: Prompt[];
    const now = () => Math.floor(Date.now() / 1000);
    const token = (exp: number) => new SignJWT({ sub: 'dana', iat: now() - 600, exp }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));

    before(async () => {
        const team = promptFolder({ 'code-review.md': CODE_REVIEW, 'summarize.md': summarize(SUMMARIZE_DESCRIPTION) });
        gateway = await startTestGateway({
            auth: { mode: 'jwt', secret },
            clients: [{ id: 'dana', prompts: { allow: ['team__code-*'] } }],
            upstreams: [{ id: 'team', transport: 'files', path: team }]
        });
        await upstreamsReady(gateway);
        url = gateway.catalogUrl!;
        const sdk = await connectModernHttp(gateway.url!, { headers: { authorization: `Bearer ${await token(now() + 300)}` } });
        expected = await listAll(sdk);
        await sdk.close();
        assert.deepEqual(
            expected.map(prompt => prompt.name),
            ['team__code-review']
        );
    });

    after(async () => {
        await gateway?.close();
    });

    test('asks for a "Bearer token"; an expired one is not accepted; a valid one shows its client\'s list', async t => {
        const { page, log } = await newTab(t);
        await page.goto(url);
        await untilState(page, 'auth');
        const input = page.getByLabel('Bearer token', { exact: true });
        // Expired five minutes ago: well past auth.clockToleranceSec (30 s).
        await input.fill(await token(now() - 300));
        await page.getByRole('button', { name: 'Connect', exact: true }).click();
        await untilText(page, 'auth-message', /not accepted/);
        assert.equal(await input.inputValue(), '');

        await input.fill(await token(now() + 300));
        await page.getByRole('button', { name: 'Connect', exact: true }).click();
        await untilState(page, 'ready');
        assertRowsEqual(await rows(page), expected);
        await assertCleanPage(page, log, new URL(url).origin, [/status of 401/]);
    });
});
