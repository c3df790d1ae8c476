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
