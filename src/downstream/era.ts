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
import { decodeHeaderValue } from '../lib/header-value.js';
import { isRecord } from '../lib/is-record.js';
import { META } from '../protocol/meta.js';
import { revisionOf } from '../protocol/revisions.js';

export { claimedVersion, claimsVersion, readStatelessMeta as modernMetaOf } from '../protocol/meta.js';
export { unsupportedVersion as unsupportedVersionError } from '../protocol/errors.js';
export { SUPPORTED_VERSIONS } from '../protocol/revisions.js';
export const META_KEYS = META;

/** A version the gateway serves in the stateless era. */
export function isModernVersion(version: string | undefined): boolean {
    return version !== undefined && revisionOf(version)?.era === 'stateless';
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
