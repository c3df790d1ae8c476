/**
 * Opens one SDK client to an upstream: picks the transport (for "http",
 * Streamable HTTP with the fallback to legacy HTTP+SSE) and runs the MCP
 * handshake, bounded as a whole by the upstream's timeoutMs.
 */
import { Client, type JSONRPCErrorResponse, type JSONRPCResponse, type Transport } from '@modelcontextprotocol/client';
import type { UpstreamConfig } from '../config/schema.js';
import { withDeadline } from '../lib/deadline.js';
import type { Logger } from '../observability/logger.js';
import { CorrelatedTransport } from './correlated.js';
import { UpstreamFailedError, UpstreamHttpError } from './errors.js';
import type { MessageLimits } from './http/messages.js';
import { httpTransport, stdioTransport, type StdioHooks, type WireProtocol } from './transports.js';

export interface OpenClientOptions {
    config: UpstreamConfig;
    clientInfo: { name: string; version: string };
    log: Logger;
    /** The wire that worked before: an "http" upstream known to be legacy SSE is not asked for Streamable HTTP again. */
    knownWire: WireProtocol | undefined;
    stdio: StdioHooks;
    /** Bounds on what is read from an HTTP upstream, read when used (a reload may change them). */
    limits: () => MessageLimits;
    /** Sets the client's handlers before its handshake, so nothing the upstream sends meanwhile is missed. */
    prepare: (client: Client, wire: WireProtocol) => void;
    /** The client whose handshake is running (undefined once it ended), so the caller can close it meanwhile. */
    onHandshake: (client: Client | undefined) => void;
    /** An answer to no request in flight, or progress for none, was dropped. */
    onStray: (kind: 'answer' | 'progress') => void;
    /** The caller closed meanwhile: no further attempt. */
    isClosed: () => boolean;
}

export interface OpenedClient {
    client: Client;
    transport: Transport;
    wire: WireProtocol;
}

/**
 * The SDK (2.4.0) hands a notification to its handler one microtask after it arrives, but settles a response at
 * once, dropping the request's progress handler: the last progress notification an upstream sends right before
 * its answer would be lost (typescript-sdk issue 2580). Responses are settled one microtask later, behind the
 * notifications that arrived before them.
 */
class InOrderClient extends Client {
    protected override _onresponse(response: JSONRPCResponse | JSONRPCErrorResponse): void {
        void Promise.resolve().then(() => super._onresponse(response));
    }
}

export async function openClient(options: OpenClientOptions): Promise<OpenedClient> {
    const { config } = options;
    if (config.transport === 'stdio') return handshake(options, stdioTransport(config, options.stdio, options.limits().maxUpstreamMessageBytes), 'stdio');
    if (config.transport !== 'http') return handshake(options, httpTransport(config, config.transport, options.limits), config.transport);
    // "http": Streamable HTTP first; a 4xx means a legacy HTTP+SSE server (MCP backwards-compatibility rule).
    if (options.knownWire !== 'sse') {
        try {
            return await handshake(options, httpTransport(config, 'streamable-http', options.limits), 'streamable-http');
        } catch (error) {
            if (!isTransportMismatch(error)) throw error;
            options.log.info({ status: error.status }, 'Streamable HTTP refused; trying legacy HTTP+SSE');
        }
    }
    if (options.isClosed()) throw new UpstreamFailedError(config.id, 'closed', undefined);
    return handshake(options, httpTransport(config, 'sse', options.limits), 'sse');
}

async function handshake(options: OpenClientOptions, inner: Transport, wire: WireProtocol): Promise<OpenedClient> {
    const { id, timeoutMs } = options.config;
    const transport = new CorrelatedTransport(inner, options.onStray);
    // A fresh Client per attempt: the SDK cannot reconnect a closed one.
    const client = new InOrderClient(options.clientInfo, { capabilities: {} });
    options.prepare(client, wire);
    options.onHandshake(client);
    try {
        // The SDK's own timeout covers the initialize request only, not e.g. an SSE endpoint event that never comes.
        await withDeadline(client.connect(transport, { timeout: timeoutMs }), timeoutMs, () => {
            throw new UpstreamFailedError(id, `timed out after ${timeoutMs} ms (connecting)`, 'timeout');
        });
    } catch (error) {
        await client.close().catch(() => {});
        throw error;
    } finally {
        options.onHandshake(undefined);
    }
    return { client, transport, wire };
}

/**
 * A 4xx to the Streamable HTTP handshake means a legacy server, except 401 and 403: the credentials are wrong
 * whatever the transport, and falling back would report the SSE attempt's failure instead of the real one.
 */
function isTransportMismatch(error: unknown): error is UpstreamHttpError {
    return error instanceof UpstreamHttpError && error.status >= 400 && error.status <= 499 && error.status !== 401 && error.status !== 403;
}
