/**
 * Safe keys over real HTTP: prompt names, argument names and cursors that are
 * JavaScript's special property names, very long, empty, full of the namespace
 * separator, unicode, control characters or path-like are data, never object
 * keys that change behaviour. The upstream receives exactly the original name
 * and arguments (the fixture's extra prompts echo them back), nothing pollutes
 * Object.prototype, and a name like "a__b__c" resolves to exactly one upstream
 * and one prompt: the one whose listing produced that exposed name.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { parseConfig } from '../src/config/load.js';
import type { RunningGateway } from '../src/gateway.js';
import { capturingLogger, connectHttp, fixtureStats, listAllPages, rpcError, startTestGateway, stdioFixture } from './helpers.js';
import { messagesOf, openRawSession, post, type JsonRpcMessage, type RawSession } from './raw-http.js';

/** Prompt names served by upstream "a" (exposed as "a__<name>"). */
const NAMES = [
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    'valueOf',
    '__defineGetter__',
    'n'.repeat(1000),
    'b__c',
    '____',
    '__',
    'x__',
    '__x',
    '😀 emoji',
    'שלום עולם',
    'مرحبا',
    'e\u0301\u0302',
    '\u202Eevil.exe',
    'zero\u200Bwidth',
    'tab\there',
    'bell\u0007',
    '\u001b[31mred',
    'line\nbreak',
    'a/b',
    '../../etc/passwd',
    '..',
    '.',
    '%2e%2e%2f',
    'with space',
    '*',
    '{a,b}',
    '[x]',
    '?',
    '"quoted"',
    '\\back\\slash'
];

/** Argument names every one of those prompts declares. */
const ARG_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'a'.repeat(1000), '😀', 'a.b', '../x', '__', 'line\nbreak', ''];

/** One value per argument name, themselves odd (empty, NUL, lone surrogate, JSON-looking). */
const VALUES = ['p', '', 'nul\u0000byte', '\ud800 lone surrogate', '{"polluted":"yes"}', '__proto__', 'ש😀e\u0301', 'x'.repeat(500), '[]', 'null', 'true', '0', ' '];

/** Arguments as an object with own properties for every name, "__proto__" included (a literal would set the prototype). */
function argumentsFor(names: readonly string[], values: readonly string[] = VALUES): Record<string, string> {
    return Object.fromEntries(names.map((name, index) => [name, values[index % values.length]!]));
}

/**
 * A hand-written stdio upstream (raw JSON-RPC, no SDK, no schema parsing) that lists the prompts given to it and
 * answers prompts/get and completion/complete with the exact `params` it received, as JSON text. The SDK-based
 * fixture cannot tell what arrived byte for byte: its own schema parsing (zod records) drops own "__proto__" keys.
 */
const TAP_SCRIPT = `
const prompts = JSON.parse(process.argv[1]);
const send = message => process.stdout.write(JSON.stringify(message) + '\\n');
require('node:readline').createInterface({ input: process.stdin }).on('line', line => {
    let message;
    try { message = JSON.parse(line); } catch { return; }
    if (message.id === undefined || typeof message.method !== 'string') return;
    const params = message.params ?? {};
    const answers = {
        initialize: () => ({ protocolVersion: params.protocolVersion, capabilities: { prompts: {}, completions: {} }, serverInfo: { name: 'tap', version: '1' } }),
        ping: () => ({}),
        'prompts/list': () => ({ prompts }),
        'prompts/get': () => ({ messages: [{ role: 'user', content: { type: 'text', text: JSON.stringify(params) } }] }),
        'completion/complete': () => ({ completion: { values: [JSON.stringify(params)], hasMore: false } })
    };
    const answer = Object.hasOwn(answers, message.method) ? answers[message.method] : undefined;
    send(answer ? { jsonrpc: '2.0', id: message.id, result: answer() } : { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
});
`;

function tapUpstream(id: string, prompts: { name: string; arguments?: { name: string; required?: boolean }[] }[]) {
    return { id, transport: 'stdio', command: process.execPath, args: ['-e', TAP_SCRIPT, JSON.stringify(prompts)] };
}

/** The params the tap upstream received, from a prompts/get result. */
function tapped(result: { messages: { content: { type: string; text?: string } }[] }): { name: string; arguments?: Record<string, string> } {
    const content = result.messages[0]!.content;
    assert.equal(content.type, 'text');
    return JSON.parse(content.text!) as { name: string; arguments?: Record<string, string> };
}

interface Echo {
    name: string;
    arguments: Record<string, string>;
}

function echoed(result: { messages: { content: { type: string; text?: string } }[] }): Echo {
    const content = result.messages[0]!.content;
    assert.equal(content.type, 'text');
    return JSON.parse(content.text!) as Echo;
}

/** Own enumerable entries, "__proto__" included, in a comparable form. */
function entries(record: Record<string, string>): [string, string][] {
    return Object.entries(record).sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
}

/** A hand-written JSON-RPC request (its special keys intact) in an existing session; the answering message. */
async function rawRequest(url: string, session: RawSession, body: string): Promise<{ status: number; message: JsonRpcMessage | undefined }> {
    const response = await post(url, body, session.headers);
    const message = (await messagesOf(response)).find(candidate => 'result' in candidate || 'error' in candidate);
    return { status: response.status, message };
}

function assertNotPolluted(): void {
    const probe = {} as Record<string, unknown>;
    for (const key of ['polluted', 'isAdmin', 'toString2']) {
        assert.equal(probe[key], undefined, `Object.prototype.${key}`);
        assert.ok(!(key in Object.prototype), key);
    }
    assert.equal(typeof probe.toString, 'function');
    assert.equal(typeof probe.hasOwnProperty, 'function');
    assert.equal(Object.getPrototypeOf(probe), Object.prototype);
}

describe('safe keys', () => {
    let gateway: RunningGateway;
    let client: Client;
    const { logger, lines } = capturingLogger();

    before(async () => {
        gateway = await startTestGateway(
            {
                pagination: { pageSize: 2 },
                upstreams: [
                    stdioFixture('a', { prompts: 0, extraPrompts: NAMES.map(name => ({ name, arguments: ARG_NAMES.map(arg => ({ name: arg })) })) }),
                    // An upstream id that is a special property name too.
                    tapUpstream('constructor', [{ name: 'prototype' }, { name: '__proto__' }]),
                    tapUpstream('tap', [
                        ...NAMES.map(name => ({ name, arguments: ARG_NAMES.map(arg => ({ name: arg })) })),
                        { name: 'needs-proto', arguments: [{ name: '__proto__', required: true }] }
                    ]),
                    // Not namespaced: its "a__b__c" falls in upstream a's namespace and is left out, so "a__b__c" stays a's "b__c".
                    stdioFixture(
                        'raw',
                        {
                            prompts: 0,
                            extraPrompts: [{ name: 'a__b__c' }, { name: '__proto__' }, { name: 'constructor' }, { name: 'plain', arguments: [{ name: 'constructor' }] }]
                        },
                        { namespace: false }
                    )
                ]
            },
            logger
        );
        client = await connectHttp(gateway.url!);
    });

    after(async () => {
        await client?.close();
        await gateway?.close();
        assertNotPolluted();
    });

    test('every name is listed, namespaced "a__<name>", in order, across pages of 2 whose cursors carry such names', async () => {
        const { names, pages, cursors } = await listAllPages(client);
        assert.ok(
            pages.every(size => size <= 2),
            String(pages)
        );
        assert.ok(cursors >= NAMES.length / 2);
        assert.equal(new Set(names).size, names.length, 'no prompt twice');
        const exposed = NAMES.map(name => `a__${name}`);
        assert.deepEqual(
            names.filter(name => exposed.includes(name)),
            exposed,
            "every odd name, in the upstream's order"
        );
        const tapExposed = [...NAMES, 'needs-proto'].map(name => `tap__${name}`);
        assert.deepEqual(
            names.filter(name => name.startsWith('tap__')),
            tapExposed
        );
        assert.deepEqual(
            names.filter(name => name.startsWith('constructor__')),
            ['constructor__prototype', 'constructor____proto__']
        );
        // The raw upstream's names are exposed unprefixed, except the one in a's namespace.
        const raw = names.slice(names.indexOf('__proto__'));
        assert.deepEqual(raw.slice(0, 3), ['__proto__', 'constructor', 'plain']);
        assert.equal(names.filter(name => name === 'a__b__c').length, 1);
        // Walking again gives the same pages (cursors are stable).
        assert.deepEqual((await listAllPages(client)).names, names);
    });

    test('the unprefixed "a__b__c" of a non-namespaced upstream is left out with a warning', () => {
        assert.ok(
            lines().some(line => line.level === 'warn' && JSON.stringify(line).includes('a__b__c')),
            'a warning names the clash'
        );
    });

    test('prompts/get of every odd name reaches the upstream with exactly the original name and arguments', async () => {
        const args = argumentsFor(ARG_NAMES);
        assert.ok(Object.hasOwn(args, '__proto__') && Object.keys(args).length === ARG_NAMES.length);
        for (const name of NAMES) {
            const received = tapped(await client.getPrompt({ name: `tap__${name}`, arguments: args }));
            assert.equal(received.name, name, JSON.stringify(name));
            assert.deepEqual(entries(received.arguments ?? {}), entries(args), `arguments of ${JSON.stringify(name.slice(0, 20))}`);
        }
    });

    test('the same through an SDK upstream: names exact, arguments exact (its own SDK may drop "__proto__", see TAP_SCRIPT)', async () => {
        const args = argumentsFor(ARG_NAMES);
        const expected = entries(Object.fromEntries(Object.entries(args).filter(([key]) => key !== '__proto__')));
        assert.equal(expected.length, ARG_NAMES.length - 1);
        for (const name of NAMES) {
            const echo = echoed(await client.getPrompt({ name: `a__${name}`, arguments: args }));
            assert.equal(echo.name, name, JSON.stringify(name));
            const received = entries(echo.arguments);
            assert.deepEqual(
                received.filter(([key]) => key !== '__proto__'),
                expected,
                `arguments of ${JSON.stringify(name.slice(0, 20))}`
            );
            // Whether the fixture's SDK keeps it is its business; if it does, it is the value sent.
            for (const [key, value] of received) if (key === '__proto__') assert.equal(value, args.__proto__);
        }
    });

    test('"a__b__c" resolves to upstream a, prompt "b__c"; the unprefixed names of the raw upstream resolve to it', async () => {
        assert.equal(echoed(await client.getPrompt({ name: 'a__b__c' })).name, 'b__c');
        assert.equal(echoed(await client.getPrompt({ name: 'a______' })).name, '____');
        assert.equal(echoed(await client.getPrompt({ name: 'a____' })).name, '__');
        assert.equal(echoed(await client.getPrompt({ name: 'a__x__' })).name, 'x__');
        assert.equal(echoed(await client.getPrompt({ name: 'a____x' })).name, '__x');
        assert.equal(echoed(await client.getPrompt({ name: '__proto__' })).name, '__proto__');
        assert.equal(echoed(await client.getPrompt({ name: 'constructor' })).name, 'constructor');
        assert.deepEqual(echoed(await client.getPrompt({ name: 'plain', arguments: { constructor: 'c' } })), { name: 'plain', arguments: { constructor: 'c' } });
        assert.equal(tapped(await client.getPrompt({ name: 'constructor__prototype' })).name, 'prototype');
        assert.equal(tapped(await client.getPrompt({ name: 'constructor____proto__' })).name, '__proto__');
        assert.deepEqual(
            gateway.upstreams.map(upstream => [upstream.id, upstream.state]),
            [
                ['a', 'ready'],
                ['constructor', 'ready'],
                ['tap', 'ready'],
                ['raw', 'ready']
            ]
        );
    });

    test('names that are not exposed, special property names among them, are "Unknown prompt" and reach no upstream', async () => {
        const before = (await fixtureStats(client, 'a__stats')).requests.get;
        for (const name of [
            'toString',
            'hasOwnProperty',
            'valueOf',
            'prototype',
            '__defineGetter__',
            'isPrototypeOf',
            'raw__plain',
            'a__',
            'a',
            '',
            'a__b',
            'a__b__',
            'a__b__c__',
            'A__b__c',
            'a__toString ',
            'a__n',
            `a__${'n'.repeat(1001)}`
        ]) {
            const error = await rpcError(client.getPrompt({ name }));
            assert.equal(error.code, -32602, JSON.stringify(name));
            assert.match(error.message, /^Unknown prompt: /, JSON.stringify(name));
            assert.ok(error.message.length < 120, 'the name is cut in the message');
        }
        assert.equal((await fixtureStats(client, 'a__stats')).requests.get, before);
    });

    test('an argument named "__proto__" is an argument like any other: required, sent, and received as a string', async () => {
        for (const args of [undefined, {}, { toString: 'x' }] as (Record<string, string> | undefined)[]) {
            const missing = await rpcError(client.getPrompt({ name: 'tap__needs-proto', ...(args === undefined ? {} : { arguments: args }) }));
            assert.equal(missing.code, -32602);
            assert.match(missing.message, /Missing required argument: "__proto__"|Unknown argument: "toString"/);
        }
        const args = JSON.parse('{"__proto__":"x"}') as Record<string, string>;
        assert.ok(Object.hasOwn(args, '__proto__'));
        const received = tapped(await client.getPrompt({ name: 'tap__needs-proto', arguments: args }));
        assert.equal(received.name, 'needs-proto');
        assert.deepEqual(entries(received.arguments ?? {}), [['__proto__', 'x']]);
        // Undeclared special names are unknown arguments, not inherited properties that happen to exist.
        for (const name of ['toString', 'constructor', 'hasOwnProperty']) {
            const unknown = await rpcError(client.getPrompt({ name: 'tap__needs-proto', arguments: { ...args, [name]: 'v' } }));
            assert.equal(unknown.code, -32602);
            assert.equal(unknown.message, `Unknown argument: "${name}"`);
        }
        assertNotPolluted();
    });

    test('object-valued "__proto__" and "constructor" payloads anywhere in a request are rejected or ignored, and pollute nothing', async () => {
        // In the JSON-RPC envelope itself: not a valid message, a 400 with a JSON-RPC error.
        const envelope = await post(
            gateway.url!,
            '{"jsonrpc":"2.0","id":1,"method":"initialize","__proto__":{"polluted":"yes"},"params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"keys","version":"1"}}}'
        );
        assert.equal(envelope.status, 400);
        assert.match(
            await envelope.text(),
            /"jsonrpc":"2.0","error":\{"code":-32600,"message":"Invalid Request: a request has no members but jsonrpc, id, method and params"\},"id":1/
        );
        assertNotPolluted();
        const session = await openRawSession(
            gateway.url!,
            '2025-06-18',
            {},
            {
                initialize:
                    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"__proto__":{"polluted":"yes"},"protocolVersion":"2025-06-18","capabilities":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}},"clientInfo":{"name":"keys","version":"1","__proto__":{"isAdmin":true}}}}'
            }
        );
        const poisoned = [
            '{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"tap__needs-proto","arguments":{"__proto__":{"polluted":"yes"}}}}',
            '{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"tap__needs-proto","arguments":{"__proto__":"x","constructor":{"prototype":{"polluted":"yes"}}}}}',
            '{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"tap__toString","arguments":{"toString":{"polluted":"yes"}}}}',
            '{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"tap__toString","arguments":["__proto__"]}}',
            '{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"tap____proto__"},"argument":{"name":"__proto__","value":"v"},"context":{"arguments":{"constructor":{"prototype":{"polluted":"yes"}}}}}}',
            '{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"tap____proto__"},"argument":{"name":"__proto__","value":{"polluted":"yes"}}}}'
        ];
        for (const body of poisoned) {
            const { status, message } = await rawRequest(gateway.url!, session, body);
            assert.equal(status, 200, body);
            assert.equal(message?.error?.code, -32602, `${body}: ${JSON.stringify(message)}`);
        }
        // Ignored where they are not data: _meta, the params object itself, the cursor.
        const tolerated = [
            '{"jsonrpc":"2.0","id":8,"method":"prompts/list","params":{"_meta":{"__proto__":{"polluted":"yes"}},"__proto__":{"polluted":"yes"}}}',
            '{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"tap__needs-proto","arguments":{"__proto__":"x"},"_meta":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}}}'
        ];
        for (const body of tolerated) {
            const { message } = await rawRequest(gateway.url!, session, body);
            assert.equal(message?.error, undefined, `${body}: ${JSON.stringify(message)}`);
        }
        const cursor = await rawRequest(gateway.url!, session, '{"jsonrpc":"2.0","id":10,"method":"prompts/list","params":{"cursor":{"__proto__":{"polluted":"yes"}}}}');
        assert.equal(cursor.message?.error?.code, -32602);
        assertNotPolluted();
        // Still served, with the very same answers.
        assert.deepEqual(entries(echoed(await client.getPrompt({ name: 'tap__needs-proto', arguments: JSON.parse('{"__proto__":"y"}') as Record<string, string> })).arguments), [
            ['__proto__', 'y']
        ]);
    });

    test('cursors that are special names, or garbage, are -32602 "Invalid cursor"', async () => {
        for (const cursor of [
            '__proto__',
            'constructor',
            'toString',
            'hasOwnProperty',
            '',
            'a__b__c',
            'n'.repeat(5000),
            '😀',
            '../..',
            'eyJfX3Byb3RvX18iOnsicG9sbHV0ZWQiOiJ5ZXMifX0'
        ]) {
            const error = await rpcError(client.request({ method: 'prompts/list', params: { cursor } }));
            assert.equal(error.code, -32602, JSON.stringify(cursor.slice(0, 20)));
            assert.equal(error.message, 'Invalid cursor');
        }
        assertNotPolluted();
    });

    test('completion/complete passes odd prompt names, argument names and context arguments to the upstream exactly', async () => {
        const context = argumentsFor(['__proto__', 'constructor', 'toString', '😀', '']);
        for (const name of ['__proto__', 'constructor', 'b__c', 'n'.repeat(1000), '😀 emoji', 'line\nbreak']) {
            const result = await client.complete({
                ref: { type: 'ref/prompt', name: `tap__${name}` },
                argument: { name: '__proto__', value: 'v' },
                context: { arguments: context }
            });
            const received = JSON.parse(result.completion.values[0]!) as { ref: { name: string }; argument: unknown; context?: { arguments?: Record<string, string> } };
            assert.equal(received.ref.name, name);
            assert.deepEqual(received.argument, { name: '__proto__', value: 'v' });
            assert.deepEqual(entries(received.context?.arguments ?? {}), entries(context), `context arguments for ${JSON.stringify(name.slice(0, 20))}`);
        }
        // An object-valued "__proto__" context argument breaks "strings only" like any other name would.
        const session = await openRawSession(gateway.url!);
        const { message } = await rawRequest(
            gateway.url!,
            session,
            '{"jsonrpc":"2.0","id":2,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"tap____proto__"},"argument":{"name":"x","value":"v"},"context":{"arguments":{"__proto__":{"polluted":"yes"}}}}}'
        );
        assert.equal(message?.error?.code, -32602, JSON.stringify(message));
        assertNotPolluted();
    });

    test('completion/complete routes odd names and argument names to the owning SDK upstream', async () => {
        const before = (await fixtureStats(client, 'a__stats')).requests.complete;
        for (const name of ['__proto__', 'constructor', 'b__c', 'n'.repeat(1000), '😀 emoji']) {
            const result = await client.complete({
                ref: { type: 'ref/prompt', name: `a__${name}` },
                argument: { name: '__proto__', value: 'v' },
                context: { arguments: JSON.parse('{"__proto__":"x","constructor":"y"}') as Record<string, string> }
            });
            assert.deepEqual(result.completion.values, []);
        }
        assert.equal((await fixtureStats(client, 'a__stats')).requests.complete, before + 5);
        for (const name of ['toString', 'hasOwnProperty', 'a__']) {
            const error = await rpcError(client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: 'x', value: '' } }));
            assert.equal(error.code, -32602);
            assert.match(error.message, /^Unknown prompt/);
        }
        assert.equal((await fixtureStats(client, 'a__stats')).requests.complete, before + 5);
    });
});

describe('the separator rule in the config', () => {
    const parse = (config: Record<string, unknown>) => () => parseConfig(JSON.stringify(config), 'test config', {});

    test('an upstream id cannot contain the separator, so "<id>__" prefixes never overlap', () => {
        assert.throws(parse({ upstreams: [stdioFixture('a__b')] }), /upstreams\[0\]\.id/);
        assert.throws(parse({ upstreams: [stdioFixture('a-b')], namespace: { separator: '-' } }), /upstreams\[0\]\.id: contains the namespace separator "-"/);
        assert.throws(parse({ upstreams: [stdioFixture('ok'), stdioFixture('box')], namespace: { separator: 'x' } }), /upstreams\[1\]\.id: contains the namespace separator "x"/);
        for (const id of ['__proto__', 'A', '-a', '', 'a/b', '..', 'a'.repeat(64)]) {
            assert.throws(parse({ upstreams: [stdioFixture(id)] }), /upstreams\[0\]\.id/, JSON.stringify(id));
        }
        assert.equal(parse({ upstreams: [stdioFixture('a'), stdioFixture('a-b')] })().upstreams.length, 2);
        assert.equal(parse({ upstreams: [stdioFixture('a-b')], namespace: { separator: '::' } })().namespace.separator, '::');
    });
});
