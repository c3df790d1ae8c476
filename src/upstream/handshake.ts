/**
 * What a connection learns of its upstream before any request, and how. The
 * 2025 era settles it once per connection with `initialize`: the client offers
 * the latest revision it speaks, the server answers the one it will speak
 * (which the client must speak too), then the client confirms with
 * `notifications/initialized`. A later era that settles it per request (with
 * `server/discover`) fills in the same profile.
 */
import type { Implementation, ServerCapabilities } from '@modelcontextprotocol/client';
import { UpstreamWireError } from './errors.js';
import { isInitializeResult } from './result-schemas.js';
import type { RpcClient } from './rpc-client.js';

/** The 2025-era revisions the gateway speaks with upstreams, newest (the one offered) first. */
const INITIALIZE_REVISIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

export interface ServerProfile {
    /** The revision both sides speak on this connection. */
    protocolVersion: string;
    capabilities: ServerCapabilities;
    serverInfo: Implementation;
}

export async function initialize(client: RpcClient, clientInfo: Implementation, timeoutMs: number): Promise<ServerProfile> {
    const result = await client.request(
        'initialize',
        { protocolVersion: INITIALIZE_REVISIONS[0], capabilities: {}, clientInfo },
        isInitializeResult,
        { timeoutMs }
    );
    const { protocolVersion, capabilities, serverInfo } = result;
    if (!(INITIALIZE_REVISIONS as readonly string[]).includes(protocolVersion)) throw new UpstreamWireError('unsupported protocol version', 'request_failed');
    client.transport.setProtocolVersion?.(protocolVersion);
    await client.notify('notifications/initialized');
    return { protocolVersion, capabilities, serverInfo };
}
