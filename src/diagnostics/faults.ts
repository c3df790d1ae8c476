/**
 * Counts of upstream misbehaviour, by upstream and kind: the numbers behind
 * "is this upstream ill?". Kinds are a closed list so label values stay
 * bounded.
 */
export const FAULT_KINDS = [
    'connect_failed',
    'disconnected',
    'garbage_output',
    'stray_message',
    'invalid_result',
    'oversized_result',
    'oversized_prompt',
    'http_error',
    'timeout',
    'busy',
    'request_failed',
    'list_truncated',
    'list_slow',
    'list_changed_flood',
    'stream_flood',
    /** A 2025 upstream's request for input that cannot be tied to one client request (issue 28): refused to it. */
    'unrelated_request',
    /** More rounds of input than inputRequests.maxRounds for one prompts/get. */
    'input_rounds'
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

export type FaultCounts = Partial<Record<FaultKind, number>>;

export class FaultCounters {
    readonly #counts = new Map<string, Map<FaultKind, number>>();

    record(upstreamId: string, kind: FaultKind): void {
        let counts = this.#counts.get(upstreamId);
        if (counts === undefined) this.#counts.set(upstreamId, (counts = new Map<FaultKind, number>()));
        counts.set(kind, (counts.get(kind) ?? 0) + 1);
    }

    of(upstreamId: string): FaultCounts {
        return Object.fromEntries(this.#counts.get(upstreamId) ?? []);
    }
}
