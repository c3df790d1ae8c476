/**
 * Every relative link in the README, the contributing guide, security policy and changelog, and docs/ points at a file of the repository that exists, and every #anchor at a
 * heading of the page it names, slugged as GitHub does. Links inside code (fenced blocks, inline spans) and HTML
 * comments are text, not links. The checker is first run on pages broken on purpose, so that it is seen to fail.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The pages whose links are checked, relative to the repository root. */
function documentationPages(root: string): string[] {
    const docs = readdirSync(path.join(root, 'docs'))
        .filter(name => name.endsWith('.md'))
        .map(name => `docs/${name}`);
    return ['README.md', 'CONTRIBUTING.md', 'SECURITY.md', 'CHANGELOG.md', 'deploy/kubernetes/README.md', ...docs];
}

const blank = (text: string) => text.replace(/[^\n]/g, ' ');

/** The page's text with fenced code blocks and HTML comments blanked out, line breaks kept. */
function withoutBlocks(markdown: string): string {
    let inFence: string | undefined;
    const lines = markdown.split('\n').map(line => {
        const fence = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
        if (inFence !== undefined) {
            if (fence !== undefined && fence[0] === inFence[0] && fence.length >= inFence.length) inFence = undefined;
            return '';
        }
        if (fence !== undefined) {
            inFence = fence;
            return '';
        }
        return line;
    });
    return lines.join('\n').replace(/<!--[\s\S]*?-->/g, blank);
}

/** The page's prose: no code blocks, no comments, and no inline code spans (a run of backticks closed by a run of
 * the same length, within one paragraph). */
function proseOf(markdown: string): string {
    return withoutBlocks(markdown).replace(/(?<!`)(`+)(?!`)(?:(?!\n[ \t]*\n)[\s\S])*?(?<!`)\1(?!`)/g, blank);
}

/** The targets of the page's inline links and images (`[text](target)`, `![alt](target "title")`). */
function linkTargets(markdown: string): string[] {
    return [...proseOf(markdown).matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(match => match[1]!);
}

/** GitHub's anchor for a heading: its text without markup, lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
    return heading
        .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/[`*]/g, '')
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
        .replace(/ /g, '-');
}

/** The anchors a page's headings make; a repeated heading gets -1, -2, ... as on GitHub. */
function anchorsOf(markdown: string): Set<string> {
    const anchors = new Set<string>();
    const seen = new Map<string, number>();
    for (const line of withoutBlocks(markdown).split('\n')) {
        const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line)?.[1];
        if (heading === undefined) continue;
        const base = slug(heading);
        const count = seen.get(base) ?? 0;
        seen.set(base, count + 1);
        anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    return anchors;
}

/** Every link of the given pages that does not resolve, as `page: target (why)`. */
function brokenLinks(root: string, pages: string[]): string[] {
    const broken: string[] = [];
    for (const page of pages) {
        const markdown = readFileSync(path.join(root, page), 'utf8');
        for (const target of linkTargets(markdown)) {
            if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(target)) continue; // absolute: https:, mailto:, ...
            const hash = target.indexOf('#');
            const file = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
            const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
            const resolved = file === '' ? path.join(root, page) : path.resolve(root, path.dirname(page), file);
            const inRepository = path.relative(root, resolved);
            if (inRepository.startsWith('..') || path.isAbsolute(inRepository)) {
                broken.push(`${page}: ${target} (outside the repository)`);
            } else if (!existsSync(resolved)) {
                broken.push(`${page}: ${target} (no such file)`);
            } else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) {
                broken.push(`${page}: ${target} (no heading makes #${anchor})`);
            }
        }
    }
    return broken;
}

test('the checker reports missing files, missing anchors and links out of the repository, and nothing else', async t => {
    const root = await mkdtemp(path.join(tmpdir(), 'docs-links-'));
    t.after(() => rm(root, { recursive: true, force: true }));
    await mkdir(path.join(root, 'docs'));
    await writeFile(path.join(root, 'code.ts'), '');
    await writeFile(
        path.join(root, 'README.md'),
        [
            '# Title',
            '## `listen.host`: the address',
            '## Twice',
            '## Twice',
            'See [the guide](docs/guide.md#set-up), [a heading](#listenhost-the-address), [again](#twice-1),',
            '[code](code.ts), [the web](https://example.com/missing.md) and <!-- [hidden](gone.md) -->.',
            '`[in code](gone.md)` and a link split',
            'over lines: [set-up\nsteps](docs/guide.md#set-up).',
            '```md',
            '[in a block](gone.md)',
            '```',
            '[missing file](docs/nope.md), [missing anchor](docs/guide.md#tear-down), [own anchor](#nope),',
            '[outside](../elsewhere.md), ![image](docs/missing.png)'
        ].join('\n')
    );
    await writeFile(path.join(root, 'docs/guide.md'), '# Guide\n\n## Set-up\n\nBack to the [README](../README.md#title).\n');

    assert.deepEqual(brokenLinks(root, ['README.md', 'docs/guide.md']), [
        'README.md: docs/nope.md (no such file)',
        'README.md: docs/guide.md#tear-down (no heading makes #tear-down)',
        'README.md: #nope (no heading makes #nope)',
        'README.md: ../elsewhere.md (outside the repository)',
        'README.md: docs/missing.png (no such file)'
    ]);
});

test('headings are slugged as GitHub does', () => {
    assert.deepEqual(
        [...anchorsOf('# Node 22.19 or later: Inspector 2\n## A 50,000-prompt catalog\n### `stdio` upstreams\n## CPU per get (all threads)\n')],
        ['node-2219-or-later-inspector-2', 'a-50000-prompt-catalog', 'stdio-upstreams', 'cpu-per-get-all-threads']
    );
});

test('every relative link and anchor in the README, CONTRIBUTING, SECURITY, CHANGELOG and docs/ resolves', () => {
    const pages = documentationPages(ROOT);
    assert.ok(pages.includes('docs/configuration.md'), `docs/ was not read: ${pages.join(', ')}`);
    assert.deepEqual(brokenLinks(ROOT, pages), []);
});
