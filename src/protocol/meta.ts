/**
 * The `_meta` keys the protocol reserves (the SDK's names for them), and the
 * reading of a stateless request's own: its revision, client capabilities and
 * client info. Pure: both sides call it with what they read.
 */
import {
    BAGGAGE_META_KEY,
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    SUBSCRIPTION_ID_META_KEY,
    TRACEPARENT_META_KEY,
    TRACESTATE_META_KEY,
    type Implementation
} from '@modelcontextprotocol/client';
import { isRecord } from '../lib/is-record.js';
import type { Revision } from './revisions.js';

export const META = {
    protocolVersion: PROTOCOL_VERSION_META_KEY,
    clientInfo: CLIENT_INFO_META_KEY,
    clientCapabilities: CLIENT_CAPABILITIES_META_KEY,
    serverInfo: SERVER_INFO_META_KEY,
    subscriptionId: SUBSCRIPTION_ID_META_KEY,
    logLevel: LOG_LEVEL_META_KEY,
    /** W3C trace context, reserved by 2026-07-28 (basic/index): carried as they came, never set by the gateway. */
    traceparent: TRACEPARENT_META_KEY,
    tracestate: TRACESTATE_META_KEY,
    baggage: BAGGAGE_META_KEY
} as const;

/** What a stateless request's `_meta` says of its client. */
export interface StatelessMeta {
    protocolVersion: string;
    clientCapabilities: Record<string, unknown>;
    clientInfo?: { name: string; version: string } | undefined;
}

/** A request's `_meta` object, if it has one. */
function metaOf(params: unknown): Record<string, unknown> | undefined {
    if (!isRecord(params)) return undefined;
    const meta = params._meta;
    return isRecord(meta) ? meta : undefined;
}

/** The version a request's `_meta` names, if any (whatever it is: supported or not is the caller's question). */
export function claimedVersion(params: unknown): string | undefined {
    const version = metaOf(params)?.[META.protocolVersion];
    return typeof version === 'string' ? version : undefined;
}

/**
 * Whether a request's `_meta` claims a protocol version, well-formed or not: such a request is of the stateless
 * era, and one whose claim is no string is refused (-32602) as one, never served in a session instead.
 */
export function claimsVersion(params: unknown): boolean {
    return metaOf(params)?.[META.protocolVersion] !== undefined;
}

/** The request metadata of a stateless request; undefined when it names no version or its fields are malformed. */
export function readStatelessMeta(params: unknown): StatelessMeta | undefined {
    const meta = metaOf(params);
    const protocolVersion = meta?.[META.protocolVersion];
    if (meta === undefined || typeof protocolVersion !== 'string') return undefined;
    // Required: what the client can do is part of every request (a missing one is -32602, as a malformed one).
    const capabilities = meta[META.clientCapabilities];
    if (!isRecord(capabilities)) return undefined;
    const info = meta[META.clientInfo];
    if (info !== undefined && !isImplementation(info)) return undefined;
    return { protocolVersion, clientCapabilities: capabilities, clientInfo: info === undefined ? undefined : { name: info.name, version: info.version } };
}

/**
 * What a request to a stateless upstream names in `_meta`: the revision, the gateway as the client, and what its own
 * client can do (as relayed); undefined for a handshake-era upstream, told all of it at initialize.
 */
export function upstreamRequestMeta(revision: Revision, clientInfo: Implementation, capabilities: Readonly<Record<string, unknown>>): Record<string, unknown> | undefined {
    if (revision.era !== 'stateless') return undefined;
    return { [META.protocolVersion]: revision.version, [META.clientInfo]: clientInfo, [META.clientCapabilities]: capabilities };
}

/** The server info a stateless result names in `_meta`, if well-formed. */
export function serverInfoOf(result: { _meta?: Record<string, unknown> | undefined }): Implementation | undefined {
    const info = result._meta?.[META.serverInfo];
    return isImplementation(info) ? info : undefined;
}

function isImplementation(value: unknown): value is Implementation {
    return isRecord(value) && typeof value.name === 'string' && typeof value.version === 'string';
}

/**
 * A request's W3C trace context (2026-07-28 `_meta`, or the HTTP request's headers), each value checked: a
 * `traceparent` of version 00 with non-zero ids; `tracestate` (at most 512 characters, 32 members) and `baggage` (at
 * most 8192 bytes) only along with it. Forwarded as it came; the gateway never builds one from parts.
 */
export interface TraceContext {
    traceparent: string;
    /** The trace id `traceparent` names, kept as it was read (a usage event names it with tracing off). */
    traceId: string;
    /** Whether `traceparent`'s flags say its caller recorded the trace (flag 01): only such a trace is worth an exemplar. */
    sampled: boolean;
    tracestate?: string | undefined;
    baggage?: string | undefined;
}

/** version 00: trace id, parent id, flags; lower-case hex (W3C Trace Context §3.2). */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);
/** W3C Trace Context §3.3: a key (simple or `tenant@system`), `=`, a value of printable ASCII but `,` and `=`. */
const TRACESTATE_MEMBER =
    /^(?:[a-z0-9][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const TRACESTATE_MAX_CHARS = 512;
const TRACESTATE_MAX_MEMBERS = 32;
/** W3C Baggage §3.3.1: at most 8192 bytes in all; printable ASCII without controls (values are percent-encoded). */
const BAGGAGE_MAX_BYTES = 8192;
const BAGGAGE_TEXT = /^[\x20-\x7e\t]*$/;

/** The trace id and parent span id of a valid `traceparent`, and whether its caller sampled it (flag 01: recorded). */
export function traceparentIds(traceparent: string): { traceId: string; spanId: string; sampled: boolean } | undefined {
    const match = TRACEPARENT.exec(traceparent);
    if (match === null || match[1] === ZERO_TRACE_ID || match[2] === ZERO_SPAN_ID) return undefined;
    return { traceId: match[1]!, spanId: match[2]!, sampled: (Number.parseInt(match[3]!, 16) & 1) === 1 };
}

/**
 * The trace context of three values as they came (from `_meta` or headers; anything but strings is no value):
 * undefined without a valid `traceparent`; a `tracestate` or `baggage` that breaks its rules is dropped alone.
 */
export function traceContextOf(traceparent: unknown, tracestate: unknown, baggage: unknown): TraceContext | undefined {
    if (typeof traceparent !== 'string') return undefined;
    const ids = traceparentIds(traceparent);
    if (ids === undefined) return undefined;
    const context: TraceContext = { traceparent, traceId: ids.traceId, sampled: ids.sampled };
    if (typeof tracestate === 'string' && isTracestate(tracestate)) context.tracestate = tracestate;
    if (typeof baggage === 'string' && isBaggage(baggage)) context.baggage = baggage;
    return context;
}

/** The trace context a request's `_meta` carries, if valid. */
export function requestTraceContext(params: unknown): TraceContext | undefined {
    const meta = metaOf(params);
    if (meta === undefined) return undefined;
    return traceContextOf(meta[META.traceparent], meta[META.tracestate], meta[META.baggage]);
}

/** The `_meta` entries (or HTTP headers: the same names) that carry a trace context on. */
export function traceEntries(trace: TraceContext): Record<string, string> {
    const entries: Record<string, string> = { [META.traceparent]: trace.traceparent };
    if (trace.tracestate !== undefined) entries[META.tracestate] = trace.tracestate;
    if (trace.baggage !== undefined) entries[META.baggage] = trace.baggage;
    return entries;
}

function isTracestate(value: string): boolean {
    if (value.length > TRACESTATE_MAX_CHARS) return false;
    const members = value
        .split(',')
        .map(member => member.trim())
        .filter(member => member !== '');
    return members.length > 0 && members.length <= TRACESTATE_MAX_MEMBERS && members.every(member => TRACESTATE_MEMBER.test(member));
}

function isBaggage(value: string): boolean {
    return value !== '' && Buffer.byteLength(value) <= BAGGAGE_MAX_BYTES && BAGGAGE_TEXT.test(value);
}
