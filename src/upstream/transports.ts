/** Builds the SDK client transport for one upstream from its config. */
import { SSEClientTransport, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import type { HttpUpstreamConfig, StdioUpstreamConfig } from '../config/schema.js';
import { fetchWithRequestId } from '../observability/request-context.js';
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

export function httpTransport(config: HttpUpstreamConfig, wire: 'streamable-http' | 'sse'): Transport {
    const url = new URL(config.url);
    const headers = config.headers;
    if (wire === 'streamable-http') {
        return new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch: fetchWithRequestId });
    }
    return new SSEClientTransport(url, {
        requestInit: { headers },
        fetch: fetchWithRequestId,
        // The SSE GET goes through fetch too; without this it would lack the configured headers.
        eventSourceInit: { fetch: (input, init) => fetch(input, { ...init, headers: { ...toRecord(init?.headers), ...headers } }) }
    });
}

function toRecord(headers: ConstructorParameters<typeof Headers>[0]): Record<string, string> {
    if (headers === undefined) return {};
    return Object.fromEntries(new Headers(headers).entries());
}
