/** inputRequests.* and upstreams[].relayInputRequests / relayRoots: defaults, bounds, and one message per mistake. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ConfigError } from '../../src/config/issues.js';
import { parseConfig } from '../../src/config/load.js';
import type { ServerUpstreamConfig } from '../../src/config/schema.js';
import { AMBIGUOUS_INPUT_REQUEST, UNRELATED_INPUT_REQUEST, type RelayInputRequests } from '../../src/protocol/input-requests.js';
import { configError, lineFor } from './config-assert.js';

const SOURCE = 'gateway.test.json';
const STDIO = { id: 'local', transport: 'stdio', command: 'node' };
const HTTP = { id: 'remote', transport: 'streamable-http', url: 'https://mcp.example.org/mcp' };

const parse = (config: Record<string, unknown>) => parseConfig(JSON.stringify({ upstreams: [STDIO], ...config }), SOURCE, {});
const rejects = (config: Record<string, unknown>): ConfigError => configError(() => parse(config));
const issueLines = (error: ConfigError, prefix: string) => error.message.split('\n').filter(line => line.startsWith(`  - ${prefix}`));

describe('inputRequests config', () => {
    test('defaults: 60 s per answer, 10 rounds of at most 8, 10 minutes in all, 1000 held (16 per client)', () => {
        assert.deepEqual(parse({}).inputRequests, { answerTimeoutMs: 60_000, maxRounds: 10, maxPerRound: 8, maxTotalMs: 600_000, maxHeld: 1000, maxHeldPerClient: 16 });
        const given = { answerTimeoutMs: 2000, maxRounds: 3, maxPerRound: 1, maxTotalMs: 2000, maxHeld: 0, maxHeldPerClient: 1 };
        assert.deepEqual(parse({ inputRequests: given }).inputRequests, given);
    });

    test('a total shorter than one answer is one issue naming inputRequests.maxTotalMs and the fix', () => {
        const error = rejects({ inputRequests: { answerTimeoutMs: 120_000, maxTotalMs: 60_000 } });
        assert.equal(
            lineFor(error, 'inputRequests.maxTotalMs'),
            '  - inputRequests.maxTotalMs: must be at least inputRequests.answerTimeoutMs (120000): one answer alone may take that long'
        );
        assert.equal(issueLines(error, 'inputRequests').length, 1, error.message);
        // Against the default answer timeout too.
        assert.match(lineFor(rejects({ inputRequests: { maxTotalMs: 5000 } }), 'inputRequests.maxTotalMs'), /at least inputRequests\.answerTimeoutMs \(60000\)/);
    });

    test('out of bounds or unknown: one issue naming the field', () => {
        const cases: [Record<string, unknown>, string][] = [
            [{ answerTimeoutMs: 999 }, 'inputRequests.answerTimeoutMs'],
            [{ answerTimeoutMs: 1_800_001, maxTotalMs: 3_600_000 }, 'inputRequests.answerTimeoutMs'],
            [{ maxRounds: 0 }, 'inputRequests.maxRounds'],
            [{ maxRounds: 101 }, 'inputRequests.maxRounds'],
            [{ maxPerRound: 65 }, 'inputRequests.maxPerRound'],
            [{ maxPerRound: 1.5 }, 'inputRequests.maxPerRound'],
            [{ maxTotalMs: 3_600_001 }, 'inputRequests.maxTotalMs'],
            [{ maxHeld: -1 }, 'inputRequests.maxHeld'],
            [{ maxHeldPerClient: 0 }, 'inputRequests.maxHeldPerClient']
        ];
        for (const [inputRequests, field] of cases) {
            const error = rejects({ inputRequests });
            lineFor(error, field);
            assert.equal(issueLines(error, 'inputRequests').length, 1, error.message);
        }
        assert.match(rejects({ inputRequests: { answerTimeout: 1000 } }).message, /answerTimeout/);
    });
});

describe('relayInputRequests and relayRoots (per upstream)', () => {
    const server = (config: ReturnType<typeof parse>, index = 0) => config.upstreams[index] as ServerUpstreamConfig;

    test('auto and no roots by default, on every wire; each setting taken', () => {
        const config = parse({ upstreams: [STDIO, HTTP, { ...HTTP, id: 'legacy', transport: 'sse' }] });
        for (const index of [0, 1, 2]) {
            assert.equal(server(config, index).relayInputRequests, 'auto');
            assert.equal(server(config, index).relayRoots, false);
        }
        for (const relayInputRequests of ['auto', 'related', 'exclusive', 'off'] satisfies RelayInputRequests[]) {
            const upstream = server(parse({ upstreams: [{ ...STDIO, relayInputRequests, relayRoots: true }] }));
            // The config's values are the protocol layer's type, both ways.
            const setting: RelayInputRequests = upstream.relayInputRequests;
            assert.equal(setting, relayInputRequests);
            assert.equal(upstream.relayRoots, true);
        }
    });

    test("upstreamsFrom's defaults take them too, checked the same way", () => {
        const config = parse({ upstreamsFrom: [{ file: 'claude_desktop_config.json', defaults: { relayInputRequests: 'exclusive', relayRoots: true } }] });
        const defaults = config.upstreamsFrom[0]?.defaults;
        assert.equal(defaults?.relayInputRequests, 'exclusive');
        assert.equal(defaults?.relayRoots, true);
        const error = rejects({ upstreamsFrom: [{ file: 'claude_desktop_config.json', defaults: { relayInputRequests: 'sometimes' } }] });
        lineFor(error, 'upstreamsFrom[0].defaults.relayInputRequests');
    });

    test('an unknown setting is one issue naming the field and the choices', () => {
        const error = rejects({ upstreams: [{ ...HTTP, relayInputRequests: 'always' }] });
        assert.match(lineFor(error, 'upstreams[0].relayInputRequests'), /"auto".*"related".*"exclusive".*"off"/);
        assert.match(lineFor(rejects({ upstreams: [{ ...HTTP, relayRoots: 'yes' }] }), 'upstreams[0].relayRoots'), /boolean/);
    });

    test("the fix the gateway's answers to an upstream name is a setting the config takes", () => {
        for (const message of [UNRELATED_INPUT_REQUEST, AMBIGUOUS_INPUT_REQUEST]) {
            const named = /set relayInputRequests: (\w+)/.exec(message)?.[1];
            assert.ok(named, message);
            assert.equal(server(parse({ upstreams: [{ ...STDIO, relayInputRequests: named }] })).relayInputRequests, named);
        }
    });

    test('a files upstream asks nothing: the fields are not its own', () => {
        const error = rejects({ upstreams: [{ id: 'docs', transport: 'files', path: 'prompts', relayInputRequests: 'off' }] });
        assert.match(error.message, /relayInputRequests/);
    });
});
