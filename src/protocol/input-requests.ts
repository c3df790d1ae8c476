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
import { isRecord } from '../lib/is-record.js';
import type { Revision } from './revisions.js';

/** The methods a server may ask a client (2026-07-28 InputRequest; 2025 ServerRequest but ping). */
export const INPUT_METHODS = ['elicitation/create', 'sampling/createMessage', 'roots/list'] as const;
export type InputMethod = (typeof INPUT_METHODS)[number];

/** One request for input in the newest revision's shape (2026-07-28 InputRequest): the currency of every path. */
export interface InputRequest {
    readonly method: InputMethod;
    readonly params: Readonly<Record<string, unknown>>;
}

/** A client's answer to one input request: its result, or its error (errors.ts readAnswerError: the message cut). */
export type InputAnswer = { readonly result: Readonly<Record<string, unknown>> } | { readonly error: { readonly code: number; readonly message: string } };

/**
 * What a client can answer, normalised (`elicitation: {}` is form; what its revision lacks dropped). A type, not an
 * interface: it is relayed as a record of capabilities (capabilities.ts RelayedClient).
 */
export type InputCapabilities = {
    readonly elicitation?: { readonly form?: object; readonly url?: object };
    readonly sampling?: { readonly context?: object; readonly tools?: object };
    readonly roots?: object;
};

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

/** The longest key of an `inputRequests` entry accepted from an upstream. */
const MAX_INPUT_KEY_CHARS = 64;

/** The gateway's answer to an upstream's request it cannot tie to one client request. */
export const UNRELATED_INPUT_REQUEST =
    "Not related to a client request the gateway can tie it to: send it on the request's own stream (relatedRequestId), or set relayInputRequests: exclusive";
/** ... when several of the upstream's `prompts/get` are in flight (relayInputRequests: auto on stdio or legacy SSE). */
export const AMBIGUOUS_INPUT_REQUEST = 'Cannot tell which client request this belongs to; set relayInputRequests: exclusive';

/** What a 2025 upstream's setting means on its wire (`auto`: answer streams where there are, and `sole` for the rest). */
export function relayPlan(setting: RelayInputRequests, wire: InputWire): RelayPlan {
    const http = wire === 'streamable-http';
    switch (setting) {
        case 'off':
            return NO_RELAY;
        case 'related':
            return http ? { declare: true, answerStreams: true, unrelated: 'none' } : NO_RELAY;
        case 'auto':
            // SDK v2's elicitInput/requestSampling do not relate their requests: over Streamable HTTP they come on the
            // GET stream, so an unrelated request goes to the one get in flight there too.
            return { declare: true, answerStreams: http, unrelated: 'sole' };
        case 'exclusive':
            return { declare: true, answerStreams: http, unrelated: 'exclusive' };
    }
}

const NO_RELAY: RelayPlan = Object.freeze({ declare: false, answerStreams: false, unrelated: 'none' });

// One bit per feature a client may declare of elicitation, sampling and roots: what a sealed session keeps of them.
const BIT = { form: 1, url: 2, sampling: 4, context: 8, tools: 16, roots: 32 } as const;
const ALL_BITS = 63;

function capabilitiesFor(bits: number): InputCapabilities {
    const elicitation = bits & (BIT.form | BIT.url) ? { ...(bits & BIT.form ? { form: {} } : {}), ...(bits & BIT.url ? { url: {} } : {}) } : undefined;
    const sampling = bits & BIT.sampling ? { ...(bits & BIT.context ? { context: {} } : {}), ...(bits & BIT.tools ? { tools: {} } : {}) } : undefined;
    return deepFreeze({ ...(elicitation ? { elicitation } : {}), ...(sampling ? { sampling } : {}), ...(bits & BIT.roots ? { roots: {} } : {}) });
}

function deepFreeze<T extends object>(value: T): T {
    for (const member of Object.values(value)) if (typeof member === 'object' && member !== null) deepFreeze(member as object);
    return Object.freeze(value);
}

/** Every combination, built once: a session's capabilities are looked up, never built per request. */
const BY_BITS: readonly InputCapabilities[] = Array.from({ length: ALL_BITS + 1 }, (_, bits) => capabilitiesFor(bits));

/** What a client declared (initialize's `capabilities`, or a 2026-07-28 request's `_meta`), normalised for its revision. */
export function inputCapabilities(declared: unknown, revision: Revision): InputCapabilities {
    return capabilitiesOfBits(declaredBits(declared, revision));
}

function declaredBits(declared: unknown, revision: Revision): number {
    if (!isRecord(declared)) return 0;
    let bits = 0;
    const { elicitation, sampling, roots } = declared;
    if (revision.elicitation && isRecord(elicitation)) {
        const url = revision.urlElicitation && isRecord(elicitation.url);
        // `elicitation: {}` is form mode (2025-06-18 has no modes; 2025-11-25 keeps the empty object as form).
        const form = !revision.urlElicitation || isRecord(elicitation.form) || !url;
        bits |= (form ? BIT.form : 0) | (url ? BIT.url : 0);
    }
    if (isRecord(sampling)) {
        // Before sampling.context, every sampling client took includeContext (it may ignore it).
        const context = !revision.samplingContextCapability || isRecord(sampling.context);
        bits |= BIT.sampling | (context ? BIT.context : 0) | (revision.samplingTools && isRecord(sampling.tools) ? BIT.tools : 0);
    }
    if (isRecord(roots)) bits |= BIT.roots;
    return bits;
}

/** The capabilities as a small integer (0-63), for the sealed session. */
export function capabilityBits(capabilities: InputCapabilities): number {
    const { elicitation, sampling, roots } = capabilities;
    let bits = 0;
    if (elicitation?.form !== undefined) bits |= BIT.form;
    if (elicitation?.url !== undefined) bits |= BIT.url;
    if (sampling !== undefined) bits |= BIT.sampling | (sampling.context === undefined ? 0 : BIT.context) | (sampling.tools === undefined ? 0 : BIT.tools);
    if (roots !== undefined) bits |= BIT.roots;
    return bits;
}

/** The capabilities a sealed session's bits stand for: frozen, shared; unknown bits, and features of nothing declared, ignored. */
export function capabilitiesOfBits(bits: number): InputCapabilities {
    if (!Number.isSafeInteger(bits) || bits < 0) return BY_BITS[0]!;
    const known = bits & ALL_BITS;
    return BY_BITS[known & BIT.sampling ? known : known & ~(BIT.context | BIT.tools)]!;
}

/** The first need `capabilities` lacks for `request`; undefined when it can be asked. */
export function missingNeed(capabilities: InputCapabilities, request: InputRequest): InputNeed | undefined {
    const { params } = request;
    switch (request.method) {
        case 'elicitation/create': {
            const feature = params.mode === 'url' ? 'url' : 'form';
            return capabilities.elicitation?.[feature] === undefined ? { capability: 'elicitation', feature } : undefined;
        }
        case 'sampling/createMessage': {
            const { sampling } = capabilities;
            if (sampling === undefined) return { capability: 'sampling' };
            if (usesTools(params) && sampling.tools === undefined) return { capability: 'sampling', feature: 'tools' };
            if (usesContext(params) && sampling.context === undefined) return { capability: 'sampling', feature: 'context' };
            return undefined;
        }
        case 'roots/list':
            return capabilities.roots === undefined ? { capability: 'roots' } : undefined;
    }
}

function usesTools(params: Readonly<Record<string, unknown>>): boolean {
    return params.tools !== undefined || params.toolChoice !== undefined;
}

function usesContext(params: Readonly<Record<string, unknown>>): boolean {
    return params.includeContext === 'thisServer' || params.includeContext === 'allServers';
}

/** "elicitation", "elicitation (url mode)", "sampling", "sampling with tools", "sampling with context", "roots". */
export function describeNeed(need: InputNeed): string {
    switch (need.feature) {
        case 'url':
            return 'elicitation (url mode)';
        case 'tools':
        case 'context':
            return `sampling with ${need.feature}`;
        default:
            return need.capability;
    }
}

/** -32021's data: `{ requiredCapabilities: { elicitation: { url: {} } } }`. */
export function requiredCapabilities(need: InputNeed): { requiredCapabilities: Record<string, unknown> } {
    const inner = need.feature === undefined ? {} : { [need.feature]: {} };
    return { requiredCapabilities: { [need.capability]: inner } };
}

/**
 * A 2025 upstream's request (method, params) or one 2026-07-28 `inputRequests` entry, checked and normalised
 * (elicitation `mode` defaults to form); undefined if it is no valid input request. What the gateway cannot vouch
 * for on another connection is left out: `_meta` (a progress token of the upstream's would name nothing to the
 * client), `task` (the gateway declares no tasks), fields no revision defines.
 */
export function readInputRequest(method: unknown, params: unknown): InputRequest | undefined {
    switch (method) {
        case 'elicitation/create': {
            const read = isRecord(params) ? readElicitation(params) : undefined;
            return read === undefined ? undefined : { method, params: read };
        }
        case 'sampling/createMessage': {
            const read = isRecord(params) ? readSampling(params) : undefined;
            return read === undefined ? undefined : { method, params: read };
        }
        case 'roots/list':
            return params === undefined || isRecord(params) ? ROOTS_REQUEST : undefined;
        default:
            return undefined;
    }
}

const ROOTS_REQUEST: InputRequest = deepFreeze({ method: 'roots/list', params: {} });

function readElicitation(params: Record<string, unknown>): Record<string, unknown> | undefined {
    const { message, mode } = params;
    if (typeof message !== 'string') return undefined;
    if (mode === 'url') {
        const { url, elicitationId } = params;
        if (typeof url !== 'string' || !URL.canParse(url) || !isOptional(elicitationId, isString)) return undefined;
        return { mode, message, url, ...(elicitationId === undefined ? {} : { elicitationId }) };
    }
    if (mode !== undefined && mode !== 'form') return undefined;
    const { requestedSchema } = params;
    return isRequestedSchema(requestedSchema) ? { mode: 'form', message, requestedSchema } : undefined;
}

/** A form's schema: an object of flat fields (PrimitiveSchemaDefinition: no nesting), what the client renders. */
function isRequestedSchema(value: unknown): value is Record<string, unknown> {
    if (!isRecord(value) || value.type !== 'object' || !isRecord(value.properties)) return false;
    if (!isOptional(value.required, required => isArrayOf(required, isString))) return false;
    return Object.values(value.properties).every(isPrimitiveField);
}

const FIELD_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array']);

function isPrimitiveField(field: unknown): boolean {
    if (!isRecord(field) || !FIELD_TYPES.has(field.type as string)) return false;
    // A multi-select field's items are plain strings offered (`enum`) or titled (`anyOf` of const/title).
    return field.type !== 'array' || (isRecord(field.items) && !isRecord(field.items.properties));
}

/** The fields of CreateMessageRequest's params in any revision, each with its check. */
const SAMPLING_FIELDS: Record<string, (value: unknown) => boolean> = {
    messages: value => isArrayOf(value, isSamplingMessage),
    maxTokens: value => Number.isSafeInteger(value),
    systemPrompt: isString,
    includeContext: value => value === 'none' || value === 'thisServer' || value === 'allServers',
    temperature: value => typeof value === 'number' && Number.isFinite(value),
    stopSequences: value => isArrayOf(value, isString),
    modelPreferences: isRecord,
    metadata: isRecord,
    tools: value => isArrayOf(value, tool => isRecord(tool) && isString(tool.name) && isRecord(tool.inputSchema)),
    toolChoice: value => isRecord(value) && isOptional(value.mode, mode => mode === 'auto' || mode === 'none' || mode === 'required')
};

function readSampling(params: Record<string, unknown>): Record<string, unknown> | undefined {
    if (params.messages === undefined || params.maxTokens === undefined) return undefined;
    const read: Record<string, unknown> = {};
    for (const [field, check] of Object.entries(SAMPLING_FIELDS)) {
        const value = params[field];
        if (value === undefined) continue;
        if (!check(value)) return undefined;
        read[field] = value;
    }
    return read;
}

function isSamplingMessage(value: unknown): boolean {
    return isRecord(value) && isRole(value.role) && isSamplingContent(value.content);
}

/** A sampling message's or result's content: one block, or (from 2025-11-25) a non-empty array of them. */
function isSamplingContent(value: unknown): boolean {
    return isSamplingBlock(value) || (isArrayOf(value, isSamplingBlock) && value.length > 0);
}

/** A content block as the gateway reads it: its type decides what a revision can carry. */
type TypedBlock = Record<string, unknown> & { type: string };

/** The blocks sampling carries (SamplingMessageContentBlock), each with the fields that make it one. */
const SAMPLING_BLOCKS = new Map<string, (block: Record<string, unknown>) => boolean>([
    ['text', block => isString(block.text)],
    ['image', block => isString(block.data) && isString(block.mimeType)],
    ['audio', block => isString(block.data) && isString(block.mimeType)],
    ['tool_use', block => isString(block.id) && isString(block.name) && isRecord(block.input)],
    ['tool_result', block => isString(block.toolUseId) && Array.isArray(block.content)]
]);

function isSamplingBlock(value: unknown): value is TypedBlock {
    return isRecord(value) && typeof value.type === 'string' && SAMPLING_BLOCKS.get(value.type)?.(value) === true;
}

/** A 2026-07-28 upstream's `inputRequests`: at most `max` entries, keys 1-64 characters; a reason when invalid. */
export function readInputRequests(value: unknown, max: number): ReadonlyMap<string, InputRequest> | string {
    if (!isRecord(value)) return 'inputRequests is not an object';
    const entries = Object.entries(value);
    if (entries.length > max) return `${entries.length} input requests in one round, more than inputRequests.maxPerRound (${max})`;
    const read = new Map<string, InputRequest>();
    for (const [key, entry] of entries) {
        if (key.length === 0 || key.length > MAX_INPUT_KEY_CHARS) return `an inputRequests key is not 1-${MAX_INPUT_KEY_CHARS} characters long`;
        const request = isRecord(entry) ? readInputRequest(entry.method, entry.params) : undefined;
        if (request === undefined) return `inputRequests[${JSON.stringify(key)}] is no valid elicitation/create, sampling/createMessage or roots/list request`;
        read.set(key, request);
    }
    return read;
}

/**
 * `request`'s params as a client of `revision` takes them; `cannot` names what it cannot carry ("sampling with
 * audio, which MCP 2024-11-05 cannot carry"). `mintElicitationId` names a url elicitation for a revision that needs
 * an id and got none (a 2026-07-28 upstream's).
 */
export function forRevision(request: InputRequest, revision: Revision, mintElicitationId: () => string): { params: Record<string, unknown> } | { cannot: string } {
    const { method, params } = request;
    switch (method) {
        case 'elicitation/create': {
            const lacking = elicitationLacking(params, revision);
            return lacking === undefined ? { params: elicitationFor(params, revision, mintElicitationId) } : cannotCarry(lacking, revision);
        }
        case 'sampling/createMessage': {
            const lacking = samplingLacking(params, revision);
            return lacking === undefined ? { params: { ...params } } : cannotCarry(lacking, revision);
        }
        case 'roots/list':
            return { params: {} };
    }
}

function cannotCarry(what: string, revision: Revision): { cannot: string } {
    return { cannot: `${what}, which MCP ${revision.version} cannot carry` };
}

function elicitationLacking(params: Readonly<Record<string, unknown>>, revision: Revision): string | undefined {
    if (params.mode === 'url') return revision.urlElicitation ? undefined : 'elicitation (url mode)';
    if (!revision.elicitation) return 'elicitation';
    const fields = Object.values((params.requestedSchema as { properties: Record<string, Record<string, unknown>> }).properties);
    return revision.elicitationMultiSelect || fields.every(field => field.type !== 'array') ? undefined : 'elicitation with a multiple-choice field';
}

/** A sampling message as readSampling checked it. */
interface CheckedMessage {
    content: TypedBlock | TypedBlock[];
}

function samplingLacking(params: Readonly<Record<string, unknown>>, revision: Revision): string | undefined {
    if (!revision.samplingTools && usesTools(params)) return 'sampling with tools';
    const messages = params.messages as CheckedMessage[];
    // Content arrays came with tool use (2025-11-25), as did its blocks.
    if (!revision.samplingTools && messages.some(({ content }) => Array.isArray(content) || TOOL_BLOCKS.has(content.type))) return 'sampling with tool use content';
    const blocks = messages.flatMap(({ content }) => content);
    if (!revision.samplingAudio && blocks.some(block => block.type === 'audio')) return 'sampling with audio';
    return undefined;
}

const TOOL_BLOCKS = new Set(['tool_use', 'tool_result']);

function elicitationFor(params: Readonly<Record<string, unknown>>, revision: Revision, mintElicitationId: () => string): Record<string, unknown> {
    if (params.mode === 'url') {
        const { elicitationId, ...rest } = params;
        return revision.urlElicitationId ? { ...rest, elicitationId: typeof elicitationId === 'string' ? elicitationId : mintElicitationId() } : rest;
    }
    // Before modes (2025-06-18) there is no `mode`, and titled choices are `enumNames`.
    if (revision.urlElicitation) return { ...params };
    const { mode: _mode, requestedSchema, ...rest } = params;
    return { ...rest, requestedSchema: withLegacyChoices(requestedSchema as Record<string, unknown>) };
}

/** 2025-11-25's titled single choice (`oneOf` of const and title) as 2025-06-18 writes it: `enum` and `enumNames`. */
function withLegacyChoices(schema: Record<string, unknown>): Record<string, unknown> {
    const properties = schema.properties as Record<string, Record<string, unknown>>;
    if (!Object.values(properties).some(isTitledChoice)) return schema;
    const legacy = Object.fromEntries(
        Object.entries(properties).map(([name, field]) => {
            if (!isTitledChoice(field)) return [name, field];
            const { oneOf, ...rest } = field;
            const options = oneOf as { const: string; title: string }[];
            return [name, { ...rest, enum: options.map(option => option.const), enumNames: options.map(option => option.title) }];
        })
    );
    return { ...schema, properties: legacy };
}

function isTitledChoice(field: Record<string, unknown>): boolean {
    return field.type === 'string' && isArrayOf(field.oneOf, option => isRecord(option) && isString(option.const) && isString(option.title));
}

/**
 * A client's result for `method`, shape-checked (ElicitResult, CreateMessageResult, ListRootsResult); undefined if
 * malformed. Only the result's own fields go on: not its `_meta`, which is the client's with the gateway.
 */
export function readAnswer(method: InputMethod, value: unknown): Readonly<Record<string, unknown>> | undefined {
    if (!isRecord(value)) return undefined;
    switch (method) {
        case 'elicitation/create':
            return readElicitResult(value);
        case 'sampling/createMessage': {
            const { role, content, model, stopReason } = value;
            const valid = isRole(role) && isString(model) && isOptional(stopReason, isString) && isSamplingContent(content);
            return valid ? { role, content, model, ...(stopReason === undefined ? {} : { stopReason }) } : undefined;
        }
        case 'roots/list': {
            const { roots } = value;
            return isArrayOf(roots, isRoot) ? { roots: roots.map(({ uri, name }) => (name === undefined ? { uri } : { uri, name })) } : undefined;
        }
    }
}

/** A root: a URI (file:// in every revision so far; any URL read, the upstream judges) and maybe a name. */
function isRoot(value: unknown): value is { uri: string; name?: string } {
    return isRecord(value) && isString(value.uri) && URL.canParse(value.uri) && isOptional(value.name, isString);
}

const ACTIONS = new Set(['accept', 'decline', 'cancel']);

function readElicitResult(value: Record<string, unknown>): Record<string, unknown> | undefined {
    const { action, content } = value;
    if (!ACTIONS.has(action as string)) return undefined;
    if (content === undefined) return { action };
    const valid = isRecord(content) && Object.values(content).every(field => isFormValue(field) || isArrayOf(field, isString));
    return valid ? { action, content } : undefined;
}

function isFormValue(value: unknown): boolean {
    return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

const RELAYED = deepFreeze({ elicitation: { form: {}, url: {} }, sampling: { context: {}, tools: {} } });
const RELAYED_WITH_ROOTS = deepFreeze({ ...RELAYED, roots: {} });

/** What the gateway declares at initialize to a 2025 upstream it relays for (roots only with relayRoots). */
export function relayCapabilities(roots: boolean): Readonly<Record<string, unknown>> {
    return roots ? RELAYED_WITH_ROOTS : RELAYED;
}

function isString(value: unknown): value is string {
    return typeof value === 'string';
}

function isRole(value: unknown): boolean {
    return value === 'user' || value === 'assistant';
}

function isOptional(value: unknown, check: (value: unknown) => boolean): boolean {
    return value === undefined || check(value);
}

function isArrayOf<T>(value: unknown, check: (item: unknown) => item is T): value is T[];
function isArrayOf(value: unknown, check: (item: unknown) => boolean): value is unknown[];
function isArrayOf(value: unknown, check: (item: unknown) => boolean): value is unknown[] {
    return Array.isArray(value) && value.every(item => check(item));
}
