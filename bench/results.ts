/** What one bench run measured (saved as JSON under bench/results/), and the targets judged from it. */
import type { CatalogResult } from './scenarios/catalog.js';
import type { HttpMemoryRow } from './scenarios/http-memory.js';
import type { LatencyRow } from './scenarios/latency.js';
import type { MetricsCostResult } from './scenarios/metrics-cost.js';
import type { NarrowClientsResult } from './scenarios/narrow-clients.js';
import type { OverloadResult } from './scenarios/overload.js';
import type { ProfileRow } from './scenarios/profile.js';
import type { MarkdownOnlyResult, PromptFilesResult } from './scenarios/prompt-files.js';
import type { ReplicasResult } from './scenarios/replicas.js';
import type { SessionIdResult } from './scenarios/session-id.js';
import type { SessionStep } from './scenarios/sessions.js';
import type { StormResult } from './scenarios/storm.js';
import type { ThroughputCell } from './scenarios/throughput.js';
import { DIRECT, GATEWAY, RAW_HOP } from './targets.js';

export interface Machine {
    node: string;
    cpu: string;
    cores: number;
    memoryGiB: number;
    /** 1, 5 and 15-minute load averages when the run started: the machine is shared. */
    loadAtStart: number[];
}

export interface BenchResults {
    date: string;
    quick: boolean;
    gateway: { root: string; commit: string };
    machine: Machine;
    durationS: number;
    /** Hop processes (every target but floor and direct). */
    hops: string[];
    latency: LatencyRow[];
    throughput: ThroughputCell[];
    /** Concurrency at which CPU per get is compared. */
    cpuConcurrency: number;
    catalog: CatalogResult;
    sessions: SessionStep[];
    storm: StormResult;
    profile: ProfileRow[];
    /** The scenarios below were added after the first saved runs: absent from those, and left out of their reports. */
    narrowClients?: NarrowClientsResult;
    metricsCost?: MetricsCostResult;
    httpMemory?: HttpMemoryRow[];
    overload?: OverloadResult;
    /** Scale-out (issue 16); may have been measured later than the rest (`--only --merge`): see measuredOn. */
    replicas?: Stamped<ReplicasResult>;
    sessionId?: Stamped<SessionIdResult>;
    /** A folder of prompt files (issue 18), in each format (issue 26; markdown alone before). */
    promptFiles?: Stamped<PromptFilesResult | MarkdownOnlyResult>;
    /** What the tracing-on gateway exported to the bench's collector over the whole run (absent before issue 29). */
    tracingExports?: { exports: number; bytes: number };
    /** Process warnings the line-up's gateway printed, by name. */
    gatewayWarnings: Record<string, number>;
}

/** A scenario's result with when, on what, and under what load it was measured. */
export type Stamped<T> = T & { measuredOn: { commit: string; date: string; loadAtStart: number[] } };

export interface Verdict {
    measure: string;
    target: string;
    value: string;
    met: boolean;
    /** How far inside (or outside) the target, in the target's unit. */
    margin: string;
}

const latencyOf = (r: BenchResults, name: string) => r.latency.find(row => row.name === name)!.latency;
const cell = (r: BenchResults, name: string, concurrency: number) => r.throughput.find(c => c.name === name && c.concurrency === concurrency)!;

/** What `name` adds to direct's p50 at concurrency 1, microseconds. */
export const addedP50 = (r: BenchResults, name: string) => latencyOf(r, name).p50 - latencyOf(r, DIRECT).p50;
export const throughputRatio = (r: BenchResults, name: string, concurrency: number) => cell(r, name, concurrency).perSecond / cell(r, DIRECT, concurrency).perSecond;
export const cpuPerGet = (r: BenchResults, name: string) => cell(r, name, r.cpuConcurrency).cpuUsPerGet;
export const lastSessionStep = (r: BenchResults) => r.sessions.at(-1)!;

const x = (n: number) => `${n.toFixed(2)}x`;

/** A measure no greater (or, with `atLeast`, no less) than `limit`. */
function judge(measure: string, value: number, limit: number, show: (n: number) => string, atLeast = false): Verdict {
    const met = atLeast ? value >= limit : value <= limit;
    const gap = atLeast ? value - limit : limit - value;
    return {
        measure,
        target: `${atLeast ? '>=' : '<='} ${show(limit)}`,
        value: show(value),
        met,
        margin: `${met ? 'met by' : 'missed by'} ${show(Math.abs(gap))}`
    };
}

export function verdicts(r: BenchResults): Verdict[] {
    const sessions = lastSessionStep(r);
    const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
    const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
    const msOf = (micros: number) => `${(micros / 1000).toFixed(2)} ms`;
    return [
        judge('added p50 of a prompts/get at concurrency 1, vs the raw hop', addedP50(r, GATEWAY) / addedP50(r, RAW_HOP), 1.3, x),
        judge(`throughput at concurrency 32, vs direct`, throughputRatio(r, GATEWAY, 32), 0.7, x, true),
        judge(`CPU per get (all threads, concurrency ${r.cpuConcurrency}), vs the raw hop`, cpuPerGet(r, GATEWAY) / cpuPerGet(r, RAW_HOP), 2, x),
        judge(`idle session after a full GC (${sessions.sessions.toLocaleString('en')} sessions)`, sessions.bytesPerSession, 10 * 1024, kib),
        judge(`idle sessions held (of ${sessions.sessions.toLocaleString('en')})`, sessions.held, sessions.sessions, n => n.toLocaleString('en'), true),
        judge(`${r.catalog.prompts.toLocaleString('en')}-prompt catalog ready after start`, r.catalog.readyMs, 1500, n => `${n.toFixed(0)} ms`),
        judge('warm page p50, vs the floor round trip', r.catalog.page.p50 / r.catalog.floorPage.p50, 1.5, x),
        judge(`RSS with the ${r.catalog.prompts.toLocaleString('en')}-prompt catalog`, r.catalog.rssBytes, 200e6, mb),
        judge(`p99 of other requests during a ${r.storm.events.toLocaleString('en')}-event storm, vs idle p99 + 20 ms`, r.storm.storm.p99, r.storm.idle.p99 + 20_000, msOf)
    ];
}
