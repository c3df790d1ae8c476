/**
 * What happened to each prompt request, as the service saw it: the one place
 * that knows the owning upstream, the caller and how the request ended.
 * Published on a bus; metrics and the access log listen, the service knows
 * neither.
 */
import { ProtocolError } from '@modelcontextprotocol/client';
import { CODE } from '../protocol/errors.js';
import { ClientInputError, type InteractionPath } from './interaction.js';
import { UpstreamFailedError, UpstreamRejectedError } from './upstream-port.js';
import type { CatalogEntry } from './catalog.js';
import { quote } from './arguments.js';

/** A closed list, so metric label values stay bounded. */
export type Outcome = 'ok' | 'invalid_params' | 'upstream_error' | 'timeout' | 'denied' | 'cancelled';

export type Operation = 'list' | 'get' | 'complete';

export interface UsageEvent {
    operation: Operation;
    /** The id of the client request served (X-Request-Id), for its access-log line; none for the gateway's own. */
    requestId?: string | undefined;
    /** The caller's client id. */
    client: string;
    /** The prompt as found in the catalog; undefined for lists, unknown names and resource completions. */
    entry: CatalogEntry | undefined;
    outcome: Outcome;
    seconds: number;
    /**
     * A get whose upstream asked its client for input: the rounds this client request put to it (interaction.ts): a
     * 2025 client's get all of them, a 2026-07-28 client's one per input_required answer; summed, each round once.
     */
    rounds?: number;
    /** With `rounds`: the row of the table they took. */
    path?: InteractionPath;
    /**
     * The request's trace, for the access log and the metrics' exemplars: the gateway's span when tracing is on,
     * else the caller's `traceparent`'s. `spanId`: the gateway's span, only when recorded. `sampled`: whether a tracing
     * backend holds the trace (the gateway's sampler said so, or with tracing off the caller's flag): only then is it
     * an exemplar; the log names an unsampled trace all the same (logs join the caller's trace either way).
     */
    trace?: { traceId: string; spanId?: string; sampled: boolean };
}

/**
 * Thrown for a name the caller may not use. A hidden prompt gives the very error of a missing one: only the
 * gateway's own records (the `hidden` entry) tell them apart, never the client.
 */
export class UnknownPromptError extends ProtocolError {
    constructor(
        name: string,
        readonly hidden: CatalogEntry | undefined
    ) {
        super(CODE.invalidParams, `Unknown prompt: ${quote(name)}`);
    }
}

/** How a failed request ended, from the error the service met (before it becomes a JSON-RPC error). */
export function outcomeOf(error: unknown): Outcome {
    if (error instanceof UnknownPromptError) return error.hidden === undefined ? 'invalid_params' : 'denied';
    // The client did not answer (in time, or at all), or answered with an error: not the upstream's doing.
    if (error instanceof ClientInputError) return error.outcome === 'failed' ? 'upstream_error' : error.outcome;
    // A refusal (CODE.missingClientCapability: the client did not declare what the upstream asks) is about the client's request.
    if (error instanceof UpstreamRejectedError) return 'invalid_params';
    if (error instanceof UpstreamFailedError) {
        if (error.fault === 'timeout') return 'timeout';
        return error.reason === 'cancelled' ? 'cancelled' : 'upstream_error';
    }
    if (error instanceof ProtocolError && error.code === CODE.invalidParams) return 'invalid_params';
    return 'upstream_error';
}
