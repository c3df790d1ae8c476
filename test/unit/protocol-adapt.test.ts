import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { GetPromptResult, ListPromptsResult } from '@modelcontextprotocol/client';
import { adaptGetPrompt, adaptProgress, adaptPromptList } from '../../src/protocol/adapt.js';
import { revisionOrLatest } from '../../src/protocol/revisions.js';

// The SDK's PromptArgument type lacks `title` (a field since 2025-06-18), hence a variable rather than a literal.
const titledArgument = { name: 'a', title: 'A', required: true };

const list: ListPromptsResult = {
    _meta: { page: 1 },
    prompts: [
        {
            name: 'p',
            title: 'P',
            description: 'd',
            icons: [{ src: 'https://example.com/p.png' }],
            _meta: { k: 1 },
            arguments: [titledArgument]
        }
    ]
};

const get: GetPromptResult = {
    _meta: { kept: true },
    messages: [
        { role: 'user', content: { type: 'text', text: 't', _meta: { m: 1 }, annotations: { audience: ['user'], priority: 0.5, lastModified: '2025-01-01T00:00:00Z' } } },
        { role: 'user', content: { type: 'audio', data: 'AAAA', mimeType: 'audio/wav', annotations: { priority: 1 } } },
        { role: 'user', content: { type: 'resource_link', uri: 'file:///x', name: 'x', title: 'X', description: 'about x', icons: [{ src: 'a' }] } },
        { role: 'user', content: { type: 'resource_link', uri: 'file:///y', name: 'y' } },
        { role: 'assistant', content: { type: 'resource', resource: { uri: 'file:///r', text: 'r', _meta: { r: 1 } }, _meta: { e: 1 } } }
    ]
};

describe('results brought down to a protocol revision', () => {
    test('the newest revision and unknown newer ones get the very same objects', () => {
        for (const version of ['2025-11-25', '2026-07-28', undefined]) {
            assert.equal(adaptPromptList(list, revisionOrLatest(version)), list);
            assert.equal(adaptGetPrompt(get, revisionOrLatest(version)), get);
        }
    });

    test('2025-06-18 loses only icons', () => {
        const revision = revisionOrLatest('2025-06-18');
        assert.deepEqual(adaptPromptList(list, revision).prompts[0], {
            name: 'p',
            title: 'P',
            description: 'd',
            _meta: { k: 1 },
            arguments: [{ name: 'a', title: 'A', required: true }]
        });
        const messages = adaptGetPrompt(get, revision).messages;
        assert.deepEqual(messages[2]?.content, { type: 'resource_link', uri: 'file:///x', name: 'x', title: 'X', description: 'about x' });
        assert.deepEqual(messages[0], get.messages[0]);
        assert.deepEqual(messages[1], get.messages[1]);
    });

    test('2025-03-26 has no title, icons, _meta below the result, lastModified or resource links', () => {
        const revision = revisionOrLatest('2025-03-26');
        const adaptedList = adaptPromptList(list, revision);
        assert.deepEqual(adaptedList, { _meta: { page: 1 }, prompts: [{ name: 'p', description: 'd', arguments: [{ name: 'a', required: true }] }] });
        const adapted = adaptGetPrompt(get, revision);
        assert.deepEqual(adapted._meta, { kept: true });
        assert.deepEqual(
            adapted.messages.map(message => message.content),
            [
                { type: 'text', text: 't', annotations: { audience: ['user'], priority: 0.5 } },
                { type: 'audio', data: 'AAAA', mimeType: 'audio/wav', annotations: { priority: 1 } },
                { type: 'text', text: 'X: file:///x\nabout x' },
                { type: 'text', text: 'y: file:///y' },
                { type: 'resource', resource: { uri: 'file:///r', text: 'r' } }
            ]
        );
    });

    test('2024-11-05 also turns audio into a text block, keeping its annotations', () => {
        const adapted = adaptGetPrompt(get, revisionOrLatest('2024-11-05'));
        assert.deepEqual(adapted.messages[1]?.content, {
            type: 'text',
            text: '[audio omitted: audio/wav, not supported by MCP 2024-11-05]',
            annotations: { priority: 1 }
        });
    });

    test('the input is never changed', () => {
        const before = structuredClone(get);
        const beforeList = structuredClone(list);
        adaptGetPrompt(get, revisionOrLatest('2024-11-05'));
        adaptPromptList(list, revisionOrLatest('2024-11-05'));
        assert.deepEqual(get, before);
        assert.deepEqual(list, beforeList);
    });

    test('names such as __proto__ stay data', () => {
        const odd = JSON.parse('{"prompts":[{"name":"__proto__","__proto__":{"polluted":true},"title":"t"}]}') as ListPromptsResult;
        const adapted = adaptPromptList(odd, revisionOrLatest('2024-11-05')).prompts[0];
        assert.equal(adapted?.name, '__proto__');
        assert.ok(Object.hasOwn(adapted ?? {}, '__proto__'));
        assert.equal(Object.getPrototypeOf(adapted), Object.prototype);
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });

    test('progress: message only from 2025-03-26, total only when given', () => {
        assert.deepEqual(adaptProgress({ progress: 1, total: 3, message: 'm' }, revisionOrLatest('2024-11-05')), { progress: 1, total: 3 });
        assert.deepEqual(adaptProgress({ progress: 1, message: 'm' }, revisionOrLatest('2025-03-26')), { progress: 1, message: 'm' });
        assert.deepEqual(adaptProgress({ progress: 2 }, revisionOrLatest('2025-11-25')), { progress: 2 });
    });
});
