/**
 * The catalog page's pure parts, run under Node as the browser runs them (no build step): copy texts, shell quoting
 * (checked by a real POSIX shell), upstream of a name, search, list diffs, and which data: URLs and links render.js
 * would make. What the page does with them in a browser is test/catalog.test.ts's.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import fc from 'fast-check';
import {
    base64Bytes,
    claudeCodeCommand,
    countText,
    describeChanges,
    diffPrompts,
    filledArguments,
    inspectorCommand,
    matchesSearch,
    resultText,
    shellQuote,
    upstreamOf,
    vscodeCommand
} from '../../src/downstream/http/catalog-page/copy-text.js';
import { audioSource, imageSource, linkHref } from '../../src/downstream/http/catalog-page/render.js';
import { allContentResult } from '../fixtures/fixture-prompts.js';

/** The words a POSIX shell makes of `command` (variables from `env`), as its own argv. */
function shellWords(command: string, env: Record<string, string> = {}): string[] {
    const script = `set -- ${command}\nfor word in "$@"; do printf '%s\\0' "$word"; done`;
    const output = execFileSync('sh', ['-c', script], { env: { PATH: process.env['PATH'] ?? '', ...env }, encoding: 'utf8' });
    return output.split('\0').slice(0, -1);
}

const REVIEW = [{ name: 'diff', description: 'The change', required: true }, { name: 'language', required: true }, { name: 'focus' }];

test('upstreamOf: the text before the first separator; none without one or with nothing before it', () => {
    assert.equal(upstreamOf('team__code-review', '__'), 'team');
    assert.equal(upstreamOf('team__a__b', '__'), 'team');
    assert.equal(upstreamOf('team.code-review', '.'), 'team');
    assert.equal(upstreamOf('plain', '__'), undefined);
    assert.equal(upstreamOf('__leading', '__'), undefined);
    assert.equal(upstreamOf('team__x', ''), undefined);
});

test('matchesSearch: every term, case-insensitively, in the name, title, description or an argument name', () => {
    const prompt = { name: 'team__code-review', title: 'Code review', description: 'Correctness first', arguments: REVIEW };
    assert.ok(matchesSearch(prompt, ''));
    assert.ok(matchesSearch(prompt, '   '));
    assert.ok(matchesSearch(prompt, 'REVIEW'));
    assert.ok(matchesSearch(prompt, 'correctness'), 'a term of the description only');
    assert.ok(matchesSearch(prompt, 'language'), 'an argument name');
    assert.ok(matchesSearch(prompt, 'team first'), 'two terms in different fields');
    assert.ok(!matchesSearch(prompt, 'team missing'), 'every term must match');
    assert.ok(!matchesSearch({ name: 'ops__handover' }, 'review'));
});

test('diffPrompts and describeChanges: added, removed and changed by name, key order ignored', () => {
    const before = [{ name: 'team__a', description: 'A', arguments: [{ name: 'x', required: true }] }, { name: 'team__old' }, { name: 'team__same', title: 'S' }];
    const after = [{ arguments: [{ required: true, name: 'x' }], description: 'A', name: 'team__a' }, { name: 'team__same', title: 'S2' }, { name: 'team__new' }];
    const changes = diffPrompts(before, after);
    assert.deepEqual(changes, { added: ['team__new'], removed: ['team__old'], changed: ['team__same'] });
    assert.equal(describeChanges(changes), 'Prompts updated: 1 added (team__new), 1 removed (team__old), 1 changed (team__same)');
    assert.equal(describeChanges(diffPrompts(before, before)), undefined);
    const many = Array.from({ length: 7 }, (_, i) => ({ name: `p${i}` }));
    assert.equal(describeChanges(diffPrompts([], many)), 'Prompts updated: 7 added (p0, p1, p2, p3, p4 and 2 more)');
});

test('countText: the total, or how many of it a search shows', () => {
    assert.equal(countText(12, 12, false), '12 prompts');
    assert.equal(countText(3, 12, true), '3 of 12 prompts');
    assert.equal(countText(1, 1, false), '1 prompt');
    assert.equal(countText(0, 0, false), '0 prompts');
});

test('resultText: each message text, stand-ins for what is not text, messages one blank line apart', () => {
    assert.equal(
        resultText(allContentResult()),
        ['annotated text', '[image: image/png]', '[audio: audio/wav]', 'hello', '[resource: file:///c.bin (application/octet-stream)]', '[resource link: file:///b.txt]'].join(
            '\n\n'
        )
    );
    assert.equal(resultText({ messages: [] }), '');
    assert.equal(resultText({}), '');
});

test('filledArguments and the Claude Code command: non-empty values in the prompt argument order, undeclared last', () => {
    const values = { focus: 'tests', extra: 'e', diff: 'x.ts', language: '' };
    assert.deepEqual(filledArguments(REVIEW, values), [
        ['diff', 'x.ts'],
        ['focus', 'tests'],
        ['extra', 'e']
    ]);
    assert.equal(
        claudeCodeCommand({ serverName: 'prompts', name: 'team__code-review', declared: REVIEW, values: { language: 'python', diff: 'd' } }),
        '/mcp__prompts__team__code-review d python'
    );
    assert.equal(claudeCodeCommand({ serverName: 'gw', name: 'ops__handover', declared: [], values: {} }), '/mcp__gw__ops__handover');
});

test('the VS Code command is /mcp.<server>.<prompt>: VS Code asks for the arguments itself', () => {
    assert.equal(vscodeCommand({ serverName: 'prompts', name: 'team__code-review' }), '/mcp.prompts.team__code-review');
});

test('shellQuote: a POSIX shell reads back exactly the word, whatever it holds', () => {
    const words = fc.sample(
        fc.string({
            unit: fc.oneof(fc.constantFrom("'", '"', '\\', '$', '`', ' ', '\n', '*', '!', ';', '&', '|', '~', '#'), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }))
        }),
        150
    );
    // A shell word cannot hold NUL; the empty word must survive too.
    const cases = ['', "it's", 'a b', '$HOME', '`id`', 'plain-word_1.2', ...words.map(word => word.replaceAll('\0', ''))];
    assert.deepEqual(shellWords(cases.map(shellQuote).join(' ')), cases);
    assert.equal(shellQuote('team__code-review'), 'team__code-review', 'plain words stay readable');
    assert.equal(shellQuote("it's"), "'it'\\''s'");
});

test('the Inspector command: the prompt and its arguments as the shell passes them, the credential only as $GATEWAY_KEY', () => {
    const values = { diff: "--- a\n+++ b it's $(rm -rf /)", language: 'python' };
    const options = { url: 'http://127.0.0.1:8080/mcp', name: 'team__code-review', declared: REVIEW, values };
    const open = inspectorCommand({ ...options, authenticated: false });
    assert.deepEqual(shellWords(open), [
        'npx',
        '@modelcontextprotocol/inspector',
        '--cli',
        'http://127.0.0.1:8080/mcp',
        '--method',
        'prompts/get',
        '--prompt-name',
        'team__code-review',
        '--prompt-args',
        `diff=${values.diff}`,
        'language=python'
    ]);
    const withAuth = inspectorCommand({ ...options, authenticated: true });
    assert.match(withAuth, /--header "Authorization: Bearer \$GATEWAY_KEY"/);
    const words = shellWords(withAuth, { GATEWAY_KEY: 'k-123' });
    assert.deepEqual(words.slice(8, 10), ['--header', 'Authorization: Bearer k-123']);
    assert.equal(inspectorCommand({ ...options, values: {}, authenticated: false }).includes('--prompt-args'), false);
    assert.equal(shellWords(inspectorCommand({ ...options, name: 'lab__café it', values: {}, authenticated: false }))[7], 'lab__café it');
});

test('base64Bytes: the decoded length, without decoding', () => {
    fc.assert(
        fc.property(fc.uint8Array({ maxLength: 64 }), bytes => {
            assert.equal(base64Bytes(Buffer.from(bytes).toString('base64')), bytes.length);
        })
    );
});

test('imageSource and audioSource: data: URLs for raster images and the listed audio types only', () => {
    assert.equal(imageSource({ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }), 'data:image/png;base64,iVBORw0KGgo=');
    assert.equal(imageSource({ type: 'image', mimeType: ' Image/JPEG ', data: 'AAAA' }), 'data:image/jpeg;base64,AAAA');
    assert.equal(imageSource({ type: 'image', mimeType: 'image/svg+xml', data: 'PHN2Zz4=' }), undefined, 'SVG can carry script');
    assert.equal(imageSource({ type: 'image', mimeType: 'text/html', data: 'AAAA' }), undefined);
    assert.equal(imageSource({ type: 'image', mimeType: 'image/png', data: 'AA"onerror=x' }), undefined, 'not base64');
    assert.equal(imageSource({ type: 'image', mimeType: 'image/png' }), undefined);
    assert.equal(audioSource({ type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' }), 'data:audio/wav;base64,UklGRg==');
    for (const type of ['audio/mpeg', 'audio/ogg', 'audio/webm', 'audio/mp4', 'audio/aac', 'audio/flac']) assert.ok(audioSource({ mimeType: type, data: 'AAAA' }));
    assert.equal(audioSource({ type: 'audio', mimeType: 'audio/x-unknown', data: 'AAAA' }), undefined);
    assert.equal(audioSource({ type: 'audio', mimeType: 'video/mp4', data: 'AAAA' }), undefined);
});

test('linkHref: absolute http: and https: URLs only; every other scheme stays text', () => {
    assert.equal(linkHref('https://example.com/a?b=c'), 'https://example.com/a?b=c');
    assert.equal(linkHref('http://example.com'), 'http://example.com/');
    for (const uri of [
        'javascript:alert(1)',
        'JAVASCRIPT:alert(1)',
        ' javascript:alert(1)',
        'file:///etc/passwd',
        'data:text/html,<b>',
        'vbscript:x',
        '/relative',
        'b.txt',
        'http//broken',
        ''
    ]) {
        assert.equal(linkHref(uri), undefined, uri);
    }
    assert.equal(linkHref(undefined), undefined);
});
