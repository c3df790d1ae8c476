import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CURSOR_FORMAT_VERSION, CursorCodec, type CursorPosition } from '../../src/catalog/cursor.js';
import { paginate } from '../../src/catalog/paginate.js';

const SECRET = 'a-secret-of-at-least-16-chars';

const BASE: CursorPosition = {
    scope: 'client-1',
    upstreamIndex: 2,
    upstreamId: 'docs',
    version: 'Zm9vYmFyYmF6cXV4',
    offset: 7,
    anchor: 'summarize'
};

/** Signs an arbitrary payload string the way the documented wire form says. */
function sign(secret: string, payload: string): string {
    const mac = createHmac('sha256', Buffer.from(secret, 'utf8')).update(payload).digest().subarray(0, 16);
    return `${payload}.${mac.toString('base64url')}`;
}

function signJson(secret: string, value: unknown): string {
    return sign(secret, Buffer.from(JSON.stringify(value), 'utf8').toString('base64url'));
}

/** The documented field order of the payload array. */
function fieldsOf(position: CursorPosition): unknown[] {
    return [CURSOR_FORMAT_VERSION, position.scope, position.upstreamIndex, position.upstreamId, position.version, position.offset, position.anchor];
}

/** Every string that differs from `text` in exactly one character (substitution), over `alphabet`. */
function* substitutions(text: string, from: number, to: number, alphabet: string): Generator<string> {
    for (let i = from; i < to; i++) {
        for (const ch of alphabet) {
            if (ch !== text[i]) yield text.slice(0, i) + ch + text.slice(i + 1);
        }
    }
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('CursorCodec round trip', () => {
    const codec = new CursorCodec(SECRET);

    const odd: [string, Partial<CursorPosition>][] = [
        ['empty strings', { scope: '', upstreamId: '', version: '', anchor: '' }],
        ['unicode', { scope: 'ü-客户-🙂', anchor: 'prompt-😀-名前-\u00e9\u0301' }],
        ['lone surrogates and control characters', { anchor: '\ud800x\udfff\u0000\n\t"\\' }],
        ['__proto__ and constructor', { scope: '__proto__', upstreamId: 'constructor', anchor: '__proto__' }],
        ['separators and wire characters', { anchor: 'a.b.c', scope: '__', upstreamId: 'a__b', version: 'x.y=' }],
        ['JSON-looking text', { anchor: '[1,"x"]', scope: '{"a":1}' }],
        ['zero indexes', { upstreamIndex: 0, offset: 0 }],
        ['large safe integers', { upstreamIndex: Number.MAX_SAFE_INTEGER, offset: Number.MAX_SAFE_INTEGER }],
        ['a long anchor', { anchor: 'n'.repeat(2000) }],
        ['a long unicode anchor', { anchor: '名'.repeat(600) }]
    ];
    for (const [label, override] of odd) {
        test(`decodes what it encoded: ${label}`, () => {
            const position: CursorPosition = { ...BASE, ...override };
            const cursor = codec.encode(position);
            assert.deepEqual(codec.decode(cursor), position);
        });
    }

    test('another codec with the same secret accepts the cursor (replicas share cursors)', () => {
        const cursor = codec.encode(BASE);
        assert.deepEqual(new CursorCodec(SECRET).decode(cursor), BASE);
    });

    test('the cursor follows the documented wire form', () => {
        // A cursor signed independently with node:crypto must be accepted: this pins the format other replicas rely on.
        const cursor = signJson(SECRET, fieldsOf(BASE));
        assert.deepEqual(codec.decode(cursor), BASE);
    });

    test('a page cut right after a very long prompt name still yields a cursor that decodes', () => {
        for (const longName of ['n'.repeat(3500), '名'.repeat(1200)]) {
            const page = paginate(
                [{ upstreamId: 'up', upstreamIndex: 0, version: 'v1', names: [longName, 'next'], entries: [longName, 'next'] }],
                undefined,
                1,
                () => undefined
            );
            assert.ok(page.next !== undefined);
            const position = { ...page.next, scope: 'client' };
            assert.deepEqual(codec.decode(codec.encode(position)), position);
        }
    });
});

describe('CursorCodec rejects what it did not sign', () => {
    const codec = new CursorCodec(SECRET);
    const cursor = codec.encode(BASE);
    const dot = cursor.indexOf('.');
    const payload = cursor.slice(0, dot);
    const mac = cursor.slice(dot + 1);

    test('a cursor from a different secret', () => {
        const other = new CursorCodec('another-secret-with-16+chars');
        assert.equal(other.decode(cursor), undefined);
        assert.equal(codec.decode(other.encode(BASE)), undefined);
    });

    test('with an empty secret, each codec has its own random key', () => {
        const first = new CursorCodec('');
        const second = new CursorCodec('');
        assert.deepEqual(first.decode(first.encode(BASE)), BASE);
        assert.equal(second.decode(first.encode(BASE)), undefined);
        assert.equal(first.decode(second.encode(BASE)), undefined);
    });

    test('an empty secret is not the same as signing with an empty key', () => {
        assert.equal(new CursorCodec('').decode(signJson('', fieldsOf(BASE))), undefined);
    });

    test('any single-character change in the payload', () => {
        for (const tampered of substitutions(cursor, 0, dot, BASE64URL + '=+/ ')) {
            assert.equal(codec.decode(tampered), undefined, tampered);
        }
    });

    test('a single-character change in the MAC never yields a different position', () => {
        for (const tampered of substitutions(cursor, dot + 1, cursor.length, BASE64URL + '=+/ ')) {
            const decoded = codec.decode(tampered);
            if (decoded !== undefined) assert.deepEqual(decoded, BASE, tampered);
        }
    });

    test(
        'any single-character change or extra character in the MAC',
        () => {
            for (const tampered of substitutions(cursor, dot + 1, cursor.length, BASE64URL + '=+/ ')) {
                assert.equal(codec.decode(tampered), undefined, tampered);
            }
            for (const suffix of ['=', '==', ' ', '\n', '!']) {
                assert.equal(codec.decode(cursor + suffix), undefined, JSON.stringify(suffix));
            }
        }
    );

    test('truncation at any length', () => {
        for (let length = 0; length < cursor.length; length++) {
            assert.equal(codec.decode(cursor.slice(0, length)), undefined, `length ${length}`);
        }
    });

    test('appended base64url characters and extra parts', () => {
        for (const suffix of ['A', 'AA', 'AAAA', '.', '.x', `.${mac}`]) {
            assert.equal(codec.decode(cursor + suffix), undefined, suffix);
        }
        assert.equal(codec.decode(`x${cursor}`), undefined);
        assert.equal(codec.decode(`.${cursor}`), undefined);
    });

    test('the two parts swapped', () => {
        assert.equal(codec.decode(`${mac}.${payload}`), undefined);
    });

    test('garbage, the empty string and non-base64 text', () => {
        for (const input of ['', '.', '..', 'x', 'x.', '.x', 'not a cursor', '!!!!.????', '{"a":1}', '\u0000', '😀.😀', 'undefined']) {
            assert.equal(codec.decode(input), undefined, JSON.stringify(input));
        }
    });

    test('strings over 4096 characters, even when correctly signed', () => {
        assert.equal(codec.decode('A'.repeat(5000)), undefined);
        assert.equal(codec.decode(`${'A'.repeat(4100)}.${mac}`), undefined);
        const longSigned = signJson(SECRET, fieldsOf({ ...BASE, anchor: 'n'.repeat(4096) }));
        assert.ok(longSigned.length > 4096);
        assert.equal(codec.decode(longSigned), undefined);
    });
});

describe('CursorCodec rejects correctly signed payloads of the wrong shape', () => {
    const codec = new CursorCodec(SECRET);

    test('control: a correctly signed well-formed payload is accepted', () => {
        // Guards the cases below: they must fail because of their shape, not because of the signature.
        assert.deepEqual(codec.decode(signJson(SECRET, fieldsOf(BASE))), BASE);
    });

    const replace = (index: number, value: unknown): unknown[] => {
        const fields = fieldsOf(BASE);
        fields[index] = value;
        return fields;
    };

    const cases: [string, unknown][] = [
        ['an older format version', replace(0, 0)],
        ['a newer format version', replace(0, CURSOR_FORMAT_VERSION + 1)],
        ['the format version as a string', replace(0, String(CURSOR_FORMAT_VERSION))],
        ['a negative offset', replace(5, -1)],
        ['a fractional offset', replace(5, 1.5)],
        ['an offset beyond the safe integers', replace(5, 1e300)],
        ['an offset as a string', replace(5, '7')],
        ['a negative upstream index', replace(2, -3)],
        ['a fractional upstream index', replace(2, 0.5)],
        ['a non-string scope', replace(1, 1)],
        ['a non-string upstream id', replace(3, null)],
        ['a non-string version', replace(4, ['v'])],
        ['a non-string anchor', replace(6, 42)],
        ['a missing field', fieldsOf(BASE).slice(0, 6)],
        ['an extra field', [...fieldsOf(BASE), 'extra']],
        ['an empty array', []],
        ['an object with the same fields', { ...BASE, formatVersion: CURSOR_FORMAT_VERSION }],
        ['a number', 1],
        ['a string', 'cursor'],
        ['null', null]
    ];
    for (const [label, value] of cases) {
        test(label, () => {
            assert.equal(codec.decode(signJson(SECRET, value)), undefined);
        });
    }

    test('a payload that is not JSON', () => {
        assert.equal(codec.decode(sign(SECRET, Buffer.from('[1,"s"', 'utf8').toString('base64url'))), undefined);
        assert.equal(codec.decode(sign(SECRET, Buffer.from('\u0000\u00ff', 'latin1').toString('base64url'))), undefined);
    });

    test('a payload that is not base64url', () => {
        assert.equal(codec.decode(sign(SECRET, '!!!')), undefined);
    });
});
