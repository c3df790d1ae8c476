/** Builds the client transport for one upstream from its config. */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import type { Forwarded } from '../catalog/upstream-port.js';
import type { HttpUpstreamConfig, StdioUpstreamConfig } from '../config/schema.js';
import type { RequestId } from '../protocol/json-rpc.js';
import type { Revision } from '../protocol/revisions.js';
import { LegacySseTransport } from './http/legacy-sse.js';
import { StreamableHttpTransport } from './http/streamable-http.js';
import type { HttpTransportOptions } from './http/transport-base.js';
import { sharedReaper } from './reaper.js';
import { StdioProcessTransport, type StdioProcessOptions } from './stdio-process.js';

export type WireProtocol = 'stdio' | 'streamable-http' | 'sse';

/**
 * One connection's wire, whatever carries it: messages out, checked messages in (each parsed once, where it
 * entered), and word of errors and of the end. The shape of the SDK's Transport, so either side could use the other.
 */
export interface UpstreamTransport {
    onclose?: (() => void) | undefined;
    /** `requestId`: the client request whose upstream request met the error (Forwarded), if any: its log line names it. */
    onerror?: ((error: Error, requestId?: string) => void) | undefined;
    /**
     * `relatedTo`: for a request of the server's that came on the answer stream of one of ours (Streamable HTTP), that
     * request's id: the one wire that ties a 2025 server's request to the request it serves. None elsewhere.
     */
    onmessage?: ((message: JSONRPCMessage, relatedTo?: RequestId) => void) | undefined;
    /** Opens the connection; resolves once messages can be sent. */
    start(): Promise<void>;
    /**
     * Resolves once the message is on its way (over HTTP: once the exchange it started is over). `forwarded`: what it
     * carries of the client request it serves (none for the gateway's own messages).
     */
    send(message: JSONRPCMessage, forwarded?: Forwarded): Promise<void>;
    /** Ends the connection; `onclose` follows (or came first). */
    close(): Promise<void>;
    /** The revision the handshake settled (or the probe asks under), for transports that send it with every request. */
    setRevision?(revision: Revision | undefined): void;
}

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
export function stdioTransport(config: StdioUpstreamConfig, hooks: StdioHooks & Pick<StdioProcessOptions, 'onStreamFlood'>, maxMessageBytes: number): StdioProcessTransport {
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
export function httpTransport(
    config: HttpUpstreamConfig,
    wire: 'streamable-http' | 'sse',
    hooks: Pick<HttpTransportOptions, 'limits' | 'credentials' | 'onStreamFlood'>
): UpstreamTransport {
    const { headers, timeoutMs, maxConcurrency } = config;
    const options: HttpTransportOptions = { url: new URL(config.url), headers, timeoutMs, maxConcurrency, ...hooks };
    return wire === 'streamable-http' ? new StreamableHttpTransport(options) : new LegacySseTransport(options);
}
