import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CURSOR_FORMAT_VERSION, CursorCodec, type CursorPosition } from '../../src/catalog/cursor.js';
import { paginate } from '../../src/catalog/paginate.js';
import { filterKey, filterOf } from '../../src/catalog/upstream-filter.js';

const SECRET = 'a-secret-of-at-least-16-chars';

const BASE: CursorPosition = {
    scope: 'client-1',
    upstreamId: 'docs',
    version: 'Zm9vYmFyYmF6cXV4',
    offset: 7,
    anchor: 'summarize',
    order: 'b3JkZXJkaWdlc3Qx',
    positional: true,
    pending: filterOf(['wiki', 'tickets'].map(filterKey))
};

const EMPTY_FILTER = new Uint8Array(64);
const FULL_FILTER = new Uint8Array(64).fill(255);

// An independent implementation of the wire form documented in src/catalog/cursor.ts, with
// literal parameters: if the codec drifts from the documentation, the tests below notice.
const KEY_INFO = 'mcp-prompt-gateway cursor v2';
const PAD_BLOCK = 256;

function keyOf(secret: string, info = KEY_INFO): Buffer {
    return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), info, 32));
}

/** Seals arbitrary plaintext bytes the way the documented wire form says. */
function seal(secret: string, plaintext: Buffer, options: { iv?: Buffer; key?: Buffer } = {}): string {
    const iv = options.iv ?? randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', options.key ?? keyOf(secret), iv, { authTagLength: 16 });
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([iv, ciphertext, cipher.getAuthTag()]).toString('base64url');
}

/** Seals the JSON text of any value, without padding. */
function sealJson(secret: string, value: unknown): string {
    return seal(secret, Buffer.from(JSON.stringify(value), 'utf8'));
}

/** The documented plaintext of a position: the JSON array, space-padded to the scope's JSON length plus a multiple of 256 bytes. */
function plaintextOf(position: CursorPosition): string {
    const json = JSON.stringify(fieldsOf(position));
    const length = Buffer.byteLength(json, 'utf8');
    const own = Buffer.byteLength(JSON.stringify(position.scope), 'utf8');
    return json.padEnd(json.length + ((PAD_BLOCK - ((length - own) % PAD_BLOCK)) % PAD_BLOCK), ' ');
}

/** Opens a cursor with node:crypto as documented, or throws. */
function open(secret: string, cursor: string): string {
    const sealed = Buffer.from(cursor, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), sealed.subarray(0, 12), { authTagLength: 16 });
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    return Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]).toString('utf8');
}

/** The documented field order of the plaintext array. */
function fieldsOf(position: CursorPosition): unknown[] {
    return [
        CURSOR_FORMAT_VERSION,
        position.scope,
        position.upstreamId,
        position.version,
        position.offset,
        position.anchor,
        position.order,
        position.positional,
        Buffer.from(position.pending).toString('base64url')
    ];
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
        ['lone surrogates and control characters', { anchor: '\ud800x\udfff\u0000\n\t"\\', scope: '\udc00' }],
        ['__proto__ and constructor', { scope: '__proto__', upstreamId: 'constructor', anchor: '__proto__' }],
        ['separators and wire characters', { anchor: 'a.b.c', scope: '__', upstreamId: 'a__b', version: 'x.y=' }],
        ['JSON-looking text and trailing spaces', { anchor: '[1,"x"]', scope: '{"a":1}', upstreamId: ' ', version: 'v  ' }],
        ['a zero offset', { offset: 0 }],
        ['a large safe offset', { offset: Number.MAX_SAFE_INTEGER }],
        ['an empty filter, out of order', { pending: EMPTY_FILTER, positional: false }],
        ['a full filter', { pending: FULL_FILTER }],
        ['a long scope', { scope: 's'.repeat(1000) }],
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

    test('a cursor sealed independently with node:crypto as documented is accepted', () => {
        // This pins the format other replicas rely on: HKDF key, 12-byte IV, 16-byte tag, the padded JSON array.
        assert.deepEqual(codec.decode(seal(SECRET, Buffer.from(plaintextOf(BASE), 'utf8'))), BASE);
        assert.deepEqual(codec.decode(seal(SECRET, Buffer.from(plaintextOf({ ...BASE, scope: '客户' }), 'utf8'))), { ...BASE, scope: '客户' });
    });

    test('the codec writes the documented wire form', () => {
        for (const position of [BASE, { ...BASE, scope: 'ü-客户-🙂', anchor: '' }, { ...BASE, anchor: 'n'.repeat(700) }]) {
            const cursor = codec.encode(position);
            assert.match(cursor, /^[A-Za-z0-9_-]+$/);
            const plaintext = open(SECRET, cursor);
            assert.equal(plaintext, plaintextOf(position));
            assert.equal(Buffer.from(cursor, 'base64url').length, 12 + Buffer.byteLength(plaintext, 'utf8') + 16);
        }
    });

    test('a page cut right after a very long prompt name still yields a cursor that decodes', () => {
        for (const longName of ['n'.repeat(3500), '名'.repeat(1200)]) {
            const page = paginate([{ upstreamId: 'up', version: 'v1', names: [longName, 'next'], entries: [longName, 'next'] }], undefined, 1, () => undefined);
            assert.ok(page.next !== undefined);
            const position = { ...page.next, scope: 'client' };
            const cursor = codec.encode(position);
            assert.ok(cursor.length <= 4096, `${cursor.length} characters`);
            assert.deepEqual(codec.decode(cursor), position);
        }
    });
});

describe('CursorCodec cursors reveal nothing', () => {
    const codec = new CursorCodec(SECRET);
    const position: CursorPosition = {
        scope: 'scope-canary-client',
        upstreamId: 'hidden-upstream-canary',
        version: 'VERSIONdigest123',
        offset: 42,
        anchor: 'ANCHORdigest4567',
        order: 'ORDERdigest12345',
        positional: false,
        pending: filterOf([filterKey('hidden-upstream-canary-2')])
    };

    test('neither the scope, the upstream id, the version digest nor the anchor appear in the cursor or its bytes', () => {
        for (let i = 0; i < 20; i++) {
            const cursor = codec.encode(position);
            const bytes = Buffer.from(cursor, 'base64url');
            const filter = Buffer.from(position.pending).toString('base64url');
            for (const secret of [position.scope, position.upstreamId, position.version, position.anchor, position.order, filter, SECRET]) {
                for (const spelling of [secret, Buffer.from(secret, 'utf8').toString('base64url'), Buffer.from(secret, 'utf8').toString('base64')]) {
                    assert.ok(!cursor.includes(spelling), `${spelling} in ${cursor}`);
                }
                assert.ok(!bytes.includes(Buffer.from(secret, 'utf8')), `${secret} in the decoded bytes`);
                assert.ok(!bytes.toString('latin1').includes(secret));
            }
            for (const marker of ['[', '"', ',']) assert.ok(!cursor.includes(marker));
        }
    });

    test('two encodings of the same position differ (random IV), and both decode', () => {
        const cursors = new Set<string>();
        for (let i = 0; i < 50; i++) {
            const cursor = codec.encode(position);
            assert.deepEqual(codec.decode(cursor), position);
            cursors.add(cursor);
        }
        assert.equal(cursors.size, 50);
        const [first = '', second = ''] = cursors;
        assert.notEqual(first.slice(0, 16), second.slice(0, 16));
    });

    test('the length of a cursor depends only on its scope, not on where the walk is', () => {
        // Otherwise the number of digits of the offset would count hidden prompts, and the id's length would tell the upstream.
        const lengths = new Set<number>();
        // Every upstream id config allows, up to 63 characters.
        const manyPending = filterOf(Array.from({ length: 200 }, (_, i) => filterKey(`upstream-${i}`)));
        for (const offset of [0, 1, 9, 10, 99, 100, 99_999, Number.MAX_SAFE_INTEGER]) {
            for (const upstreamId of ['a', 'docs', 'x'.repeat(63)]) {
                for (const [version, anchor] of [
                    ['', ''],
                    ['VERSIONdigest123', ''],
                    ['VERSIONdigest123', 'ANCHORdigest4567']
                ] as const) {
                    for (const pending of [EMPTY_FILTER, manyPending, FULL_FILTER]) {
                        for (const positional of [true, false]) {
                            lengths.add(codec.encode({ ...position, offset, upstreamId, version, anchor, pending, positional }).length);
                        }
                    }
                }
            }
        }
        assert.deepEqual([...lengths], [codec.encode(position).length]);
        for (const scope of ['', 'a', 'client-with-a-much-longer-id-'.repeat(4), '客户']) {
            const own = new Set([0, 10, 100_000].map(offset => codec.encode({ ...position, scope, offset, upstreamId: 'x'.repeat(63) }).length));
            assert.equal(own.size, 1, scope);
        }
    });
});

describe('CursorCodec rejects what it did not seal', () => {
    const codec = new CursorCodec(SECRET);
    const cursor = codec.encode(BASE);

    test('control: the cursor under attack decodes', () => {
        assert.deepEqual(codec.decode(cursor), BASE);
    });

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

    test('an empty secret is not the same as deriving from an empty key', () => {
        assert.equal(new CursorCodec('').decode(seal('', Buffer.from(plaintextOf(BASE), 'utf8'))), undefined);
    });

    test('keys not derived as documented', () => {
        const plaintext = Buffer.from(plaintextOf(BASE), 'utf8');
        const secret32 = 'x'.repeat(32);
        const codec32 = new CursorCodec(secret32);
        assert.deepEqual(codec32.decode(seal(secret32, plaintext)), BASE);
        // The secret used as the AES key directly, or HKDF with another info string.
        assert.equal(codec32.decode(seal(secret32, plaintext, { key: Buffer.from(secret32, 'utf8') })), undefined);
        assert.equal(codec32.decode(seal(secret32, plaintext, { key: keyOf(secret32, 'mcp-prompt-gateway cursor v1') })), undefined);
    });

    test('a cursor of the previous format (2, upstreams by config index), sealed with the same key', () => {
        // Clients holding one start their walk again: the reply is "Invalid cursor".
        const v2 = [2, BASE.scope, 2, BASE.upstreamId, BASE.version, BASE.offset, BASE.anchor];
        assert.equal(codec.decode(seal(SECRET, Buffer.from(JSON.stringify(v2).padEnd(256 + 10, ' '), 'utf8'))), undefined);
        assert.equal(codec.decode(sealJson(SECRET, v2)), undefined);
    });

    test('a cursor in the old signed (v1) format', () => {
        const payload = Buffer.from(JSON.stringify([1, ...fieldsOf(BASE).slice(1)]), 'utf8').toString('base64url');
        const mac = createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(payload).digest().subarray(0, 16);
        assert.equal(codec.decode(`${payload}.${mac.toString('base64url')}`), undefined);
    });

    test('any single-character change anywhere in the cursor', () => {
        for (const tampered of substitutions(cursor, 0, cursor.length, BASE64URL + '=+/ .')) {
            assert.equal(codec.decode(tampered), undefined, tampered);
        }
    });

    test('any single-bit change in the sealed bytes (IV, ciphertext or tag)', () => {
        const sealed = Buffer.from(cursor, 'base64url');
        for (let bit = 0; bit < sealed.length * 8; bit++) {
            const flipped = Buffer.from(sealed);
            flipped[bit >> 3]! ^= 1 << (bit & 7);
            assert.equal(codec.decode(flipped.toString('base64url')), undefined, `bit ${bit}`);
        }
    });

    test('the same bytes in a non-canonical spelling', () => {
        const sealed = Buffer.from(cursor, 'base64url');
        const spellings = [
            sealed.toString('base64'),
            `${cursor}=`,
            `${cursor}==`,
            `${cursor.slice(0, 10)} ${cursor.slice(10)}`,
            `${cursor.slice(0, 10)}\n${cursor.slice(10)}`,
            `${cursor.slice(0, 10)}.${cursor.slice(10)}`,
            ` ${cursor}`,
            `${cursor}\n`
        ];
        // The last character carries spare bits: other characters with the same meaningful bits decode to the same bytes.
        const last = BASE64URL.indexOf(cursor.at(-1)!);
        const spare = sealed.length % 3 === 1 ? 0b1111 : sealed.length % 3 === 2 ? 0b11 : 0;
        for (let bits = 1; bits <= spare; bits++) spellings.push(cursor.slice(0, -1) + BASE64URL[last | bits]!);
        for (const spelling of spellings) {
            assert.notEqual(spelling, cursor);
            assert.equal(codec.decode(spelling), undefined, JSON.stringify(spelling));
        }
    });

    test('truncation at any length', () => {
        for (let length = 0; length < cursor.length; length++) {
            assert.equal(codec.decode(cursor.slice(0, length)), undefined, `length ${length}`);
        }
    });

    test('appended and prepended characters, and two cursors joined', () => {
        for (const suffix of ['A', 'AA', 'AAA', 'AAAA', '.', '.x', '!', `.${cursor}`, cursor]) {
            assert.equal(codec.decode(cursor + suffix), undefined, suffix);
        }
        for (const prefix of ['x', 'AAAA', '.']) assert.equal(codec.decode(`${prefix}${cursor}`), undefined, prefix);
    });

    test('the parts of two cursors spliced', () => {
        const other = Buffer.from(codec.encode({ ...BASE, offset: 8 }), 'base64url');
        const mine = Buffer.from(cursor, 'base64url');
        const iv = (b: Buffer) => b.subarray(0, 12);
        const body = (b: Buffer) => b.subarray(12, b.length - 16);
        const tag = (b: Buffer) => b.subarray(b.length - 16);
        for (const parts of [
            [iv(other), body(mine), tag(mine)],
            [iv(mine), body(other), tag(mine)],
            [iv(mine), body(mine), tag(other)],
            [tag(mine), body(mine), iv(mine)],
            [iv(mine), tag(mine), body(mine)]
        ]) {
            assert.equal(codec.decode(Buffer.concat(parts).toString('base64url')), undefined);
        }
    });

    test('garbage, the empty string and non-base64 text', () => {
        for (const input of [
            '',
            '.',
            '..',
            'x',
            'x.',
            '.x',
            'not a cursor',
            '!!!!.????',
            '{"a":1}',
            '\u0000',
            '😀.😀',
            'undefined',
            'A'.repeat(38),
            'A'.repeat(39),
            'A'.repeat(400)
        ]) {
            assert.equal(codec.decode(input), undefined, JSON.stringify(input));
        }
    });

    test('sealed bytes too short to hold an IV, a tag and any plaintext', () => {
        assert.equal(codec.decode(seal(SECRET, Buffer.alloc(0))), undefined);
        assert.equal(codec.decode(randomBytes(12 + 16).toString('base64url')), undefined);
    });

    test('strings over 4096 characters, even when correctly sealed', () => {
        assert.equal(codec.decode('A'.repeat(5000)), undefined);
        const position = { ...BASE, anchor: 'n'.repeat(4096) };
        const longSealed = seal(SECRET, Buffer.from(plaintextOf(position), 'utf8'));
        assert.ok(longSealed.length > 4096);
        assert.equal(codec.decode(longSealed), undefined);
        assert.equal(codec.decode(codec.encode(position)), undefined);
        const shorter = { ...BASE, anchor: 'n'.repeat(2500) };
        const fits = seal(SECRET, Buffer.from(plaintextOf(shorter), 'utf8'));
        assert.ok(fits.length <= 4096);
        assert.deepEqual(codec.decode(fits), shorter);
    });
});

describe('CursorCodec rejects correctly sealed plaintexts of the wrong shape', () => {
    const codec = new CursorCodec(SECRET);

    test('control: a correctly sealed well-formed plaintext is accepted, padded or not', () => {
        // Guards the cases below: they must fail because of their shape, not because of the key or the padding
        // (padding hides the length; the decoder does not need it).
        assert.deepEqual(codec.decode(sealJson(SECRET, fieldsOf(BASE))), BASE);
        assert.deepEqual(codec.decode(seal(SECRET, Buffer.from(plaintextOf(BASE), 'utf8'))), BASE);
    });

    const replace = (index: number, value: unknown): unknown[] => {
        const fields = fieldsOf(BASE);
        fields[index] = value;
        return fields;
    };

    const filterText = Buffer.from(BASE.pending).toString('base64url');
    const cases: [string, unknown][] = [
        ['the previous format version', replace(0, 2)],
        ['an older format version', replace(0, 1)],
        ['a newer format version', replace(0, CURSOR_FORMAT_VERSION + 1)],
        ['the format version as a string', replace(0, String(CURSOR_FORMAT_VERSION))],
        ['a negative offset', replace(4, -1)],
        ['a fractional offset', replace(4, 1.5)],
        ['an offset beyond the safe integers', replace(4, 1e300)],
        ['an offset just beyond the safe integers', replace(4, Number.MAX_SAFE_INTEGER + 1)],
        ['an offset as a string', replace(4, '7')],
        ['a non-string scope', replace(1, 1)],
        ['a non-string upstream id', replace(2, null)],
        ['a non-string version', replace(3, ['v'])],
        ['a non-string anchor', replace(5, 42)],
        ['a non-string order', replace(6, 1)],
        ['positional as a number', replace(7, 1)],
        ['positional as a string', replace(7, 'true')],
        ['a filter as an array of bytes', replace(8, [...BASE.pending])],
        ['a filter one byte short', replace(8, Buffer.from(BASE.pending).subarray(1).toString('base64url'))],
        ['a filter one byte long', replace(8, Buffer.concat([Buffer.from(BASE.pending), Buffer.from([0])]).toString('base64url'))],
        ['an empty filter string', replace(8, '')],
        ['a filter in standard base64 with padding', replace(8, `${Buffer.from(BASE.pending).toString('base64')}`)],
        ['a filter with a stray character', replace(8, `${filterText.slice(0, 10)}.${filterText.slice(10)}`)],
        ['a missing field', fieldsOf(BASE).slice(0, 8)],
        ['an extra field', [...fieldsOf(BASE), 'extra']],
        ['an empty array', []],
        ['an object with the same fields', { ...BASE, formatVersion: CURSOR_FORMAT_VERSION }],
        ['a number', 1],
        ['a string', 'cursor'],
        ['null', null]
    ];
    for (const [label, value] of cases) {
        test(label, () => {
            assert.equal(codec.decode(sealJson(SECRET, value)), undefined);
        });
    }

    test('a plaintext that is not JSON', () => {
        const json = JSON.stringify(fieldsOf(BASE));
        for (const plaintext of [
            Buffer.from('[3,"s"', 'utf8'),
            Buffer.from('\u0000\u00ff', 'latin1'),
            Buffer.from(`${json}x`, 'utf8'),
            Buffer.from(`${json}${json}`, 'utf8'),
            Buffer.from(' ', 'utf8'),
            Buffer.from(`\ufeff${json}`, 'utf8'),
            // Invalid UTF-8 inside a JSON string.
            Buffer.concat([Buffer.from('[3,"', 'utf8'), Buffer.from([0xff, 0xfe]), Buffer.from(json.slice(json.indexOf('",')), 'utf8')])
        ]) {
            assert.equal(codec.decode(seal(SECRET, plaintext)), undefined, plaintext.toString('latin1'));
        }
    });
});
