/**
 * The error codes the gateway's rules depend on, and which of an upstream's
 * errors reach the client as they are. An upstream's error about the client's
 * request (its arguments, a capability the client did not declare, something
 * that does not exist) is the client's to see, with its code and message; one
 * about the gateway's own request or the upstream's own failure is not: the
 * client gets -32603, as for the gateway's own failures. What passes is
 * bounded: the message cut, `data` dropped but for -32021's required
 * capabilities, checked.
 */
import { isRecord } from '../lib/is-record.js';
import { SUPPORTED_VERSIONS } from './revisions.js';

/** Every JSON-RPC error code the gateway sends or reads: the one place they are written. */
export const CODE = {
    parseError: -32700,
    invalidRequest: -32600,
    methodNotFound: -32601,
    invalidParams: -32602,
    internalError: -32603,
    /** JSON-RPC's implementation-defined server error: the gateway's refusals that are about HTTP, not the message. */
    serverError: -32000,
    /** The Streamable HTTP session id names no session (the SDK's code). */
    sessionNotFound: -32001,
    /** 2025 revisions only: 2026-07-28 says -32602 for a resource that does not exist, and MUST NOT emit -32002. */
    resourceNotFound: -32002,
    /** 2026-07-28: the HTTP headers do not mirror the body (the SDK's enum has no name for it). */
    headerMismatch: -32020,
    missingClientCapability: -32021,
    /** 2026-07-28: UnsupportedProtocolVersionError, `data: { supported, requested }`. */
    unsupportedVersion: -32022
} as const;

export interface RpcError {
    code: number;
    message: string;
    data?: unknown;
}

/** The longest message of an upstream's a client is shown, in characters. */
export const MAX_UPSTREAM_MESSAGE_CHARS = 512;
/** The most of -32021's required capabilities passed on, as JSON. */
const MAX_REQUIRED_CAPABILITIES_BYTES = 4096;
/** What a client may be asked to declare (ClientCapabilities, 2026-07-28): the keys -32021's data may name. */
const CLIENT_CAPABILITY_KEYS = new Set(['elicitation', 'sampling', 'roots', 'experimental', 'extensions', 'tasks']);

/** The codes JSON-RPC 2.0 reserves (-32768..-32000): the protocol's, not an application's. */
function isReservedCode(code: number): boolean {
    return code >= -32768 && code <= -32000;
}

/**
 * Whether an upstream's error is about the client's request: -32602, -32021, -32002, and an application's own codes.
 * Everything else (-32600, -32601, -32603, -32700: the gateway's request or the upstream's fault; -32020 and -32022:
 * the gateway's wire; -32042, which no revision lets reach a 2026-07-28 upstream's client; the legacy server errors)
 * is the upstream failing.
 */
export function upstreamErrorPasses(code: number): boolean {
    if (!Number.isSafeInteger(code)) return false;
    return code === CODE.invalidParams || code === CODE.missingClientCapability || code === CODE.resourceNotFound || !isReservedCode(code);
}

/** An upstream's error as it may reach a client: the first line of its message, cut; only -32021's data, checked. */
export function boundedUpstreamError(code: number, message: string, data: unknown): RpcError {
    const requiredCapabilities = code === CODE.missingClientCapability ? checkedRequiredCapabilities(data) : undefined;
    return { code, message: cut(message), ...(requiredCapabilities === undefined ? {} : { data: { requiredCapabilities } }) };
}

function cut(message: string): string {
    const line = message.split('\n', 1)[0] ?? '';
    // Characters, not UTF-16 units: a cut never splits a surrogate pair.
    return line.length <= MAX_UPSTREAM_MESSAGE_CHARS ? line : [...line.slice(0, 2 * MAX_UPSTREAM_MESSAGE_CHARS)].slice(0, MAX_UPSTREAM_MESSAGE_CHARS).join('');
}

/** -32021's `data.requiredCapabilities`: capability keys with object values, small; undefined when it is not that. */
function checkedRequiredCapabilities(data: unknown): Record<string, unknown> | undefined {
    const required = isRecord(data) ? data.requiredCapabilities : undefined;
    if (!isRecord(required)) return undefined;
    const entries = Object.entries(required).filter(([key, value]) => CLIENT_CAPABILITY_KEYS.has(key) && isRecord(value));
    if (entries.length === 0) return undefined;
    const checked = Object.fromEntries(entries);
    return Buffer.byteLength(JSON.stringify(checked)) <= MAX_REQUIRED_CAPABILITIES_BYTES ? checked : undefined;
}

/** An error as a client of the given era may receive it: a stateless (2026-07-28) client never gets -32002. */
export function errorForClient(error: RpcError, stateless: boolean): RpcError {
    return stateless && error.code === CODE.resourceNotFound ? { ...error, code: CODE.invalidParams } : error;
}

/**
 * UnsupportedProtocolVersionError (2026-07-28; for either era's request). `requested` is the client's own. Named back
 * as it was when it came in the body (`_meta`: JSON in JSON, cut to 64 characters); from a header only when shaped
 * like a version (a date), as the gateway repeats no header value it did not choose.
 */
export function unsupportedVersion(requested: string, from: 'body' | 'header'): RpcError & { data: { supported: string[]; requested: string } } {
    const named = from === 'body' ? requested.slice(0, 64) : /^\d{4}-\d{2}-\d{2}$/.test(requested) ? requested : '';
    return { code: CODE.unsupportedVersion, message: 'Unsupported protocol version', data: { supported: [...SUPPORTED_VERSIONS], requested: named } };
}

/** The most versions read from an UnsupportedProtocolVersionError's `data.supported`. */
const MAX_SUPPORTED_VERSIONS = 32;

/** The versions an UnsupportedProtocolVersionError (-32022) lists, as a server sent them (untrusted: strings only, bounded). */
export function supportedVersionsOf(data: unknown): string[] {
    const supported = isRecord(data) ? data.supported : undefined;
    return Array.isArray(supported) ? supported.slice(0, MAX_SUPPORTED_VERSIONS).filter((version): version is string => typeof version === 'string') : [];
}
