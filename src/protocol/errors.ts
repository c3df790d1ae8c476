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
import { describeNeed, requiredCapabilities, type InputAnswer, type InputNeed } from './input-requests.js';
import { OVERSIZED_ID_MESSAGE, type RequestId } from './json-rpc.js';
import { META } from './meta.js';
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

/** JSON-RPC 2.0's reserved range: the protocol's codes, not an application's. */
const JSON_RPC_RESERVED = { lowest: -32768, highest: -32000 } as const;
/** The part of it MCP reserves for the specification's own errors from 2026-07-28 on. */
const SPEC_RESERVED = { lowest: -32099, highest: CODE.headerMismatch } as const;

export interface RpcError {
    code: number;
    message: string;
    data?: unknown;
}

/**
 * Every way the gateway refuses a client's message before serving it, and the JSON-RPC error that answers it: the one
 * table both transports answer from, so the same message gets the same error over each (HTTP adds its status and its
 * own refusals, http-server/rejections.ts). The names are the labels HTTP counts its refusals under. A message here is
 * the default: a refusal may name what exactly is wrong instead (the depth bound, the envelope's fault, the header).
 */
export const REFUSALS = {
    /** Text that is not JSON, or bytes that are not UTF-8. */
    parse_error: { code: CODE.parseError, message: 'Parse error: invalid JSON' },
    /** Over the transport's size bound (an HTTP body, a stdio line). */
    body_too_large: { code: CODE.invalidRequest, message: 'Request body too large' },
    too_deep: { code: CODE.invalidRequest, message: 'Invalid Request: nested too deep' },
    batch_refused: { code: CODE.invalidRequest, message: 'Invalid Request: batch not accepted' },
    /** JSON that parsed but is no valid message (JSON-RPC 2.0 §5: -32600, not a parse error). */
    invalid_message: { code: CODE.invalidRequest, message: 'Invalid Request' },
    id_too_long: { code: CODE.invalidRequest, message: OVERSIZED_ID_MESSAGE },
    /** A request whose params are not an object. */
    invalid_params: { code: CODE.invalidParams, message: 'Invalid params' },
    /** 2026-07-28: a request whose _meta lacks what every request carries (checked before its method is looked at). */
    invalid_request_meta: { code: CODE.invalidParams, message: `Invalid params: _meta must carry ${META.protocolVersion} and ${META.clientCapabilities}` },
    header_mismatch: { code: CODE.headerMismatch, message: 'Header mismatch' },
    /** The revision's UnsupportedProtocolVersionError, whichever era asks; its data lists the supported versions. */
    unsupported_protocol_version: { code: CODE.unsupportedVersion, message: 'Unsupported protocol version' },
    unknown_method: { code: CODE.methodNotFound, message: 'Method not found' },
    already_initialized: { code: CODE.invalidRequest, message: 'Invalid Request: Server already initialized' },
    /** subscriptions/listen with a filter the gateway does not honour. */
    invalid_filter: { code: CODE.invalidParams, message: 'Invalid params for subscriptions/listen' },
    duplicate_id: { code: CODE.invalidRequest, message: 'Invalid Request: id already in use by a request in flight' },
    too_many_subscriptions: { code: CODE.serverError, message: 'Too many subscriptions; try again later' },
    client_subscription_limit: { code: CODE.serverError, message: 'Too many subscriptions for this client; close unused ones' },
    shutting_down: { code: CODE.serverError, message: 'Gateway is shutting down; try again later' }
} as const satisfies Record<string, RpcError>;

export type RefusalReason = keyof typeof REFUSALS;

/** A message refused: why, the id to answer it under (null when none can be read), and the error answering it. */
export interface Refusal<R extends RefusalReason = RefusalReason> {
    reason: R;
    id: RequestId | null;
    error: RpcError;
}

/** What replaces the table's default: a message naming what exactly is wrong, and the error's data. */
export interface RefusalDetail {
    message?: string | undefined;
    data?: unknown;
}

/** The reason's error: its code always the table's. */
export function refusalError(reason: RefusalReason, detail: RefusalDetail = {}): RpcError {
    const { code, message } = REFUSALS[reason];
    return { code, message: detail.message ?? message, ...(detail.data === undefined ? {} : { data: detail.data }) };
}

export function refusal<R extends RefusalReason>(reason: R, id: RequestId | null, detail?: RefusalDetail): Refusal<R> {
    return { reason, id, error: refusalError(reason, detail) };
}

/** The longest message of an upstream's a client is shown, in characters. */
export const MAX_UPSTREAM_MESSAGE_CHARS = 512;
/** The most of -32021's required capabilities passed on, as JSON. */
const MAX_REQUIRED_CAPABILITIES_BYTES = 4096;
/** What a client may be asked to declare (ClientCapabilities, 2026-07-28): the keys -32021's data may name. */
const CLIENT_CAPABILITY_KEYS = new Set(['elicitation', 'sampling', 'roots', 'experimental', 'extensions', 'tasks']);

/** The codes the MCP specification reserves for itself from 2026-07-28 on (-32099..-32020): only a stateless server sends them. */
export function isSpecReservedError(code: number): boolean {
    return code >= SPEC_RESERVED.lowest && code <= SPEC_RESERVED.highest;
}

/** The codes JSON-RPC 2.0 reserves (-32768..-32000): the protocol's, not an application's. */
function isReservedCode(code: number): boolean {
    return code >= JSON_RPC_RESERVED.lowest && code <= JSON_RPC_RESERVED.highest;
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

/**
 * An upstream's error as it may reach a client: the first line of its message, cut; only -32021's data, checked.
 * -32021 is told in the gateway's own words, built from that data (the upstream's text never passes): the same words
 * as the gateway's own refusal (missingCapabilityError), whoever found the capability missing.
 */
export function boundedUpstreamError(code: number, message: string, data: unknown): RpcError {
    if (code !== CODE.missingClientCapability) return { code, message: cut(message) };
    const requiredCapabilities = checkedRequiredCapabilities(data);
    if (requiredCapabilities === undefined) return { code, message: 'The upstream asks for a capability this client did not declare' };
    return { code, message: `The upstream asks for ${describeRequired(requiredCapabilities)}, which this client did not declare`, data: { requiredCapabilities } };
}

/** The features of a capability that describeNeed names. */
const NEED_FEATURES = { elicitation: ['form', 'url'], sampling: ['tools', 'context'] } as const;

/** Checked required capabilities in words: "elicitation (url mode)", "sampling with tools and roots". */
function describeRequired(required: Record<string, unknown>): string {
    const names = Object.entries(required).flatMap(([capability, value]) => {
        if (capability !== 'elicitation' && capability !== 'sampling') return [capability];
        const features = NEED_FEATURES[capability].filter(feature => Object.hasOwn(value as object, feature));
        return features.length === 0 ? [describeNeed({ capability })] : features.map(feature => describeNeed({ capability, feature }));
    });
    return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
}

function cut(message: string, max = MAX_UPSTREAM_MESSAGE_CHARS): string {
    const line = message.split('\n', 1)[0] ?? '';
    // Characters, not UTF-16 units: a cut never splits a surrogate pair.
    return line.length <= max ? line : [...line.slice(0, 2 * max)].slice(0, max).join('');
}

/** The longest message of a client's error answer to an input request passed on, in characters. */
export const MAX_ANSWER_MESSAGE_CHARS = 256;

/**
 * A client's error answer to an input request (a JSON-RPC error object) as it may travel on to the upstream that
 * asked: its code, the first line of its message, cut; no `data`. Undefined when it is no error object.
 */
export function readAnswerError(error: unknown): InputAnswer | undefined {
    if (!isRecord(error) || !Number.isSafeInteger(error.code) || typeof error.message !== 'string') return undefined;
    return { error: { code: error.code as number, message: cut(error.message, MAX_ANSWER_MESSAGE_CHARS) } };
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

/** -32021 for a request the client did not declare it can answer: the gateway's words, in either era. */
export function missingCapabilityError(need: InputNeed): RpcError & { data: { requiredCapabilities: Record<string, unknown> } } {
    return { code: CODE.missingClientCapability, message: `The upstream asks for ${describeNeed(need)}, which this client did not declare`, data: requiredCapabilities(need) };
}

/** A request the client's revision cannot carry as it is (`forRevision`'s `cannot`): the gateway cannot put it to it. */
export function cannotCarryError(cannot: string): RpcError {
    return { code: CODE.internalError, message: `The upstream asks for ${cannot}` };
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
    return { ...REFUSALS.unsupported_protocol_version, data: { supported: [...SUPPORTED_VERSIONS], requested: named } };
}

/** The most versions read from an UnsupportedProtocolVersionError's `data.supported`. */
const MAX_SUPPORTED_VERSIONS = 32;

/** The versions an UnsupportedProtocolVersionError (-32022) lists, as a server sent them (untrusted: strings only, bounded). */
export function supportedVersionsOf(data: unknown): string[] {
    const supported = isRecord(data) ? data.supported : undefined;
    return Array.isArray(supported) ? supported.slice(0, MAX_SUPPORTED_VERSIONS).filter((version): version is string => typeof version === 'string') : [];
}
