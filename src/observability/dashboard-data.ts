/**
 * The dashboard's JSON, derived from the very metric values `/metrics` shows
 * (prom-client's JSON form of the registry), plus what counters cannot hold:
 * upstream states, the last list_changed events and a short history of prompt
 * gets. Pure: the feed (dashboard-feed.ts) gathers the inputs.
 */
import { histogramQuantile, type CumulativeBucket } from '../lib/histogram-quantile.js';
import { UNKNOWN_LABEL } from './metrics.js';

/** prom-client's `getMetricsAsJSON()` shape, as far as it is read here. */
export interface MetricFamily {
    name: string;
    values: { value: number; labels: Partial<Record<string, string | number>>; metricName?: string }[];
}

/** What of an upstream's overrides did not apply (see catalog/overrides.ts); absent when everything did. */
export interface OverridesNotApplied {
    unmatched: string[];
    unknownArguments: string[];
    clashes: { prompt: string; name: string }[];
}

export interface UpstreamStatus {
    id: string;
    state: string;
    lastError?: string | undefined;
    overrides?: OverridesNotApplied | undefined;
}

export interface RecentEvent {
    at: string;
    kind: 'received' | 'sent';
    upstream?: string;
    /** Sent: the sessions told. */
    sessions?: number;
    /** Received: how many notifications this entry stands for. */
    count?: number;
}

export interface DashboardInput {
    families: readonly MetricFamily[];
    upstreams: readonly UpstreamStatus[];
    recent: readonly RecentEvent[];
    /** Total prompt gets at the start of each interval, oldest first. */
    samples: readonly number[];
    intervalSeconds: number;
    /**
     * The per-prompt buckets of successful gets (latencyBuckets) at the start of the latency window: the quantiles are
     * of the gets since. Without it, or for a prompt it lacks, since the start.
     */
    latencySince?: LatencyBuckets | undefined;
    version: string;
    uptimeSeconds: number;
    now: Date;
}

export interface DashboardData {
    generatedAt: string;
    version: string;
    uptimeSeconds: number;
    totals: {
        promptGets: number;
        promptGetErrors: number;
        promptLists: number;
        completions: number;
        listChangedReceived: number;
        listChangedSent: number;
        rejected: number;
        sessions: Record<string, number>;
    };
    upstreams: {
        id: string;
        state: string;
        up: boolean;
        prompts: number;
        gets: number;
        errors: number;
        errorRate: number | null;
        reconnects: number;
        listChangedReceived: number;
        /** Rounds of input its prompts put to clients (elicitation, sampling, roots), in all and by path (those with any). */
        inputRounds: number;
        inputRoundsByPath: Record<string, number>;
        lastError?: string;
        overrides?: OverridesNotApplied;
    }[];
    prompts: { prompt: string; upstream: string; gets: number; errors: number; p50Ms: number | null; p95Ms: number | null }[];
    clients: { client: string; gets: number; lists: number; errors: number }[];
    listChanged: { recent: RecentEvent[] };
    history: { intervalSeconds: number; promptGets: number[] };
}

/** @internal exported for its tests */
export const TOP_PROMPTS = 10;

/** The histogram the prompts' latencies come from: its successful gets carry the prompt label. */
export const SERVER_OPERATIONS = 'mcp_server_operation_duration_seconds';

/** Each prompt's cumulative buckets. */
export type LatencyBuckets = ReadonlyMap<string, readonly CumulativeBucket[]>;

/** Outcomes that speak of the upstream's health, not of the caller's mistakes. */
const UPSTREAM_FAILURES = new Set(['upstream_error', 'timeout']);

export function buildDashboardData(input: DashboardInput): DashboardData {
    const family = (name: string) => input.families.find(candidate => candidate.name === name)?.values ?? [];
    const gets = family('mcp_gateway_prompt_gets_total');
    const byUpstream = (name: string) => sumBy(family(name), 'upstream');
    const upFlags = byUpstream('mcp_gateway_upstream_up');
    const prompts = byUpstream('mcp_gateway_upstream_prompts');
    const reconnects = byUpstream('mcp_gateway_upstream_reconnects_total');
    const received = byUpstream('mcp_gateway_list_changed_received_total');
    const inputRounds = family('mcp_gateway_input_rounds_total');
    const getsByUpstream = sumBy(gets, 'upstream');
    const failuresByUpstream = sumBy(
        gets.filter(value => UPSTREAM_FAILURES.has(String(value.labels.outcome))),
        'upstream'
    );
    const failed = gets.filter(value => value.labels.outcome !== 'ok');

    return {
        generatedAt: input.now.toISOString(),
        version: input.version,
        uptimeSeconds: Math.round(input.uptimeSeconds),
        totals: {
            promptGets: total(gets),
            promptGetErrors: total(failed),
            promptLists: total(family('mcp_gateway_prompt_lists_total')),
            completions: total(family('mcp_gateway_completions_total')),
            listChangedReceived: total(family('mcp_gateway_list_changed_received_total')),
            listChangedSent: total(family('mcp_gateway_list_changed_sent_total')),
            rejected: total(family('mcp_gateway_requests_rejected_total')),
            sessions: Object.fromEntries(sumBy(family('mcp_gateway_sessions'), 'transport'))
        },
        upstreams: input.upstreams.map(upstream => {
            const upstreamGets = getsByUpstream.get(upstream.id) ?? 0;
            const errors = failuresByUpstream.get(upstream.id) ?? 0;
            return {
                id: upstream.id,
                state: upstream.state,
                up: (upFlags.get(upstream.id) ?? 0) === 1,
                prompts: prompts.get(upstream.id) ?? 0,
                gets: upstreamGets,
                errors,
                errorRate: upstreamGets === 0 ? null : errors / upstreamGets,
                reconnects: reconnects.get(upstream.id) ?? 0,
                listChangedReceived: received.get(upstream.id) ?? 0,
                ...roundsOf(inputRounds, upstream.id),
                ...(upstream.lastError === undefined ? {} : { lastError: upstream.lastError }),
                ...(upstream.overrides === undefined ? {} : { overrides: upstream.overrides })
            };
        }),
        prompts: topPrompts(gets, latencyBuckets(family(SERVER_OPERATIONS)), input.latencySince),
        clients: clients(gets, family('mcp_gateway_prompt_lists_total')),
        listChanged: { recent: [...input.recent] },
        history: { intervalSeconds: input.intervalSeconds, promptGets: perInterval(input.samples, total(gets)) }
    };
}

type Values = MetricFamily['values'];

/** An upstream's input rounds, in all and by path. */
function roundsOf(rounds: Values, upstream: string): { inputRounds: number; inputRoundsByPath: Record<string, number> } {
    const own = rounds.filter(value => value.labels.upstream === upstream && value.value > 0);
    return { inputRounds: total(own), inputRoundsByPath: Object.fromEntries(sumBy(own, 'path')) };
}

function total(values: Values): number {
    let sum = 0;
    for (const value of values) sum += value.value;
    return sum;
}

function sumBy(values: Values, label: string): Map<string, number> {
    const sums = new Map<string, number>();
    for (const value of values) {
        const key = String(value.labels[label]);
        sums.set(key, (sums.get(key) ?? 0) + value.value);
    }
    return sums;
}

function topPrompts(gets: Values, latency: LatencyBuckets, since: LatencyBuckets | undefined): DashboardData['prompts'] {
    const rows = new Map<string, DashboardData['prompts'][number]>();
    for (const value of gets) {
        const prompt = String(value.labels.prompt);
        if (prompt === UNKNOWN_LABEL) continue;
        let row = rows.get(prompt);
        if (row === undefined) rows.set(prompt, (row = { prompt, upstream: String(value.labels.upstream), gets: 0, errors: 0, p50Ms: null, p95Ms: null }));
        row.gets += value.value;
        if (value.labels.outcome !== 'ok') row.errors += value.value;
    }
    const top = [...rows.values()].sort((a, b) => b.gets - a.gets || (a.prompt < b.prompt ? -1 : 1)).slice(0, TOP_PROMPTS);
    for (const row of top) {
        const buckets = windowed(latency.get(row.prompt) ?? [], since?.get(row.prompt));
        row.p50Ms = milliseconds(histogramQuantile(0.5, buckets));
        row.p95Ms = milliseconds(histogramQuantile(0.95, buckets));
    }
    return top;
}

/** The server operation histogram's buckets per prompt (successful gets only carry the label). */
export function latencyBuckets(operations: Values): Map<string, CumulativeBucket[]> {
    const byPrompt = new Map<string, CumulativeBucket[]>();
    for (const { labels, value, metricName } of operations) {
        if (labels.prompt === undefined || metricName?.endsWith('_bucket') !== true) continue;
        const prompt = String(labels.prompt);
        let buckets = byPrompt.get(prompt);
        if (buckets === undefined) byPrompt.set(prompt, (buckets = []));
        buckets.push({ le: labels.le === '+Inf' ? Infinity : Number(labels.le), count: value });
    }
    return byPrompt;
}

/** The observations since `start` (the same histogram's buckets then). */
function windowed(now: readonly CumulativeBucket[], start: readonly CumulativeBucket[] | undefined): readonly CumulativeBucket[] {
    if (start === undefined) return now;
    const before = new Map(start.map(({ le, count }) => [le, count]));
    return now.map(({ le, count }) => ({ le, count: count - (before.get(le) ?? 0) }));
}

const milliseconds = (seconds: number | null) => (seconds === null ? null : seconds * 1000);

function clients(gets: Values, lists: Values): DashboardData['clients'] {
    const rows = new Map<string, DashboardData['clients'][number]>();
    const row = (client: string) => {
        let found = rows.get(client);
        if (found === undefined) rows.set(client, (found = { client, gets: 0, lists: 0, errors: 0 }));
        return found;
    };
    for (const value of gets) {
        const found = row(String(value.labels.client));
        found.gets += value.value;
        if (value.labels.outcome !== 'ok') found.errors += value.value;
    }
    for (const value of lists) row(String(value.labels.client)).lists += value.value;
    return [...rows.values()].sort((a, b) => b.gets + b.lists - (a.gets + a.lists) || (a.client < b.client ? -1 : 1));
}

/** Gets in each interval from the running totals, the current (partial) interval last. */
function perInterval(samples: readonly number[], current: number): number[] {
    const points: number[] = [];
    for (let i = 1; i < samples.length; i++) points.push(samples[i]! - samples[i - 1]!);
    if (samples.length > 0) points.push(current - samples[samples.length - 1]!);
    return points;
}
