/**
 * An empty-string cursor is a cursor (2026-07-28, pagination: it "MUST NOT" be taken as the end of the results, and
 * no earlier revision says otherwise). Upstream: a server of either era whose middle page points at "" is followed to
 * its last page. Downstream: the gateway never issues "", so a client sending it gets -32602 (invalid cursor).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, connectModernHttp, listAllPages, rpcError, startTestGateway, upstreamsReady } from './helpers.js';
import { revisionUpstream } from './revision-upstream.js';

const REVISIONS = { legacy: '2025-11-25', modern: '2026-07-28' } as const;
/** What the fixture lists with --empty-cursor, over three pages: the second one's cursor is "". */
const PROMPTS = ['rich', 'plain', 'trigger-change', 'fails', 'more-1', 'more-2'];

describe('empty-string cursors', { timeout: 120_000 }, () => {
    let gateway: RunningGateway;
    let client: Client;
    let modern: Client;

    before(async () => {
        gateway = await startTestGateway({ upstreams: Object.entries(REVISIONS).map(([id, revision]) => revisionUpstream(id, revision, ['--empty-cursor'])) });
        await upstreamsReady(gateway, undefined, 60_000);
        [client, modern] = await Promise.all([connectHttp(gateway.url!), connectModernHttp(gateway.url!)]);
    });

    after(async () => {
        await Promise.all([client?.close(), modern?.close()]);
        await gateway?.close();
    });

    for (const id of Object.keys(REVISIONS)) {
        test(`a ${REVISIONS[id as keyof typeof REVISIONS]} upstream whose middle page answers nextCursor "" is read to its last page, with no fault`, async () => {
            const names = (await listAllPages(client)).names.filter(name => name.startsWith(`${id}__`));
            assert.deepEqual(
                names,
                PROMPTS.map(name => `${id}__${name}`)
            );
            assert.deepEqual(gateway.faults.of(id), {});
        });
    }

    test('a client sending cursor "" gets invalid params, in either era', async () => {
        for (const each of [client, modern]) {
            const error = await rpcError(each.request({ method: 'prompts/list', params: { cursor: '' } }));
            assert.equal(error.code, -32602);
            assert.match(error.message, /Invalid cursor/);
        }
    });
});
