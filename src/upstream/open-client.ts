/**
 * Opens one client connection to an upstream: picks the transport (for "http",
 * Streamable HTTP with the fallback to legacy HTTP+SSE) and runs the MCP
 * handshake, bounded as a whole by the upstream's timeoutMs. What a 2025
 * upstream is told its client can answer follows from its relayInputRequests
 * on the wire it is reached over (protocol/input-requests.ts relayPlan).
 */
import type { Implementation } from '@modelcontextprotocol/client';
import type { ServerUpstreamConfig } from '../config/schema.js';
import { withDeadline } from '../lib/deadline.js';
import type { Logger } from '../diagnostics/logger.js';
import { UpstreamFailedError } from '../catalog/upstream-port.js';
import { relayCapabilities, relayPlan, type RelayPlan } from '../protocol/input-requests.js';
import type { Era } from '../protocol/revisions.js';
import { UpstreamHttpError } from './errors.js';
import { negotiate, type ServerProfile } from './handshake.js';
import type { MessageLimits } from './http/messages.js';
import type { UpstreamCredentials } from './auth/credentials.js';
import { RpcClient, type RpcClientEvents } from './rpc-client.js';
import { httpTransport, stdioTransport, type StdioHooks, type UpstreamTransport, type WireProtocol } from './transports.js';

export interface OpenClientOptions {
    config: ServerUpstreamConfig;
    clientInfo: Implementation;
    log: Logger;
    /** The wire that worked before: an "http" upstream known to be legacy SSE is not asked for Streamable HTTP again. */
    knownWire: WireProtocol | undefined;
    /** The era, if known (from config, or an earlier connection's probe): no probe then. */
    knownEra: Era | undefined;
    /** What a probe found. */
    onEra: (era: Era) => void;
    stdio: StdioHooks;
    /** Bounds on what is read from an HTTP upstream, read when used (a reload may change them). */
    limits: () => MessageLimits;
    /** The connection's output (SSE streams, or the child's stdout) brought more lines in a window than it is read at. */
    onStreamFlood: () => void;
    /** What each attempt's client reports, from before its handshake on, so nothing the upstream sends meanwhile is missed. */
    events: RpcClientEvents;
    /** The client whose handshake is running (undefined once it ended), so the caller can close it meanwhile. */
    onHandshake: (client: RpcClient | undefined) => void;
    /** The caller closed meanwhile: no further attempt. */
    isClosed: () => boolean;
    /** An HTTP upstream's `auth`, kept by the caller across attempts (a token outlives a connection). */
    credentials?: UpstreamCredentials | undefined;
}

export interface OpenedClient {
    client: RpcClient;
    profile: ServerProfile;
    wire: WireProtocol;
    /** What relayInputRequests comes to on this wire (for a 2025 session). */
    relay: RelayPlan;
}

export async function openClient(options: OpenClientOptions): Promise<OpenedClient> {
    const { config } = options;
    const { credentials, onStreamFlood } = options;
    if (config.transport === 'stdio') {
        return handshake(options, stdioTransport(config, { ...options.stdio, onStreamFlood }, options.limits().maxUpstreamMessageBytes), 'stdio');
    }
    const http = { limits: options.limits, credentials, onStreamFlood };
    // A token first, outside the handshake's deadline: a token endpoint that fails is then named as the reason.
    await credentials?.authorization();
    if (config.transport !== 'http') return handshake(options, httpTransport(config, config.transport, http), config.transport);
    // "http": Streamable HTTP first; a 4xx means a legacy HTTP+SSE server (MCP backwards-compatibility rule).
    if (options.knownWire !== 'sse') {
        try {
            return await handshake(options, httpTransport(config, 'streamable-http', http), 'streamable-http');
        } catch (error) {
            if (!isTransportMismatch(error)) throw error;
            options.log.info({ status: error.status }, 'Streamable HTTP refused; trying legacy HTTP+SSE');
        }
    }
    if (options.isClosed()) throw new UpstreamFailedError(config.id, 'closed', undefined);
    return handshake(options, httpTransport(config, 'sse', http), 'sse');
}

async function handshake(options: OpenClientOptions, transport: UpstreamTransport, wire: WireProtocol): Promise<OpenedClient> {
    const { id, timeoutMs, relayInputRequests, relayRoots } = options.config;
    const relay = relayPlan(relayInputRequests, wire);
    const declared = relay.declare ? relayCapabilities(relayRoots) : {};
    // A fresh client per attempt, on a transport of its own: nothing of a failed attempt carries over.
    const client = new RpcClient(transport, options.events, { answerStreams: relay.answerStreams, unrelated: relay.unrelated, roots: relayRoots });
    options.onHandshake(client);
    try {
        // One deadline for all of it: the transport's start (e.g. an SSE endpoint event that never comes) included.
        const profile = await withDeadline(
            (async () => {
                await transport.start();
                // The legacy HTTP+SSE transport has no stateless revision.
                const known = wire === 'sse' ? 'handshake' : options.knownEra;
                return negotiate(client, { clientInfo: options.clientInfo, timeoutMs, wire, known, onEra: options.onEra, declared });
            })(),
            timeoutMs,
            () => {
                throw new UpstreamFailedError(id, `timed out after ${timeoutMs} ms (connecting)`, 'timeout');
            }
        );
        return { client, profile, wire, relay };
    } catch (error) {
        await client.close().catch(() => {});
        throw error;
    } finally {
        options.onHandshake(undefined);
    }
}

/**
 * A 4xx to the Streamable HTTP handshake means a legacy server, except 401 and 403: the credentials are wrong
 * whatever the transport, and falling back would report the SSE attempt's failure instead of the real one.
 */
function isTransportMismatch(error: unknown): error is UpstreamHttpError {
    return error instanceof UpstreamHttpError && error.status >= 400 && error.status <= 499 && error.status !== 401 && error.status !== 403;
}
