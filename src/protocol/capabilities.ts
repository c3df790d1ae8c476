/**
 * What a stateless (2026-07-28) upstream is told its client can do, in `_meta`: what the client the request serves
 * can answer through the gateway, of elicitation, sampling and roots; `experimental` and `extensions` never (the
 * gateway cannot carry back what it does not understand, tasks results for one).
 *
 * - A 2026-07-28 client answers an upstream's `input_required` itself, through the gateway: its `elicitation`,
 *   `sampling` and `roots` are relayed as it sent them (sub-settings such as `elicitation.form.applyDefaults`
 *   included), from its request's `_meta` (`relayedClient`).
 * - A 2025 session is asked on the stream of its own request (protocol/input-requests.ts): it is relayed what it
 *   declared at initialize, as its sealed session keeps it (`relayedSession`: the features of capabilityBits, not
 *   free-form sub-settings).
 */
import { isRecord } from '../lib/is-record.js';
import { capabilitiesOfBits } from './input-requests.js';

/** What an upstream call carries of the client it serves. */
export interface RelayedClient {
    /** Its capabilities as a stateless upstream is told them, in `_meta` (`io.modelcontextprotocol/clientCapabilities`). */
    readonly capabilities: Readonly<Record<string, unknown>>;
}

const RELAYABLE = ['elicitation', 'sampling', 'roots'] as const;

/** A client that declared nothing the gateway relays (or internal calls, which no client answers): one shared value. */
export const NO_RELAYED_CAPABILITIES: RelayedClient = Object.freeze({ capabilities: Object.freeze({}) });

/** The relayed part of `declared` (a 2026-07-28 request's `clientCapabilities`): records only, other keys dropped. */
export function relayedClient(declared: unknown): RelayedClient {
    if (!isRecord(declared)) return NO_RELAYED_CAPABILITIES;
    const capabilities: Record<string, unknown> = {};
    for (const key of RELAYABLE) if (isRecord(declared[key])) capabilities[key] = declared[key];
    return Object.keys(capabilities).length === 0 ? NO_RELAYED_CAPABILITIES : { capabilities };
}

/** Each session's relayed capabilities, by its sealed bits: built once, shared (as capabilitiesOfBits' values). */
const BY_BITS = new Map<object, RelayedClient>();

/** What a 2025 session is relayed: the input capabilities its sealed bits stand for (capabilityBits). */
export function relayedSession(bits: number): RelayedClient {
    const capabilities = capabilitiesOfBits(bits);
    let relayed = BY_BITS.get(capabilities);
    if (relayed === undefined) {
        relayed = Object.keys(capabilities).length === 0 ? NO_RELAYED_CAPABILITIES : Object.freeze({ capabilities });
        BY_BITS.set(capabilities, relayed);
    }
    return relayed;
}
