/**
 * What the gateway asks of any upstream, whatever serves its prompts: an MCP
 * server it connects to (connection.ts) or a folder of prompt files
 * (files/files-upstream.ts). The pool starts, replaces and closes them; the
 * catalog reads them through its port (../catalog/upstream-port.ts, which this
 * satisfies by shape); health checks, metrics and the dashboard read their
 * state, load and last error.
 */
import type { CompleteRequest, CompleteResult, GetPromptResult } from '@modelcontextprotocol/client';
import type { UpstreamConfig } from '../config/schema.js';
import type { Bus } from '../lib/bus.js';
import type { FaultKind } from '../diagnostics/faults.js';
import type { CallControl, Continuation, InputRequired } from '../catalog/upstream-port.js';
import type { Collected } from './pages.js';
import type { UpstreamPrompt } from './prompt-bounds.js';
import type { TraceContext } from '../protocol/meta.js';

export type UpstreamState = 'idle' | 'connecting' | 'ready' | 'down' | 'closed';

export type UpstreamEvent =
    | { type: 'state'; upstreamId: string; state: UpstreamState; previous: UpstreamState }
    /** `trace`: the span of the upstream's notification (tracing on), which the client notifications it causes link to. */
    | { type: 'prompts-changed'; upstreamId: string; trace?: TraceContext | undefined }
    /** Whether it announces its changes (`announcesChanges`) changed while connected. */
    | { type: 'announcing'; upstreamId: string };

/** A problem that leaves an upstream serving, with one of its prompts left out (a prompt file with an error). */
export interface UpstreamProblem {
    /** Where: a prompt file's path, relative to the upstream's folder. */
    source: string;
    line?: number | undefined;
    message: string;
    /** Served as written, with something its author should hear of (a tool's shell or file marker); absent: left out. */
    warning?: true | undefined;
}

/** An upstream's whole list, with how long it says the list holds (a 2026-07-28 upstream's `ttlMs`), if it says. */
export interface UpstreamListing extends Collected<UpstreamPrompt> {
    ttlMs?: number | undefined;
    /** The CLIENT spans of the calls that read it (tracing on), at most MAX_SPAN_LINKS: what requests that waited for it link to. */
    traces?: readonly TraceContext[] | undefined;
}

export interface GatewayUpstream {
    readonly id: string;
    readonly config: UpstreamConfig;
    readonly events: Bus<UpstreamEvent>;
    readonly state: UpstreamState;
    /** Why it is down, or what it left out; shown in /healthz and on the dashboard. */
    readonly lastError: string | undefined;
    /** Each prompt left out and why; empty for a connection, whose prompts over the limits are counted as faults. */
    readonly problems: readonly UpstreamProblem[];
    /** Whether the first attempt to become ready has finished, successfully or not. */
    readonly attempted: boolean;
    readonly load: { active: number; queued: number };
    readonly offersCompletions: boolean;
    /** Whether it tells of every change to its list; if not, the catalog reads it again on a schedule. */
    readonly announcesChanges: boolean;
    /** Resolves after the first attempt, whatever its outcome. */
    start(): Promise<void>;
    close(): Promise<void>;
    listPrompts(): Promise<UpstreamListing>;
    getPrompt(name: string, args: Record<string, string> | undefined, control?: CallControl, continuation?: Continuation): Promise<GetPromptResult | InputRequired>;
    complete(params: CompleteRequest['params'], control?: CallControl): Promise<CompleteResult | undefined>;
    reportFault(kind: FaultKind, message: string, details?: Record<string, unknown>): void;
}
