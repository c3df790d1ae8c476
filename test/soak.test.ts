/**
 * Soak: concurrent clients keep listing and getting prompts for a while as one
 * stdio upstream is SIGKILLed again and again. The healthy upstreams must not
 * see a single failed request; the victim's requests may fail while it is down,
 * but never hang, and it must come back after every kill.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { isDeepStrictEqual } from 'node:util';
import { runInNewContext } from 'node:vm';
import type { Client, GetPromptResult } from '@modelcontextprotocol/client';
import { connectHttp, connectStdio, listAllPages, processesWith, sleep, startHttpFixture, startTestGateway, stdioFixture, waitFor, type HttpFixture } from './helpers.js';
import type { RunningGateway } from '../src/gateway.js';
import type { GatewayUpstream } from '../src/upstream/upstream.js';

const CLIENTS = 8;
const DURATION_MS = 12_000;
/**
 * On a slow machine the soak runs on past DURATION_MS until MIN_KILLS kills and MIN_HEALTHY_CALLS calls are done
 * (what it proves is counted, not timed), but never past this.
 */
const MAX_DURATION_MS = 120_000;
const KILL_EVERY_MS = 1500;
/** Up for at least this long before the next kill, so some victim calls get through in between. */
const READY_FOR_MS = 200;
const MIN_KILLS = 5;
const MIN_HEALTHY_CALLS = 200;
/** Every upstream's timeoutMs: the gateway answers every call within it (a list page is served stale after it). */
const UPSTREAM_TIMEOUT_MS = 10_000;
/**
 * Every victim call must settle within this; so must every healthy one (a hang counts as a failure). Derived from the
 * gateway's own bound, not from how fast this machine is: a call still open after twice timeoutMs is a hang.
 */
const SETTLE_MS = 2 * UPSTREAM_TIMEOUT_MS;
/** Every so many rounds, a client also asks the victim. */
const VICTIM_EVERY = 3;
/** Small pages, so list walks take several cursors and cross the victim coming and going. */
const PAGE_SIZE = 7;
/** The rss baseline is taken this far into the soak, once the heap has grown to its working size under load. */
const WARM_UP_MS = 3000;

const ALPHA_GET = { name: 'alpha__with-required', arguments: { topic: 'soak', tone: 'calm' } };
const BETA_GET = { name: 'beta__all-content' };
const VICTIM_GET = { name: 'victim__all-content' };

class Hang extends Error {}

/** A full garbage collection, so memory is compared without the garbage not collected yet (no --expose-gc needed). */
function collectGarbage(): void {
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

/** Settles like `promise`, or rejects with Hang after `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const hang = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Hang(`no answer within ${ms} ms`)), ms)));
    try {
        return await Promise.race([promise, hang]);
    } finally {
        clearTimeout(timer);
    }
}

function describe(error: unknown): string {
    if (error instanceof Hang) return `hang: ${error.message}`;
    const { code, message } = error as { code?: number | string; message?: string };
    return code === undefined ? String(message) : `${code} ${message}`;
}

function percentile(sorted: readonly number[], p: number): number {
    if (sorted.length === 0) return Number.NaN;
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Shared by the killer, which ends the soak, and the clients, which run until it does. */
interface Soak {
    startedAt: number;
    stopped: boolean;
}

interface Tally {
    healthyFailures: string[];
    calls: Record<'list' | 'alpha' | 'beta' | 'victim', number>;
    victimOk: number;
    victimFailures: Map<string, number>;
    victimWrong: string[];
    victimHangs: number;
    victimMaxMs: number;
    getLatencies: number[];
}

async function clientLoop(
    client: Client,
    index: number,
    soak: Soak,
    reference: { alpha: GetPromptResult; beta: GetPromptResult; victim: GetPromptResult; healthyNames: readonly string[] },
    tally: Tally
): Promise<void> {
    const healthy = async (what: string, call: () => Promise<void>) => {
        try {
            await within(call(), SETTLE_MS);
        } catch (error) {
            tally.healthyFailures.push(`client ${index} ${what}: ${describe(error)}`);
        }
    };
    const timedGet = async (params: { name: string; arguments?: Record<string, string> }, expected: GetPromptResult) => {
        const started = performance.now();
        const result = await client.getPrompt(params);
        tally.getLatencies.push(performance.now() - started);
        assert.deepEqual(result, expected, `${params.name} answered with other content`);
    };

    for (let round = 0; !soak.stopped; round++) {
        tally.calls.list++;
        await healthy('prompts/list walk', async () => {
            const { names } = await listAllPages(client);
            for (const name of reference.healthyNames) {
                const seen = names.filter(n => n === name).length;
                if (seen !== 1) throw new Error(`${name} listed ${seen} times (${names.length} names in the walk)`);
            }
        });
        tally.calls.alpha++;
        await healthy(ALPHA_GET.name, () => timedGet(ALPHA_GET, reference.alpha));
        tally.calls.beta++;
        await healthy(BETA_GET.name, () => timedGet(BETA_GET, reference.beta));

        if ((round + index) % VICTIM_EVERY === 0) {
            tally.calls.victim++;
            const started = performance.now();
            try {
                const result = await within(client.getPrompt(VICTIM_GET), SETTLE_MS);
                if (isDeepStrictEqual(result, reference.victim)) tally.victimOk++;
                else tally.victimWrong.push(JSON.stringify(result).slice(0, 200));
            } catch (error) {
                if (error instanceof Hang) tally.victimHangs++;
                const code = (error as { code?: unknown }).code;
                const key = error instanceof Hang ? 'hang' : typeof code === 'number' ? String(code) : describe(error);
                tally.victimFailures.set(key, (tally.victimFailures.get(key) ?? 0) + 1);
            } finally {
                tally.victimMaxMs = Math.max(tally.victimMaxMs, performance.now() - started);
            }
        }
    }
}

interface KillRecord {
    pid: number;
    /** ms from the SIGKILL to the victim being 'ready' again; undefined if it did not come back. */
    recoveredMs: number | undefined;
}

/**
 * Kills the victim's stdio child every KILL_EVERY_MS (counted from the previous kill), never before it is ready
 * again and has served for READY_FOR_MS, for DURATION_MS and at least MIN_KILLS times (within MAX_DURATION_MS);
 * then stops the soak.
 */
async function killerLoop(victim: GatewayUpstream, marker: string, soak: Soak, kills: KillRecord[], enoughCalls: () => boolean): Promise<void> {
    // Every transition to 'ready', timestamped, so no recovery is missed between two polls.
    const readyAt: number[] = [];
    const unsubscribe = victim.events.subscribe(event => {
        if (event.type === 'state' && event.state === 'ready') readyAt.push(performance.now());
    });
    try {
        let lastKill = performance.now();
        for (;;) {
            await sleep(Math.max(0, lastKill + KILL_EVERY_MS - performance.now()));
            await waitFor(() => victim.state === 'ready', 60_000, 'the victim to be ready before a kill');
            await sleep(READY_FOR_MS);
            const elapsed = Date.now() - soak.startedAt;
            if ((elapsed >= DURATION_MS && kills.length >= MIN_KILLS && enoughCalls()) || elapsed >= MAX_DURATION_MS) break;
            const pids = processesWith(marker);
            assert.equal(pids.length, 1, `expected exactly one victim process, found ${JSON.stringify(pids)}`);
            const pid = pids[0]!;
            const readyBefore = readyAt.length;
            lastKill = performance.now();
            process.kill(pid, 'SIGKILL');
            const record: KillRecord = { pid, recoveredMs: undefined };
            kills.push(record);
            await waitFor(() => readyAt.length > readyBefore && victim.state === 'ready', 60_000, `the victim to be ready again after kill #${kills.length}`);
            record.recoveredMs = readyAt[readyBefore]! - lastKill;
            assert.ok(!processesWith(marker).includes(pid), `the killed victim ${pid} is still alive`);
        }
    } finally {
        unsubscribe();
        soak.stopped = true;
    }
}

test('soak: concurrent clients see zero failures on healthy upstreams while another is SIGKILLed again and again', { timeout: 300_000 }, async t => {
    const marker = `soak-victim-${randomUUID()}`;
    let beta: HttpFixture | undefined;
    let gateway: RunningGateway | undefined;
    const clients: Client[] = [];
    const started = Date.now();
    try {
        beta = await startHttpFixture('streamable-http');
        gateway = await startTestGateway({
            reconnect: { initialMs: 50, maxMs: 300 },
            pagination: { pageSize: PAGE_SIZE },
            // The soak is about supervision; all its clients are one anonymous caller, far above the default rate.
            limits: { rateLimit: { requestsPerSecond: 0 } },
            upstreams: [
                stdioFixture('victim', { name: marker }, { timeoutMs: UPSTREAM_TIMEOUT_MS }),
                stdioFixture('alpha', {}, { timeoutMs: UPSTREAM_TIMEOUT_MS }),
                { id: 'beta', transport: 'streamable-http', url: beta.url, timeoutMs: UPSTREAM_TIMEOUT_MS }
            ]
        });
        const victim = gateway.upstreams.find(upstream => upstream.id === 'victim')!;
        assert.deepEqual(
            gateway.upstreams.map(upstream => upstream.state),
            ['ready', 'ready', 'ready']
        );
        assert.equal(processesWith(marker).length, 1, 'the victim runs as one child process with the marker');

        // References, straight from the upstream servers rather than through the gateway.
        const alphaArgs = stdioFixture('alpha').args;
        const directAlpha = await connectStdio(process.execPath, alphaArgs);
        const directBeta = await connectHttp(beta.url);
        let reference;
        try {
            reference = {
                alpha: await directAlpha.getPrompt({ name: 'with-required', arguments: ALPHA_GET.arguments }),
                beta: await directBeta.getPrompt({ name: 'all-content' }),
                // Same server code as the victim; only its serverInfo name differs, which prompts/get does not carry.
                victim: await directAlpha.getPrompt({ name: 'all-content' }),
                alphaNames: (await listAllPages(directAlpha)).names,
                betaNames: (await listAllPages(directBeta)).names
            };
        } finally {
            await directAlpha.close();
            await directBeta.close();
        }
        const healthyNames = [...reference.alphaNames.map(name => `alpha__${name}`), ...reference.betaNames.map(name => `beta__${name}`)];
        assert.ok(healthyNames.includes('alpha__with-required') && healthyNames.includes('beta__with-required'));

        for (let i = 0; i < CLIENTS; i++) clients.push(await connectHttp(gateway.url!));
        // Through the gateway, before any kill, the answers are the upstreams' own.
        assert.deepEqual(await clients[0]!.getPrompt(ALPHA_GET), reference.alpha);
        assert.deepEqual(await clients[0]!.getPrompt(BETA_GET), reference.beta);
        assert.deepEqual(await clients[0]!.getPrompt(VICTIM_GET), reference.victim);
        const firstWalk = await listAllPages(clients[0]!);
        assert.ok(firstWalk.cursors >= 3, `the walk should take several pages, took ${firstWalk.pages.length}`);

        collectGarbage();
        const before = process.memoryUsage();
        const tally: Tally = {
            healthyFailures: [],
            calls: { list: 0, alpha: 0, beta: 0, victim: 0 },
            victimOk: 0,
            victimFailures: new Map(),
            victimWrong: [],
            victimHangs: 0,
            victimMaxMs: 0,
            getLatencies: []
        };
        const kills: KillRecord[] = [];
        const soak: Soak = { startedAt: Date.now(), stopped: false };
        let warmRss = Number.NaN;
        const warmUp = setTimeout(() => (warmRss = process.memoryUsage().rss), WARM_UP_MS);
        const [killer, ...loops] = await Promise.allSettled([
            killerLoop(victim, marker, soak, kills, () => tally.calls.list + tally.calls.alpha + tally.calls.beta > MIN_HEALTHY_CALLS),
            ...clients.map((client, index) => clientLoop(client, index, soak, { ...reference, healthyNames }, tally))
        ]);
        const soakMs = Date.now() - soak.startedAt;
        clearTimeout(warmUp);
        const endRss = process.memoryUsage().rss;
        collectGarbage();
        const after = process.memoryUsage();
        for (const loop of loops) if (loop.status === 'rejected') throw loop.reason;

        const recoveries = kills.map(kill => kill.recoveredMs).filter(ms => ms !== undefined);
        const latencies = [...tally.getLatencies].sort((a, b) => a - b);
        const healthyCalls = tally.calls.list + tally.calls.alpha + tally.calls.beta;
        t.diagnostic(
            `calls: ${tally.calls.list} list walks, ${tally.calls.alpha} alpha gets, ${tally.calls.beta} beta gets, ${tally.calls.victim} victim gets ` +
                `(${healthyCalls} healthy calls from ${CLIENTS} clients in ${soakMs} ms)`
        );
        t.diagnostic(
            `victim: ${kills.length} kills; ${tally.victimOk} gets answered, failures ${JSON.stringify(Object.fromEntries(tally.victimFailures))}, ` +
                `slowest victim call ${Math.round(tally.victimMaxMs)} ms`
        );
        t.diagnostic(
            `kill -> ready again: mean ${Math.round(recoveries.reduce((a, b) => a + b, 0) / Math.max(1, recoveries.length))} ms, ` +
                `max ${Math.round(Math.max(0, ...recoveries))} ms`
        );
        t.diagnostic(
            `healthy get latency: p50 ${round1(percentile(latencies, 50))} ms, p99 ${round1(percentile(latencies, 99))} ms, ` + `max ${round1(latencies.at(-1) ?? Number.NaN)} ms`
        );
        t.diagnostic(
            `memory: rss ${mb(before.rss)} MB idle before, ${mb(warmRss)} MB after ${WARM_UP_MS} ms of load, ${mb(endRss)} MB at the end, ` +
                `${mb(after.rss)} MB after a GC; ` +
                `heap used after GC ${mb(before.heapUsed)} -> ${mb(after.heapUsed)} MB`
        );

        assert.deepEqual(tally.healthyFailures.slice(0, 5), [], `${tally.healthyFailures.length} failed calls to healthy upstreams; the first ones are shown`);
        if (killer.status === 'rejected') throw killer.reason;
        assert.ok(kills.length >= MIN_KILLS, `the victim was killed only ${kills.length} times`);
        assert.equal(recoveries.length, kills.length, 'the victim came back after every kill');
        assert.equal(tally.victimHangs, 0, `${tally.victimHangs} victim calls did not settle within ${SETTLE_MS} ms`);
        for (const code of tally.victimFailures.keys()) {
            assert.ok(code === '-32603' || code === '-32602', `a victim call failed with ${code}, not -32603 or -32602`);
        }
        assert.deepEqual(tally.victimWrong, [], 'a victim get that succeeded must carry the right content');
        assert.ok(tally.victimOk > 0, 'the victim answered at least sometimes in between the kills');
        assert.ok(healthyCalls > MIN_HEALTHY_CALLS, `only ${healthyCalls} healthy calls were made`);
        // Sanity bounds, not a benchmark: no runaway growth from sessions, reconnects or cursor history.
        // rss is compared under load at both ends: from idle, the heap alone grows ~100 MB to its working size and stays
        // there (measured over 30 s), which says nothing about a leak. The live heap after a full GC is compared from idle.
        assert.ok(endRss < 2 * warmRss || endRss - warmRss < 150 * 2 ** 20, `rss grew from ${mb(warmRss)} to ${mb(endRss)} MB under load`);
        assert.ok(after.heapUsed - before.heapUsed < 64 * 2 ** 20, `live heap grew from ${mb(before.heapUsed)} to ${mb(after.heapUsed)} MB`);

        // Afterwards the gateway is whole: the victim is back in the list and served.
        await waitFor(() => victim.state === 'ready', 60_000, 'the victim to be ready at the end');
        await waitFor(async () => (await listAllPages(clients[0]!)).names.includes('victim__with-required'), 20_000, 'victim prompts back in the list');
        assert.deepEqual(await clients[0]!.getPrompt(VICTIM_GET), reference.victim);
        t.diagnostic(`total test time ${Date.now() - started} ms`);
    } finally {
        await Promise.allSettled(clients.map(client => client.close()));
        await gateway?.close();
        await beta?.close();
    }
});
