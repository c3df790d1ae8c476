import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ProtocolError, type Prompt } from '@modelcontextprotocol/client';
import { validateArguments, type ArgumentRules } from '../../src/catalog/arguments.js';

const INVALID_PARAMS = -32602;

const prompt = (...args: { name: string; required?: boolean }[]): Prompt => ({ name: 'p', arguments: args });

/** Asserts that validation fails with a JSON-RPC "invalid params" error and returns its message. */
function invalid(p: Prompt, args: unknown, rules?: ArgumentRules): string {
    try {
        validateArguments(p, args, rules);
    } catch (error) {
        assert.ok(error instanceof ProtocolError, `expected a ProtocolError, got ${String(error)}`);
        assert.equal(error.code, INVALID_PARAMS);
        return error.message;
    }
    assert.fail(`arguments ${JSON.stringify(args)} were accepted`);
}

describe('validateArguments', () => {
    test('all declared string arguments present are accepted and passed on', () => {
        const args = { topic: 'cats', tone: 'dry' };
        assert.deepEqual(validateArguments(prompt({ name: 'topic', required: true }, { name: 'tone' }), args), args);
    });

    test('every missing required argument is named in one error', () => {
        const p = prompt({ name: 'alpha', required: true }, { name: 'beta', required: true }, { name: 'gamma', required: true }, { name: 'opt' });
        const message = invalid(p, { beta: 'b' });
        assert.match(message, /"alpha"/);
        assert.match(message, /"gamma"/);
        assert.doesNotMatch(message, /"beta"/);
        assert.doesNotMatch(message, /"opt"/);
    });

    test('missing required arguments are reported when no arguments are given at all', () => {
        const p = prompt({ name: 'alpha', required: true }, { name: 'beta', required: true });
        for (const args of [undefined, null]) {
            const message = invalid(p, args);
            assert.match(message, /"alpha"/);
            assert.match(message, /"beta"/);
        }
    });

    test('optional arguments may be left out', () => {
        assert.deepEqual(validateArguments(prompt({ name: 'a', required: false }, { name: 'b' }), {}), {});
    });

    test('no arguments at all is fine when none are required', () => {
        assert.equal(validateArguments(prompt({ name: 'a' }), undefined), undefined);
        assert.equal(validateArguments({ name: 'p' }, undefined), undefined);
        assert.equal(validateArguments({ name: 'p' }, null), undefined);
    });

    for (const [label, value] of [
        ['a number', 1],
        ['a boolean', true],
        ['null', null],
        ['an object', { x: 'y' }],
        ['an array', ['x']]
    ] as const) {
        test(`a value that is ${label} is rejected, naming the key`, () => {
            const message = invalid(prompt({ name: 'good' }, { name: 'bad' }), { good: 'ok', bad: value });
            assert.match(message, /"bad"/);
            assert.doesNotMatch(message, /"good"/);
        });
    }

    test('every non-string value is named', () => {
        const message = invalid(prompt(), { one: 1, two: 'x', three: false });
        assert.match(message, /"one"/);
        assert.match(message, /"three"/);
        assert.doesNotMatch(message, /"two"/);
    });

    for (const [label, value] of [
        ['a string', 'topic=cats'],
        ['a number', 42],
        ['an array', ['cats']],
        ['a boolean', true]
    ] as const) {
        test(`arguments that are ${label} instead of an object are rejected`, () => {
            invalid(prompt({ name: 'topic' }), value);
        });
    }

    test('undeclared arguments are rejected by name when the prompt declares its arguments', () => {
        const message = invalid(prompt({ name: 'declared', required: true }), { declared: 'a', extra: 'b', __proto__x: 'c' });
        assert.match(message, /"extra"/);
        assert.match(message, /"__proto__x"/);
        assert.doesNotMatch(message, /"declared"/);
        assert.match(invalid(prompt(), { anything: 'x' }), /"anything"/, 'an empty declaration declares no arguments');
    });

    test('undeclared arguments pass through with passUnknown, or when the prompt declares nothing', () => {
        const args = { declared: 'a', extra: 'b' };
        const rules = { maxArguments: 64, maxArgumentBytes: 100, passUnknown: true };
        assert.deepEqual(validateArguments(prompt({ name: 'declared', required: true }), args, rules), args);
        assert.deepEqual(validateArguments({ name: 'p' }, args), args);
    });

    test('more than maxArguments arguments are rejected, naming the limit', () => {
        const rules = { maxArguments: 3, maxArgumentBytes: 100, passUnknown: true };
        const four = { a: '1', b: '2', c: '3', d: '4' };
        assert.match(invalid({ name: 'p' }, four, rules), /Too many arguments: 4 \(at most 3\)/);
        assert.deepEqual(validateArguments({ name: 'p' }, { a: '1', b: '2', c: '3' }, rules), { a: '1', b: '2', c: '3' });
    });

    test('a value over maxArgumentBytes (UTF-8 bytes, not characters) is rejected, naming the argument', () => {
        const rules = { maxArguments: 64, maxArgumentBytes: 8, passUnknown: true };
        assert.deepEqual(validateArguments({ name: 'p' }, { fits: 'abcdefgh' }, rules), { fits: 'abcdefgh' });
        // Four characters, twelve bytes.
        const message = invalid({ name: 'p' }, { fits: 'ok', wide: '\u20ac\u20ac\u20ac\u20ac' }, rules);
        assert.match(message, /"wide"/);
        assert.doesNotMatch(message, /"fits"/);
        assert.match(message, /at most 8 bytes/);
    });

    test('an error names at most ten arguments, each cut short: it never grows with the request', () => {
        const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${'x'.repeat(1000)}${i}`, 1]));
        const message = invalid({ name: 'p' }, many, { maxArguments: 100, maxArgumentBytes: 100, passUnknown: true });
        assert.ok(message.length < 1000, `message of ${message.length} characters`);
        assert.match(message, /and 40 more/);
    });

    test('a required argument named "__proto__" is satisfied by an own "__proto__" key', () => {
        const args: unknown = JSON.parse('{"__proto__":"x"}');
        assert.deepEqual(Object.keys(args as object), ['__proto__']);
        const result = validateArguments(prompt({ name: '__proto__', required: true }), args);
        assert.equal(Object.getOwnPropertyDescriptor(result, '__proto__')?.value, 'x');
    });

    test('a required argument named "__proto__" is missing from {}, although {} has a __proto__ accessor', () => {
        assert.match(invalid(prompt({ name: '__proto__', required: true }), {}), /"__proto__"/);
    });

    test('a required argument named "constructor" or "toString" is not satisfied by inherited members', () => {
        const message = invalid(prompt({ name: 'constructor', required: true }, { name: 'toString', required: true }), {});
        assert.match(message, /"constructor"/);
        assert.match(message, /"toString"/);
        assert.deepEqual(validateArguments(prompt({ name: 'constructor', required: true }), { constructor: 'c' }), { constructor: 'c' });
    });

    test('a non-string "__proto__" value is rejected like any other', () => {
        assert.match(invalid(prompt(), JSON.parse('{"__proto__":{"polluted":"yes"}}')), /"__proto__"/);
    });
});
