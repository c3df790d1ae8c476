/**
 * The hand-written result checks: as strict as the SDK's zod schemas on every field (a property test compares
 * their verdicts on generated results, valid and broken), yet keeping every field, and never descending into
 * free-form members however deep they nest.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { specTypeSchemas } from '@modelcontextprotocol/client';
import { isCompleteResult, isGetPromptResult, isInitializeResult, isPromptPage } from '../../src/upstream/result-schemas.js';

/** A valid value most of the time, else any JSON value (mostly of the wrong type). */
const mostly = (valid: fc.Arbitrary<unknown>) => fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) });
const optional = (fields: Record<string, fc.Arbitrary<unknown>>) => fc.record(fields, { requiredKeys: [] });
const withRequired = (required: Record<string, fc.Arbitrary<unknown>>, others: Record<string, fc.Arbitrary<unknown>>) =>
    fc.tuple(fc.record(required), optional(others)).map(([a, b]) => ({ ...a, ...b }));

const text = fc.string({ maxLength: 8 });
const base64 = fc.oneof(fc.base64String({ maxLength: 12 }), fc.constantFrom('abc', 'ab', 'a', 'ab==', 'abc=', 'a===', '====', ' YQ== ', 'Y Q', 'YQ=\n', '!!', 'ab=c', ''), text);
const dateTime = fc.oneof(
    fc.date({ noInvalidDate: true }).map(date => date.toISOString()),
    fc.constantFrom(
        '2025-01-12T15:00:58Z',
        '2024-02-29T23:59:59+01:00',
        '2025-02-29T00:00:00Z',
        '2025-04-31T00:00:00Z',
        '2025-01-12T15:00Z',
        '2025-01-12 15:00:58Z',
        '2025-01-12T15:00:58.123-05:30',
        '2025-01-12T24:00:00Z',
        '2025-01-12T15:00:58',
        '2025-13-01T00:00:00Z',
        '2025-01-12t15:00:58z'
    ),
    text
);
const role = fc.constantFrom('user', 'assistant', 'robot');
const meta = fc.dictionary(fc.constantFrom('a', 'example.com/x'), fc.jsonValue({ maxDepth: 2 }));
const annotations = mostly(
    optional({
        audience: mostly(fc.array(role, { maxLength: 3 })),
        priority: mostly(fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ noNaN: true, noDefaultInfinity: true }))),
        lastModified: mostly(dateTime)
    })
);
const icon = mostly(
    withRequired({ src: mostly(text) }, { mimeType: mostly(text), sizes: mostly(fc.array(text, { maxLength: 2 })), theme: mostly(fc.constantFrom('light', 'dark', 'sepia')) })
);
const common = { annotations, _meta: mostly(meta) };
const resource = mostly(withRequired({ uri: mostly(text) }, { mimeType: mostly(text), _meta: mostly(meta), text: mostly(text), blob: mostly(base64) }));
const contentBlock = fc.oneof(
    withRequired({ type: fc.constant('text'), text: mostly(text) }, common),
    withRequired({ type: fc.constantFrom('image', 'audio'), data: mostly(base64), mimeType: mostly(text) }, common),
    withRequired({ type: fc.constant('resource'), resource }, common),
    withRequired(
        { type: fc.constant('resource_link'), name: mostly(text), uri: mostly(text) },
        { ...common, title: mostly(text), description: mostly(text), mimeType: mostly(text), size: mostly(fc.integer()), icons: mostly(fc.array(icon, { maxLength: 2 })) }
    ),
    withRequired({ type: fc.constantFrom('video', 'tool_use', '') }, { text })
);
const getResult = withRequired(
    { messages: mostly(fc.array(mostly(fc.record({ role, content: contentBlock })), { maxLength: 3 })) },
    { description: mostly(text), _meta: mostly(meta), extra: fc.jsonValue({ maxDepth: 2 }) }
);

/** The SDK's verdict, through the Standard Schema interface its schemas are typed with. */
function sdkAccepts(schema: (typeof specTypeSchemas)['GetPromptResult' | 'CompleteResult'], value: unknown): boolean {
    const outcome = schema['~standard'].validate(value);
    assert.ok(!(outcome instanceof Promise), 'validated synchronously');
    return outcome.issues === undefined;
}

/** `{"a":{"a":...}}` nested `depth` deep, built without recursion. */
function nested(depth: number): Record<string, unknown> {
    let value: Record<string, unknown> = {};
    for (let i = 0; i < depth; i++) value = { a: value };
    return value;
}

describe('result checks', () => {
    test('prompts/get: the same verdict as the SDK on any result, valid or broken', () => {
        fc.assert(
            fc.property(getResult, result => {
                assert.equal(isGetPromptResult(result), sdkAccepts(specTypeSchemas.GetPromptResult, result), JSON.stringify(result));
            }),
            { numRuns: 5000, seed: 0x5eed }
        );
    });

    test('prompts/get: nothing is taken away, whatever the SDK would strip', () => {
        const result = {
            description: 'd',
            unknown: { kept: true },
            messages: [{ role: 'user', extra: 1, content: { type: 'text', text: 'x', future: ['field'] } }]
        };
        const copy = structuredClone(result);
        assert.equal(isGetPromptResult(result), true);
        assert.deepEqual(result, copy, 'checked in place, unchanged');
    });

    test('free-form members are not descended into: a _meta nested 100,000 deep costs nothing', () => {
        const deep = nested(100_000);
        assert.equal(isGetPromptResult({ messages: [{ role: 'user', content: { type: 'text', text: 'x', _meta: deep } }], _meta: deep }), true);
        assert.equal(isPromptPage({ prompts: [{ name: 'p', _meta: deep }], _meta: deep }), true);
    });

    test('prompts/list: names, titles and descriptions are strings, arguments and icons well formed; every field kept', () => {
        const page = {
            prompts: [
                { name: 'a', title: 'A', description: 'd', arguments: [{ name: 'x', title: 'X', required: true, future: 1 }], icons: [{ src: 's', theme: 'dark' }], future: 2 },
                { name: 'b' }
            ],
            nextCursor: 'c'
        };
        assert.equal(isPromptPage(page), true);
        assert.equal(page.prompts[0]?.arguments?.[0]?.title, 'X', 'an argument title (which the SDK strips) is kept');
        const broken: unknown[] = [
            { prompts: [{ name: 1 }] },
            { prompts: [{ name: 'a', title: null }] },
            { prompts: [{ name: 'a', arguments: 'nope' }] },
            { prompts: [{ name: 'a', arguments: [{ name: 'x', required: 'yes' }] }] },
            { prompts: [{ name: 'a', arguments: [{ name: 'x', title: 5 }] }] },
            { prompts: [{ name: 'a', icons: [{ src: 's', theme: 'sepia' }] }] },
            { prompts: [{ name: 'a', _meta: [] }] },
            { prompts: [], nextCursor: 7 },
            { prompts: {} },
            {},
            []
        ];
        for (const value of broken) assert.equal(isPromptPage(value), false, JSON.stringify(value));
    });

    test('completion/complete: the SDK verdict, except that more than 100 values are taken (the service keeps 100)', () => {
        assert.equal(isCompleteResult({ completion: { values: Array.from({ length: 150 }, (_, i) => `v${i}`), total: 150, hasMore: false } }), true);
        assert.equal(isCompleteResult({ completion: { values: ['a'], future: 1 }, extra: 2 }), true);
        for (const value of [
            { completion: { values: [1] } },
            { completion: { values: ['a'], total: 1.5 } },
            { completion: { values: ['a'], hasMore: 'no' } },
            { completion: {} },
            {}
        ]) {
            assert.equal(isCompleteResult(value), false, JSON.stringify(value));
            assert.equal(sdkAccepts(specTypeSchemas.CompleteResult, value), false);
        }
    });

    test('initialize: a revision, capabilities (prompts and completions objects when present) and a named, versioned serverInfo', () => {
        const valid = { protocolVersion: '2025-06-18', capabilities: { prompts: { listChanged: true }, completions: {} }, serverInfo: { name: 's', version: '1' } };
        assert.equal(isInitializeResult(valid), true);
        for (const broken of [
            { ...valid, protocolVersion: 2025 },
            { ...valid, capabilities: { prompts: true } },
            { ...valid, capabilities: { completions: [] } },
            { ...valid, capabilities: undefined },
            { ...valid, serverInfo: { name: 's' } },
            { ...valid, instructions: 7 }
        ]) {
            assert.equal(isInitializeResult(broken), false, JSON.stringify(broken));
        }
    });
});
