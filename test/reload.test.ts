/**
 * Hot reload: the config file is watched and SIGHUP reloads it. Upstreams are
 * added, removed and restarted under open sessions, which stay open and hear
 * one list_changed when their view changed; an invalid file changes nothing.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { closeAfter, connectHttp, listAllPages, notificationsSettled, processesWith, ROOT, startTestGateway, stdioFixture, stopChild, waitFor } from './helpers.js';
import { parseConfig } from '../src/config/load.js';

const CLI = path.join(ROOT, 'dist/cli.js');
const NOTIFY = { debounceMs: 50, maxDelayMs: 300 };
/** Bounds each test: its waits are on events, this only turns a hang into a failure. */
const TIMEOUT = { timeout: 180_000 };

interface RunningCli {
    child: ChildProcess;
    url: string;
    logs: Record<string, unknown>[];
}

async function startCli(file: string): Promise<RunningCli> {
    const child = spawn(process.execPath, [CLI, '--config', file], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    const logs: Record<string, unknown>[] = [];
    const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stderr }).on('line', line => {
            const match = /^listening on (\S+)$/.exec(line);
            if (match) resolve(match[1]!);
            else if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>);
        });
        child.once('exit', code => reject(new Error(`gateway exited with ${code}`)));
    });
    return { child, url, logs };
}

/** Writes the file as editors do: a new file renamed over the old one. */
async function writeConfig(file: string, config: unknown): Promise<void> {
    const temporary = `${file}.${randomUUID()}.tmp`;
    await writeFile(temporary, typeof config === 'string' ? config : JSON.stringify(config, null, 2));
    await rename(temporary, file);
}

/** The inotify watches a process holds (Linux: an `inotify wd:` line per watch in the fdinfo of its inotify descriptors). */
function inotifyWatches(pid: number): number {
    let watches = 0;
    for (const fd of readdirSync(`/proc/${pid}/fdinfo`)) {
        try {
            watches += readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8')
                .split('\n')
                .filter(line => line.startsWith('inotify wd:')).length;
        } catch {
            // closed while we looked
        }
    }
    return watches;
}

function counting(client: Client): () => number {
    let count = 0;
    client.setNotificationHandler('notifications/prompts/list_changed', () => void count++);
    return () => count;
}

test('a changed file adds, removes and restarts upstreams under an open session, with one notification', TIMEOUT, async t => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-reload-'));
    closeAfter(t, () => rm(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'gateway.json');
    const marker = { keep: randomUUID(), drop: randomUUID(), change: randomUUID(), changed: randomUUID(), added: randomUUID() };
    const base = { listen: { port: 0 }, log: { level: 'debug' }, notifications: NOTIFY };
    await writeConfig(file, {
        ...base,
        upstreams: [stdioFixture('keep', { name: marker.keep }), stdioFixture('drop', { name: marker.drop }), stdioFixture('change', { name: marker.change, prompts: 2 })]
    });
    const gateway = await startCli(file);
    closeAfter(t, () => stopChild(gateway.child));
    const client = await connectHttp(gateway.url);
    closeAfter(t, () => client.close());
    const notifications = counting(client);
    const keepPids = processesWith(marker.keep);
    assert.equal(keepPids.length, 1);
    const before = (await listAllPages(client)).names;
    assert.ok(before.includes('drop__prompt-000') && !before.includes('change__prompt-003'));

    const changedAt = Date.now();
    await writeConfig(file, {
        ...base,
        upstreams: [stdioFixture('keep', { name: marker.keep }), stdioFixture('change', { name: marker.changed, prompts: 4 }), stdioFixture('added', { name: marker.added })]
    });
    await waitFor(() => notifications() === 1, 60_000, 'the reload to be announced');
    const announcedAfter = Date.now() - changedAt;

    const after = (await listAllPages(client)).names;
    assert.ok(!after.some(name => name.startsWith('drop__')), 'removed upstream gone');
    assert.ok(after.includes('change__prompt-003'), 'changed upstream restarted with its new arguments');
    assert.ok(after.includes('added__with-required'), 'added upstream served');
    assert.ok(after.includes('keep__with-required'));
    const result = await client.getPrompt({ name: 'added__with-required', arguments: { topic: 'reload' } });
    assert.match(JSON.stringify(result.messages), /Write about reload/);

    assert.deepEqual(processesWith(marker.keep), keepPids, 'the unchanged upstream was left alone');
    await waitFor(() => processesWith(marker.drop).length === 0 && processesWith(marker.change).length === 0, 60_000, 'old children to be stopped');
    assert.equal(processesWith(marker.added).length, 1);
    // Logs are written in batches (at most 250 ms late): the reload's summary line may follow what it summarises.
    await waitFor(() => gateway.logs.some(line => line.msg === 'config reloaded'), 20_000, "the reload's log line");
    const reloaded = gateway.logs.find(line => line.msg === 'config reloaded');
    assert.deepEqual(
        { added: reloaded?.added, removed: reloaded?.removed, restarted: reloaded?.restarted, unchanged: reloaded?.unchanged },
        { added: ['added'], removed: ['drop'], restarted: ['change'], unchanged: ['keep'] }
    );
    t.diagnostic(`file written -> session notified: ${announcedAfter} ms`);

    // One notification for the whole reload, counted on an event rather than after a quiet window: a second one
    // (the restarted and added upstreams connecting after the first) would travel ahead of the next reload's own.
    await writeConfig(file, { ...base, upstreams: [stdioFixture('keep', { name: marker.keep }), stdioFixture('change', { name: marker.changed, prompts: 4 })] });
    await waitFor(async () => notifications() >= 2 && !(await listAllPages(client)).names.includes('added__with-required'), 60_000, 'the next reload');
    assert.equal(notifications(), 2, 'one notification for each reload');
});

test('an invalid file is rejected with the start-up message and the running config stays; SIGHUP reloads', TIMEOUT, async t => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-reload-'));
    closeAfter(t, () => rm(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'gateway.json');
    const base = { listen: { port: 0 }, notifications: NOTIFY };
    await writeConfig(file, { ...base, upstreams: [stdioFixture('one')] });
    const gateway = await startCli(file);
    closeAfter(t, () => stopChild(gateway.child));
    await waitFor(() => inotifyWatches(gateway.child.pid!) > 0, 60_000, 'the config file to be watched');
    const client = await connectHttp(gateway.url);
    closeAfter(t, () => client.close());
    const notifications = counting(client);
    const before = (await listAllPages(client)).names;
    await writeConfig(file, { ...base, upstreams: [{ ...stdioFixture('Bad_Id') }] });
    await waitFor(() => gateway.logs.some(line => line.msg === 'config reload rejected; keeping the running config'), 60_000, 'the rejection');
    const rejection = gateway.logs.find(line => line.msg === 'config reload rejected; keeping the running config')!;
    assert.match(String(rejection.problems), /upstreams\[0\]\.id: must be 1-63 characters/);
    assert.deepEqual((await listAllPages(client)).names, before, 'still serving the old config');

    // With watching off, only SIGHUP reloads.
    await writeConfig(file, { ...base, reload: { watch: false }, upstreams: [stdioFixture('one'), stdioFixture('two')] });
    // A notification for the rejected reload would travel ahead of the fixed file's own.
    await waitFor(async () => notifications() >= 1 && (await listAllPages(client)).names.includes('two__with-required'), 60_000, 'the fixed file to be served and announced');
    assert.equal(notifications(), 1, 'none for the rejected reload, one for the fixed file');
    // Not watching is a fact of the process, not a reload that fails to come within some time.
    assert.equal(inotifyWatches(gateway.child.pid!), 0, 'the watcher kept running although the config turned it off');
    await writeConfig(file, { ...base, reload: { watch: false }, upstreams: [stdioFixture('one')] });
    gateway.child.kill('SIGHUP');
    await waitFor(async () => !(await listAllPages(client)).names.includes('two__with-required'), 60_000, 'SIGHUP to reload');
});

test('a reload that changes only settings restarts nothing and notifies only when the view changes', TIMEOUT, async t => {
    const config = { listen: { port: 0 }, notifications: NOTIFY, pagination: { pageSize: 5 }, upstreams: [stdioFixture('solo')] };
    const parse = (value: unknown) => parseConfig(JSON.stringify(value), 'test', process.env);
    const gateway = await startTestGateway(config);
    closeAfter(t, () => gateway.close());
    const client = await connectHttp(gateway.url!);
    closeAfter(t, () => client.close());
    const notifications = counting(client);
    const connection = gateway.upstreams[0]!;
    const first = await client.request({ method: 'prompts/list', params: {} });
    assert.equal(first.prompts.length, 5);
    const result = await gateway.reload(parse({ ...config, pagination: { pageSize: 7 } }));
    assert.deepEqual(result.unchanged, ['solo']);
    assert.equal(gateway.upstreams[0], connection, 'same connection object: not restarted');
    assert.equal((await client.request({ method: 'prompts/list', params: {} })).prompts.length, 7);
    await notificationsSettled(gateway, notifications);
    assert.equal(notifications(), 0, 'page size is not a change of the list');

    const renamed = await gateway.reload(parse({ ...config, namespace: { separator: '::' } }));
    assert.deepEqual(renamed.needRestart, []);
    await waitFor(() => notifications() === 1, 60_000, 'a notification for the new names');
    assert.ok((await listAllPages(client)).names.includes('solo::with-required'));
    const listen = await gateway.reload(parse({ ...config, listen: { port: 0, path: '/other' } }));
    assert.deepEqual(listen.needRestart, ['listen']);
});
