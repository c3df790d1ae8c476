/**
 * The era and revision of an inbound message, decided once, the same way for
 * both downstream transports (HTTP adds what its headers say). The body decides
 * (2026-07-28 versioning): a message whose `_meta` claims a protocol version,
 * well-formed or not, is of the stateless era whatever the session says, and
 * `initialize` is the handshake whatever its `_meta`; over HTTP a
 * `MCP-Protocol-Version` header naming a stateless revision makes the request
 * stateless too (without a claim in the body it is then refused as one). A
 * stateless message is checked in the revision's order: a response is refused;
 * `_meta` without a version; the mirrored headers against the body (HTTP
 * only); an unsupported version; malformed `_meta`. A handshake-era message
 * over HTTP needs a header naming a revision the gateway speaks, or none.
 *
 * Pure: the transport has framed the body and checked every message's envelope
 * (its refusals come first); whether the method is served is the dispatcher's.
 */
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/client';
import { refusal, unsupportedVersion, type Refusal } from './errors.js';
import { headerMismatch, type MirroredHeaders } from './headers.js';
import { claimedVersion, claimsVersion, readStatelessMeta, type StatelessMeta } from './meta.js';
import { LATEST_STATELESS, revisionOf, type Revision } from './revisions.js';

export interface InboundContext {
    /** The revision of the session the message came on: HTTP's by `Mcp-Session-Id`, stdio's channel's; none without. */
    session?: Revision | undefined;
    /** HTTP only: what the request's headers mirror of its body. */
    headers?: MirroredHeaders | undefined;
}

/** A message of the stateless era, its checks passed (a request or a notification): its row and what its `_meta` says. */
export interface Stateless {
    era: 'stateless';
    message: JSONRPCRequest | JSONRPCNotification;
    revision: Revision;
    meta: StatelessMeta;
}

/** A message of the handshake era: served in the session (an `initialize` opens one); none yet without a session. */
export interface Handshake {
    era: 'handshake';
    revision: Revision | undefined;
}

export type ClassifyRefusalReason = 'invalid_message' | 'invalid_request_meta' | 'header_mismatch' | 'unsupported_protocol_version';

/** Why the message is refused before it is served: the same JSON-RPC error on both transports (HTTP adds a status). */
export type ClassifyRefusal = Refusal<ClassifyRefusalReason>;

export type Classified = Stateless | Handshake | ClassifyRefusal;

/**
 * A response in a stateless (2026-07-28) message: the gateway asks those clients through `input_required` and their
 * retry, never with a request, so no response of theirs answers anything. (A 2025 session's responses answer the
 * gateway's own requests for input.)
 */
const UNASKED_RESPONSE = 'Invalid Request: a 2026-07-28 client is asked for input through input_required, never with a request, so it sends no responses';

/** A version (a header's) that names a revision of the stateless era. */
export function namesStatelessRevision(version: string | undefined): boolean {
    return version !== undefined && revisionOf(version)?.era === 'stateless';
}

/**
 * Whether a lone message claims the stateless era in its body: its `_meta` names a protocol version (any value) and it
 * is no `initialize`. A batch never does.
 */
export function claimsStateless(value: unknown): boolean {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
    const message = value as { method?: unknown; params?: unknown };
    return message.method !== 'initialize' && claimsVersion(message.params);
}

/** The era of a framed body (a lone message or a batch's valid ones), its revision, or why it is refused. */
export function classify(body: JSONRPCMessage | JSONRPCMessage[], context: InboundContext): Classified {
    const header = context.headers?.protocolVersion;
    if (!Array.isArray(body) && (namesStatelessRevision(header) || claimsStateless(body))) return classifyStateless(body, context.headers);
    if (header !== undefined && revisionOf(header) === undefined) {
        const id = (!Array.isArray(body) && 'id' in body ? body.id : undefined) ?? null;
        return { reason: 'unsupported_protocol_version', id, error: unsupportedVersion(header, 'header') };
    }
    return { era: 'handshake', revision: context.session };
}

function classifyStateless(message: JSONRPCMessage, headers: MirroredHeaders | undefined): Stateless | ClassifyRefusal {
    if (!('method' in message)) return refusal('invalid_message', null, { message: UNASKED_RESPONSE });
    const id = 'id' in message ? message.id : null;
    const requested = claimedVersion(message.params);
    if (requested === undefined) return refusal('invalid_request_meta', id);
    const revision = revisionOf(requested);
    // Headers against the body first: a version the two disagree on is a mismatch, whether supported or not (one the
    // gateway does not know is held to the newest stateless revision's rules).
    const mismatch = headers !== undefined && (revision ?? LATEST_STATELESS).mirroredHeaders ? headerMismatch(headers, message.method, message.params, requested) : undefined;
    if (mismatch !== undefined) return refusal('header_mismatch', id, { message: mismatch });
    if (revision?.era !== 'stateless') return { reason: 'unsupported_protocol_version', id, error: unsupportedVersion(requested, 'body') };
    const meta = readStatelessMeta(message.params);
    if (meta === undefined) return refusal('invalid_request_meta', id);
    return { era: 'stateless', message, revision, meta };
}
