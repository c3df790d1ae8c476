/**
 * What a connection learns of its upstream before any request, and how. The
 * 2025 era settles it once per connection with `initialize`: the client offers
 * the latest revision it speaks, the server answers the one it will speak
 * (which the client must speak too), then the client confirms with
 * `notifications/initialized`. The stateless revision (2026-07-28) has no
 * handshake: every request names the revision in `_meta`, and
 * `server/discover` tells the same profile.
 *
 * With `protocol: "auto"` the era is probed as the revision says (the gateway
 * runs its own client, so its own probe rather than the SDK's): a
 * `server/discover` first; a result, or a recognised 2026-07-28 error, means a
 * stateless server; any other error, or silence within a short wait, means a
 * 2025-era one, which then gets `initialize`. The verdict is kept by the
 * connection (prior knowledge) so a reconnect skips the probe.
 */
import { ProtocolError, type Implementation, type ServerCapabilities } from '@modelcontextprotocol/client';
import { isSpecReservedError } from '../lib/json-rpc.js';
import { UpstreamWireError } from './errors.js';
import { isDiscoverResult, isInitializeResult } from './result-schemas.js';
import type { RpcClient } from './rpc-client.js';
import type { WireProtocol } from './transports.js';

/** The stateless revision the gateway speaks with upstreams. */
export const STATELESS_REVISION = '2026-07-28';

/**
 * How long a probe over HTTP waits at most (within the upstream's timeoutMs): the server is up, and a 2025-era one
 * may not answer an unknown method at all.
 */
const HTTP_PROBE_TIMEOUT_MS = 3000;

/** A 2025-era server that ended the connection over the probe (some exit on any request before initialize). */
export class ProbeEndedConnection extends UpstreamWireError {
    constructor() {
        super('connection closed by the era probe; next time as a 2025-era server', undefined);
    }
}

export type Era = 'stateless' | 'handshake';

/** The 2025-era revisions the gateway speaks with upstreams, newest (the one offered) first. */
const INITIALIZE_REVISIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

export interface ServerProfile {
    /** The revision both sides speak on this connection. */
    protocolVersion: string;
    capabilities: ServerCapabilities;
    serverInfo: Implementation;
}

/**
 * How long the probe waits for an answer before taking silence for the 2025 era. A stdio child is asked as it
 * starts, so its start-up counts against the wait (a slow starter is no 2025-era sign; the short HTTP wait misjudged
 * a 2026-07-28 child that took over 3 s to start); half the connect deadline leaves the other half to initialize.
 */
function probeTimeoutMs(wire: WireProtocol, timeoutMs: number): number {
    return wire === 'stdio' ? timeoutMs / 2 : Math.min(HTTP_PROBE_TIMEOUT_MS, timeoutMs / 2);
}

interface Negotiation {
    clientInfo: Implementation;
    timeoutMs: number;
    wire: WireProtocol;
    /** What an earlier connection learned (or the config says): no probe then. */
    known: Era | undefined;
    /** Hears each verdict. */
    onEra: (era: Era) => void;
}

/** Settles the connection's era and profile. Throws when the upstream speaks neither era the gateway does. */
export async function negotiate(client: RpcClient, { clientInfo, timeoutMs, wire, known, onEra }: Negotiation): Promise<ServerProfile> {
    if (known === 'handshake') return initialize(client, clientInfo, timeoutMs);
    const discovered = await discover(client, clientInfo, known === 'stateless' ? timeoutMs : probeTimeoutMs(wire, timeoutMs));
    if (discovered !== undefined) {
        onEra('stateless');
        return discovered;
    }
    if (known === 'stateless') throw new UpstreamWireError('no answer to server/discover (protocol "2026-07-28")', 'request_failed');
    onEra('handshake');
    if (client.closed) throw new ProbeEndedConnection();
    return initialize(client, clientInfo, timeoutMs);
}

/** The profile of a stateless server; undefined when the answer says 2025 era (no result, nor a 2026 error). */
async function discover(client: RpcClient, clientInfo: Implementation, timeoutMs: number): Promise<ServerProfile | undefined> {
    client.transport.setProtocolVersion?.(STATELESS_REVISION);
    client.setRequestMeta({
        'io.modelcontextprotocol/protocolVersion': STATELESS_REVISION,
        'io.modelcontextprotocol/clientInfo': clientInfo,
        'io.modelcontextprotocol/clientCapabilities': {}
    });
    // A stateless server that refuses the version while listing it (a transient refusal) is asked once more.
    for (let attempt = 0; ; attempt++) {
        try {
            const result = await client.request('server/discover', undefined, isDiscoverResult, { timeoutMs });
            if (!result.supportedVersions.includes(STATELESS_REVISION)) throw new UpstreamWireError(`the upstream does not speak ${STATELESS_REVISION}`, 'request_failed');
            const info = result._meta?.['io.modelcontextprotocol/serverInfo'];
            const serverInfo = isImplementation(info) ? info : { name: '(unnamed)', version: '' };
            return { protocolVersion: STATELESS_REVISION, capabilities: result.capabilities, serverInfo };
        } catch (error) {
            if (error instanceof UpstreamWireError) throw error;
            // Only a stateless server answers with the codes the specification reserves: proof of its era.
            if (!(error instanceof ProtocolError && isSpecReservedError(error.code))) break;
            const supported = supportedOf(error);
            if (supported.includes(STATELESS_REVISION) && attempt === 0) continue;
            // A server that names 2025-era revisions only takes the handshake; one that names neither, nothing.
            if (supported.some(version => (INITIALIZE_REVISIONS as readonly string[]).includes(version))) break;
            throw new UpstreamWireError(`the upstream speaks a stateless revision other than ${STATELESS_REVISION}`, 'request_failed');
        }
    }
    // Anything else, a result that is no DiscoverResult included (a 2025-era server answering every method), is the
    // 2025 era's answer.
    client.setRequestMeta(undefined);
    client.transport.setProtocolVersion?.(undefined);
    return undefined;
}

/** The versions an UnsupportedProtocolVersionError lists (untrusted: strings only, at most 32). */
function supportedOf(error: ProtocolError): string[] {
    const supported = (error.data as { supported?: unknown } | undefined)?.supported;
    return Array.isArray(supported) ? supported.slice(0, 32).filter((version): version is string => typeof version === 'string') : [];
}

function isImplementation(value: unknown): value is Implementation {
    return typeof value === 'object' && value !== null && typeof (value as Implementation).name === 'string' && typeof (value as Implementation).version === 'string';
}

async function initialize(client: RpcClient, clientInfo: Implementation, timeoutMs: number): Promise<ServerProfile> {
    const result = await client.request('initialize', { protocolVersion: INITIALIZE_REVISIONS[0], capabilities: {}, clientInfo }, isInitializeResult, { timeoutMs });
    const { protocolVersion, capabilities, serverInfo } = result;
    if (!(INITIALIZE_REVISIONS as readonly string[]).includes(protocolVersion)) throw new UpstreamWireError('unsupported protocol version', 'request_failed');
    client.transport.setProtocolVersion?.(protocolVersion);
    await client.notify('notifications/initialized');
    return { protocolVersion, capabilities, serverInfo };
}
