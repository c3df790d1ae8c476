import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestedPromptName } from '../../src/protocol/requested-prompt.js';

test("the prompt a request names: a get's name, a completion's prompt reference; nothing else", () => {
    assert.equal(requestedPromptName('prompts/get', { name: 'docs__summarize' }), 'docs__summarize');
    assert.equal(requestedPromptName('completion/complete', { ref: { type: 'ref/prompt', name: 'docs__summarize' } }), 'docs__summarize');
    assert.equal(requestedPromptName('completion/complete', { ref: { type: 'ref/resource', uri: 'file:///x', name: 'x' } }), undefined);
    assert.equal(requestedPromptName('prompts/get', { name: 42 }), undefined);
    assert.equal(requestedPromptName('prompts/get', undefined), undefined);
    assert.equal(requestedPromptName('completion/complete', { ref: null }), undefined);
    assert.equal(requestedPromptName('prompts/list', { name: 'docs__summarize' }), undefined);
});
