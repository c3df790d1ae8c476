/**
 * The line-up every comparison runs against, each in a process of its own behind (or being) the same upstream:
 *
 * - floor: node:http answering a canned result, what a round trip from the bench's client costs at least;
 * - direct: the upstream itself (bench/servers/upstream.ts);
 * - raw hop: ~80 lines of plain node:http forwarding to the upstream (bench/servers/raw-hop.ts), the reference;
 * - naive SDK proxy: ~60 lines on the official SDK (bench/servers/sdk-proxy.ts);
 * - mcp-hub: from the npm registry;
 * - gateway: the built CLI, as users run it, asked by a 2025-06-18 session and by a stateless 2026-07-28 client
 *   (the same process: one era's path against the other's); with `variants`, also with metrics and dashboard off, and with API
 *   keys for 100 clients and prompt policy at every level (the cost of those features); and with tracing on, every
 *   request sampled and its spans exported over OTLP/HTTP to a collector in the bench process (the cost of traces).
 *
 * Each target's `get` is one prompts/get of the same upstream prompt, its answer checked.
 */
import { httpUpstream, startGateway, type GatewayProcess } from './lib/gateway.js';
import { LegacySseChannel } from './lib/legacy-sse.js';
import { StreamableChannel, type Channel } from './lib/mcp-client.js';
import { MCP_HUB_VERSION, startMcpHub } from './lib/mcp-hub.js';
import { startOtlpSink, type OtlpSink } from './lib/otlp-sink.js';
import { startBenchServer, type Watched } from './lib/processes.js';
import { promptName } from './servers/prompt-names.js';

export const UPSTREAM_PROMPT = promptName(1);
export const ARGUMENTS = { topic: 'benchmarks' };
const EXPECTED_TEXT = `${UPSTREAM_PROMPT}: tell me about benchmarks`;

export const FLOOR = 'floor';
export const DIRECT = 'direct';
export const RAW_HOP = 'raw hop';
export const SDK_PROXY = 'naive SDK proxy';
export const MCP_HUB = `mcp-hub ${MCP_HUB_VERSION}`;
export const GATEWAY = 'gateway';
export const GATEWAY_METRICS_OFF = 'gateway, metrics and dashboard off';
export const GATEWAY_POLICY = 'gateway, API keys (100 clients) + policy';
export const GATEWAY_BASELINE = 'gateway, baseline build';
/** The same gateway process as GATEWAY, asked by a stateless 2026-07-28 client instead of a 2025 session. */
export const GATEWAY_STATELESS = 'gateway, 2026-07-28 client';
/** The gateway with tracing on by the standard environment, every request sampled, exporting to `Lineup.collector`. */
export const GATEWAY_TRACING = 'gateway, tracing on (every get sampled)';

export interface Target {
    name: string;
    /** The process doing the target's work: the hop, or the upstream for `direct`. */
    process: Watched;
    /** A hop in front of the upstream: its CPU per request is what a hop costs. */
    hop: boolean;
    /** A session of its own, on a connection of its own. */
    open(): Promise<Channel>;
    /** One prompts/get on the channel; rejects unless the upstream's answer comes back. */
    get(channel: Channel): Promise<void>;
}

export async function getAndCheck(channel: Channel, name: string): Promise<void> {
    const result = (await channel.call('prompts/get', { name, arguments: ARGUMENTS })) as { messages?: { content?: { text?: string } }[] };
    const text = result.messages?.[0]?.content?.text;
    if (text !== EXPECTED_TEXT) throw new Error(`prompts/get ${name} answered ${JSON.stringify(result).slice(0, 200)}`);
}

function streamable(name: string, process: Watched, url: string, prompt: string, hop: boolean, headers: Record<string, string> = {}, stateless?: string): Target {
    const options = stateless === undefined ? { headers } : { headers, stateless };
    return { name, process, hop, open: () => StreamableChannel.open(url, options), get: channel => getAndCheck(channel, prompt) };
}

export interface Lineup {
    targets: Target[];
    upstream: Watched & { url: string };
    floor: Watched & { url: string };
    gateway: GatewayProcess;
    /** The OTLP collector the tracing-on gateway exports to. */
    collector: OtlpSink;
    stop(): Promise<void>;
}

const POLICY_CLIENTS = 100;
const apiKey = (i: number) => `bench-key-${String(i).padStart(4, '0')}-0123456789abcdef`;

/** The standard OpenTelemetry environment a user sets to export every trace to `collector` (OTLP/HTTP, protobuf). */
const tracingEnv = (collector: OtlpSink) => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_TRACES_SAMPLER: 'always_on',
    OTEL_SERVICE_NAME: 'gateway-bench'
});

/** The same upstream behind a gateway with API keys (its caller the last of 100 clients) and policy at every level. */
function policyConfig(upstreamUrl: string) {
    return {
        auth: { mode: 'apiKey' },
        clients: Array.from({ length: POLICY_CLIENTS }, (_, i) => ({ id: `client-${i}`, apiKey: apiKey(i), prompts: { allow: ['up__*'], deny: ['*__prompt-9*'] } })),
        prompts: { deny: ['*__never-*'] },
        upstreams: [httpUpstream('up', upstreamUrl, { prompts: { deny: ['internal-*'] } })]
    };
}

export interface LineupOptions {
    prompts: number;
    /** Also the gateway with metrics off, and with API keys and policy. */
    variants: boolean;
    /** Another build of the gateway (a checkout's root) measured beside this one, e.g. main before a change. */
    baselineRoot?: string;
}

export async function startLineup(options: LineupOptions): Promise<Lineup> {
    const upstream = await startBenchServer('upstream', 'upstream.ts', ['--prompts', String(options.prompts)]);
    const upstreams = { upstreams: [httpUpstream('up', upstream.url)] };
    const baselineRoot = options.baselineRoot;
    const collector = await startOtlpSink();
    const [floor, rawHop, sdkProxy, hub, gateway, tracing, metricsOff, policy, baseline] = await Promise.all([
        startBenchServer('floor', 'floor.ts'),
        startBenchServer('raw hop', 'raw-hop.ts', ['--upstream', upstream.url]),
        startBenchServer('naive SDK proxy', 'sdk-proxy.ts', ['--upstream', upstream.url]),
        startMcpHub({ up: upstream.url }),
        // With the inspector listening (idle unless attached), so the profile scenario can watch it afterwards.
        startGateway(GATEWAY, upstreams, { inspect: true }),
        startGateway(GATEWAY_TRACING, upstreams, { env: tracingEnv(collector) }),
        options.variants ? startGateway(GATEWAY_METRICS_OFF, { ...upstreams, metrics: { enabled: false }, dashboard: { enabled: false } }) : undefined,
        options.variants ? startGateway(GATEWAY_POLICY, policyConfig(upstream.url)) : undefined,
        baselineRoot === undefined ? undefined : startGateway(GATEWAY_BASELINE, upstreams, { root: baselineRoot })
    ]);
    const gatewayPrompt = `up__${UPSTREAM_PROMPT}`;
    const targets: Target[] = [
        { name: FLOOR, process: floor, hop: false, open: () => StreamableChannel.open(floor.url, { session: false }), get: channel => getAndCheck(channel, UPSTREAM_PROMPT) },
        streamable(DIRECT, upstream, upstream.url, UPSTREAM_PROMPT, false),
        streamable(RAW_HOP, rawHop, rawHop.url, gatewayPrompt, true),
        streamable(SDK_PROXY, sdkProxy, sdkProxy.url, gatewayPrompt, true),
        { name: MCP_HUB, process: hub, hop: true, open: () => LegacySseChannel.open(hub.url), get: channel => getAndCheck(channel, gatewayPrompt) },
        streamable(GATEWAY, gateway, gateway.url, gatewayPrompt, true),
        streamable(GATEWAY_STATELESS, gateway, gateway.url, gatewayPrompt, true, {}, '2026-07-28'),
        streamable(GATEWAY_TRACING, tracing, tracing.url, gatewayPrompt, true)
    ];
    if (metricsOff !== undefined) targets.push(streamable(GATEWAY_METRICS_OFF, metricsOff, metricsOff.url, gatewayPrompt, true));
    if (policy !== undefined) {
        targets.push(streamable(GATEWAY_POLICY, policy, policy.url, gatewayPrompt, true, { authorization: `Bearer ${apiKey(POLICY_CLIENTS - 1)}` }));
    }
    if (baseline !== undefined) targets.push(streamable(GATEWAY_BASELINE, baseline, baseline.url, gatewayPrompt, true));
    const processes = [floor, rawHop, sdkProxy, hub, gateway, tracing, metricsOff, policy, baseline].filter(p => p !== undefined);
    return {
        targets,
        upstream,
        floor,
        gateway,
        collector,
        stop: async () => {
            await Promise.all(processes.map(p => p.stop()));
            await Promise.all([upstream.stop(), collector.close()]);
        }
    };
}
