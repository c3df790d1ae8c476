/**
 * The stateless revision (2026-07-28 on, "modern"), as far as a request tells
 * it: every request names its protocol version, client info and capabilities
 * in `_meta` (no `initialize`, no session), and over HTTP mirrors its version,
 * method and prompt name in headers, which must match the body. Pure: the
 * transports call it with what they read.
 *
 * A request is modern when its `_meta` names a protocol version; `initialize`
 * (and a request on a session) is the handshake era, as before.
 */
import type { JSONRPCErrorResponse } from '@modelcontextprotocol/client';
import { decodeHeaderValue } from '../lib/header-value.js';
import { isRecord } from '../lib/is-record.js';
import { PROTOCOL_VERSIONS } from './versions.js';

/** The stateless revisions the gateway serves, newest first. */
const MODERN_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];

export const META_KEYS = {
    protocolVersion: 'io.modelcontextprotocol/protocolVersion',
    clientInfo: 'io.modelcontextprotocol/clientInfo',
    clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
    serverInfo: 'io.modelcontextprotocol/serverInfo',
    subscriptionId: 'io.modelcontextprotocol/subscriptionId'
} as const;

/** UnsupportedProtocolVersionError (HeaderMismatch, -32020, is the HTTP side's: src/http-server/rejections.ts). */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** Every revision the gateway serves, for `server/discover` and the unsupported-version error: modern first. */
export const SUPPORTED_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...PROTOCOL_VERSIONS];

export interface ModernMeta {
    protocolVersion: string;
    clientCapabilities: Record<string, unknown>;
    clientInfo?: { name: string; version: string } | undefined;
}

export function isModernVersion(version: string | undefined): boolean {
    return version !== undefined && MODERN_PROTOCOL_VERSIONS.includes(version);
}

/** The version a request's `_meta` names, if any (whatever it is: supported or not is the caller's question). */
export function claimedVersion(params: unknown): string | undefined {
    const meta = metaObject(params);
    const version = meta?.[META_KEYS.protocolVersion];
    return typeof version === 'string' ? version : undefined;
}

/**
 * Whether a request's `_meta` claims a protocol version, well-formed or not: such a request is of the stateless
 * revision, and one whose claim is no string is refused (-32602) as one, never served in a session instead.
 */
export function claimsVersion(params: unknown): boolean {
    return metaObject(params)?.[META_KEYS.protocolVersion] !== undefined;
}

/** The request metadata of a modern request; undefined when it names no version or its fields are malformed. */
export function modernMetaOf(params: unknown): ModernMeta | undefined {
    const meta = metaObject(params);
    const protocolVersion = meta?.[META_KEYS.protocolVersion];
    if (meta === undefined || typeof protocolVersion !== 'string') return undefined;
    // Required: what the client can do is part of every request (a missing one is -32602, as a malformed one).
    const capabilities = meta[META_KEYS.clientCapabilities];
    if (!isRecord(capabilities)) return undefined;
    const info = meta[META_KEYS.clientInfo];
    if (info !== undefined && !(isRecord(info) && typeof info.name === 'string' && typeof info.version === 'string')) return undefined;
    return { protocolVersion, clientCapabilities: capabilities, clientInfo: info === undefined ? undefined : { name: info.name as string, version: info.version as string } };
}

/**
 * `requested` is the client's own. Named back as it was when it came in the body (`_meta`: JSON in JSON, cut to 64
 * characters); from a header only when shaped like a version (a date), as the gateway repeats no header value it did
 * not choose.
 */
export function unsupportedVersionError(requested: string, from: 'body' | 'header'): JSONRPCErrorResponse['error'] & { data: { supported: string[]; requested: string } } {
    const named = from === 'body' ? requested.slice(0, 64) : /^\d{4}-\d{2}-\d{2}$/.test(requested) ? requested : '';
    return { code: UNSUPPORTED_PROTOCOL_VERSION, message: 'Unsupported protocol version', data: { supported: [...SUPPORTED_VERSIONS], requested: named } };
}

/** What an HTTP request mirrors of its body. */
export interface MirroredHeaders {
    protocolVersion: string | undefined;
    method: string | undefined;
    name: string | undefined;
}

/** Methods whose target is mirrored in `Mcp-Name` (the others the gateway serves have none). */
const NAMED_METHODS = new Set(['prompts/get', 'tools/call', 'resources/read']);

/**
 * Why the headers do not match the body (a HeaderMismatch, HTTP 400), or undefined when they do. Messages name the
 * header, never echo values: they are the client's own.
 */
export function headerMismatch(headers: MirroredHeaders, method: string, params: unknown, protocolVersion: string): string | undefined {
    if (headers.protocolVersion === undefined) return 'Header mismatch: MCP-Protocol-Version header is required';
    if (headers.protocolVersion !== protocolVersion) return 'Header mismatch: MCP-Protocol-Version header does not match _meta';
    if (headers.method === undefined) return 'Header mismatch: Mcp-Method header is required';
    if (headers.method !== method) return 'Header mismatch: Mcp-Method header does not match the body';
    if (!NAMED_METHODS.has(method)) return undefined;
    if (headers.name === undefined) return 'Header mismatch: Mcp-Name header is required';
    const name = decodeHeaderValue(headers.name);
    if (name === undefined) return 'Header mismatch: Mcp-Name header is malformed';
    const target = isRecord(params) ? (params.name ?? params.uri) : undefined;
    return name === target ? undefined : 'Header mismatch: Mcp-Name header does not match the body';
}

function metaObject(params: unknown): Record<string, unknown> | undefined {
    if (!isRecord(params)) return undefined;
    const meta = params._meta;
    return isRecord(meta) ? meta : undefined;
}
