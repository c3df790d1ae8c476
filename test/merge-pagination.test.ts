/**
 * prompts/list through the gateway: three upstreams on three transports, each
 * paginating itself, merged, namespaced and re-paginated with composite cursors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { capturingLogger, closeAfter, connectHttp, connectSse, connectStdio, FIXTURE, listAllPages, rpcError, startHttpFixture, startTestGateway, stdioFixture, waitFor, type HttpFixture } from './helpers.js';

describe('merged, paginated prompts/list', () => {
    let streamable: HttpFixture;
    let sse: HttpFixture;
    let gateway: RunningGateway;
    let client: Client;
    const direct: Record<string, string[]> = {};

    before(async () => {
        [streamable, sse] = await Promise.all([
            startHttpFixture('streamable-http', { prompts: 11, pageSize: 4, name: 'docs' }),
            startHttpFixture('sse', { prompts: 6, pageSize: 5, name: 'legacy' })
        ]);
        gateway = await startTestGateway({
            pagination: { pageSize: 7 },
            upstreams: [
                stdioFixture('local', { prompts: 9, pageSize: 3 }),
                { id: 'docs', transport: 'streamable-http', url: streamable.url },
                { id: 'legacy', transport: 'sse', url: sse.url }
            ]
        });
        client = await connectHttp(gateway.url!);
        // The same lists read straight from each upstream, over the same transports.
        const upstreamClients: [string, Client][] = [
            ['local', await connectStdio(process.execPath, ['--import', 'tsx', FIXTURE, '--prompts', '9', '--page-size', '3'])],
            ['docs', await connectHttp(streamable.url)],
            ['legacy', await connectSse(sse.url)]
        ];
        for (const [id, upstream] of upstreamClients) {
            direct[id] = (await listAllPages(upstream)).names;
            await upstream.close();
        }
    });

    after(async () => {
        await client?.close();
        await gateway?.close();
        await Promise.all([streamable?.close(), sse?.close()]);
    });

    test('every upstream connected over its own transport', () => {
        assert.deepEqual(
            gateway.upstreams.map(upstream => [upstream.id, upstream.state, upstream.wire]),
            [
                ['local', 'ready', 'stdio'],
                ['docs', 'ready', 'streamable-http'],
                ['legacy', 'ready', 'sse']
            ]
        );
    });

    test('walking the pages yields every upstream prompt once, namespaced, in config order', async () => {
        const walk = await listAllPages(client);
        const expected = ['local', 'docs', 'legacy'].flatMap(id => direct[id]!.map(name => `${id}__${name}`));
        assert.ok(expected.length > 30, 'the upstreams paginate, so there is more than one of their pages');
        assert.deepEqual(walk.names, expected);
        assert.ok(walk.pages.every(size => size <= 7), `pages ${walk.pages.join(',')} exceed pageSize 7`);
        assert.ok(walk.pages.slice(0, -1).every(size => size === 7), 'only the last page may be short');
        assert.equal(walk.cursors, walk.pages.length - 1, 'only the last page lacks nextCursor');
    });

    test('prompt definitions pass through unchanged apart from the name', async t => {
        const viaGateway = (await client.request({ method: 'prompts/list', params: {} })).prompts[0]!;
        const local = await connectStdio(process.execPath, ['--import', 'tsx', FIXTURE, '--prompts', '9', '--page-size', '3']);
        closeAfter(t, () => local.close());
        const localFirst = (await local.request({ method: 'prompts/list', params: {} })).prompts[0]!;
        assert.deepEqual(viaGateway, { ...localFirst, name: `local__${localFirst.name}` });
        // The comparison means something only if there are fields besides the name to lose.
        assert.ok(localFirst.title !== undefined && localFirst.description !== undefined && localFirst.arguments !== undefined);
    });

    test('a cursor resumes the same walk on a fresh session', async () => {
        const firstPage = await client.request({ method: 'prompts/list', params: {} });
        const other = await connectHttp(gateway.url!);
        const second = await other.request({ method: 'prompts/list', params: { cursor: firstPage.nextCursor! } });
        await other.close();
        const all = (await listAllPages(client)).names;
        assert.deepEqual(second.prompts.map(prompt => prompt.name), all.slice(7, 14));
    });

    test('garbage, truncated and tampered cursors are rejected with -32602 "Invalid cursor"', async () => {
        const { nextCursor } = await client.request({ method: 'prompts/list', params: {} });
        assert.ok(nextCursor);
        const flipped = `${nextCursor.slice(0, 5)}${nextCursor[5] === 'A' ? 'B' : 'A'}${nextCursor.slice(6)}`;
        for (const cursor of ['garbage', '', nextCursor.slice(0, -3), flipped, `${nextCursor}x`, 'x'.repeat(10_000)]) {
            const error = await rpcError(client.request({ method: 'prompts/list', params: { cursor } }));
            assert.equal(error.code, -32602, `cursor ${cursor.slice(0, 20)}`);
            assert.match(error.message, /Invalid cursor/);
        }
    });

    test('a gateway with another cursor secret rejects the cursor', async () => {
        const { nextCursor } = await client.request({ method: 'prompts/list', params: {} });
        const other = await startTestGateway({ upstreams: [stdioFixture('local', { prompts: 9, pageSize: 3 })], pagination: { pageSize: 7 } });
        try {
            const otherClient = await connectHttp(other.url!);
            const error = await rpcError(otherClient.request({ method: 'prompts/list', params: { cursor: nextCursor! } }));
            assert.equal(error.code, -32602);
            await otherClient.close();
        } finally {
            await other.close();
        }
    });
});

describe('unprefixed upstreams and name clashes', () => {
    test('"namespace": false exposes names as they are; on a clash the first upstream in config order wins, with a warning', async () => {
        const { logger, lines } = capturingLogger();
        const gateway = await startTestGateway(
            {
                upstreams: [
                    stdioFixture('first', { prompts: 2 }, { namespace: false }),
                    stdioFixture('second', { prompts: 4 }, { namespace: false }),
                    stdioFixture('empty', { flags: ['--no-prompts'] })
                ]
            },
            logger
        );
        try {
            const client = await connectHttp(gateway.url!);
            // An unprefixed name inside a namespaced upstream's namespace stays reserved for that upstream.
            await client.getPrompt({ name: 'mutate', arguments: { add: 'empty__sneaky' } });
            // Listing rebuilds the view; once it has seen the new name, the warning is logged.
            await waitFor(async () => (await listAllPages(client), lines().some(line => line.prompt === 'empty__sneaky')), 20_000, 'the reserved name to be seen');
            const { names } = await listAllPages(client);
            await client.close();
            assert.ok(!names.includes('empty__sneaky'), 'a name in the "empty" namespace is not taken by an unprefixed upstream');
            // The second upstream adds only what the first does not have: its two extra generic prompts.
            assert.deepEqual(names.slice(0, 2), ['prompt-000', 'prompt-001']);
            assert.deepEqual(names.filter(name => name === 'with-required'), ['with-required']);
            assert.ok(names.includes('prompt-003'));
            assert.equal(new Set(names).size, names.length, 'no name twice');
            assert.ok(!names.some(name => name.includes('__')), 'no prefixes');
            const clash = lines().find(line => line.msg === 'prompt name clash; keeping the first upstream in config order' && line.prompt === 'prompt-000');
            assert.deepEqual([clash?.kept, clash?.dropped], ['first', 'second']);
            assert.equal(gateway.upstreams[2]!.state, 'ready', 'an upstream without prompts connects and contributes nothing');
        } finally {
            await gateway.close();
        }
    });
});

describe('pagination stays stable while an upstream changes mid-walk', () => {
    test('no prompt present throughout is skipped or repeated', async () => {
        const gateway = await startTestGateway({ pagination: { pageSize: 3 }, upstreams: [stdioFixture('a', { prompts: 12, pageSize: 5 }), stdioFixture('b', { prompts: 4 })] });
        try {
            const client = await connectHttp(gateway.url!);
            const seen: string[] = [];
            let page = await client.request({ method: 'prompts/list', params: {} });
            seen.push(...page.prompts.map(prompt => prompt.name));
            // Remove a prompt already returned and one not yet returned, add new ones, between pages.
            await client.getPrompt({ name: 'a__mutate', arguments: { remove: 'prompt-001,prompt-007', add: 'late-1,late-2' } });
            await waitFor(async () => !(await listAllPages(client)).names.includes('a__prompt-007'), 20_000, 'the change to show');
            while (page.nextCursor !== undefined) {
                page = await client.request({ method: 'prompts/list', params: { cursor: page.nextCursor } });
                seen.push(...page.prompts.map(prompt => prompt.name));
                if (seen.length === 9) await client.getPrompt({ name: 'a__mutate', arguments: { remove: 'prompt-008', add: 'late-3' } });
            }
            await client.close();
            const throughout = (await startedNames()).filter(name => !['a__prompt-001', 'a__prompt-007', 'a__prompt-008'].includes(name));
            for (const name of throughout) assert.equal(seen.filter(s => s === name).length, 1, `${name} returned once`);
            assert.equal(new Set(seen).size, seen.length, 'nothing twice');
        } finally {
            await gateway.close();
        }

        async function startedNames(): Promise<string[]> {
            // The lists as they were before any change: read from fresh copies of the same fixtures.
            const original = await startTestGateway({ upstreams: [stdioFixture('a', { prompts: 12, pageSize: 5 }), stdioFixture('b', { prompts: 4 })] });
            try {
                const client = await connectHttp(original.url!);
                const { names } = await listAllPages(client);
                await client.close();
                return names;
            } finally {
                await original.close();
            }
        }
    });
});
