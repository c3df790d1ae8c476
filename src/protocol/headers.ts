/**
 * The mirrored-header rule of the stateless revision (2026-07-28) over HTTP: a
 * request repeats its version, method and target in headers, which must match
 * its body (HeaderMismatch, -32020, HTTP 400). Pure: HTTP calls it with what it
 * read.
 */
import { decodeHeaderValue } from '../lib/header-value.js';
import { isRecord } from '../lib/is-record.js';

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
