/**
 * Gathers what the dashboard shows: the metric registry's current values, the
 * upstreams' states, the last list_changed events, and the running total of
 * prompt gets sampled every few seconds so the page can draw the last minutes.
 */
import { performance } from 'node:perf_hooks';
import { buildDashboardData, latencyBuckets, SERVER_OPERATIONS, type DashboardData, type LatencyBuckets, type RecentEvent, type UpstreamStatus } from './dashboard-data.js';
import type { GatewayMetrics } from './metrics.js';

export interface DashboardFeedOptions {
    version: string;
    upstreams: () => readonly UpstreamStatus[];
    intervalSeconds?: number;
    /** Intervals of history kept. */
    points?: number;
}

const RECENT_EVENTS = 20;
/**
 * Events of one kind (and upstream) within this long of each other are shown as one, with a count: one catalog
 * change reaches many sessions, and an upstream may send thousands of list_changed a second.
 */
const MERGE_MS = 1000;

/** The top prompts' p50/p95 are of about the last ten minutes (from 9 to 10)... */
const LATENCY_WINDOW_MS = 10 * 60_000;
/** ...from a snapshot of the histogram's per-prompt buckets taken every minute... */
const LATENCY_SNAPSHOT_MS = 60_000;
/**
 * ...holding the prompts with the most successful gets, so a snapshot stays small whatever the catalog's size: the
 * quantiles of a prompt it lacks (a top prompt by failures) are since the gateway started.
 */
const SNAPSHOT_PROMPTS = 100;

export class DashboardFeed {
    readonly #samples: number[] = [];
    readonly #recent: RecentEvent[] = [];
    readonly #timer: NodeJS.Timeout;
    readonly #latencyTimer: NodeJS.Timeout;
    /** Oldest first; the first is the window's start (at first the empty histogram). `at`: Date.now(), minutes apart. */
    readonly #latencySnapshots: { at: number; buckets: LatencyBuckets }[] = [{ at: Date.now(), buckets: new Map() }];
    readonly #intervalSeconds: number;
    readonly #points: number;
    /** When the newest event was last added to. */
    #lastAt = -Infinity;

    constructor(
        private readonly metrics: GatewayMetrics,
        private readonly options: DashboardFeedOptions
    ) {
        this.#intervalSeconds = options.intervalSeconds ?? 5;
        this.#points = options.points ?? 120;
        this.#samples.push(0);
        this.#timer = setInterval(() => void this.#sample(), this.#intervalSeconds * 1000).unref();
        this.#latencyTimer = setInterval(() => void this.#snapshotLatency(), LATENCY_SNAPSHOT_MS).unref();
    }

    /** Allocates nothing while it merges into the newest event: it runs once per upstream notification. */
    listChangedReceived(upstream: string): void {
        const last = this.#mergeable('received', upstream);
        if (last !== undefined) last.count = (last.count ?? 1) + 1;
        else this.#remember({ at: new Date().toISOString(), kind: 'received', upstream, count: 1 });
    }

    listChangedSent(): void {
        const last = this.#mergeable('sent', undefined);
        if (last !== undefined) last.sessions = (last.sessions ?? 0) + 1;
        else this.#remember({ at: new Date().toISOString(), kind: 'sent', sessions: 1 });
    }

    async data(): Promise<DashboardData> {
        return buildDashboardData({
            families: await this.metrics.registry.getMetricsAsJSON(),
            upstreams: this.options.upstreams(),
            recent: this.#recent.map(event => ({ ...event })),
            samples: this.#samples,
            intervalSeconds: this.#intervalSeconds,
            version: this.options.version,
            uptimeSeconds: process.uptime(),
            now: new Date(),
            latencySince: this.#latencySnapshots[0]?.buckets
        });
    }

    close(): void {
        clearInterval(this.#timer);
        clearInterval(this.#latencyTimer);
    }

    /** The newest event, if a new one of this kind would merge into it. */
    #mergeable(kind: RecentEvent['kind'], upstream: string | undefined): RecentEvent | undefined {
        const now = performance.now();
        const last = this.#recent[0];
        const merge = last?.kind === kind && last.upstream === upstream && now - this.#lastAt < MERGE_MS;
        this.#lastAt = now;
        return merge ? last : undefined;
    }

    #remember(event: RecentEvent): void {
        this.#recent.unshift(event);
        if (this.#recent.length > RECENT_EVENTS) this.#recent.length = RECENT_EVENTS;
    }

    async #snapshotLatency(): Promise<void> {
        const operations = await this.metrics.registry.getSingleMetric(SERVER_OPERATIONS)?.get();
        const busiest = [...latencyBuckets(operations?.values ?? [])]
            .map(([prompt, buckets]) => ({ prompt, buckets, gets: Math.max(0, ...buckets.map(bucket => bucket.count)) }))
            .sort((a, b) => b.gets - a.gets)
            .slice(0, SNAPSHOT_PROMPTS);
        const at = Date.now();
        this.#latencySnapshots.push({ at, buckets: new Map(busiest.map(({ prompt, buckets }) => [prompt, buckets])) });
        while (this.#latencySnapshots.length > 1 && at - this.#latencySnapshots[0]!.at > LATENCY_WINDOW_MS) this.#latencySnapshots.shift();
    }

    async #sample(): Promise<void> {
        this.#samples.push(await this.metrics.promptGetsTotal());
        if (this.#samples.length > this.#points) this.#samples.shift();
    }
}
