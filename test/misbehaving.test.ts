/**
 * Upstreams that break the protocol in every way we know of: each one is
 * contained, counted and logged with its id, and everything else is served.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import type { FaultKind } from '../src/diagnostics/faults.js';
import {
    capturingLogger,
    connectHttp,
    listAllPages,
    listChangedSent,
    notificationsSettled,
    rawStdio,
    rpcError,
    startRawHttp,
    startTestGateway,
    stdioFixture,
    waitFor,
    type HttpFixture
} from './helpers.js';

describe('misbehaving upstreams', () => {
    let gateway: RunningGateway;
    let client: Client;
    let http500: HttpFixture;
    let html: HttpFixture;
    let names: string[];
    const { logger, lines } = capturingLogger();

    before(async () => {
        [http500, html] = await Promise.all([startRawHttp(['--http-error', '500']), startRawHttp(['--http-error', 'html', '--http-error-initialize'])]);
        gateway = await startTestGateway(
            {
                reconnect: { initialMs: 5000, maxMs: 5000 },
                notifications: { debounceMs: 50, maxDelayMs: 200 },
                upstreams: [
                    rawStdio('junk', ['--garbage']),
                    rawStdio('badlist', ['--invalid-list']),
                    rawStdio('badget', ['--invalid-get']),
                    rawStdio('loop', ['--cursor', 'loop']),
                    rawStdio('endless', ['--cursor', 'endless']),
                    rawStdio('flood', ['--flood', '10000']),
                    { id: 'h500', transport: 'streamable-http', url: http500.url },
                    { id: 'html', transport: 'streamable-http', url: html.url },
                    stdioFixture('good')
                ]
            },
            logger
        );
        client = await connectHttp(gateway.url!);
        names = (await listAllPages(client)).names;
    });

    after(async () => {
        await client?.close();
        await gateway?.close();
        await Promise.all([http500?.close(), html?.close()]);
    });

    const faults = (id: string) => gateway.faults.of(id);
    const logged = (id: string, fault: FaultKind) => lines().some(line => line.upstream === id && line.fault === fault);

    test('the healthy upstream is listed and served in full', async () => {
        for (const name of ['good__with-required', 'good__all-content', 'good__prompt-000']) assert.ok(names.includes(name), name);
        const result = await client.getPrompt({ name: 'good__with-required', arguments: { topic: 'resilience' } });
        assert.match(JSON.stringify(result.messages), /Write about resilience/);
    });

    test('garbage on stdout is skipped, counted and logged; the messages around it still work', async () => {
        assert.ok(names.includes('junk__ok-0'));
        const result = await client.getPrompt({ name: 'junk__ok-1', arguments: { topic: 'noise' } });
        assert.match(JSON.stringify(result.messages), /ok-1: tell me about noise/);
        assert.ok((faults('junk').garbage_output ?? 0) >= 3, JSON.stringify(faults('junk')));
        assert.ok(logged('junk', 'garbage_output'));
        assert.equal(gateway.upstreams[0]!.state, 'ready');
    });

    test('a list result that breaks the schema leaves that upstream out and is counted', () => {
        assert.ok(!names.some(name => name.startsWith('badlist__')));
        assert.ok((faults('badlist').invalid_result ?? 0) >= 1);
        assert.ok(logged('badlist', 'invalid_result'));
    });

    test('a get result that breaks the schema fails with -32603 and is counted', async () => {
        assert.ok(names.includes('badget__ok-0'));
        const error = await rpcError(client.getPrompt({ name: 'badget__ok-0' }));
        assert.equal(error.code, -32603);
        assert.equal(error.message, 'Upstream badget failed: invalid result');
        assert.ok((faults('badget').invalid_result ?? 0) >= 1);
    });

    test('looping and endless cursors are cut off: what was read is served, and it is counted', () => {
        assert.deepEqual(
            names.filter(name => name.startsWith('loop__')),
            ['loop__ok-0', 'loop__ok-1', 'loop__ok-2', 'loop__page-a', 'loop__page-b']
        );
        const endless = names.filter(name => name.startsWith('endless__page-'));
        assert.equal(endless.length, 999, 'the page cap (1000 pages, the first holds ok-*) ends the walk');
        for (const id of ['loop', 'endless']) {
            assert.equal(faults(id).list_truncated, 1, id);
            assert.ok(logged(id, 'list_truncated'), id);
        }
    });

    test('HTTP 500 with an HTML body, and an HTML page instead of JSON, are contained and counted', () => {
        assert.ok(!names.some(name => name.startsWith('h500__') || name.startsWith('html__')));
        assert.ok((faults('h500').http_error ?? 0) >= 1, JSON.stringify(faults('h500')));
        assert.ok(logged('h500', 'http_error'));
        const html = gateway.upstreams.find(upstream => upstream.id === 'html')!;
        // Down, or in one of its reconnect attempts (every 5 s): never up.
        assert.notEqual(html.state, 'ready');
        assert.match(html.lastError ?? '', /Upstream html failed: unexpected content type/);
        assert.ok((faults('html').connect_failed ?? 0) >= 1);
    });

    test('10,000 list_changed from one upstream: counted, logged, no notification (nothing changed), others served', async t => {
        let notified = 0;
        const sentBefore = await listChangedSent(gateway);
        client.setNotificationHandler('notifications/prompts/list_changed', () => void notified++);
        const flood = client.getPrompt({ name: 'flood__flood' });
        // While the flood runs, the healthy upstream answers.
        const started = Date.now();
        const during = await client.getPrompt({ name: 'good__all-content' });
        assert.ok(during.messages.length > 0);
        const tookDuring = Date.now() - started;
        await flood;
        await waitFor(() => (faults('flood').list_changed_flood ?? 0) >= 1, 20_000, 'the flood to be counted');
        assert.ok(logged('flood', 'list_changed_flood'));
        // Nothing pending, and every notification the gateway sent has arrived: none.
        await notificationsSettled(gateway, () => sentBefore + notified);
        assert.equal(notified, 0, 'the flood changed nothing a client can see');
        assert.ok((await listAllPages(client)).names.includes('flood__ok-0'));
        t.diagnostic(`a get to a healthy upstream took ${tookDuring} ms during the flood`);
    });
});
