import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Prompt } from '@modelcontextprotocol/client';
import { boundPrompt } from '../../src/upstream/prompt-bounds.js';

const limits = { maxPromptBytes: 1024, maxJsonDepth: 8 };

function deepMeta(depth: number): Record<string, unknown> {
    let value: Record<string, unknown> = {};
    for (let level = 1; level < depth; level++) value = { a: value };
    return value;
}

describe('boundPrompt', () => {
    test('a prompt within the limits passes, with a digest of its definition', () => {
        const prompt: Prompt = { name: 'p', description: 'd', arguments: [{ name: 'x', required: true }] };
        const bounded = boundPrompt(prompt, limits);
        assert.ok(typeof bounded !== 'string');
        assert.equal(bounded.prompt, prompt);
        assert.equal(bounded.digest, (boundPrompt({ ...prompt }, limits) as { digest: string }).digest, 'the same definition, the same digest');
        assert.notEqual(bounded.digest, (boundPrompt({ ...prompt, description: 'e' }, limits) as { digest: string }).digest);
    });

    test('too deep is refused before anything serialises it', () => {
        // The prompt itself is level 1, _meta level 2.
        assert.ok(typeof boundPrompt({ name: 'p', _meta: deepMeta(7) }, limits) !== 'string');
        assert.equal(boundPrompt({ name: 'p', _meta: deepMeta(8) }, limits), 'too_deep');
        assert.equal(boundPrompt({ name: 'p', _meta: deepMeta(100_000) }, limits), 'too_deep');
    });

    test('too large is refused by UTF-8 bytes of its JSON', () => {
        const overhead = JSON.stringify({ name: 'p', description: '' }).length;
        assert.ok(typeof boundPrompt({ name: 'p', description: 'x'.repeat(1024 - overhead) }, limits) !== 'string');
        assert.equal(boundPrompt({ name: 'p', description: 'x'.repeat(1025 - overhead) }, limits), 'too_large');
        assert.equal(boundPrompt({ name: 'p', description: 'é'.repeat(600) }, limits), 'too_large', '600 characters, 1200 bytes');
    });
});
