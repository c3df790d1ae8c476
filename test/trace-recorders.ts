/**
 * Four upstreams that answer a get with the trace context they received (test/fixtures/trace-recorder.ts): both eras,
 * over stdio and over Streamable HTTP. Shared by the pass-through and the tracing tests.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { compiledFixture } from './fixture-build.js';
import { closeAfter, ROOT, spawnHttpFixture } from './helpers.js';

export const RECORDER_IDS = ['s25', 's26', 'h25', 'h26'] as const;

/** What a recorder received: the request's `_meta` trace entries and, over HTTP, its trace headers. */
export interface Seen {
    meta: Record<string, string>;
    headers?: Record<string, string>;
}

/** The four recorders' upstream configs (RECORDER_IDS); the HTTP ones are started here and closed after `t`. */
export async function recorderUpstreams(t: TestContext, settings: { timeoutMs?: number } = {}): Promise<Record<string, unknown>[]> {
    const recorder = compiledFixture('trace-recorder');
    const http25 = await spawnHttpFixture([recorder, '--era', '2025', '--transport', 'streamable-http']);
    closeAfter(t, () => http25.close());
    const http26 = await spawnHttpFixture([recorder, '--era', '2026', '--transport', 'streamable-http']);
    closeAfter(t, () => http26.close());
    const stdio = (id: string, era: string) => ({
        id,
        transport: 'stdio',
        command: process.execPath,
        args: [recorder, '--era', era],
        cwd: ROOT,
        protocol: era === '2026' ? '2026-07-28' : '2025',
        ...settings
    });
    return [
        stdio('s25', '2025'),
        stdio('s26', '2026'),
        { id: 'h25', transport: 'streamable-http', url: http25.url, protocol: '2025' },
        { id: 'h26', transport: 'streamable-http', url: http26.url, protocol: '2026-07-28' }
    ];
}

/** What the recorder behind prompt `name` received for a get with `meta`. */
export async function seenBy(client: Client, name: string, meta?: Record<string, unknown>): Promise<Seen> {
    const result = await client.getPrompt({ name, ...(meta === undefined ? {} : { _meta: meta }) });
    const content = result.messages[0]!.content;
    assert.equal(content.type, 'text');
    return JSON.parse(content.text) as Seen;
}
