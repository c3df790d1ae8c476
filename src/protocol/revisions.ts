/**
 * The protocol revisions the gateway speaks, on both sides, and what each can
 * carry: the one place revision dates are written (the config schema names the
 * values it accepts). A row is a frozen singleton: compared by identity, looked
 * up once (per session, request or upstream connection), never built per request.
 * test/unit/revision-table.test.ts checks every boolean column against the
 * revision's official schema, so a new revision is a new row plus whatever that
 * test says is missing.
 */

/** Handshake: `initialize`, a session, `ping`. Stateless: every request names its revision in `_meta`, `server/discover`. */
export type Era = 'handshake' | 'stateless';

export interface Revision {
    /** The date that names it on the wire. */
    readonly version: string;
    /** What the other columns that belong to an era follow from; read where the rule is the era itself (`_meta`, sessions). */
    readonly era: Era;
    /** `initialize`, a session and `ping` (the handshake era's lifecycle). */
    readonly handshake: boolean;
    /** `server/discover`, in place of `initialize` and `ping`. */
    readonly discover: boolean;
    /** JSON-RPC batches (JSONRPCBatchRequest): 2025-03-26 only. */
    readonly batches: boolean;
    /** `title` on prompts, arguments and resource links. */
    readonly titles: boolean;
    /** `icons` on prompts and resource links. */
    readonly icons: boolean;
    /** `_meta` on prompts, content blocks and resource contents (a result's own `_meta` is in every revision). */
    readonly meta: boolean;
    readonly lastModified: boolean;
    /** `audio` content blocks. */
    readonly audio: boolean;
    /** `resource_link` content blocks. */
    readonly resourceLinks: boolean;
    /** `message` on progress notifications. */
    readonly progressMessage: boolean;
    /** Servers declare `completions` to offer `completion/complete` (before, the method was simply there). */
    readonly completionsCapability: boolean;
    /** `resultType` on every result ("complete" or "input_required"). */
    readonly resultType: boolean;
    /** The server names itself in every result's `_meta` (`io.modelcontextprotocol/serverInfo`): no initialize result does. */
    readonly serverInfoMeta: boolean;
    /** `ttlMs` and `cacheScope` on list results (CacheableResult). */
    readonly cachingHints: boolean;
    /** `subscriptions/listen`: list changes on a stream the client opens, in place of the session's notifications. */
    readonly subscriptionsListen: boolean;
    /** `input_required` results (InputRequiredResult) and their retry with `inputResponses` and `requestState`. */
    readonly inputRequired: boolean;
    /** The server may send the client JSON-RPC requests (ServerRequest): the handshake era's way to ask for input. */
    readonly serverRequests: boolean;
    /** `elicitation/create` (ElicitRequest), form mode. */
    readonly elicitation: boolean;
    /** Elicitation in url mode (ElicitRequestURLParams). */
    readonly urlElicitation: boolean;
    /** A url elicitation names itself with an `elicitationId` (2025-11-25; 2026-07-28 has none). */
    readonly urlElicitationId: boolean;
    /** Multiple-choice form fields (`type: "array"`) and titled choices as `oneOf` (2025-06-18 has `enumNames`). */
    readonly elicitationMultiSelect: boolean;
    /** `tools` and `toolChoice` on sampling, with tool_use and tool_result content (and content arrays). */
    readonly samplingTools: boolean;
    /** `audio` content in sampling messages. */
    readonly samplingAudio: boolean;
    /** Clients declare `sampling.context` to take `includeContext` (before, every sampling client took it). */
    readonly samplingContextCapability: boolean;
    /** Over HTTP a request mirrors its version, method and target in headers, which must match the body (-32020). */
    readonly mirroredHeaders: boolean;
    /** Knows everything the gateway sends (every content column true): results pass unchanged, at no cost. */
    readonly current: boolean;
}

type Columns = Omit<Revision, 'current'>;

function row(columns: Columns): Revision {
    const { titles, icons, meta, lastModified, audio, resourceLinks, progressMessage } = columns;
    const current = titles && icons && meta && lastModified && audio && resourceLinks && progressMessage;
    return Object.freeze({ ...columns, current });
}

const ALL_CONTENT = { titles: true, icons: true, meta: true, lastModified: true, audio: true, resourceLinks: true, progressMessage: true } as const;

/** The handshake era's columns: none of the stateless revision's features. */
const HANDSHAKE = {
    era: 'handshake',
    handshake: true,
    discover: false,
    resultType: false,
    serverInfoMeta: false,
    cachingHints: false,
    subscriptionsListen: false,
    inputRequired: false,
    serverRequests: true,
    mirroredHeaders: false
} as const;

const STATELESS = {
    era: 'stateless',
    handshake: false,
    discover: true,
    resultType: true,
    serverInfoMeta: true,
    cachingHints: true,
    subscriptionsListen: true,
    inputRequired: true,
    serverRequests: false,
    mirroredHeaders: true
} as const;

/** What clients of 2025-11-25 on can be asked. */
const ALL_INPUT = { elicitation: true, urlElicitation: true, elicitationMultiSelect: true, samplingTools: true, samplingAudio: true, samplingContextCapability: true } as const;
/** What clients before 2025-06-18 can be asked: sampling (and roots, in every revision). */
const SAMPLING_ONLY = {
    elicitation: false,
    urlElicitation: false,
    elicitationMultiSelect: false,
    urlElicitationId: false,
    samplingTools: false,
    samplingContextCapability: false
} as const;

/** Every revision the gateway serves, newest first. */
export const REVISIONS: readonly Revision[] = Object.freeze([
    row({ version: '2026-07-28', ...STATELESS, batches: false, ...ALL_CONTENT, completionsCapability: true, ...ALL_INPUT, urlElicitationId: false }),
    row({ version: '2025-11-25', ...HANDSHAKE, batches: false, ...ALL_CONTENT, completionsCapability: true, ...ALL_INPUT, urlElicitationId: true }),
    row({
        version: '2025-06-18',
        ...HANDSHAKE,
        batches: false,
        ...ALL_CONTENT,
        icons: false,
        completionsCapability: true,
        ...SAMPLING_ONLY,
        elicitation: true,
        samplingAudio: true
    }),
    row({
        version: '2025-03-26',
        ...HANDSHAKE,
        batches: true,
        titles: false,
        icons: false,
        meta: false,
        lastModified: false,
        audio: true,
        resourceLinks: false,
        progressMessage: true,
        completionsCapability: true,
        ...SAMPLING_ONLY,
        samplingAudio: true
    }),
    row({
        version: '2024-11-05',
        ...HANDSHAKE,
        batches: false,
        titles: false,
        icons: false,
        meta: false,
        lastModified: false,
        audio: false,
        resourceLinks: false,
        progressMessage: false,
        completionsCapability: false,
        ...SAMPLING_ONLY,
        samplingAudio: false
    })
]);

const BY_VERSION = new Map(REVISIONS.map(revision => [revision.version, revision]));

/** The row of a revision the gateway serves; undefined for any other string. */
export function revisionOf(version: string): Revision | undefined {
    return BY_VERSION.get(version);
}

function newestOf(era: Era): Revision {
    const revision = REVISIONS.find(candidate => candidate.era === era);
    if (revision === undefined) throw new Error(`no ${era} revision in the table`);
    return revision;
}

/** What `initialize` offers (an upstream) and falls back to (a client asking for a revision the gateway lacks). */
export const LATEST_HANDSHAKE = newestOf('handshake');
/** What the gateway speaks with a stateless upstream. */
export const LATEST_STATELESS = newestOf('stateless');

/** Every version served, stateless first: `server/discover`'s `supportedVersions` and -32022's `data.supported`. */
export const SUPPORTED_VERSIONS: readonly string[] = Object.freeze(
    [...REVISIONS.filter(revision => revision.era === 'stateless'), ...REVISIONS.filter(revision => revision.era === 'handshake')].map(revision => revision.version)
);

/** The revision `initialize` settles on: the client's own when the gateway speaks it in the handshake era, else the newest. */
export function negotiateHandshake(requested: string): Revision {
    const revision = revisionOf(requested);
    return revision?.era === 'handshake' ? revision : LATEST_HANDSHAKE;
}

/** What an upstream's `protocol` setting says of its era: undefined for `auto` (probed). */
export function eraOfConfig(protocol: 'auto' | '2025' | '2026-07-28'): Era | undefined {
    if (protocol === 'auto') return undefined;
    return protocol === '2025' ? 'handshake' : revisionOf(protocol)?.era;
}

/**
 * A session's row: a version the table lacks (none yet, or a session sealed by a newer replica) is taken as the
 * newest handshake revision, whose results pass unchanged.
 */
export function revisionOrLatest(version: string | undefined): Revision {
    return (version === undefined ? undefined : revisionOf(version)) ?? LATEST_HANDSHAKE;
}
