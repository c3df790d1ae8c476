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
 *
 * A 2025-era server is told at initialize what the gateway can ask its clients
 * for it (relayInputRequests): nothing, or every input capability the gateway
 * relays. What each client declared is checked per request, on the way back.
 */
import { ProtocolError, type Implementation, type ServerCapabilities } from '@modelcontextprotocol/client';
import { isSpecReservedError, supportedVersionsOf } from '../protocol/errors.js';
import { serverInfoOf, upstreamRequestMeta } from '../protocol/meta.js';
import { LATEST_HANDSHAKE, LATEST_STATELESS, revisionOf, type Era, type Revision } from '../protocol/revisions.js';
import { UpstreamWireError } from './errors.js';
import { isDiscoverResult, isInitializeResult } from './result-schemas.js';
import type { RpcClient } from './rpc-client.js';
import type { WireProtocol } from './transports.js';

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

export interface ServerProfile {
    /** The revision both sides speak on this connection, decided once. */
    revision: Revision;
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
    /** The client capabilities a 2025-era server is told at initialize. */
    declared: Readonly<Record<string, unknown>>;
}

/** Settles the connection's era and profile. Throws when the upstream speaks neither era the gateway does. */
export async function negotiate(client: RpcClient, { clientInfo, timeoutMs, wire, known, onEra, declared }: Negotiation): Promise<ServerProfile> {
    if (known === 'handshake') return initialize(client, clientInfo, timeoutMs, declared);
    const discovered = await discover(client, clientInfo, known === 'stateless' ? timeoutMs : probeTimeoutMs(wire, timeoutMs));
    if (discovered !== undefined) {
        onEra('stateless');
        return discovered;
    }
    if (known === 'stateless') throw new UpstreamWireError(`no answer to server/discover (protocol "${LATEST_STATELESS.version}")`, 'request_failed');
    onEra('handshake');
    if (client.closed) throw new ProbeEndedConnection();
    return initialize(client, clientInfo, timeoutMs, declared);
}

/** The profile of a stateless server; undefined when the answer says 2025 era (no result, nor a 2026 error). */
async function discover(client: RpcClient, clientInfo: Implementation, timeoutMs: number): Promise<ServerProfile | undefined> {
    const revision = LATEST_STATELESS;
    client.transport.setRevision?.(revision);
    const meta = upstreamRequestMeta(revision, clientInfo, {});
    // A stateless server that refuses the version while listing it (a transient refusal) is asked once more.
    for (let attempt = 0; ; attempt++) {
        try {
            const result = await client.request('server/discover', undefined, isDiscoverResult, { timeoutMs, meta });
            if (!result.supportedVersions.includes(revision.version)) throw new UpstreamWireError(`the upstream does not speak ${revision.version}`, 'request_failed');
            return { revision, capabilities: result.capabilities, serverInfo: serverInfoOf(result) ?? { name: '(unnamed)', version: '' } };
        } catch (error) {
            if (error instanceof UpstreamWireError) throw error;
            // Only a stateless server answers with the codes the specification reserves: proof of its era.
            if (!(error instanceof ProtocolError && isSpecReservedError(error.code))) break;
            const supported = supportedVersionsOf(error.data);
            if (supported.includes(revision.version) && attempt === 0) continue;
            // A server that names 2025-era revisions only takes the handshake; one that names neither, nothing.
            if (supported.some(version => revisionOf(version)?.era === 'handshake')) break;
            throw new UpstreamWireError(`the upstream speaks a stateless revision other than ${revision.version}`, 'request_failed');
        }
    }
    // Anything else, a result that is no DiscoverResult included (a 2025-era server answering every method), is the
    // 2025 era's answer.
    client.transport.setRevision?.(undefined);
    return undefined;
}

async function initialize(client: RpcClient, clientInfo: Implementation, timeoutMs: number, declared: Readonly<Record<string, unknown>>): Promise<ServerProfile> {
    const result = await client.request('initialize', { protocolVersion: LATEST_HANDSHAKE.version, capabilities: declared, clientInfo }, isInitializeResult, { timeoutMs });
    const { capabilities, serverInfo } = result;
    const revision = revisionOf(result.protocolVersion);
    if (revision?.era !== 'handshake') throw new UpstreamWireError('unsupported protocol version', 'request_failed');
    client.transport.setRevision?.(revision);
    await client.notify('notifications/initialized');
    return { revision, capabilities, serverInfo };
}
