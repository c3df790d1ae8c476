/**
 * What a stateless (2026-07-28) upstream is told its client can do: what the
 * gateway's own client declared on that request, limited to what the gateway
 * can carry back. A 2026-07-28 client answers an upstream's `input_required`
 * itself, through the gateway, so its `elicitation`, `sampling` and `roots`
 * are relayed as it sent them; `experimental` and `extensions` are not (the
 * gateway cannot carry back what it does not understand, tasks results for
 * one). A 2025-era session is relayed nothing, whatever its initialize said:
 * the gateway has no way to put an upstream's request to it.
 */
import { isRecord } from '../lib/is-record.js';

/** What an upstream call carries of the client it serves. */
export interface RelayedClient {
    /** Its capabilities as a stateless upstream is told them, in `_meta` (`io.modelcontextprotocol/clientCapabilities`). */
    readonly capabilities: Readonly<Record<string, unknown>>;
}

const RELAYABLE = ['elicitation', 'sampling', 'roots'] as const;

/** A client that declared nothing the gateway relays (also every 2025-era session): one shared value. */
export const NO_RELAYED_CAPABILITIES: RelayedClient = Object.freeze({ capabilities: Object.freeze({}) });

/** The relayed part of `declared` (a 2026-07-28 request's `clientCapabilities`): records only, other keys dropped. */
export function relayedClient(declared: unknown): RelayedClient {
    if (!isRecord(declared)) return NO_RELAYED_CAPABILITIES;
    const capabilities: Record<string, unknown> = {};
    for (const key of RELAYABLE) if (isRecord(declared[key])) capabilities[key] = declared[key];
    return Object.keys(capabilities).length === 0 ? NO_RELAYED_CAPABILITIES : { capabilities };
}
