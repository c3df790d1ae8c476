import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CatalogEntry } from '../../src/catalog/catalog.js';
import { parseConfig } from '../../src/config/load.js';
import { PromptAccess } from '../../src/policy/access.js';
import { ClientDirectory } from '../../src/policy/clients.js';

/** Only the fields visibility reads; the rest of a catalog entry does not take part. */
const entry = (upstreamId: string, originalName: string): CatalogEntry =>
    ({ exposedName: `${upstreamId}__${originalName}`, originalName, upstream: { id: upstreamId } }) as unknown as CatalogEntry;

function access(document: Record<string, unknown>): PromptAccess {
    const config = parseConfig(JSON.stringify(document), 'access.test.json', {});
    return new PromptAccess(config, new ClientDirectory(config));
}

const upstream = (id: string, extra: Record<string, unknown> = {}) => ({ id, transport: 'stdio', command: 'node', ...extra });

describe('PromptAccess', () => {
    const rules = access({
        auth: { mode: 'apiKey' },
        prompts: { deny: ['*__debug-*'] },
        anonymous: { prompts: { allow: ['docs__*'] } },
        clients: [
            { id: 'team-a', apiKey: 'team-a-key-0123456789', prompts: { allow: ['tools__*'], deny: ['*__admin-*'] } },
            { id: 'open', apiKey: 'open-key-0123456789abc' }
        ],
        upstreams: [upstream('tools'), upstream('docs', { prompts: { deny: ['internal-*'] } })]
    });
    const all = [
        entry('tools', 'lint'),
        entry('tools', 'admin-reset'),
        entry('tools', 'debug-dump'),
        entry('docs', 'review'),
        entry('docs', 'internal-notes'),
        entry('docs', 'debug-x')
    ];
    const visibleTo = (clientId: string) => all.filter(rules.visibility(clientId)).map(e => e.exposedName);

    test('a prompt is visible only when the upstream, global and client policies all let it through', () => {
        assert.deepEqual(visibleTo('team-a'), ['tools__lint']);
        assert.deepEqual(visibleTo('open'), ['tools__lint', 'tools__admin-reset', 'docs__review']);
        assert.deepEqual(visibleTo('anonymous'), ['docs__review']);
    });

    test('a client not in the config sees nothing', () => {
        assert.deepEqual(visibleTo('ghost'), []);
    });

    test('a prompt of an upstream not in the config is hidden from everyone (it is on its way out)', () => {
        assert.equal(rules.visibility('open')(entry('gone', 'lint')), false);
    });
});
