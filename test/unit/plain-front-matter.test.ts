/**
 * The plain front-matter reader against the `yaml` parser it stands in for: wherever it answers, it must answer
 * what `yaml` does; where it cannot be sure, it must leave the text to `yaml`. Hand-picked cases, then many
 * generated ones from fragments that sit on the edges of YAML's rules.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseDocument } from 'yaml';
import { readPlainFrontMatter } from '../../src/upstream/files/plain-front-matter.js';

const DEPTH = 6;

/** What `yaml` makes of it (as prompt-file.ts parses it), or undefined where it reports an error. */
function byYaml(text: string): unknown {
    const document = parseDocument(text, { prettyErrors: false, uniqueKeys: true, strict: true });
    if (document.errors.length > 0) return undefined;
    try {
        return document.toJS({ maxAliasCount: 0 });
    } catch {
        return undefined;
    }
}

function assertAgrees(text: string): unknown {
    const plain = readPlainFrontMatter(text, DEPTH);
    if (plain !== undefined) assert.deepEqual(plain, byYaml(text), `plain reading of ${JSON.stringify(text)}`);
    return plain;
}

const TYPICAL = `title: Review a change
description: Reviews a diff for correctness, security and clarity.
arguments:
  - name: diff
    description: The change, as a unified diff
    required: true
  - name: focus
    required: false
    values: [security, performance, readability]
icons:
  - src: https://example.com/icon.png
    sizes: [any]`;

describe('plain front matter', { timeout: 60_000 }, () => {
    test('reads the front matter most files have, as yaml does', () => {
        const plain = assertAgrees(TYPICAL);
        assert.equal((plain as { arguments: { required: boolean }[] }).arguments[0]!.required, true);
        for (const text of [
            '',
            '# only a comment',
            'name: a\n\n# comment\ntitle: b',
            'arguments:\n- name: a\n- name: b',
            'values: []',
            'values: [a,b , c d]',
            'a:',
            'a:\nb: c',
            'title: a:b#c',
            'title: "quoted"',
            'argument-hint: "[pr-number] [priority]"',
            'title: "a: b # c, [d] {e} *f &g !h"',
            'title: ""',
            'values:\n  - "a"\n  - b'
        ]) {
            assert.notEqual(assertAgrees(text), undefined, JSON.stringify(text));
        }
    });

    test('reads double-quoted text without escapes (argument-hint, which the other formats quote before parsing), as yaml does', () => {
        assert.deepEqual(assertAgrees('description: Review a PR\nargument-hint: "[pr-number] [priority]"\nmodel: claude-sonnet-4-5'), {
            description: 'Review a PR',
            'argument-hint': '[pr-number] [priority]',
            model: 'claude-sonnet-4-5'
        });
    });

    test('leaves to yaml what it cannot be sure of', () => {
        const leftToYaml = [
            'title: "escaped \\" quote"',
            'title: "escaped \\n line"',
            'title: "a" b',
            'title: "open',
            'title: "a"b"',
            'values: ["a", b]',
            '"key": a',
            "title: 'single'",
            'title: 1.0',
            'title: 2024-01-01',
            'title: ~',
            'title: null',
            'title: True',
            'required: TRUE',
            'title: .inf',
            'title: -dash',
            'title: a # comment',
            'title: a: b',
            'title: &anchor a',
            'title: *alias',
            'title: !!str a',
            'title: |\n  block',
            'title: >\n  folded',
            'title: two\n  lines',
            'title:\ttab',
            'title: trailing ',
            'name: a\nname: b',
            '__proto__: a',
            'null: a',
            'values: [a, [b]]',
            'values: [a, ]',
            'values: [a: b]',
            'values: {a: b}',
            'values: [true]',
            'values: [1, 2]',
            'a:\n  b:\n    c:\n      d:\n        e:\n          f:\n            g: deep',
            '---\ntitle: a',
            '%YAML 1.2',
            'title: emoji \u{1F600}',
            'title: \u0007bell',
            'sizes: [48x48]',
            'a: b\n  c: d',
            'arguments:\n  - name: a\n  description: misplaced'
        ];
        for (const text of leftToYaml) assert.equal(assertAgrees(text), undefined, JSON.stringify(text));
    });

    test("YAML's white space is the space: Unicode's other spaces are text, never indentation nor what a list item is trimmed of", () => {
        for (const space of ['\u00a0', '\u2000', '\u202f', '\u3000']) {
            for (const text of [
                `arguments:\n${space} - name: a`,
                `arguments:\n${space}- name: a`,
                `arguments:\n  - name: a\n ${space}  description: b`,
                `title: a\n${space}# not a comment`,
                `title: a\n${space}`,
                `values: [${space}a, b${space}]`,
                `values: [${space}]`
            ]) {
                assertAgrees(text);
            }
        }
        // As yaml reads them: a comment or a blank line indented by a tab.
        assert.deepEqual(assertAgrees('\t# a comment\ntitle: a\n\t\ndescription: b'), { title: 'a', description: 'b' });
    });

    test('a key too long for yaml (its ":" more than 1024 characters in) is left to its error', () => {
        for (const length of [1000, 1024, 1100]) assertAgrees(`${'k'.repeat(length)}: v`);
        for (const length of [1000, 1024, 1100]) assertAgrees(`arguments:\n  - ${'k'.repeat(length)}: v`);
    });

    test('a prototype key never reaches an object', () => {
        assert.equal(readPlainFrontMatter('__proto__:\n  polluted: yes', DEPTH), undefined);
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });

    test('agrees with yaml on 40,000 generated texts', () => {
        const keys = ['name', 'title', 'a', 'b', 'true', 'null', '__proto__', 'x-y', 'a b'];
        const values = [
            '',
            'word',
            'two words',
            'true',
            'false',
            'True',
            '1',
            '-1',
            '.5',
            'a:b',
            'a: b',
            'a #c',
            'a#c',
            '[a, b]',
            '[]',
            '[a,]',
            '[true, x]',
            '"q"',
            '""',
            '"a: b"',
            '"a #b"',
            '"[a, b]"',
            '"x" y',
            '"\\t"',
            '"a\\"b"',
            '~',
            'x:',
            '?x',
            '- x',
            '&a x',
            '*a',
            'ä ö',
            '0x1F',
            'yes',
            'on',
            '.nan',
            'a,b'
        ];
        const indents = ['', '', '  ', '    ', ' '];
        let seed = 18;
        const pick = <T>(items: readonly T[]): T => {
            seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
            // The high bits: an LCG's low bits repeat with a short period.
            return items[Math.floor(seed / 65_536) % items.length]!;
        };
        let answered = 0;
        for (let n = 0; n < 40_000; n++) {
            const lines: string[] = [];
            const count = 1 + (n % 5);
            for (let i = 0; i < count; i++) {
                const value = pick([true, false, false]) ? pick(values) : pick(['', 'word', 'two words', 'true', '[a, b]']);
                const item = pick([false, false, true]) ? '- ' : '';
                lines.push(`${pick(indents)}${item}${pick(keys)}:${value === '' ? '' : ` ${value}`}`);
            }
            if (assertAgrees(lines.join('\n')) !== undefined) answered++;
        }
        // Generated texts the reader did answer: enough for the comparison to mean something.
        assert.ok(answered > 1_200, `only ${answered} answered`);
    });
});
