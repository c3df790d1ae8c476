import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { interpolateEnv } from '../../src/config/interpolate.js';

/** Interpolates a single string at the top level and expects no issues. */
function ok(text: string, env: Record<string, string | undefined>): unknown {
    const result = interpolateEnv(text, env);
    assert.deepEqual(result.issues, []);
    return result.value;
}

describe('interpolateEnv: substitution', () => {
    test('${VAR} is replaced by its value', () => {
        assert.equal(ok('Bearer ${TOKEN}', { TOKEN: 't0k3n' }), 'Bearer t0k3n');
    });

    test('each value taken from the environment is reported with its variable and the whole string it went into; defaults are not', () => {
        const { expansions } = interpolateEnv({ a: 'Bearer ${TOKEN}', b: ['${MISSING:-fallback} ${HOST}'], c: '$${LITERAL}' }, { TOKEN: 't0k3n', HOST: 'example.org' });
        assert.deepEqual(expansions, [
            { name: 'TOKEN', value: 't0k3n', into: 'Bearer t0k3n' },
            { name: 'HOST', value: 'example.org', into: 'fallback example.org' }
        ]);
    });

    test('several placeholders in one string', () => {
        assert.equal(ok('${SCHEME}://${HOST}:${PORT}/mcp', { SCHEME: 'https', HOST: 'example.org', PORT: '8443' }), 'https://example.org:8443/mcp');
    });

    test('the value is inserted literally, not interpolated again', () => {
        assert.equal(ok('${A}', { A: '${B}', B: 'no' }), '${B}');
        assert.equal(ok('${A}', { A: '$&$1$$' }), '$&$1$$');
    });

    test('${VAR:-default} uses the value when set and non-empty', () => {
        assert.equal(ok('${LEVEL:-info}', { LEVEL: 'debug' }), 'debug');
    });

    test('${VAR:-default} uses the default when the variable is unset', () => {
        assert.equal(ok('${LEVEL:-info}', {}), 'info');
        assert.equal(ok('${LEVEL:-info}', { LEVEL: undefined }), 'info');
    });

    test('${VAR:-default} uses the default when the variable is empty', () => {
        assert.equal(ok('${LEVEL:-info}', { LEVEL: '' }), 'info');
    });

    test('an empty default is allowed', () => {
        assert.equal(ok('x${MISSING:-}y', {}), 'xy');
    });

    test('${VAR} set to the empty string gives the empty string, not an issue', () => {
        assert.equal(ok('[${EMPTY}]', { EMPTY: '' }), '[]');
    });

    test('$${ stands for a literal ${', () => {
        assert.equal(ok('$${HOME}', { HOME: '/root' }), '${HOME}');
        assert.equal(ok('a $${X} and ${X}', { X: 'x' }), 'a ${X} and x');
    });

    test('a lone $ and $NAME without braces are left alone', () => {
        assert.equal(ok('cost: $5, $HOME', { HOME: '/root' }), 'cost: $5, $HOME');
    });

    test('names of Object.prototype members are not found in an environment that lacks them', () => {
        for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
            const result = interpolateEnv(`\${${name}}`, {});
            assert.equal(result.issues.length, 1, name);
            assert.match(result.issues[0]!.message, new RegExp(`\\b${name}\\b`));
        }
    });
});

describe('interpolateEnv: issues', () => {
    test('an unset variable without default is an issue naming the variable, at the path of the string', () => {
        const { issues } = interpolateEnv({ upstreams: [{ headers: { Authorization: 'Bearer ${API_TOKEN}' } }] }, {});
        assert.equal(issues.length, 1);
        assert.deepEqual(issues[0]!.path, ['upstreams', 0, 'headers', 'Authorization']);
        assert.match(issues[0]!.message, /\bAPI_TOKEN\b/);
        assert.match(issues[0]!.message, /not set/);
    });

    test('every unset variable is reported, not only the first', () => {
        const { issues } = interpolateEnv({ a: '${ONE}', b: ['${TWO}', '${THREE:-ok}'] }, {});
        assert.deepEqual(
            issues.map(issue => issue.path),
            [['a'], ['b', 0]]
        );
        assert.match(issues[0]!.message, /\bONE\b/);
        assert.match(issues[1]!.message, /\bTWO\b/);
    });

    const malformed = ['${', '${NAME', '${}', '${1ABC}', '${A-B}', '${A B}', '${A-default}', 'x ${bad-name} y'];
    for (const text of malformed) {
        test(`malformed placeholder ${JSON.stringify(text)} is an issue`, () => {
            const { issues } = interpolateEnv({ field: text }, { NAME: 'v', A: 'v', A_B: 'v' });
            assert.equal(issues.length, 1);
            assert.deepEqual(issues[0]!.path, ['field']);
            assert.match(issues[0]!.message, /malformed placeholder/);
        });
    }

    test('the issue for an unset variable does not contain the values of other variables', () => {
        const { issues } = interpolateEnv({ url: 'https://${HOST}/?key=${KEY}' }, { KEY: 'super-secret-value' });
        assert.equal(issues.length, 1);
        assert.doesNotMatch(issues[0]!.message, /super-secret-value/);
    });
});

describe('interpolateEnv: structure', () => {
    test('keys are never rewritten', () => {
        const { value, issues } = interpolateEnv({ '${KEY}': 'v', nested: { '$${X}': '${VAL}' } }, { KEY: 'k', VAL: 'val' });
        assert.deepEqual(issues, []);
        assert.deepEqual(value, { '${KEY}': 'v', nested: { '$${X}': 'val' } });
    });

    test('non-string values are untouched', () => {
        const document = { n: 42, f: 1.5, t: true, z: null, list: [0, false, null, { deep: 7 }] };
        const { value, issues } = interpolateEnv(document, { n: 'x' });
        assert.deepEqual(issues, []);
        assert.deepEqual(value, document);
    });

    test('the input document is not modified', () => {
        const document = { a: '${A}', list: ['${A}'] };
        interpolateEnv(document, { A: 'x' });
        assert.deepEqual(document, { a: '${A}', list: ['${A}'] });
    });

    test('a "__proto__" key stays an own data property and does not change the prototype', () => {
        const document: unknown = JSON.parse('{"__proto__": {"polluted": "${V}"}, "ok": "${V}"}');
        const { value, issues } = interpolateEnv(document, { V: 'yes' });
        assert.deepEqual(issues, []);
        const out = value as Record<string, unknown>;
        assert.equal(Object.getPrototypeOf(out), Object.prototype);
        assert.ok(Object.hasOwn(out, '__proto__'));
        assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, { polluted: 'yes' });
        assert.equal(out['ok'], 'yes');
        assert.equal((out as { polluted?: unknown }).polluted, undefined);
        assert.equal(({} as { polluted?: unknown }).polluted, undefined);
    });

    test('a nested "__proto__" key inside an array element stays data', () => {
        const document: unknown = JSON.parse('[{"__proto__": "${V}"}]');
        const { value } = interpolateEnv(document, { V: 'x' });
        const element = (value as Record<string, unknown>[])[0]!;
        assert.equal(Object.getPrototypeOf(element), Object.prototype);
        assert.equal(Object.getOwnPropertyDescriptor(element, '__proto__')?.value, 'x');
    });

    test('scalars at the top level', () => {
        assert.equal(interpolateEnv(5, {}).value, 5);
        assert.equal(interpolateEnv(null, {}).value, null);
        assert.equal(interpolateEnv('${A}', { A: 'a' }).value, 'a');
    });
});
