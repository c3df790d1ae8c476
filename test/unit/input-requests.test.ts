/**
 * Requests for input across the eras (src/protocol/input-requests.ts): what each client can be asked, what a request
 * needs, and each request as each revision takes it, checked against that revision's official schema
 * (test/fixtures/spec-schemas, ajv): what the gateway puts to a client or an upstream is valid there, or refused
 * naming what the revision cannot carry.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { NO_RELAYED_CAPABILITIES, relayedSession } from '../../src/protocol/capabilities.js';
import { cannotCarryError, CODE, MAX_ANSWER_MESSAGE_CHARS, missingCapabilityError, readAnswerError } from '../../src/protocol/errors.js';
import {
    capabilitiesOfBits,
    capabilityBits,
    describeNeed,
    forRevision,
    INPUT_METHODS,
    inputCapabilities,
    missingNeed,
    readAnswer,
    readInputRequest,
    readInputRequests,
    relayCapabilities,
    relayPlan,
    requiredCapabilities,
    type InputCapabilities,
    type InputMethod,
    type InputNeed,
    type InputRequest
} from '../../src/protocol/input-requests.js';
import { LATEST_STATELESS, REVISIONS, revisionOf, type Revision } from '../../src/protocol/revisions.js';
import { SpecSchema, type Revision as SchemaRevision } from '../spec-schema.js';

const schemas = new Map<string, SpecSchema>(REVISIONS.map(revision => [revision.version, new SpecSchema(revision.version as SchemaRevision)]));
const schemaOf = (revision: Revision): SpecSchema => schemas.get(revision.version)!;
const revision = (version: string): Revision => revisionOf(version)!;
const R2024 = revision('2024-11-05');
const R2025_03 = revision('2025-03-26');
const R2025_06 = revision('2025-06-18');
const R2025_11 = revision('2025-11-25');
const R2026 = LATEST_STATELESS;

const REQUEST_DEFINITION: Record<InputMethod, string> = {
    'elicitation/create': 'ElicitRequest',
    'sampling/createMessage': 'CreateMessageRequest',
    'roots/list': 'ListRootsRequest'
};
const RESULT_DEFINITION: Record<InputMethod, string> = {
    'elicitation/create': 'ElicitResult',
    'sampling/createMessage': 'CreateMessageResult',
    'roots/list': 'ListRootsResult'
};

/** Problems of a request as put to a client of `revision`: a JSON-RPC request (2025 era), an InputRequest (2026-07-28). */
function requestProblems(method: InputMethod, params: Record<string, unknown>, to: Revision): string[] {
    const schema = schemaOf(to);
    if (to.serverRequests) {
        const message = { jsonrpc: '2.0', id: 'g.1', method, params };
        return [...schema.check('ServerRequest', message), ...schema.check(REQUEST_DEFINITION[method], message)];
    }
    return [...schema.check('InputRequest', { method, params }), ...schema.check(REQUEST_DEFINITION[method], { method, params })];
}

const read = (method: string, params: unknown): InputRequest => {
    const request = readInputRequest(method, params);
    assert.ok(request, `${method} ${JSON.stringify(params)} was refused`);
    return request;
};

const text = (value: string) => ({ type: 'text', text: value });
const FORM_SCHEMA = {
    type: 'object',
    properties: {
        ok: { type: 'boolean', title: 'Deploy?', default: false },
        who: { type: 'string', minLength: 1, format: 'email' },
        count: { type: 'integer', minimum: 1, maximum: 9 },
        colour: { type: 'string', enum: ['red', 'green'] }
    },
    required: ['ok']
};

/** What upstreams send, as they send it (a 2025-11-25 server's request, or a 2026-07-28 inputRequests entry). */
const ASKED = {
    form: ['elicitation/create', { message: 'Deploy for alice?', requestedSchema: FORM_SCHEMA, _meta: { progressToken: 7 } }],
    formWithMode: ['elicitation/create', { mode: 'form', message: 'Deploy?', requestedSchema: FORM_SCHEMA, task: { ttl: 1000 } }],
    titledChoice: [
        'elicitation/create',
        {
            message: 'Size?',
            requestedSchema: {
                type: 'object',
                properties: {
                    size: {
                        type: 'string',
                        title: 'Size',
                        oneOf: [
                            { const: 's', title: 'Small' },
                            { const: 'l', title: 'Large' }
                        ]
                    },
                    ok: { type: 'boolean' }
                }
            }
        }
    ],
    multipleChoice: [
        'elicitation/create',
        { message: 'Tags?', requestedSchema: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, minItems: 1 } } } }
    ],
    url: ['elicitation/create', { mode: 'url', message: 'Sign in', url: 'https://auth.example.org/start?x=1', elicitationId: 'e-17' }],
    urlWithoutId: ['elicitation/create', { mode: 'url', message: 'Sign in', url: 'https://auth.example.org/start' }],
    text: [
        'sampling/createMessage',
        {
            messages: [{ role: 'user', content: text('Summarise') }],
            maxTokens: 100,
            systemPrompt: 'Be brief',
            includeContext: 'none',
            temperature: 0.5,
            stopSequences: ['END'],
            modelPreferences: { hints: [{ name: 'claude' }], speedPriority: 0.5 },
            metadata: { team: 'a' }
        }
    ],
    image: ['sampling/createMessage', { messages: [{ role: 'user', content: { type: 'image', data: 'aGk=', mimeType: 'image/png' } }], maxTokens: 10 }],
    audio: ['sampling/createMessage', { messages: [{ role: 'user', content: { type: 'audio', data: 'aGk=', mimeType: 'audio/wav' } }], maxTokens: 10 }],
    context: ['sampling/createMessage', { messages: [{ role: 'user', content: text('Go') }], maxTokens: 10, includeContext: 'thisServer' }],
    tools: [
        'sampling/createMessage',
        {
            messages: [
                { role: 'user', content: text('Weather?') },
                { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'weather', input: { city: 'Oslo' } }] },
                { role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: [text('rain')] }] }
            ],
            maxTokens: 10,
            tools: [{ name: 'weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } }],
            toolChoice: { mode: 'auto' }
        }
    ],
    roots: ['roots/list', undefined]
} as const satisfies Record<string, readonly [InputMethod, unknown]>;

type Asked = keyof typeof ASKED;

// fc.webUrl() costs ~1 s per few hundred runs on a busy machine: a few shapes do as well here.
const URLS = fc.oneof(fc.constantFrom('https://auth.example.org/x', 'file:///home/a', 'urn:x'), fc.string());

/** One of ASKED, read as the gateway reads it. */
const asked = (name: Asked): InputRequest => read(ASKED[name][0], ASKED[name][1]);

/** What each revision cannot carry of each request (none: every revision takes it). */
const CANNOT: Partial<Record<Asked, Partial<Record<string, string>>>> = {
    form: { '2024-11-05': 'elicitation', '2025-03-26': 'elicitation' },
    formWithMode: { '2024-11-05': 'elicitation', '2025-03-26': 'elicitation' },
    titledChoice: { '2024-11-05': 'elicitation', '2025-03-26': 'elicitation' },
    multipleChoice: { '2024-11-05': 'elicitation', '2025-03-26': 'elicitation', '2025-06-18': 'elicitation with a multiple-choice field' },
    url: { '2024-11-05': 'elicitation (url mode)', '2025-03-26': 'elicitation (url mode)', '2025-06-18': 'elicitation (url mode)' },
    urlWithoutId: { '2024-11-05': 'elicitation (url mode)', '2025-03-26': 'elicitation (url mode)', '2025-06-18': 'elicitation (url mode)' },
    audio: { '2024-11-05': 'sampling with audio' },
    tools: { '2024-11-05': 'sampling with tools', '2025-03-26': 'sampling with tools', '2025-06-18': 'sampling with tools' }
};

describe('input requests: what each revision can be asked', () => {
    test('every request, as every revision takes it, is valid in its official schema, or refused naming what it cannot carry', () => {
        for (const name of Object.keys(ASKED) as Asked[]) {
            const method = ASKED[name][0];
            const request = asked(name);
            for (const to of REVISIONS) {
                const adapted = forRevision(request, to, () => 'minted-1');
                const cannot = CANNOT[name]?.[to.version];
                if (cannot !== undefined) {
                    assert.deepEqual(adapted, { cannot: `${cannot}, which MCP ${to.version} cannot carry` }, `${name} to ${to.version}`);
                    continue;
                }
                assert.ok('params' in adapted, `${name} to ${to.version}: ${JSON.stringify(adapted)}`);
                assert.deepEqual(requestProblems(method, adapted.params, to), [], `${name} to ${to.version}`);
            }
        }
    });

    test('the schemas agree: what is refused would be invalid there, or asks what the revision has no word for', () => {
        // The refusals are not caution: sent as they are, these fail the revision's schema.
        const tools = asked('tools');
        assert.notDeepEqual(requestProblems('sampling/createMessage', { ...tools.params }, R2025_06), []);
        assert.notDeepEqual(requestProblems('sampling/createMessage', { ...asked('audio').params }, R2024), []);
        assert.notDeepEqual(requestProblems('elicitation/create', { ...asked('multipleChoice').params }, R2025_06), []);
        assert.equal(schemaOf(R2025_03).has('ElicitRequest'), false);
    });

    test('elicitation: mode from 2025-11-25 on (form by default), none before; titled choices as enumNames for 2025-06-18', () => {
        const form = asked('form');
        assert.equal(form.params.mode, 'form');
        assert.equal(paramsFor(form, R2025_11).mode, 'form');
        assert.equal(paramsFor(form, R2026).mode, 'form');
        assert.equal('mode' in paramsFor(form, R2025_06), false);
        const choice = paramsFor(asked('titledChoice'), R2025_06).requestedSchema as { properties: Record<string, unknown> };
        assert.deepEqual(choice.properties.size, { type: 'string', title: 'Size', enum: ['s', 'l'], enumNames: ['Small', 'Large'] });
        assert.deepEqual(choice.properties.ok, { type: 'boolean' });
        const untouched = paramsFor(asked('form'), R2025_06).requestedSchema;
        assert.deepEqual(untouched, FORM_SCHEMA, 'a form without titled choices is passed as it is');
    });

    test("url elicitation: a 2025 upstream's id kept for a 2025-11-25 client and left out for 2026-07-28; one minted when none came", () => {
        let minted = 0;
        const mint = () => `minted-${++minted}`;
        assert.equal(paramsFor(asked('url'), R2025_11, mint).elicitationId, 'e-17');
        assert.equal('elicitationId' in paramsFor(asked('url'), R2026, mint), false);
        assert.equal(minted, 0, 'nothing minted when the id came or is not needed');
        assert.equal(paramsFor(asked('urlWithoutId'), R2025_11, mint).elicitationId, 'minted-1');
        assert.equal(paramsFor(asked('urlWithoutId'), R2025_11, mint).elicitationId, 'minted-2', 'one id per request put to a client');
    });

    test("what no revision defines is not passed on: the upstream's _meta (a progress token), task, unknown fields", () => {
        const form = asked('form');
        assert.equal('_meta' in form.params, false);
        assert.equal('task' in asked('formWithMode').params, false);
        const sampling = read('sampling/createMessage', { messages: [], maxTokens: 1, _meta: { progressToken: 1 }, task: {}, secret: 'x' });
        assert.deepEqual(sampling.params, { messages: [], maxTokens: 1 });
        assert.deepEqual(read('roots/list', { _meta: { progressToken: 'p' } }), { method: 'roots/list', params: {} });
    });
});

function paramsFor(request: InputRequest, to: Revision, mint: () => string = () => 'minted'): Record<string, unknown> {
    const adapted = forRevision(request, to, mint);
    assert.ok('params' in adapted, JSON.stringify(adapted));
    return adapted.params;
}

describe('input requests: reading what an upstream asks', () => {
    test('malformed requests are refused', () => {
        const refused: [unknown, unknown][] = [
            ['ping', {}],
            ['tools/call', {}],
            [42, {}],
            ['elicitation/create', undefined],
            ['elicitation/create', { requestedSchema: FORM_SCHEMA }],
            ['elicitation/create', { message: 1, requestedSchema: FORM_SCHEMA }],
            ['elicitation/create', { message: 'm', mode: 'voice', requestedSchema: FORM_SCHEMA }],
            ['elicitation/create', { message: 'm' }],
            ['elicitation/create', { message: 'm', requestedSchema: { type: 'array', properties: {} } }],
            ['elicitation/create', { message: 'm', requestedSchema: { type: 'object', properties: { a: { type: 'object' } } } }],
            ['elicitation/create', { message: 'm', requestedSchema: { type: 'object', properties: { a: 'string' } } }],
            ['elicitation/create', { message: 'm', requestedSchema: { type: 'object', properties: {}, required: 'a' } }],
            ['elicitation/create', { message: 'm', requestedSchema: { type: 'object', properties: { a: { type: 'array', items: { type: 'object', properties: {} } } } } }],
            ['elicitation/create', { mode: 'url', message: 'm' }],
            ['elicitation/create', { mode: 'url', message: 'm', url: 'not a url' }],
            ['elicitation/create', { mode: 'url', message: 'm', url: 'https://x.example', elicitationId: 5 }],
            ['sampling/createMessage', { maxTokens: 1 }],
            ['sampling/createMessage', { messages: [] }],
            ['sampling/createMessage', { messages: [], maxTokens: 1.5 }],
            ['sampling/createMessage', { messages: [{ role: 'system', content: text('x') }], maxTokens: 1 }],
            ['sampling/createMessage', { messages: [{ role: 'user', content: 'x' }], maxTokens: 1 }],
            ['sampling/createMessage', { messages: [{ role: 'user', content: [] }], maxTokens: 1 }],
            ['sampling/createMessage', { messages: [{ role: 'user', content: { text: 'x' } }], maxTokens: 1 }],
            ['sampling/createMessage', { messages: [{ role: 'user', content: { type: 'resource', resource: { uri: 'file:///x', text: 'x' } } }], maxTokens: 1 }],
            ['sampling/createMessage', { messages: [{ role: 'user', content: { type: 'image', data: 'aGk=' } }], maxTokens: 1 }],
            ['sampling/createMessage', { messages: [{ role: 'user', content: { type: 'text', text: 5 } }], maxTokens: 1 }],
            ['sampling/createMessage', { messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'n' }] }], maxTokens: 1 }],
            ['sampling/createMessage', { messages: [{ role: 'user', content: [{ type: 'tool_result', toolUseId: 't' }] }], maxTokens: 1 }],
            ['sampling/createMessage', { messages: [{ role: 'user', content: { type: 'constructor', text: 'x' } }], maxTokens: 1 }],
            ['sampling/createMessage', { messages: [], maxTokens: 1, includeContext: 'everything' }],
            ['sampling/createMessage', { messages: [], maxTokens: 1, temperature: 'hot' }],
            ['sampling/createMessage', { messages: [], maxTokens: 1, tools: [{ name: 'x' }] }],
            ['sampling/createMessage', { messages: [], maxTokens: 1, toolChoice: { mode: 'always' } }],
            ['roots/list', []],
            ['roots/list', 'all']
        ];
        for (const [method, params] of refused) assert.equal(readInputRequest(method, params), undefined, `${String(method)} ${JSON.stringify(params)}`);
    });

    test("a 2026-07-28 upstream's inputRequests: keyed requests, at most maxPerRound, keys 1-64 characters, each valid", () => {
        const asked = { ok: { method: 'elicitation/create', params: ASKED.form[1] }, roots: { method: 'roots/list' } };
        const map = readInputRequests(asked, 8);
        assert.ok(map instanceof Map);
        assert.deepEqual([...map.keys()], ['ok', 'roots']);
        assert.deepEqual(map.get('roots'), { method: 'roots/list', params: {} });
        assert.equal((readInputRequests({}, 8) as Map<string, InputRequest>).size, 0);
        const nine = Object.fromEntries(Array.from({ length: 9 }, (_, index) => [`q${index}`, { method: 'roots/list' }]));
        assert.equal(readInputRequests(nine, 8), '9 input requests in one round, more than inputRequests.maxPerRound (8)');
        assert.ok(readInputRequests(nine, 9) instanceof Map);
        assert.equal(readInputRequests({ ['k'.repeat(65)]: { method: 'roots/list' } }, 8), 'an inputRequests key is not 1-64 characters long');
        assert.equal(readInputRequests({ '': { method: 'roots/list' } }, 8), 'an inputRequests key is not 1-64 characters long');
        assert.ok(readInputRequests({ ['k'.repeat(64)]: { method: 'roots/list' } }, 8) instanceof Map);
        assert.equal(readInputRequests({ a: { method: 'ping' } }, 8), 'inputRequests["a"] is no valid elicitation/create, sampling/createMessage or roots/list request');
        assert.equal(readInputRequests({ a: 'roots/list' }, 8), 'inputRequests["a"] is no valid elicitation/create, sampling/createMessage or roots/list request');
        for (const junk of [undefined, null, [], 'x', 3]) assert.equal(readInputRequests(junk, 8), 'inputRequests is not an object');
    });

    test('junk never throws, and what is read is no bigger than what came', () => {
        const params = fc.oneof(
            fc.jsonValue({ maxDepth: 4 }),
            fc.record({ message: fc.string(), mode: fc.constantFrom('form', 'url', undefined), requestedSchema: fc.jsonValue({ maxDepth: 3 }), url: URLS }, { requiredKeys: [] }),
            fc.record({ messages: fc.jsonValue({ maxDepth: 4 }), maxTokens: fc.oneof(fc.integer(), fc.double()), tools: fc.jsonValue({ maxDepth: 3 }) }, { requiredKeys: [] })
        );
        fc.assert(
            fc.property(fc.constantFrom<unknown>(...INPUT_METHODS, 'ping', undefined), params, (method, value) => {
                const request = readInputRequest(method, value);
                if (request === undefined || method === 'roots/list') return;
                assert.ok(JSON.stringify(request.params).length <= JSON.stringify(value).length + '"mode":"form",'.length);
            }),
            { numRuns: 300 }
        );
    });
});

describe('input requests: what a client can be asked', () => {
    /** declared, revision → normalised. */
    const NORMALISED: [unknown, Revision, InputCapabilities][] = [
        [{ elicitation: {} }, R2025_06, { elicitation: { form: {} } }],
        [{ elicitation: {} }, R2025_11, { elicitation: { form: {} } }],
        [{ elicitation: {} }, R2026, { elicitation: { form: {} } }],
        [{ elicitation: { url: {} } }, R2025_11, { elicitation: { url: {} } }],
        [{ elicitation: { form: {}, url: {} } }, R2025_11, { elicitation: { form: {}, url: {} } }],
        [{ elicitation: { form: { applyDefaults: true } } }, R2026, { elicitation: { form: {} } }],
        // 2025-06-18 has no modes: what it declares is form.
        [{ elicitation: { url: {} } }, R2025_06, { elicitation: { form: {} } }],
        [{ elicitation: {} }, R2025_03, {}],
        [{ elicitation: {} }, R2024, {}],
        [{ elicitation: true }, R2025_11, {}],
        // Before sampling.context (2025-11-25), every sampling client took includeContext.
        [{ sampling: {} }, R2024, { sampling: { context: {} } }],
        [{ sampling: { tools: {} } }, R2025_06, { sampling: { context: {} } }],
        [{ sampling: {} }, R2025_11, { sampling: {} }],
        [{ sampling: { context: {}, tools: {} } }, R2025_11, { sampling: { context: {}, tools: {} } }],
        [{ sampling: { tools: {} } }, R2026, { sampling: { tools: {} } }],
        [{ sampling: { tools: true } }, R2026, { sampling: {} }],
        [{ roots: { listChanged: true } }, R2024, { roots: {} }],
        [{ roots: {}, elicitation: {}, sampling: {}, experimental: { x: {} }, tasks: {} }, R2026, { roots: {}, elicitation: { form: {} }, sampling: {} }],
        [{}, R2026, {}],
        [undefined, R2025_11, {}],
        ['all', R2025_11, {}],
        [[], R2025_11, {}]
    ];

    test('declared capabilities, normalised per revision (elicitation: {} is form; what the revision lacks dropped)', () => {
        for (const [declared, to, expected] of NORMALISED) assert.deepEqual(inputCapabilities(declared, to), expected, `${JSON.stringify(declared)} at ${to.version}`);
    });

    test('the bits a session is sealed with stand for the same capabilities: shared frozen values, no per-request object', () => {
        for (const [declared, to] of NORMALISED) {
            const capabilities = inputCapabilities(declared, to);
            assert.ok(Object.isFrozen(capabilities));
            assert.equal(capabilitiesOfBits(capabilityBits(capabilities)), capabilities);
        }
        const declaredArbitrary = fc.record(
            {
                elicitation: fc.oneof(fc.constant({}), fc.record({ form: fc.constant({}), url: fc.constant({}) }, { requiredKeys: [] }), fc.jsonValue({ maxDepth: 2 })),
                sampling: fc.oneof(fc.constant({}), fc.record({ context: fc.constant({}), tools: fc.constant({}) }, { requiredKeys: [] }), fc.jsonValue({ maxDepth: 2 })),
                roots: fc.oneof(fc.constant({}), fc.jsonValue({ maxDepth: 2 }))
            },
            { requiredKeys: [] }
        );
        fc.assert(
            fc.property(declaredArbitrary, fc.constantFrom(...REVISIONS), (declared, to) => {
                const capabilities = inputCapabilities(declared, to);
                assert.equal(capabilitiesOfBits(capabilityBits(capabilities)), capabilities);
            }),
            { numRuns: 300 }
        );
        fc.assert(
            fc.property(fc.integer({ min: 0, max: 63 }), bits => {
                const capabilities = capabilitiesOfBits(bits);
                assert.equal(capabilitiesOfBits(capabilityBits(capabilities)), capabilities);
                // Sampling's features without sampling stand for nothing.
                assert.equal(capabilityBits(capabilities), bits & 4 ? bits : bits & ~(8 | 16));
            })
        );
        for (const junk of [-1, 64 + 1, 1.5, Number.NaN, 2 ** 60]) assert.ok(Object.isFrozen(capabilitiesOfBits(junk)), String(junk));
        assert.deepEqual(capabilitiesOfBits(-1), {});
        assert.deepEqual(capabilitiesOfBits(64 + 1), { elicitation: { form: {} } }, 'unknown bits ignored');
    });

    test('a 2025 session is relayed its sealed capabilities; one shared value per combination, nothing for none', () => {
        const bits = capabilityBits(inputCapabilities({ elicitation: {}, sampling: { tools: {} } }, R2025_11));
        assert.deepEqual(relayedSession(bits).capabilities, { elicitation: { form: {} }, sampling: { tools: {} } });
        assert.equal(relayedSession(bits), relayedSession(bits));
        assert.equal(relayedSession(0), NO_RELAYED_CAPABILITIES);
        assert.equal(relayedSession(-3), NO_RELAYED_CAPABILITIES);
    });

    const ALL = capabilitiesOfBits(63);
    /** capabilities (declared at 2026-07-28), request → the need it lacks. */
    const NEEDS: [unknown, Asked, InputNeed | undefined][] = [
        [{}, 'form', { capability: 'elicitation', feature: 'form' }],
        [{ elicitation: { url: {} } }, 'form', { capability: 'elicitation', feature: 'form' }],
        [{ elicitation: {} }, 'form', undefined],
        [{ elicitation: {} }, 'url', { capability: 'elicitation', feature: 'url' }],
        [{ elicitation: { url: {} } }, 'url', undefined],
        [{ elicitation: {} }, 'text', { capability: 'sampling' }],
        [{ sampling: {} }, 'text', undefined],
        [{ sampling: {} }, 'audio', undefined],
        [{ sampling: {} }, 'tools', { capability: 'sampling', feature: 'tools' }],
        [{ sampling: { tools: {} } }, 'tools', undefined],
        [{ sampling: {} }, 'context', { capability: 'sampling', feature: 'context' }],
        [{ sampling: { context: {} } }, 'context', undefined],
        [{ sampling: {} }, 'roots', { capability: 'roots' }],
        [{ roots: {} }, 'roots', undefined]
    ];

    test('the need a client lacks for a request, in words and as -32021 (valid as MissingRequiredClientCapabilityError)', () => {
        for (const [declared, name, need] of NEEDS) assert.deepEqual(missingNeed(inputCapabilities(declared, R2026), asked(name)), need, `${JSON.stringify(declared)} ${name}`);
        for (const name of Object.keys(ASKED) as Asked[]) assert.equal(missingNeed(ALL, asked(name)), undefined, name);
        const WORDS: [InputNeed, string, Record<string, unknown>][] = [
            [{ capability: 'elicitation', feature: 'form' }, 'elicitation', { elicitation: { form: {} } }],
            [{ capability: 'elicitation', feature: 'url' }, 'elicitation (url mode)', { elicitation: { url: {} } }],
            [{ capability: 'sampling' }, 'sampling', { sampling: {} }],
            [{ capability: 'sampling', feature: 'tools' }, 'sampling with tools', { sampling: { tools: {} } }],
            [{ capability: 'sampling', feature: 'context' }, 'sampling with context', { sampling: { context: {} } }],
            [{ capability: 'roots' }, 'roots', { roots: {} }]
        ];
        for (const [need, words, required] of WORDS) {
            assert.equal(describeNeed(need), words);
            assert.deepEqual(requiredCapabilities(need), { requiredCapabilities: required });
            const error = missingCapabilityError(need);
            assert.deepEqual(error, {
                code: CODE.missingClientCapability,
                message: `The upstream asks for ${words}, which this client did not declare`,
                data: { requiredCapabilities: required }
            });
            assert.deepEqual(schemaOf(R2026).check('MissingRequiredClientCapabilityError', { jsonrpc: '2.0', id: 1, error }), []);
        }
        assert.deepEqual(cannotCarryError('sampling with audio, which MCP 2024-11-05 cannot carry'), {
            code: CODE.internalError,
            message: 'The upstream asks for sampling with audio, which MCP 2024-11-05 cannot carry'
        });
    });

    test('what the gateway declares to a 2025 upstream it relays for: valid in every 2025 revision, roots only when asked', () => {
        assert.deepEqual(relayCapabilities(false), { elicitation: { form: {}, url: {} }, sampling: { context: {}, tools: {} } });
        assert.deepEqual(relayCapabilities(true), { elicitation: { form: {}, url: {} }, sampling: { context: {}, tools: {} }, roots: {} });
        assert.ok(Object.isFrozen(relayCapabilities(true)));
        for (const to of REVISIONS.filter(candidate => candidate.serverRequests))
            assert.deepEqual(schemaOf(to).check('ClientCapabilities', relayCapabilities(true)), [], to.version);
    });

    test('relayInputRequests on each wire (Q1): auto takes answer streams where there are and the sole get in flight for the rest; related on stdio says nothing', () => {
        const http = { declare: true, answerStreams: true, unrelated: 'none' };
        const silent = { declare: false, answerStreams: false, unrelated: 'none' };
        assert.deepEqual(relayPlan('auto', 'streamable-http'), { ...http, unrelated: 'sole' }, 'SDK v2 sends its questions on the GET stream');
        assert.deepEqual(relayPlan('related', 'streamable-http'), http);
        for (const wire of ['stdio', 'sse'] as const) {
            assert.deepEqual(relayPlan('auto', wire), { declare: true, answerStreams: false, unrelated: 'sole' });
            assert.deepEqual(relayPlan('related', wire), silent);
            assert.deepEqual(relayPlan('exclusive', wire), { declare: true, answerStreams: false, unrelated: 'exclusive' });
        }
        assert.deepEqual(relayPlan('exclusive', 'streamable-http'), { declare: true, answerStreams: true, unrelated: 'exclusive' });
        for (const wire of ['stdio', 'sse', 'streamable-http'] as const) assert.deepEqual(relayPlan('off', wire), silent);
    });
});

describe("input requests: a client's answer", () => {
    const ANSWERS: [InputMethod, Record<string, unknown>, Record<string, unknown>][] = [
        [
            'elicitation/create',
            { action: 'accept', content: { ok: true, who: 'a@example.org', count: 3 }, _meta: { x: 1 } },
            { action: 'accept', content: { ok: true, who: 'a@example.org', count: 3 } }
        ],
        ['elicitation/create', { action: 'accept', content: { tags: ['a', 'b'] } }, { action: 'accept', content: { tags: ['a', 'b'] } }],
        ['elicitation/create', { action: 'decline' }, { action: 'decline' }],
        ['elicitation/create', { action: 'cancel' }, { action: 'cancel' }],
        [
            'sampling/createMessage',
            { role: 'assistant', content: text('Done'), model: 'claude', stopReason: 'endTurn', _meta: { cost: 1 } },
            { role: 'assistant', content: text('Done'), model: 'claude', stopReason: 'endTurn' }
        ],
        [
            'sampling/createMessage',
            { role: 'assistant', content: { type: 'audio', data: 'aGk=', mimeType: 'audio/wav' }, model: 'm' },
            { role: 'assistant', content: { type: 'audio', data: 'aGk=', mimeType: 'audio/wav' }, model: 'm' }
        ],
        [
            'sampling/createMessage',
            { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'weather', input: {} }], model: 'm', stopReason: 'toolUse' },
            { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'weather', input: {} }], model: 'm', stopReason: 'toolUse' }
        ],
        [
            'roots/list',
            { roots: [{ uri: 'file:///home/alice/repo', name: 'repo', _meta: { x: 1 } }, { uri: 'file:///tmp' }] },
            { roots: [{ uri: 'file:///home/alice/repo', name: 'repo' }, { uri: 'file:///tmp' }] }
        ],
        ['roots/list', { roots: [] }, { roots: [] }]
    ];

    test("accepted as the client's revision defines it, its own fields only; valid wherever the answer was", () => {
        for (const [method, answer, expected] of ANSWERS) {
            const readAs = readAnswer(method, answer);
            assert.deepEqual(readAs, expected, `${method} ${JSON.stringify(answer)}`);
            let validSomewhere = false;
            for (const to of REVISIONS) {
                if (!schemaOf(to).has(RESULT_DEFINITION[method]) || schemaOf(to).check(RESULT_DEFINITION[method], answer).length > 0) continue;
                validSomewhere = true;
                assert.deepEqual(schemaOf(to).check(RESULT_DEFINITION[method], readAs), [], `${method} at ${to.version}`);
            }
            assert.ok(validSomewhere, `the fixture ${JSON.stringify(answer)} is valid in no revision`);
            if (R2026 === LATEST_STATELESS) assert.deepEqual(schemaOf(R2026).check('InputResponse', readAs), [], `${method}: as a 2026-07-28 inputResponses value`);
        }
    });

    test('malformed answers are refused', () => {
        const refused: [InputMethod, unknown][] = [
            ['elicitation/create', undefined],
            ['elicitation/create', []],
            ['elicitation/create', { action: 'yes' }],
            ['elicitation/create', { action: 'accept', content: 'ok' }],
            ['elicitation/create', { action: 'accept', content: { nested: { a: 1 } } }],
            ['elicitation/create', { action: 'accept', content: { list: [1, 2] } }],
            ['elicitation/create', { content: {} }],
            ['sampling/createMessage', { role: 'assistant', content: text('x') }],
            ['sampling/createMessage', { role: 'system', content: text('x'), model: 'm' }],
            ['sampling/createMessage', { role: 'assistant', content: 'x', model: 'm' }],
            ['sampling/createMessage', { role: 'assistant', content: [], model: 'm' }],
            ['sampling/createMessage', { role: 'assistant', content: { type: 'resource_link', name: 'x', uri: 'file:///x' }, model: 'm' }],
            ['sampling/createMessage', { role: 'assistant', content: { type: 'audio', data: 'aGk=' }, model: 'm' }],
            ['sampling/createMessage', { role: 'assistant', content: text('x'), model: 'm', stopReason: 3 }],
            ['roots/list', {}],
            ['roots/list', { roots: 'file:///' }],
            ['roots/list', { roots: [{ name: 'x' }] }],
            ['roots/list', { roots: [{ uri: 'not a uri' }] }],
            ['roots/list', { roots: [{ uri: 'file:///x', name: 5 }] }]
        ];
        for (const [method, answer] of refused) assert.equal(readAnswer(method, answer), undefined, `${method} ${JSON.stringify(answer)}`);
    });

    test('junk never throws, and what is read is never bigger than what came', () => {
        const answer = fc.oneof(
            fc.jsonValue({ maxDepth: 4 }),
            fc.record({ action: fc.constantFrom('accept', 'decline', 'cancel', 'x'), content: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: ['action'] }),
            fc.record(
                { role: fc.constantFrom('user', 'assistant'), content: fc.jsonValue({ maxDepth: 3 }), model: fc.string(), stopReason: fc.jsonValue({ maxDepth: 1 }) },
                { requiredKeys: [] }
            ),
            fc.record({ roots: fc.array(fc.record({ uri: URLS, name: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: [] })) })
        );
        fc.assert(
            fc.property(fc.constantFrom(...INPUT_METHODS), answer, (method, value) => {
                const result = readAnswer(method, value);
                if (result !== undefined) assert.ok(JSON.stringify(result).length <= JSON.stringify(value).length);
            }),
            { numRuns: 300 }
        );
    });

    test('an error answer travels as its code and the first line of its message, cut; anything else is none', () => {
        assert.deepEqual(readAnswerError({ code: -32603, message: 'User cancelled\n    at handler (/home/a/x.js:1)', data: { secret: 1 } }), {
            error: { code: -32603, message: 'User cancelled' }
        });
        const long = readAnswerError({ code: 1, message: '😀'.repeat(1000) });
        assert.ok(long && 'error' in long);
        assert.equal([...long.error.message].length, MAX_ANSWER_MESSAGE_CHARS);
        for (const junk of [undefined, 'error', { code: 'x', message: 'm' }, { code: 1.5, message: 'm' }, { code: 1 }, []])
            assert.equal(readAnswerError(junk), undefined, JSON.stringify(junk));
    });
});
