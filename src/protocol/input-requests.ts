/**
 * Requests for input on a prompt's way (elicitation, sampling, roots), in every era: the one currency every path of
 * the gateway trades in, and the rules of each revision for it. A 2026-07-28 upstream asks in an `input_required`
 * result (`inputRequests`, each `{method, params}` without a JSON-RPC envelope); a 2025 upstream sends the client a
 * request of its own. A 2025 client is asked with a request on the stream of its own request; a 2026-07-28 client
 * gets `input_required` and retries. Whichever way it came and goes, a request is held here in the newest revision's
 * shape (`InputRequest`), checked on the way in (`readInputRequest`, `readInputRequests`), put to a client as its
 * revision can take it (`forRevision`), and answered with a checked result (`readAnswer`) or an error.
 *
 * What a client can be asked follows from what it declared, normalised (`inputCapabilities`): what its revision
 * lacks is dropped, `elicitation: {}` is form mode. A request it did not declare is never put to it
 * (`missingNeed`); one its revision cannot carry as it is (sampling with audio before 2025-03-26, tool use before
 * 2025-11-25) is refused naming it (`forRevision`'s `cannot`), never cut. Pure: no I/O, no clock.
 */
import type { Revision } from './revisions.js';

/** The methods a server may ask a client (2026-07-28 InputRequest; 2025 ServerRequest but ping). */
export const INPUT_METHODS = ['elicitation/create', 'sampling/createMessage', 'roots/list'] as const;
export type InputMethod = (typeof INPUT_METHODS)[number];

/** One request for input in the newest revision's shape (2026-07-28 InputRequest): the currency of every path. */
export interface InputRequest {
    readonly method: InputMethod;
    readonly params: Readonly<Record<string, unknown>>;
}

/** A client's answer to one input request: its result, or its error (the message cut to MAX_ANSWER_MESSAGE_CHARS). */
export type InputAnswer = { readonly result: Readonly<Record<string, unknown>> } | { readonly error: { readonly code: number; readonly message: string } };

/** What a client can answer, normalised (`elicitation: {}` is form; what its revision lacks dropped). */
export interface InputCapabilities {
    readonly elicitation?: { readonly form?: object; readonly url?: object };
    readonly sampling?: { readonly context?: object; readonly tools?: object };
    readonly roots?: object;
}

/** One thing a request needs declared, e.g. elicitation in url mode, sampling with tools. */
export interface InputNeed {
    readonly capability: 'elicitation' | 'sampling' | 'roots';
    readonly feature?: 'form' | 'url' | 'context' | 'tools';
}

/** An upstream's `relayInputRequests` setting (config: upstreams[].relayInputRequests). */
export type RelayInputRequests = 'auto' | 'related' | 'exclusive' | 'off';

/** The wire a 2025 upstream was reached over (upstream/transports.ts WireProtocol). */
export type InputWire = 'stdio' | 'streamable-http' | 'sse';

/** What a 2025 upstream's `relayInputRequests` comes to once its wire is known. */
export interface RelayPlan {
    /** Declare `relayCapabilities` at initialize: the upstream may then ask. */
    readonly declare: boolean;
    /** A request on a `prompts/get`'s own answer stream (Streamable HTTP) belongs to that get. */
    readonly answerStreams: boolean;
    /**
     * A request on no answer stream (stdio, legacy SSE, the GET stream): `none` answered by the gateway; `sole` tied
     * to the one `prompts/get` in flight when exactly one is (none: answered by the gateway; several: refused,
     * AMBIGUOUS_INPUT_REQUEST); `exclusive` tied to the one in flight, as `prompts/get` go one at a time.
     */
    readonly unrelated: 'none' | 'sole' | 'exclusive';
}

/** The longest error message of a client's answer passed on, in characters. */
export const MAX_ANSWER_MESSAGE_CHARS = 256;
/** The longest key of an `inputRequests` entry accepted from an upstream. */
export const MAX_INPUT_KEY_CHARS = 64;

/** The gateway's answer to an upstream's request it cannot tie to one client request. */
export const UNRELATED_INPUT_REQUEST =
    "Not related to a client request the gateway can tie it to: send it on the request's own stream (relatedRequestId), or set relayInputRequests: exclusive";
/** ... when several of the upstream's `prompts/get` are in flight (relayInputRequests: auto on stdio or legacy SSE). */
export const AMBIGUOUS_INPUT_REQUEST = 'Cannot tell which client request this belongs to; set relayInputRequests: exclusive';

/** What a 2025 upstream's setting means on its wire (`auto`: `related` on Streamable HTTP, `sole` elsewhere). */
export function relayPlan(setting: RelayInputRequests, wire: InputWire): RelayPlan {
    void setting;
    void wire;
    throw new Error('todo');
}

/** What a client declared (initialize's `capabilities`, or a 2026-07-28 request's `_meta`), normalised for its revision. */
export function inputCapabilities(declared: unknown, revision: Revision): InputCapabilities {
    void declared;
    void revision;
    throw new Error('todo');
}

/** The capabilities as a small integer, for the sealed session. */
export function capabilityBits(capabilities: InputCapabilities): number {
    void capabilities;
    throw new Error('todo');
}

/** The capabilities a sealed session's bits stand for (unknown bits ignored). */
export function capabilitiesOfBits(bits: number): InputCapabilities {
    void bits;
    throw new Error('todo');
}

/** The first need `capabilities` lacks for `request`; undefined when it can be asked. */
export function missingNeed(capabilities: InputCapabilities, request: InputRequest): InputNeed | undefined {
    void capabilities;
    void request;
    throw new Error('todo');
}

/** "elicitation", "elicitation (url mode)", "sampling", "sampling with tools", "sampling with context", "roots". */
export function describeNeed(need: InputNeed): string {
    void need;
    throw new Error('todo');
}

/** -32021's data: `{ requiredCapabilities: { elicitation: { url: {} } } }`. */
export function requiredCapabilities(need: InputNeed): { requiredCapabilities: Record<string, unknown> } {
    void need;
    throw new Error('todo');
}

/**
 * A 2025 upstream's request (method, params) or one 2026-07-28 `inputRequests` entry, checked and normalised
 * (elicitation `mode` defaults to form); undefined if it is no valid input request.
 */
export function readInputRequest(method: unknown, params: unknown): InputRequest | undefined {
    void method;
    void params;
    throw new Error('todo');
}

/** A 2026-07-28 upstream's `inputRequests`: at most `max` entries, keys 1-64 characters; a reason when invalid. */
export function readInputRequests(value: unknown, max: number): ReadonlyMap<string, InputRequest> | string {
    void value;
    void max;
    throw new Error('todo');
}

/**
 * `request`'s params as a client of `revision` takes them; `cannot` names what it cannot carry ("sampling with
 * audio, which MCP 2024-11-05 cannot carry"). `mintElicitationId` names a url elicitation for a revision that needs
 * an id and got none (a 2026-07-28 upstream's).
 */
export function forRevision(request: InputRequest, revision: Revision, mintElicitationId: () => string): { params: Record<string, unknown> } | { cannot: string } {
    void request;
    void revision;
    void mintElicitationId;
    throw new Error('todo');
}

/** A client's result for `method`, shape-checked (ElicitResult, CreateMessageResult, ListRootsResult); undefined if malformed. */
export function readAnswer(method: InputMethod, value: unknown): Readonly<Record<string, unknown>> | undefined {
    void method;
    void value;
    throw new Error('todo');
}

/** A client's error answer as it may travel on: its code, the first line of its message, cut. */
export function readAnswerError(value: unknown): InputAnswer | undefined {
    void value;
    throw new Error('todo');
}

/** What the gateway declares at initialize to a 2025 upstream it relays for. */
export function relayCapabilities(roots: boolean): Readonly<Record<string, unknown>> {
    void roots;
    throw new Error('todo');
}
