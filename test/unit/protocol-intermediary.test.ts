/** Which upstream errors reach a client and how (src/protocol/errors.ts); what an upstream is told of the client (capabilities.ts). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NO_RELAYED_CAPABILITIES, relayedClient } from '../../src/protocol/capabilities.js';
import { boundedUpstreamError, errorForClient, MAX_UPSTREAM_MESSAGE_CHARS, upstreamErrorPasses } from '../../src/protocol/errors.js';

describe('upstream errors', () => {
    test("pass when about the client's request: -32602, -32021, -32002 and application codes; the protocol's others do not", () => {
        for (const code of [-32602, -32021, -32002, 1, 0, -1, 4242, -31999, -32769]) assert.equal(upstreamErrorPasses(code), true, String(code));
        for (const code of [-32700, -32600, -32601, -32603, -32000, -32001, -32019, -32020, -32022, -32042, -32099, -32768, 1.5, Number.NaN]) {
            assert.equal(upstreamErrorPasses(code), false, String(code));
        }
    });

    test('are bounded: the first line, at most 512 characters (never half a surrogate pair); data dropped', () => {
        assert.deepEqual(boundedUpstreamError(-32602, 'Bad argument\n    at secret (/srv/x.js:1)', { secret: 1 }), { code: -32602, message: 'Bad argument' });
        const cut = boundedUpstreamError(-32602, '😀'.repeat(600), undefined).message;
        assert.equal([...cut].length, MAX_UPSTREAM_MESSAGE_CHARS);
        assert.equal(cut, '😀'.repeat(MAX_UPSTREAM_MESSAGE_CHARS));
    });

    test("-32021 keeps its required capabilities, only capability keys with object values, small, in the gateway's words", () => {
        const data = { requiredCapabilities: { elicitation: { form: {} }, sampling: 'yes', bogus: {} }, trace: 'secret' };
        const elicitation = 'The upstream asks for elicitation, which this client did not declare';
        assert.deepEqual(boundedUpstreamError(-32021, 'missing at /srv/x.js', data), {
            code: -32021,
            message: elicitation,
            data: { requiredCapabilities: { elicitation: { form: {} } } }
        });
        const unnamed = { code: -32021, message: 'The upstream asks for a capability this client did not declare' };
        assert.deepEqual(boundedUpstreamError(-32021, 'missing', { requiredCapabilities: [] }), unnamed);
        assert.deepEqual(boundedUpstreamError(-32021, 'missing', undefined), unnamed);
        assert.deepEqual(boundedUpstreamError(-32021, 'missing', { requiredCapabilities: { roots: { x: 'y'.repeat(5000) } } }), unnamed);
        assert.deepEqual(boundedUpstreamError(-32602, 'bad', data), { code: -32602, message: 'bad' }, 'no other code keeps data');
        const named: [Record<string, unknown>, string][] = [
            [{ elicitation: {} }, 'elicitation'],
            [{ elicitation: { url: {} } }, 'elicitation (url mode)'],
            [{ elicitation: { form: {}, url: {} } }, 'elicitation and elicitation (url mode)'],
            [{ sampling: { tools: {} }, roots: {} }, 'sampling with tools and roots'],
            [{ sampling: { context: {}, tools: {} } }, 'sampling with tools and sampling with context'],
            [{ tasks: {}, experimental: { 'x.y': {} }, sampling: {} }, 'tasks, experimental and sampling']
        ];
        for (const [requiredCapabilities, words] of named) {
            assert.equal(boundedUpstreamError(-32021, 'upstream text', { requiredCapabilities }).message, `The upstream asks for ${words}, which this client did not declare`);
        }
    });

    test('-32002 is -32602 for a stateless client only', () => {
        assert.deepEqual(errorForClient({ code: -32002, message: 'gone' }, true), { code: -32602, message: 'gone' });
        assert.deepEqual(errorForClient({ code: -32002, message: 'gone' }, false), { code: -32002, message: 'gone' });
        assert.deepEqual(errorForClient({ code: -32021, message: 'm' }, true), { code: -32021, message: 'm' });
    });
});

describe('relayed client capabilities', () => {
    test('elicitation, sampling and roots as declared (records only); experimental, extensions and anything else dropped', () => {
        const declared = {
            elicitation: { form: {}, url: {} },
            sampling: {},
            roots: { listChanged: true },
            experimental: { x: {} },
            extensions: { 'io.modelcontextprotocol/tasks': {} },
            tasks: {}
        };
        assert.deepEqual(relayedClient(declared).capabilities, { elicitation: { form: {}, url: {} }, sampling: {}, roots: { listChanged: true } });
        assert.deepEqual(relayedClient({ elicitation: true, sampling: [], roots: null }), NO_RELAYED_CAPABILITIES);
        for (const nothing of [undefined, null, 'all', [], {}]) assert.equal(relayedClient(nothing), NO_RELAYED_CAPABILITIES);
    });
});
