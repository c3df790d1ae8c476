/**
 * The multi-replica harness itself, with real processes: redis stops and comes back on its port; three gateway
 * replicas behind nginx share the requests round robin, a killed one is skipped, a restarted one serves again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusterToolsAvailable, CLUSTER_SKIP_MESSAGE, redisPing, startNginx, startRedis, startReplica, type RunningNginx } from './cluster-harness.js';
import { stdioFixture } from './helpers.js';
import { messagesOf, postModern } from './raw-http.js';

/** Bounds each test: its waits are on events (a port answering, a process ending), this only turns a hang into a failure. */
const TIMEOUT = 180_000;
const skip = clusterToolsAvailable() ? false : CLUSTER_SKIP_MESSAGE;
const CURSOR_SECRET = 'cluster-harness-test-secret-0032';

/** The replica (127.0.0.1:PORT) that answered each of `count` consecutive GET /healthz through nginx: the last one nginx tried. */
async function answeredBy(nginx: RunningNginx, count: number): Promise<string[]> {
    const replicas: string[] = [];
    for (let sent = 0; sent < count; sent++) {
        const response = await fetch(`${nginx.url}/healthz`);
        const body = await response.text();
        assert.equal(response.status, 200, `request ${sent + 1}: ${body}\n${nginx.errorLog()}`);
        assert.equal((JSON.parse(body) as { status: string }).status, 'ok');
        const tried = response.headers.get('x-upstream') ?? '';
        replicas.push(tried.split(', ').at(-1)!);
    }
    return replicas;
}

const countOf = (items: readonly string[], item: string) => items.filter(each => each === item).length;

test('redis answers PING, is gone once stopped, and answers again on the same port after a start', { timeout: TIMEOUT, skip }, async t => {
    const redis = await startRedis(t);
    assert.equal(redis.url, `redis://127.0.0.1:${redis.port}`);
    assert.ok(await redisPing(redis.port));
    await redis.stop();
    assert.equal(await redisPing(redis.port), false, 'nothing answers on the port while redis is stopped');
    await redis.start();
    assert.ok(await redisPing(redis.port), 'the restarted redis answers on the same port');
    await redis.stop('SIGKILL');
    assert.equal(await redisPing(redis.port), false, 'a crashed redis answers no more');
});

test('three replicas behind nginx: round robin over all, a killed one skipped, a restarted one back on its port, a reload drops one', { timeout: TIMEOUT, skip }, async t => {
    const config = { cursorSecret: CURSOR_SECRET, upstreams: [stdioFixture('local')] };
    const replicas = await Promise.all([0, 1, 2].map(() => startReplica(t, config)));
    const addresses = replicas.map(replica => `127.0.0.1:${replica.port}`);
    const nginx = await startNginx(
        t,
        replicas.map(replica => replica.port)
    );

    const first = await answeredBy(nginx, 6);
    assert.deepEqual(
        addresses.map(address => countOf(first, address)),
        [2, 2, 2],
        `each replica answers two of six: ${first.join(' ')}`
    );
    const listed = await postModern(`${nginx.url}${new URL(replicas[0]!.url).pathname}`, 'prompts/list');
    assert.equal(listed.status, 200);
    const [message] = await messagesOf(listed);
    assert.ok(
        (message?.result?.prompts as { name: string }[]).some(prompt => prompt.name === 'local__with-required'),
        'MCP requests pass through nginx'
    );

    const [, killed] = replicas;
    await killed!.kill('SIGKILL');
    const whileDown = await answeredBy(nginx, 6);
    assert.equal(countOf(whileDown, addresses[1]!), 0, `the killed replica answers nothing: ${whileDown.join(' ')}`);

    await killed!.restart();
    assert.equal(new URL(killed!.url).port, String(killed!.port));
    const afterRestart = await answeredBy(nginx, 6);
    assert.ok(countOf(afterRestart, addresses[1]!) >= 1, `the restarted replica serves again on its port: ${afterRestart.join(' ')}`);

    await nginx.reload([replicas[0]!.port, replicas[2]!.port]);
    const afterReload = await answeredBy(nginx, 4);
    assert.equal(countOf(afterReload, addresses[1]!), 0, `a replica reloaded out of nginx gets nothing: ${afterReload.join(' ')}`);
});
