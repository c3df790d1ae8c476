/** Text from outside printed on one line: what would break or reorder a line is escaped, the rest kept. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { oneLine } from '../../src/lib/one-line.js';

test('control characters, line separators and bidirectional overrides are escaped; other text is kept', () => {
    assert.equal(oneLine('x\nerror: forged\r\t\u0000\u001b[31m'), 'x\\nerror: forged\\r\\t\\u0000\\u001b[31m');
    assert.equal(oneLine('a\u2028b\u2029c\u202ed\u2066e\u0085f\u007f'), 'a\\u2028b\\u2029c\\u202ed\\u2066e\\u0085f\\u007f');
    assert.equal(oneLine('review-pr.md: "café" 日本 \\n 🙂'), 'review-pr.md: "café" 日本 \\n 🙂');
});
