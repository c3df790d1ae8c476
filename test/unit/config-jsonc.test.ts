/** Config files are JSON with comments and trailing commas; syntax errors are located, never quoted. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseJsonc } from '../../src/config/jsonc.js';
import { parseConfig } from '../../src/config/load.js';
import { configError, lineFor } from './config-assert.js';

const SOURCE = 'gateway.test.json';

describe('parseConfig: JSON with comments', () => {
    test('line and block comments, trailing commas and $schema are accepted', () => {
        const text = [
            '// the gateway config',
            '{',
            '  "$schema": "file:///opt/gateway/config/gateway.schema.json",',
            '  /* where clients connect */',
            '  "listen": { "port": 9000, }, // trailing comma in an object',
            '  "upstreams": [',
            '    { "id": "local", "transport": "stdio", "command": "node", "args": ["a.js", "b.js",], },',
            '    // { "id": "later", "transport": "stdio", "command": "node" },',
            '  ],',
            '}',
            ''
        ].join('\n');
        const config = parseConfig(text, SOURCE, {});
        assert.equal(config.listen.port, 9000);
        assert.deepEqual(
            config.upstreams.map(upstream => upstream.id),
            ['local']
        );
        assert.deepEqual(config.upstreams[0]?.transport === 'stdio' && config.upstreams[0].args, ['a.js', 'b.js']);
    });

    test('comment markers inside strings are text', () => {
        const text = '{ "upstreams": [{ "id": "u", "transport": "streamable-http", "url": "https://mcp.example.org/mcp//x/*y*/" }] }';
        const upstream = parseConfig(text, SOURCE, {}).upstreams[0];
        assert.equal(upstream?.transport === 'streamable-http' && upstream.url, 'https://mcp.example.org/mcp//x/*y*/');
    });

    test('a syntax error is reported at its line and column, without quoting the file', () => {
        const text = '{\n  "cursorSecret": "hunter2-hunter2-hunter2"\n  "upstreams": []\n}';
        const error = configError(() => parseConfig(text, SOURCE, {}));
        assert.equal(lineFor(error, '(top level)'), '  - (top level): not valid JSON at line 3, column 3: expected ","; fix the syntax there');
        assert.doesNotMatch(error.message, /hunter2/);
    });

    test('a string broken across lines, an unclosed comment and an empty file are located', () => {
        const cases: [string, RegExp][] = [
            ['{\n "cursorSecret": "sec\nret"}', /line 2, column 18: string not closed/],
            ['{ "upstreams": [] /* note', /line 1, column 19: comment not closed with \*\//],
            ['', /line 1, column 1: expected a value/],
            ['{}\n{}', /line 2, column 1: unexpected text after the end of the document/]
        ];
        for (const [text, message] of cases) {
            const error = configError(() => parseConfig(text, SOURCE, {}));
            assert.match(lineFor(error, '(top level)'), message, JSON.stringify(text));
            assert.doesNotMatch(error.message, /sec\W*ret/);
        }
    });
});

describe('parseJsonc', () => {
    test('a key "__proto__" is a key like any other, as with JSON.parse', () => {
        const parsed = parseJsonc('{ "__proto__": { "polluted": true }, "a": 1 }');
        assert.ok(parsed.ok);
        const value = parsed.value as Record<string, unknown>;
        assert.equal(Object.getPrototypeOf(value), Object.prototype);
        assert.equal(value.polluted, undefined);
        assert.deepEqual(Object.keys(value), ['__proto__', 'a']);
        assert.deepEqual(value, JSON.parse('{ "__proto__": { "polluted": true }, "a": 1 }'));
    });

    test('a repeated key keeps its last value, a byte order mark is skipped, and scalars come through', () => {
        assert.deepEqual(parseJsonc('\uFEFF{ "a": 1, "a": [true, null, "x", -1.5e3] }'), { ok: true, value: { a: [true, null, 'x', -1500] } });
    });

    test('a byte order mark does not shift the column of an error', () => {
        assert.deepEqual(parseJsonc('\uFEFF{ x }'), { ok: false, line: 1, column: 3, problem: 'unexpected character' });
    });
});
