/**
 * Which files hot reload watches: the config file and the client config files it imports, worked out again at each
 * reload, with the files of a rejected reload watched too (fixing the file that broke it reloads).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { watch } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadGatewayConfig } from '../../src/config/load.js';
import { ConfigReloader } from '../../src/config/reload.js';
import type { GatewayConfig } from '../../src/config/schema.js';
import { capturingLogger, waitFor } from '../helpers.js';

/** Writes as editors do: a new file renamed over the old one. */
async function write(file: string, content: unknown): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${randomUUID()}.tmp`;
    await writeFile(temporary, typeof content === 'string' ? content : JSON.stringify(content));
    await rename(temporary, file);
}

/** Runs `change` and resolves once a watcher of the file's folder has seen the file change (and its event has been handled). */
async function writeSeen(file: string, change: () => Promise<void>): Promise<void> {
    const seen = new Promise<void>((resolve, reject) => {
        const watcher = watch(path.dirname(file), (_event, changed) => {
            if (changed !== path.basename(file)) return;
            watcher.close();
            setImmediate(resolve);
        });
        watcher.on('error', reject);
    });
    await change();
    await seen;
}

test('a file added to upstreamsFrom is watched from the reload that adds it, rejected or not, and no longer once removed', { timeout: 60_000 }, async t => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-reload-files-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const gateway = path.join(dir, 'gateway.json');
    const imported = path.join(dir, 'project/.mcp.json');
    const own = { upstreams: [{ id: 'local', transport: 'stdio', command: 'node' }] };
    await write(gateway, own);
    let loads = 0;
    const load = async (touched: Set<string>) => {
        loads++;
        return (await loadGatewayConfig({ file: gateway }, {}, touched)).config;
    };
    const files = new Set<string>();
    const current = await load(files);
    const applied: GatewayConfig[] = [];
    const { logger, lines } = capturingLogger();
    const reloader = new ConfigReloader({
        files: [...files],
        load,
        apply: config => {
            applied.push(config);
            return Promise.resolve({});
        },
        current,
        logger,
        debounceMs: 50
    });
    reloader.start();
    t.after(() => reloader.close());
    const ids = () => applied.at(-1)?.upstreams.map(upstream => upstream.id);
    const rejections = () => lines().filter(line => line.msg === 'config reload rejected; keeping the running config').length;

    await write(imported, '{ "mcpServers": ');
    await write(gateway, { ...own, upstreamsFrom: [{ file: 'project/.mcp.json' }] });
    await waitFor(() => rejections() === 1, 20_000, 'the broken file to be rejected');
    assert.equal(applied.length, 0);

    await write(imported, { mcpServers: { fixed: { command: 'node' } } });
    await waitFor(() => applied.length === 1, 20_000, 'fixing the imported file to reload');
    assert.deepEqual(ids(), ['local', 'fixed']);

    await write(imported, { mcpServers: { fixed: { command: 'node' }, added: { command: 'node' } } });
    await waitFor(() => applied.length === 2, 20_000, 'an edit of the imported file to reload');
    assert.deepEqual(ids(), ['local', 'fixed', 'added']);

    await write(gateway, own);
    await waitFor(() => applied.length === 3, 20_000, 'the file to be dropped from the config');
    // The reload that must not happen, without a quiet window: the reloader's debounce runs on mock time, and this
    // test's own watcher of the folder sees the write in the same inotify read as a watcher of the reloader's would.
    // Once it has, a reload would be one tick away; loading is the first thing a reload does.
    const loadsBefore = loads;
    t.mock.timers.enable({ apis: ['setTimeout'] });
    await writeSeen(imported, () => write(imported, { mcpServers: { other: { command: 'node' } } }));
    t.mock.timers.tick(60_000);
    assert.equal(loads, loadsBefore, 'the dropped file is no longer watched');
    assert.equal(applied.length, 3);
    assert.equal(rejections(), 1);
});
