/** Builds the SDK client transport for one upstream from its config. */
import { SSEClientTransport, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import type { HttpUpstreamConfig, StdioUpstreamConfig } from '../config/schema.js';

export type WireProtocol = 'stdio' | 'streamable-http' | 'sse';

export function stdioTransport(config: StdioUpstreamConfig): StdioClientTransport {
    return new StdioClientTransport({
        command: config.command,
        args: config.args,
        // The SDK starts the child with a minimal environment; the config adds to it, never the gateway's own secrets.
        env: { ...getDefaultEnvironment(), ...config.env },
        ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
        stderr: 'pipe'
    });
}

export function httpTransport(config: HttpUpstreamConfig, wire: 'streamable-http' | 'sse'): Transport {
    const url = new URL(config.url);
    const headers = config.headers;
    if (wire === 'streamable-http') {
        return new StreamableHTTPClientTransport(url, { requestInit: { headers } });
    }
    return new SSEClientTransport(url, {
        requestInit: { headers },
        // The SSE GET goes through fetch too; without this it would lack the configured headers.
        eventSourceInit: { fetch: (input, init) => fetch(input, { ...init, headers: { ...toRecord(init?.headers), ...headers } }) }
    });
}

function toRecord(headers: ConstructorParameters<typeof Headers>[0]): Record<string, string> {
    if (headers === undefined) return {};
    return Object.fromEntries(new Headers(headers).entries());
}
