/** readCredentials: every shape of Authorization / X-API-Key header a caller can send. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_CREDENTIAL_LENGTH, readCredentials } from '../../src/policy/credentials.js';

type Headers = Parameters<typeof readCredentials>[0];

const MALFORMED = { kind: 'malformed' };
const bearer = (token: string) => ({ kind: 'token', token, via: 'bearer' });
const apiKey = (token: string) => ({ kind: 'token', token, via: 'x-api-key' });

function check(headers: Headers, expected: unknown): void {
    assert.deepEqual(readCredentials(headers), expected, `headers ${JSON.stringify(headers)}`);
}

describe('readCredentials: no credentials', () => {
    test('no headers at all is "none"', () => {
        check({}, { kind: 'none' });
    });

    test('headers present but undefined is "none"', () => {
        check({ authorization: undefined, 'x-api-key': undefined }, { kind: 'none' });
    });
});

describe('readCredentials: Authorization header', () => {
    test('Bearer <token> gives the token', () => {
        check({ authorization: 'Bearer abc.DEF-123_~+/=' }, bearer('abc.DEF-123_~+/='));
    });

    test('the scheme is case-insensitive', () => {
        check({ authorization: 'bearer tok' }, bearer('tok'));
        check({ authorization: 'BEARER tok' }, bearer('tok'));
        check({ authorization: 'BeArEr tok' }, bearer('tok'));
    });

    test('extra spaces between scheme and token, and trailing spaces, are tolerated', () => {
        check({ authorization: 'Bearer    tok' }, bearer('tok'));
        check({ authorization: 'Bearer tok   ' }, bearer('tok'));
    });

    test('non-ASCII tokens are read as they are (and will simply not match)', () => {
        check({ authorization: 'Bearer ключ' }, bearer('ключ'));
    });

    test('other schemes are malformed', () => {
        for (const value of ['Basic dXNlcjpwYXNz', 'Token tok', 'Digest username="x"', 'Bearer-tok', 'MAC tok', 'Negotiate tok']) {
            check({ authorization: value }, MALFORMED);
        }
    });

    test('a bare token without a scheme is malformed', () => {
        check({ authorization: 'tok' }, MALFORMED);
    });

    test('"Bearer" without a token is malformed', () => {
        check({ authorization: 'Bearer' }, MALFORMED);
        check({ authorization: 'Bearer ' }, MALFORMED);
        check({ authorization: 'Bearer      ' }, MALFORMED);
    });

    test('an empty Authorization header is malformed, not "none"', () => {
        check({ authorization: '' }, MALFORMED);
    });

    test('a token with a space in it (two tokens) is malformed', () => {
        check({ authorization: 'Bearer a b' }, MALFORMED);
        check({ authorization: 'Bearer a, Bearer b' }, MALFORMED);
    });

    test('no space between scheme and token is malformed', () => {
        check({ authorization: 'Bearertok' }, MALFORMED);
    });

    test('tabs, newlines or leading spaces are not accepted as separators', () => {
        check({ authorization: 'Bearer\ttok' }, MALFORMED);
        check({ authorization: 'Bearer tok\t' }, MALFORMED);
        check({ authorization: 'Bearer tok\nBearer other' }, MALFORMED);
        check({ authorization: ' Bearer tok' }, MALFORMED);
    });

    test('a header sent once (array of one) is read', () => {
        check({ authorization: ['Bearer tok'] }, bearer('tok'));
    });

    test('a header sent twice is malformed, even when both are the same', () => {
        check({ authorization: ['Bearer tok', 'Bearer tok'] }, MALFORMED);
        check({ authorization: ['Bearer good', 'Bearer bad'] }, MALFORMED);
    });

    test('an empty header array is malformed', () => {
        check({ authorization: [] }, MALFORMED);
    });
});

describe('readCredentials: X-API-Key header', () => {
    test('the key is read as it is', () => {
        check({ 'x-api-key': 'key-123' }, apiKey('key-123'));
    });

    test('surrounding whitespace is trimmed', () => {
        check({ 'x-api-key': '  key-123\t' }, apiKey('key-123'));
    });

    test('an empty or blank key is malformed, not "none"', () => {
        check({ 'x-api-key': '' }, MALFORMED);
        check({ 'x-api-key': '   ' }, MALFORMED);
    });

    test('sent twice is malformed', () => {
        check({ 'x-api-key': ['k', 'k'] }, MALFORMED);
        check({ 'x-api-key': ['good', 'bad'] }, MALFORMED);
    });

    test('an array of one is read', () => {
        check({ 'x-api-key': ['k'] }, apiKey('k'));
    });
});

describe('readCredentials: both headers', () => {
    test('agreeing headers give the token, read via Bearer', () => {
        check({ authorization: 'Bearer same', 'x-api-key': 'same' }, bearer('same'));
    });

    test('disagreeing headers are malformed, whichever is right', () => {
        check({ authorization: 'Bearer one', 'x-api-key': 'two' }, MALFORMED);
        check({ authorization: 'Bearer two', 'x-api-key': 'one' }, MALFORMED);
    });

    test('a good X-API-Key does not rescue a malformed Authorization', () => {
        check({ authorization: 'Basic abc', 'x-api-key': 'key' }, MALFORMED);
        check({ authorization: 'Bearer', 'x-api-key': 'key' }, MALFORMED);
    });

    test('a good Authorization does not rescue an empty X-API-Key', () => {
        check({ authorization: 'Bearer key', 'x-api-key': '' }, MALFORMED);
    });

    test('a duplicated X-API-Key spoils a good Authorization', () => {
        check({ authorization: 'Bearer key', 'x-api-key': ['key', 'key'] }, MALFORMED);
    });
});

describe('readCredentials: length limit', () => {
    test('the limit is 8 KiB', () => {
        assert.equal(MAX_CREDENTIAL_LENGTH, 8192);
    });

    test('a token of exactly the limit is read, one more character is malformed (Bearer)', () => {
        const atLimit = 'a'.repeat(MAX_CREDENTIAL_LENGTH);
        check({ authorization: `Bearer ${atLimit}` }, bearer(atLimit));
        check({ authorization: `Bearer ${atLimit}b` }, MALFORMED);
    });

    test('a token of exactly the limit is read, one more character is malformed (X-API-Key)', () => {
        const atLimit = 'a'.repeat(MAX_CREDENTIAL_LENGTH);
        check({ 'x-api-key': atLimit }, apiKey(atLimit));
        check({ 'x-api-key': `${atLimit}b` }, MALFORMED);
    });

    test('very long headers with many spaces are parsed (no catastrophic backtracking)', () => {
        // The test only has to finish; a backtracking regex would hang on these.
        const spaces = ' '.repeat(1_000_000);
        check({ authorization: `Bearer${spaces}x${spaces}` }, bearer('x'));
        check({ authorization: `Bearer${spaces}x${spaces}\t` }, MALFORMED);
        check({ authorization: `Bearer${spaces}` }, MALFORMED);
        check({ authorization: `Bearer ${'a'.repeat(1_000_000)}` }, MALFORMED);
    });
});

describe('readCredentials: hostile values', () => {
    test('prototype-ish names are just tokens', () => {
        check({ authorization: 'Bearer __proto__' }, bearer('__proto__'));
        check({ 'x-api-key': 'constructor' }, apiKey('constructor'));
    });
});
