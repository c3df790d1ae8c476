/** Which bodies a session takes, by the protocol revision it negotiated, and what they cost. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_BATCH_MESSAGES } from '../../src/downstream/batches.js';
import { batchesAllowed, judgeBatch } from '../../src/protocol/batches.js';

const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('batches by revision', () => {
    test('only 2025-03-26, the one revision whose schema has JSONRPCBatchRequest, takes batches', () => {
        assert.equal(batchesAllowed('2025-03-26'), true);
        for (const revision of ['2024-11-05', '2025-06-18', '2025-11-25', '2026-07-28', '2099-01-01', undefined]) {
            assert.equal(batchesAllowed(revision), false, String(revision));
        }
    });

    test('a single message costs one and passes on every revision', () => {
        for (const revision of ['2024-11-05', '2025-03-26', '2025-06-18', undefined]) {
            assert.deepEqual(judgeBatch(ping(1), revision, MAX_BATCH_MESSAGES), { ok: true, messages: 1 });
        }
    });

    test('a batch where the revision has none is refused, naming the revision', () => {
        const verdict = judgeBatch([ping(1), ping(2)], '2025-06-18', MAX_BATCH_MESSAGES);
        assert.equal(verdict.ok, false);
        assert.match(verdict.ok ? '' : verdict.message, /batches.*2025-06-18/);
    });

    test('on 2025-03-26 a batch costs one per message, up to the bound; empty and larger ones are refused', () => {
        assert.deepEqual(judgeBatch([ping(1), ping(2), ping(3)], '2025-03-26', MAX_BATCH_MESSAGES), { ok: true, messages: 3 });
        const full = Array.from({ length: MAX_BATCH_MESSAGES }, (_, index) => ping(index));
        assert.deepEqual(judgeBatch(full, '2025-03-26', MAX_BATCH_MESSAGES), { ok: true, messages: MAX_BATCH_MESSAGES });
        assert.equal(judgeBatch([...full, ping(-1)], '2025-03-26', MAX_BATCH_MESSAGES).ok, false);
        assert.equal(judgeBatch([], '2025-03-26', MAX_BATCH_MESSAGES).ok, false);
        // A client whose burst is 4 can never send more than 4 messages at once.
        const overBurst = judgeBatch([ping(1), ping(2), ping(3), ping(4), ping(5)], '2025-03-26', 4);
        assert.equal(overBurst.ok, false);
        assert.match(overBurst.ok ? '' : overBurst.message, /at most 4/);
    });
});
