/**
 * A stdio upstream whose program cannot be started says why, in the config's terms, in its lastError
 * (/healthz) and in the log: the command not found on the child's PATH, not found relative to its cwd, or not
 * executable. The gateway serves the other upstreams meanwhile.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { capturingLogger, getJson, startTestGateway, stdioFixture, upstreamsReady, waitFor } from './helpers.js';

test('an unstartable stdio command is reported as such in /healthz and the log', { timeout: 60_000 }, async t => {
    const dir = mkdtempSync(path.join(tmpdir(), 'missing-command-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, 'not-executable.sh'), '#!/bin/sh\n');
    chmodSync(path.join(dir, 'not-executable.sh'), 0o644);
    const { logger, lines } = capturingLogger();
    const gateway = await startTestGateway(
        {
            reconnect: { initialMs: 60_000, maxMs: 60_000 },
            upstreams: [
                { id: 'absent', transport: 'stdio', command: 'mcp-no-such-server', env: { PATH: `${dir}:/nonexistent/bin` } },
                { id: 'relative', transport: 'stdio', command: './server.sh', cwd: dir },
                { id: 'refused', transport: 'stdio', command: './not-executable.sh', cwd: dir },
                stdioFixture('good')
            ]
        },
        logger
    );
    t.after(() => gateway.close());
    await upstreamsReady(gateway, ['good']);
    const expected = {
        absent: `command "mcp-no-such-server" not found (searched PATH: ${dir}:/nonexistent/bin)`,
        relative: `command "./server.sh" not found in ${dir}`,
        refused: `command "./not-executable.sh" is not executable (${path.join(dir, 'not-executable.sh')})`
    };
    await waitFor(() => gateway.upstreams.every(upstream => upstream.attempted), 20_000, 'every first attempt');

    const health = await getJson(new URL('/healthz', gateway.url).href);
    const upstreams = health.body.upstreams as { id: string; state: string; error?: string }[];
    for (const [id, reason] of Object.entries(expected)) {
        const entry = upstreams.find(upstream => upstream.id === id);
        assert.equal(entry?.state, 'down', id);
        assert.equal(entry?.error, `Upstream ${id} failed: ${reason}`);
        assert.ok(
            lines().some(line => line.upstream === id && line.msg === `upstream down (connect failed: ${reason})`),
            `log line for ${id}: ${JSON.stringify(lines().filter(line => line.upstream === id))}`
        );
    }
    assert.equal(upstreams.find(upstream => upstream.id === 'good')?.state, 'ready');
});
