/**
 * One upstream MCP server: its client connection, its connection state, reconnects
 * with backoff, and the three prompt calls the gateway makes. A failure here is
 * contained: it changes this upstream's state and is reported, never thrown at
 * the gateway as a whole.
 */
import type { CompleteRequest, CompleteResult, GetPromptResult, ServerCapabilities } from '@modelcontextprotocol/client';
import { GatewayConfigSchema, type ServerUpstreamConfig } from '../config/schema.js';
import { Bus } from '../lib/bus.js';
import type { FaultKind } from '../diagnostics/faults.js';
import { describeError, type Logger } from '../diagnostics/logger.js';
import { readInputRequests } from '../protocol/input-requests.js';
import { eraOfConfig, type Era } from '../protocol/revisions.js';
import { upstreamCredentials, type UpstreamCredentials } from './auth/credentials.js';
import { backoffDelay, type BackoffPolicy } from '../lib/backoff.js';
import { Bulkhead } from './bulkhead.js';
import { UpstreamFailedError, type CallControl, type Continuation, type InputRequired } from '../catalog/upstream-port.js';
import { toUpstreamError } from './errors.js';
import { FaultLog } from './fault-log.js';
import { FloodDetector, STREAM_FLOOD } from './flood.js';
import { ProbeEndedConnection } from './handshake.js';
import { childOutputLog } from './output-log.js';
import { collectPages } from './pages.js';
import { boundPrompt, type PromptLimits } from './prompt-bounds.js';
import { isCompleteResult, isGetPromptAnswer, isPromptPage, withoutEnvelope } from './result-schemas.js';
import type { InputBounds, RpcClient } from './rpc-client.js';
import { UpstreamSession, type UpstreamMethod } from './session.js';
import type { StdioHooks, WireProtocol } from './transports.js';
import type { GatewayUpstream, UpstreamEvent, UpstreamListing, UpstreamState } from './upstream.js';
import { ATTR, MAX_SPAN_LINKS, NO_TRACER, type Tracer } from '../diagnostics/tracer.js';
import type { TraceContext } from '../protocol/meta.js';

const STABLE_AFTER_MS = 30_000;
const LIST_CHANGED = 'notifications/prompts/list_changed';
/** An upstream whose list needs more pages than this is cut short (its cursors may never end). */
const MAX_LIST_PAGES = 1000;
/** More list_changed than this within a second is a flood: counted and logged (the catalog coalesces them anyway). */
const FLOOD_PER_SECOND = 100;

/** What a connection reports about itself, for counters and metrics; it never waits on the answer. */
export interface UpstreamObserver {
    fault(upstreamId: string, kind: FaultKind): void;
    /** `error`: what the request failed with; undefined when it succeeded. */
    request(upstreamId: string, method: UpstreamMethod, seconds: number, error: unknown): void;
    /** A reconnect attempt is starting (after a lost connection or a failed attempt). */
    reconnecting(upstreamId: string): void;
    listChanged(upstreamId: string): void;
}

/** Bounds on what an upstream sends, read when used, so a reload applies them to connections already open. */
export interface UpstreamLimits extends PromptLimits {
    maxPromptsPerUpstream: number;
    maxListBytes: number;
    maxUpstreamMessageBytes: number;
    maxResultBytes: number;
}

export interface ConnectionOptions {
    logger: Logger;
    limits: () => UpstreamLimits;
    clientInfo: { name: string; version: string };
    reconnect: BackoffPolicy;
    observer?: UpstreamObserver;
    /** Bounds on what an upstream asks the client within one prompts/get (config inputRequests), read per use; the config's defaults when absent. */
    inputBounds?: (() => InputBounds) | undefined;
    /** Spans of its calls (NO_TRACER: none). */
    tracer?: Tracer | undefined;
}

/** The config's inputRequests defaults, for connections made without them (tools, tests). */
const DEFAULT_INPUT_BOUNDS: InputBounds = GatewayConfigSchema.shape.inputRequests.parse(undefined);

export class UpstreamConnection implements GatewayUpstream {
    readonly id: string;
    readonly events: Bus<UpstreamEvent>;
    /** Backoff for reconnects; a reload may change it without restarting the connection. */
    reconnect: BackoffPolicy;
    #state: UpstreamState = 'idle';
    #lastError: string | undefined;
    #session: UpstreamSession | undefined;
    #wire: WireProtocol | undefined;
    /** What the config's `protocol` says (undefined: "auto", probed). */
    readonly #configuredEra: Era | undefined;
    /** What the last probe found ("auto"); a failed connection forgets it, so the next one asks again. */
    #learnedEra: Era | undefined;
    #attempt = 0;
    #attempted = false;
    #closing: Promise<void> | undefined;
    #retryTimer: NodeJS.Timeout | undefined;
    #stableTimer: NodeJS.Timeout | undefined;
    /** The client of a handshake in progress, so close() can stop it too. */
    #connecting: RpcClient | undefined;
    readonly #bulkhead: Bulkhead;
    readonly #faults: FaultLog;
    readonly #flood = new FloodDetector(FLOOD_PER_SECOND, 1000);
    readonly #promptsChanged: UpstreamEvent;
    readonly #childOutput: StdioHooks;
    readonly #log: Logger;
    /** An HTTP upstream's `auth`: one for every connection of it, so tokens outlive reconnects. */
    readonly #credentials: UpstreamCredentials | undefined;

    constructor(
        readonly config: ServerUpstreamConfig,
        private readonly options: ConnectionOptions
    ) {
        this.id = config.id;
        this.#configuredEra = eraOfConfig(config.protocol);
        this.#promptsChanged = Object.freeze({ type: 'prompts-changed', upstreamId: config.id });
        this.reconnect = options.reconnect;
        this.#log = options.logger.child({ upstream: config.id });
        this.events = new Bus(error => this.#log.error({ err: describeError(error) }, 'upstream event listener failed'));
        this.#bulkhead = new Bulkhead(config);
        this.#faults = new FaultLog(this.#log, kind => options.observer?.fault(this.id, kind));
        this.#childOutput = {
            ...childOutputLog(this.#log, bytes => this.reportFault('garbage_output', 'upstream wrote a line that is not JSON-RPC to stdout', { bytes })),
            onOversizedDropped: bytes => this.reportFault('oversized_result', 'upstream message over limits.maxUpstreamMessageBytes answers no request; dropped', { bytes })
        };
        this.#credentials = config.transport === 'stdio' ? undefined : upstreamCredentials(config, () => this.reconnect);
    }

    get state(): UpstreamState {
        return this.#state;
    }

    get lastError(): string | undefined {
        return this.#lastError;
    }

    /** Prompts over the limits are counted as faults instead: an upstream's list comes back whole on every read. */
    readonly problems = [];

    /** Whether the first connection attempt has finished, successfully or not. */
    get attempted(): boolean {
        return this.#attempted;
    }

    get load(): { active: number; queued: number } {
        return { active: this.#bulkhead.active, queued: this.#bulkhead.queued };
    }

    get wire(): WireProtocol | undefined {
        return this.#wire;
    }

    get capabilities(): ServerCapabilities | undefined {
        return this.#state === 'ready' ? this.#session?.profile.capabilities : undefined;
    }

    /** Resolves after the first connection attempt, whatever its outcome. */
    async start(): Promise<void> {
        if (this.#state !== 'idle') return;
        await this.#connect();
        this.#attempted = true;
    }

    /** Stops reconnecting and closes the connection (a stdio child is stopped with its whole process group). */
    close(): Promise<void> {
        this.#closing ??= this.#close();
        return this.#closing;
    }

    async #close(): Promise<void> {
        this.#setState('closed');
        clearTimeout(this.#retryTimer);
        clearTimeout(this.#stableTimer);
        const [session, connecting] = [this.#session, this.#connecting];
        this.#session = this.#connecting = undefined;
        await Promise.all([session?.close(), connecting?.close().catch(() => {})]);
        // After the session's last words (its DELETE carries the token too).
        this.#credentials?.close();
    }

    /** Counts a fault of this upstream and logs it (rate-limited per kind). */
    reportFault(kind: FaultKind, message: string, details: Record<string, unknown> = {}): void {
        this.#faults.report(kind, message, details);
    }

    /** Whether the session tells of every change to its list (see UpstreamSession.announcesChanges). */
    get announcesChanges(): boolean {
        const session = this.#state === 'ready' ? this.#session : undefined;
        return session?.announcesChanges ?? true;
    }

    /**
     * Every prompt of the upstream, read page by page; empty if it has no prompts capability. Prompts over the
     * limits are left out, each counted as a fault. A 2026-07-28 upstream's `ttlMs` is the shortest of its pages'.
     */
    async listPrompts(): Promise<UpstreamListing> {
        const session = this.#readySession();
        if (session.profile.capabilities.prompts === undefined) return { items: [] };
        const limits = this.options.limits();
        let ttlMs: number | undefined;
        const traces: TraceContext[] = [];
        const control = this.options.tracer?.enabled === true ? { onSpan: (trace: TraceContext) => void (traces.length < MAX_SPAN_LINKS && traces.push(trace)) } : undefined;
        // Each prompt is bounded as its page arrives: what is held while the list is read is what passed.
        const collected = await collectPages(
            async cursor => {
                const page = await session.call('prompts/list', cursor === undefined ? {} : { cursor }, isPromptPage, control);
                if (session.revision.cachingHints) ttlMs = shorterTtl(ttlMs, page.ttlMs);
                return { items: page.prompts, nextCursor: page.nextCursor };
            },
            { maxPages: MAX_LIST_PAGES, maxItems: limits.maxPromptsPerUpstream, maxBytes: limits.maxListBytes },
            prompt => {
                const bounded = boundPrompt(prompt, limits);
                if (typeof bounded !== 'string') return { kept: bounded, bytes: bounded.bytes };
                // The name is cut: it is as untrusted as the rest of the definition.
                this.reportFault('oversized_prompt', 'upstream prompt over the limits; left out', { prompt: prompt.name.slice(0, 64), reason: bounded });
                return undefined;
            }
        );
        if (collected.truncated !== undefined) {
            this.reportFault('list_truncated', 'upstream prompt list cut short', { reason: collected.truncated, prompts: collected.items.length });
        }
        const listing: UpstreamListing = ttlMs === undefined ? collected : { ...collected, ttlMs };
        return traces.length === 0 ? listing : { ...listing, traces };
    }

    /** A prompt, or a 2026-07-28 upstream's request for input first; `continuation` is the retry with that input. */
    async getPrompt(name: string, args: Record<string, string> | undefined, control?: CallControl, continuation?: Continuation): Promise<GetPromptResult | InputRequired> {
        const session = this.#readySession();
        const params: Record<string, unknown> = args === undefined ? { name } : { name, arguments: args };
        if (continuation?.inputResponses !== undefined) params.inputResponses = continuation.inputResponses;
        if (continuation?.requestState !== undefined) params.requestState = continuation.requestState;
        const result = await session.call('prompts/get', params, isGetPromptAnswer, control);
        if ('messages' in result) return this.#own(session, result);
        // Only the stateless revision has multi round-trip requests: from anyone else this answer is malformed.
        if (!session.revision.inputRequired) throw new UpstreamFailedError(this.id, 'invalid result (input_required from a 2025-era server)', 'invalid_result');
        if (this.config.relayInputRequests === 'off') throw new UpstreamFailedError(this.id, 'asked for input (input_required), which relayInputRequests: off refuses', undefined);
        return this.#inputRequired(withoutEnvelope(result));
    }

    /** A 2026-07-28 upstream's request for input, its questions checked and normalised (readInputRequests); one bad, all refused. */
    #inputRequired(result: Omit<InputRequired, 'resultType'>): InputRequired {
        if (result.inputRequests === undefined) return { ...result, resultType: 'input_required' };
        const { maxPerRound } = this.#inputBounds();
        const read = readInputRequests(result.inputRequests, maxPerRound);
        if (typeof read === 'string') throw new UpstreamFailedError(this.id, `invalid result (${read})`, 'invalid_result');
        return { ...result, inputRequests: Object.fromEntries(read), resultType: 'input_required' };
    }

    /** undefined when the upstream does not offer completions. */
    async complete(params: CompleteRequest['params'], control?: CallControl): Promise<CompleteResult | undefined> {
        const session = this.#readySession();
        if (!this.offersCompletions) return undefined;
        // One that declared completions yet cannot answer says method-not-found: an empty completion too.
        const result = await session.callOptional('completion/complete', params, isCompleteResult, control);
        return result === undefined ? undefined : this.#own(session, result);
    }

    /** A 2026-07-28 upstream's result, without what it adds for its own client. */
    #own<T extends object>(session: UpstreamSession, result: T): T {
        return session.stateless ? withoutEnvelope(result) : result;
    }

    /**
     * Declared with the `completions` capability; 2024-11-05 had no such capability, yet its servers could answer
     * completion/complete (one that cannot answers method-not-found, which is an empty completion too).
     */
    get offersCompletions(): boolean {
        const profile = this.#session?.profile;
        if (profile === undefined) return false;
        return profile.capabilities.completions !== undefined || !profile.revision.completionsCapability;
    }

    #inputBounds(): InputBounds {
        return this.options.inputBounds?.() ?? DEFAULT_INPUT_BOUNDS;
    }

    #knownEra(): Era | undefined {
        return this.#configuredEra ?? this.#learnedEra;
    }

    #readySession(): UpstreamSession {
        if (this.#state !== 'ready' || this.#session === undefined) {
            throw new UpstreamFailedError(this.id, this.#state === 'connecting' ? 'still connecting' : 'not connected', undefined);
        }
        return this.#session;
    }

    async #connect(): Promise<void> {
        this.#setState('connecting');
        try {
            const session = await UpstreamSession.open({
                config: this.config,
                clientInfo: this.options.clientInfo,
                log: this.#log,
                knownWire: this.#wire,
                knownEra: this.#knownEra(),
                onEra: era => (this.#learnedEra = era),
                stdio: this.#childOutput,
                limits: this.options.limits,
                onHandshake: client => (this.#connecting = client),
                isClosed: () => this.#state === 'closed',
                credentials: this.#credentials,
                bulkhead: this.#bulkhead,
                reportFault: (kind, message, details) => this.reportFault(kind, message, details),
                onStreamFlood: () => this.reportFault('stream_flood', STREAM_FLOOD.message, STREAM_FLOOD.details),
                onListChanged: () => this.#listChanged(),
                // Until the session is this connection's, its reads have not begun: they will find it as it is then.
                onAnnouncingChanged: changed => {
                    if (changed === this.#session) this.events.publish({ type: 'announcing', upstreamId: this.id });
                },
                onRequest: (method, seconds, error) => this.options.observer?.request(this.id, method, seconds, error),
                onLost: (lost, reason) => this.#drop(lost, reason),
                inputBounds: () => this.#inputBounds(),
                tracer: this.options.tracer ?? NO_TRACER,
                onStray: kind =>
                    this.reportFault(
                        'stray_message',
                        kind === 'answer' ? 'upstream answered no request in flight; dropped' : 'upstream sent progress for no request in flight; dropped'
                    )
            });
            if (this.#state === 'closed') return await session.close();
            if (session.ended) throw new UpstreamFailedError(this.id, 'connection closed', undefined);
            this.#session = session;
            this.#wire = session.wire;
            this.#lastError = undefined;
            // Backoff starts over only once a connection has held for a while, so a server that dies right after
            // connecting is not restarted several times a second.
            clearTimeout(this.#stableTimer);
            this.#stableTimer = setTimeout(() => (this.#attempt = 0), STABLE_AFTER_MS).unref();
            const { profile } = session;
            this.#log.info({ wire: session.wire, server: profile.serverInfo.name, protocol: profile.revision.version }, 'upstream connected');
            if (profile.revision.handshake && session.wire !== 'streamable-http' && this.config.relayInputRequests === 'related') {
                this.#log.info(
                    { wire: session.wire },
                    'upstream told no client capabilities: over stdio and legacy SSE its requests cannot be tied to a client request; set relayInputRequests: exclusive to relay what it asks'
                );
            }
            this.#setState('ready');
        } catch (error) {
            if (this.#state === 'closed') return;
            // The probe's verdict stands only if the connection that followed it worked: a stdio server that exits on
            // the probe has told its era (kept); any other failure may mean the server changed, so ask again.
            if (!(error instanceof ProbeEndedConnection)) this.#learnedEra = undefined;
            // The mapped reason only: raw errors can quote header values or the upstream's response body.
            const failure = toUpstreamError(this.id, error, this.config.timeoutMs);
            const reason = failure instanceof UpstreamFailedError ? failure.reason : 'rejected';
            this.#lastError = new UpstreamFailedError(this.id, reason, undefined).message;
            this.#faults.count('connect_failed');
            this.#scheduleReconnect(`connect failed: ${reason}`);
        }
    }

    /** Runs once per notification, which may come tens of thousands a second: constant work, nothing allocated. */
    #listChanged(): void {
        this.options.observer?.listChanged(this.id);
        if (this.#flood.hit(Date.now())) {
            this.reportFault('list_changed_flood', 'upstream floods notifications/prompts/list_changed', { perSecond: `>${FLOOD_PER_SECOND}` });
        }
        const { tracer } = this.options;
        if (tracer?.enabled !== true) return this.events.publish(this.#promptsChanged);
        const span = tracer.start(LIST_CHANGED, { kind: 'consumer', attributes: { [ATTR.method]: LIST_CHANGED, [ATTR.upstream]: this.id } });
        span?.end();
        this.events.publish(span === undefined ? this.#promptsChanged : { type: 'prompts-changed', upstreamId: this.id, trace: span.context });
    }

    /** Counted once per lost connection, however many requests it cut off. */
    #drop(session: UpstreamSession, reason: string): void {
        if (this.#session !== session || this.#state === 'closed') return;
        this.#session = undefined;
        clearTimeout(this.#stableTimer);
        this.#lastError = new UpstreamFailedError(this.id, reason, undefined).message;
        this.#faults.count('disconnected');
        this.#scheduleReconnect(reason);
    }

    #scheduleReconnect(why: string): void {
        const delay = backoffDelay(this.#attempt++, this.reconnect);
        this.#log.warn({ retryInMs: delay, attempt: this.#attempt }, `upstream down (${why})`);
        this.#setState('down');
        clearTimeout(this.#retryTimer);
        this.#retryTimer = setTimeout(() => {
            this.options.observer?.reconnecting(this.id);
            void this.#connect();
        }, delay).unref();
    }

    #setState(state: UpstreamState): void {
        const previous = this.#state;
        if (previous === state) return;
        this.#state = state;
        this.events.publish({ type: 'state', upstreamId: this.id, state, previous });
    }
}

/** The shorter of two caching hints; a page's hint that is not a whole number of milliseconds >= 0 counts as none. */
function shorterTtl(known: number | undefined, hint: unknown): number | undefined {
    if (typeof hint !== 'number' || !Number.isSafeInteger(hint) || hint < 0) return known;
    return known === undefined ? hint : Math.min(known, hint);
}
