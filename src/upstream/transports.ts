/** Builds the client transport for one upstream from its config. */
import type { Transport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import type { HttpUpstreamConfig, StdioUpstreamConfig } from '../config/schema.js';
import { LegacySseTransport } from './http/legacy-sse.js';
import type { MessageLimits } from './http/messages.js';
import { StreamableHttpTransport } from './http/streamable-http.js';
import type { HttpTransportOptions } from './http/transport-base.js';
import { sharedReaper } from './reaper.js';
import { StdioProcessTransport } from './stdio-process.js';

export type WireProtocol = 'stdio' | 'streamable-http' | 'sse';

export interface StdioHooks {
    onStderrLine: (line: string) => void;
    /** A stdout line that is not a JSON-RPC message. */
    onNoise: (line: string) => void;
    /** A stdout line over the message limit, with no request id to fail, was dropped. */
    onOversizedDropped: (bytes: number) => void;
}

/** A minimal environment plus the config's additions: never the gateway's own secrets. */
export function childEnvironment(config: StdioUpstreamConfig): Record<string, string> {
    return { ...getDefaultEnvironment(), ...config.env };
}

/**
 * The gateway's own stdio transport rather than the SDK's: it reports junk on stdout instead of dropping it
 * silently, skips a message over `maxMessageBytes` without holding it (failing only its request), stops the
 * child's whole process group, and registers it with a watchdog so no child outlives the gateway.
 */
export function stdioTransport(config: StdioUpstreamConfig, hooks: StdioHooks, maxMessageBytes: number): StdioProcessTransport {
    return new StdioProcessTransport({
        command: config.command,
        args: config.args,
        env: childEnvironment(config),
        ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
        killGraceMs: config.killGraceMs,
        reaper: sharedReaper(),
        maxLineBytes: maxMessageBytes,
        ...hooks
    });
}

/**
 * The gateway's own HTTP transports rather than the SDK's: bodies are read under the message limits, cancelled
 * requests are aborted, and errors carry statuses, never response bodies (see http/streamable-http.ts).
 */
export function httpTransport(config: HttpUpstreamConfig, wire: 'streamable-http' | 'sse', limits: () => MessageLimits): Transport {
    const { headers, timeoutMs, maxConcurrency } = config;
    const options: HttpTransportOptions = { url: new URL(config.url), headers, timeoutMs, maxConcurrency, limits };
    return wire === 'streamable-http' ? new StreamableHttpTransport(options) : new LegacySseTransport(options);
}
