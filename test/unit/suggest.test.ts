/**
 * "Did you mean ...?" for unknown config keys: read off the real schema, at the place of the typo, for the shape the
 * document names (an upstream's transport), and never a suggestion that is too far to be a typo.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { GatewayConfigSchema } from '../../src/config/schema.js';
import { nearestKey } from '../../src/config/suggest.js';

const STDIO = { id: 'local', transport: 'stdio', command: 'node' };

function messageFor(document: Record<string, unknown>): string {
    try {
        parseConfig(JSON.stringify(document), 'gateway.json', {});
    } catch (error) {
        return (error as Error).message;
    }
    return assert.fail('the config was accepted');
}

describe('nearestKey', () => {
    test('names the nearest key allowed at that place of the schema', () => {
        assert.equal(nearestKey(GatewayConfigSchema, ['listen'], { listen: { prot: 1 } }, 'prot'), 'port');
        assert.equal(nearestKey(GatewayConfigSchema, [], {}, 'upstream'), 'upstreams');
        assert.equal(nearestKey(GatewayConfigSchema, ['sessions'], {}, 'idleTimeoutMS'), 'idleTimeoutMs', 'case is no distance');
        assert.equal(nearestKey(GatewayConfigSchema, ['cluster', 'redis'], {}, 'ulr'), 'url');
    });

    test("within an array, for the shape the document names: a stdio upstream's keys, not an HTTP one's", () => {
        const document = { upstreams: [STDIO] };
        assert.equal(nearestKey(GatewayConfigSchema, ['upstreams', 0], document, 'commmand'), 'command');
        assert.equal(nearestKey(GatewayConfigSchema, ['upstreams', 0], document, 'ulr'), undefined, 'url belongs to HTTP upstreams');
        const http = { upstreams: [{ id: 'docs', transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp' }] };
        assert.equal(nearestKey(GatewayConfigSchema, ['upstreams', 0], http, 'ulr'), 'url');
    });

    test('too far to be a typo: no suggestion', () => {
        assert.equal(nearestKey(GatewayConfigSchema, ['listen'], {}, 'banana'), undefined);
        assert.equal(nearestKey(GatewayConfigSchema, ['listen'], {}, 'pt'), undefined, 'two letters, two edits away from "path" and "port"');
        assert.equal(nearestKey(GatewayConfigSchema, ['no', 'such', 'place'], {}, 'port'), undefined);
    });
});

describe('config errors', () => {
    test('an unknown key says which key was meant; several unknown keys each get theirs or none', () => {
        assert.match(messageFor({ listen: { prot: 8080 }, upstreams: [STDIO] }), /listen: unknown key "prot"; did you mean "port"\?/);
        const several = messageFor({ listen: { prot: 8080, banana: 1 }, upstreams: [STDIO] });
        assert.match(several, /listen: unknown keys "prot" \(did you mean "port"\?\), "banana"; remove them or fix the spelling/);
        assert.match(messageFor({ upstreams: [{ ...STDIO, agrs: [] }] }), /upstreams\[0\]: unknown key "agrs"; did you mean "args"\?/);
    });
});
