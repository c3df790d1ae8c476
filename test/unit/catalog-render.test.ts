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
    CLAUDE_CODE_CAVEAT,
    claudeCodeCommand,
    countText,
    describeChanges,
    diffPrompts,
    filledArguments,
    inspectorCommand,
    matchesTerms,
    resultText,
    searchTerms,
    searchText,
    shellQuote,
    upstreamOf,
    valueOf,
    vscodeCommand
} from '../../src/downstream/http/catalog-page/copy-text.js';
import { coalesced, whileLiveOff } from '../../src/downstream/http/catalog-page/coalesce.js';
import { audioSource, imageSource, linkHref, rendererFor } from '../../src/downstream/http/catalog-page/render.js';
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

test('search: every term, case-insensitively, in the name, title, description or an argument name', () => {
    const prompt = { name: 'team__code-review', title: 'Code review', description: 'Correctness first', arguments: REVIEW };
    const matches = (p: typeof prompt | { name: string }, query: string) => matchesTerms(searchText(p), searchTerms(query));
    assert.ok(matches(prompt, ''));
    assert.ok(matches(prompt, '   '));
    assert.ok(matches(prompt, 'REVIEW'));
    assert.ok(matches(prompt, 'correctness'), 'a term of the description only');
    assert.ok(matches(prompt, 'language'), 'an argument name');
    assert.ok(matches(prompt, 'team first'), 'two terms in different fields');
    assert.ok(!matches(prompt, 'team missing'), 'every term must match');
    assert.ok(!matches({ name: 'ops__handover' }, 'review'));
    // Made once per list: the text is lower-cased already, the terms once per query.
    assert.equal(searchText(prompt), 'team__code-review\ncode review\ncorrectness first\ndiff\nlanguage\nfocus');
    assert.deepEqual(searchTerms(' Team  FIRST '), ['team', 'first']);
    assert.equal(searchText({ name: 'x', arguments: 'not a list' } as never), 'x');
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

test('filledArguments: non-empty values in the prompt argument order, undeclared last', () => {
    const values = { focus: 'tests', extra: 'e', diff: 'x.ts', language: '' };
    assert.deepEqual(filledArguments(REVIEW, values), [
        ['diff', 'x.ts'],
        ['focus', 'tests'],
        ['extra', 'e']
    ]);
});

test('the Claude Code command: values by position up to the last filled one, and whether Claude Code can pass them', () => {
    const command = (values: Record<string, string>) => claudeCodeCommand({ serverName: 'prompts', name: 'team__code-review', declared: REVIEW, values });
    assert.deepEqual(command({ diff: 'd', language: 'python' }), { command: '/mcp__prompts__team__code-review d python', passable: true });
    assert.deepEqual(command({ diff: 'd' }), { command: '/mcp__prompts__team__code-review d', passable: true }, 'empty trailing positions are left out');
    // An empty position before a filled one: the later value would land in the empty one's place.
    assert.equal(command({ language: 'python' }).passable, false);
    assert.equal(command({ diff: 'd', focus: 'tests' }).passable, false);
    // Whitespace splits a value into several arguments.
    assert.deepEqual(command({ diff: 'a b' }), { command: '/mcp__prompts__team__code-review a b', passable: false });
    assert.equal(command({ diff: 'a\tb' }).passable, false);
    assert.deepEqual(claudeCodeCommand({ serverName: 'gw', name: 'ops__handover', declared: [], values: {} }), { command: '/mcp__gw__ops__handover', passable: true });
    assert.match(CLAUDE_CODE_CAVEAT, /^Claude Code cannot pass these values as they are.*Inspector.*VS Code/);
});

test('argument names like constructor, toString and __proto__ are names like any other', () => {
    const declared = ['constructor', 'toString', '__proto__', 'hasOwnProperty'].map(name => ({ name }));
    // A form's values as the page collects them: an object without a prototype.
    const empty = Object.create(null) as Record<string, string>;
    for (const { name } of declared) assert.equal(valueOf({}, name), '', `nothing inherited for ${name}`);
    assert.deepEqual(filledArguments(declared, empty), []);
    assert.deepEqual(claudeCodeCommand({ serverName: 'gw', name: 'p', declared, values: {} }), { command: '/mcp__gw__p', passable: true });
    const values = Object.create(null) as Record<string, string>;
    values['__proto__'] = 'proto value';
    values['constructor'] = 'c';
    assert.equal(valueOf(values, '__proto__'), 'proto value');
    assert.deepEqual(filledArguments(declared, values), [
        ['constructor', 'c'],
        ['__proto__', 'proto value']
    ]);
    assert.match(
        inspectorCommand({ url: 'http://127.0.0.1:8080/mcp', name: 'p', declared, values, authenticated: false }),
        / --prompt-args 'constructor=c' '__proto__=proto value'$/
    );
    // A content type from upstream never picks a property of an object.
    for (const type of ['constructor', 'toString', '__proto__']) assert.equal(rendererFor(type), undefined, type);
    assert.equal(typeof rendererFor('text'), 'function');
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

test('linkHref: a URL with a user name or password stays text; a link is shown by its parsed href', () => {
    for (const uri of ['https://trusted.example@evil.example/', 'https://user:pass@example.com/', 'http://:pw@example.com/']) {
        assert.equal(linkHref(uri), undefined, uri);
    }
    // What the link shows is where it goes: the parsed form, not the upstream's spelling.
    assert.equal(linkHref('HTTPS://EXAMPLE.com/a b'), 'https://example.com/a%20b');
});

test('coalesced: a storm of asks is one run at a time, one more queued, each a second after the one before', async t => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 100_000 });
    const started: number[] = [];
    const finishers: (() => void)[] = [];
    const walk = coalesced(
        () => {
            started.push(Date.now());
            return new Promise<void>(resolve => finishers.push(resolve));
        },
        { minGapMs: 1000 }
    );
    const settle = () => new Promise(resolve => setImmediate(resolve));
    const first = walk();
    assert.deepEqual(started, [100_000], 'the first ask runs at once');
    // A storm while it runs: all of it is one queued run, the promise every ask gets.
    const storm = Array.from({ length: 1000 }, () => walk());
    assert.ok(storm.every(promise => promise === storm[0]));
    assert.notEqual(storm[0], first, 'an ask during a run waits for a run that starts after it');
    t.mock.timers.tick(200);
    finishers[0]!();
    await first;
    await settle();
    assert.equal(started.length, 1, 'not before a second has passed since the last start');
    t.mock.timers.tick(799);
    await settle();
    assert.equal(started.length, 1);
    t.mock.timers.tick(1);
    await settle();
    assert.deepEqual(started, [100_000, 101_000]);
    finishers[1]!();
    await storm[0];
    // Quiet for a second: the next ask runs at once again.
    t.mock.timers.tick(1000);
    void walk();
    assert.deepEqual(started, [100_000, 101_000, 102_000]);
    finishers[2]!();
});

test('coalesced: a queued run is dropped once its signal aborts; a failed run does not stop the next', async t => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    const controller = new AbortController();
    let runs = 0;
    const walk = coalesced(
        () => {
            runs++;
            return runs === 1 ? Promise.reject(new Error('first fails')) : Promise.resolve();
        },
        { minGapMs: 1000, signal: controller.signal }
    );
    await assert.rejects(walk(), /first fails/);
    const queued = walk();
    t.mock.timers.tick(1000);
    await queued;
    assert.equal(runs, 2, 'the failure of the first run does not stop the queued one');
    const dropped = walk();
    controller.abort();
    t.mock.timers.tick(1000);
    await assert.rejects(dropped, { name: 'AbortError' });
    assert.equal(runs, 2);
});

test('whileLiveOff: a tab refused its listen slot (off, reconnecting, off ... every 30 s) still walks the list every ttlMs', t => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    let walks = 0;
    const told = whileLiveOff(
        () => walks++,
        () => 60_000
    );
    told('connecting');
    t.mock.timers.tick(120_000);
    assert.equal(walks, 0, 'no walk while connecting');
    // The gateway's 429 for a client's 17th stream: the listen loop goes off, waits 30 s, tries again, is refused again.
    for (let cycle = 0; cycle < 20; cycle++) {
        told('off');
        t.mock.timers.tick(15_000);
        told('reconnecting');
        t.mock.timers.tick(15_000);
    }
    assert.equal(walks, 10, 'one walk a minute over the ten minutes, though the state changed forty times');
    told('listening');
    t.mock.timers.tick(600_000);
    assert.equal(walks, 10, 'the live stream back: no more timed walks');
    told('off');
    t.mock.timers.tick(60_000);
    assert.equal(walks, 11);
    told('stopped');
    t.mock.timers.tick(600_000);
    assert.equal(walks, 11, 'stopped for good');
});
