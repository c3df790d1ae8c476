/**
 * The gateway's three prompt operations over the catalog: list a page of the
 * merged view, get a prompt from its owning upstream, complete an argument.
 * Transport-agnostic: it takes request params and throws JSON-RPC errors.
 */
import { performance } from 'node:perf_hooks';
import { ProtocolError } from '@modelcontextprotocol/client';
import type { CompleteRequest, CompleteResult, GetPromptResult, ListPromptsResult, Prompt } from '@modelcontextprotocol/client';
import { CODE } from '../protocol/errors.js';
import { Bus } from '../lib/bus.js';
import { mintInstanceTag } from '../lib/instance-tag.js';
import { exceeds, jsonWithin } from '../lib/json-bounds.js';
import { checkStringMap, validateArguments } from './arguments.js';
import type { Catalog, CatalogEntry, Visibility } from './catalog.js';
import type { CursorCodec } from './cursor.js';
import { withDefaults } from './overrides.js';
import { traceListReads, type ListRead } from './list-cache.js';
import { paginate } from './paginate.js';
import { HeldInteractions, type HeldStep } from './held-interactions.js';
import { expiredQuestion, Interaction, type ClientInput, type InputEvent, type InputRequestHandler, type InteractionBounds, type InteractionPath } from './interaction.js';
import { MAX_REQUEST_STATE_BYTES, type OpenedState, type RequestStates, type StateBinding } from './request-state.js';
import { isInputRequired, UpstreamFailedError, UpstreamRejectedError, type CallControl, type Continuation, type InputRequired } from './upstream-port.js';
import type { VisibleSlices } from './visible-slices.js';
import type { TraceSpan } from '../diagnostics/tracer.js';
import { outcomeOf, UnknownPromptError, type Operation, type Outcome, type UsageEvent } from './usage.js';

const EMPTY_COMPLETION: CompleteResult = { completion: { values: [], hasMore: false } };

/** The spec's bound on completion values in one result. */
const MAX_COMPLETION_VALUES = 100;

export interface PromptServiceOptions {
    pageSize: number;
    maxArguments: number;
    maxArgumentBytes: number;
    /** Largest result passed back, as JSON bytes. */
    maxResultBytes: number;
    /** Deepest nesting of objects and arrays in a result passed back. */
    maxJsonDepth: number;
    /** Whether arguments a prompt does not declare are forwarded to this upstream. */
    passUnknownArguments: (upstreamId: string) => boolean;
    /** config inputRequests, with limits.maxBodyBytes as maxAnswerBytes. */
    input: InteractionBounds;
}

/** One prompts/get as the dispatcher (or the prompts command) hands it over. */
export interface GetRequest {
    readonly name: string;
    /** The client's arguments, unchecked. */
    readonly args: unknown;
    readonly caller: Caller;
    readonly control?: CallControl | undefined;
    /** A 2026-07-28 client's retry: its inputResponses and the requestState it was given. */
    readonly continuation?: Continuation | undefined;
    /** How the client answers input requests. Absent (the prompts command): an upstream's input_required is returned sealed, for the caller to report. */
    readonly input?: ClientInput | undefined;
    /** What its usage event names of its trace. */
    readonly trace?: UsageEvent['trace'];
    /** Called once the name resolved to a prompt the caller sees (never for a hidden or missing one): the trace names it then. */
    readonly onResolved?: (() => void) | undefined;
}

/** -32602 for a held question's state sealed by another gateway instance. */
const ELSEWHERE = 'This question was asked by another gateway replica; get the prompt again without requestState';

/** What a get knows once its prompt is found: shared by the paths of input (interaction.ts). */
interface Get {
    readonly request: GetRequest;
    readonly entry: CatalogEntry;
    /** As sent upstream: checked, defaults filled in. */
    readonly args: Record<string, string> | undefined;
    readonly binding: StateBinding;
    /** For a 2025 client: asks it, counts the rounds; built when the upstream first asks (#interactionOf). */
    interaction: Interaction | undefined;
    /** Rounds of input this client request put to its client (a 2026-07-28 client's: one per input_required), for the usage event. */
    rounds: number;
    path: InteractionPath | undefined;
}

/** Who is asking: cursors are bound to its scope, and it sees only the prompts `visible` lets through. */
export interface Caller {
    scope: string;
    visible: Visibility;
}

export class PromptService {
    /** Every list, get and completion, once it has ended; listeners run synchronously, on the request's own path. */
    readonly usage = new Bus<UsageEvent>();
    /** Every input request's end (interaction.ts), for metrics. */
    readonly inputs = new Bus<InputEvent>();
    /** 2025 upstreams' requests held for 2026-07-28 clients; its instance tag names this gateway in their states. */
    readonly held: HeldInteractions<GetPromptResult | InputRequired>;

    constructor(
        private readonly catalog: Catalog,
        private cursors: CursorCodec,
        private options: PromptServiceOptions,
        private readonly slices: VisibleSlices,
        private states: RequestStates,
        instance = mintInstanceTag()
    ) {
        this.held = new HeldInteractions(instance, () => this.options.input);
    }

    /** A reload's new keys and page size; cursors and request states sealed with an old key become invalid. */
    reconfigure(cursors: CursorCodec, options: PromptServiceOptions, states: RequestStates): void {
        this.cursors = cursors;
        this.options = options;
        this.states = states;
    }

    /** `span`: the request's span (tracing on), told which upstreams' lists it asked for (traceListReads); `requestId`: the request's. */
    list(
        cursor: string | undefined,
        caller: Caller,
        trace?: UsageEvent['trace'],
        span?: Pick<TraceSpan, 'sampled' | 'set' | 'event' | 'link'>,
        requestId?: string
    ): Promise<ListPromptsResult> {
        return this.#recorded(new Usage('list', caller, requestId, trace), this.#list(cursor, caller, span));
    }

    async #list(cursor: string | undefined, caller: Caller, span: Pick<TraceSpan, 'sampled' | 'set' | 'event' | 'link'> | undefined): Promise<ListPromptsResult> {
        const start = cursor === undefined ? undefined : this.cursors.decode(cursor);
        if (cursor !== undefined && (start === undefined || start.scope !== caller.scope)) {
            throw new ProtocolError(CODE.invalidParams, 'Invalid cursor');
        }
        const reads: ListRead[] | undefined = span?.sampled === true ? [] : undefined;
        const view = await this.catalog.view(reads);
        if (reads !== undefined) traceListReads(span!, reads);
        const slice = this.slices.of(view, caller.scope, caller.visible);
        const page = paginate(view.segments, start, this.options.pageSize, (id, version) => this.catalog.history(id, version), slice);
        const prompts: Prompt[] = page.items.map(entry => entry.prompt);
        return page.next === undefined ? { prompts } : { prompts, nextCursor: this.cursors.encode({ ...page.next, scope: caller.scope }) };
    }

    /**
     * A prompt, asking its client on the way what its upstream asks (interaction.ts): a 2025 client on the stream of
     * its request, a 2026-07-28 client in `input_required` rounds, each `requestState` sealed to this caller, prompt,
     * arguments and round; `continuation` is such a client's retry with its answers, its state opened here.
     */
    get(request: GetRequest): Promise<GetPromptResult | InputRequired> {
        const usage = new Usage('get', request.caller, request.control?.forwarded?.requestId, request.trace);
        return this.#recorded(usage, this.#get(request, usage));
    }

    async #get(request: GetRequest, usage: Usage): Promise<GetPromptResult | InputRequired> {
        const { name, caller, input, continuation } = request;
        const entry = (usage.entry = await this.#lookup(name, caller));
        request.onResolved?.();
        const { maxArguments, maxArgumentBytes } = this.options;
        const passUnknown = this.options.passUnknownArguments(entry.upstream.id);
        const args = validateArguments(entry.prompt, withDefaults(request.args, entry.defaults), { maxArguments, maxArgumentBytes, passUnknown });
        const binding = { scope: caller.scope, holder: input?.holder ?? '', name, args };
        const get = usage.follow({ request, entry, args, binding, interaction: undefined, rounds: 0, path: undefined });
        const opened = continuation?.requestState === undefined ? undefined : this.#opened(continuation.requestState, get);
        if (opened?.kind === 'h') return this.#resumed(get, opened.heldId, opened.round);
        // A 2026-07-28 client's first get: what a 2025 upstream asks on its way is held for its retries (row D).
        if (input !== undefined && input.ask === undefined && continuation === undefined) return this.#held(get, input);
        // A kind u state's round: the client's retry answers it; the upstream's next input_required is the one after.
        const upstreamContinuation = continuation === undefined ? undefined : { inputResponses: continuation.inputResponses, requestState: opened?.state };
        return this.#answered(get, await this.#call(get, upstreamContinuation), opened?.round ?? 0);
    }

    /** The client's retry: its state opened, or -32602 saying why (a state sealed for another caller, prompt, arguments or upstream is "invalid"). */
    #opened(sealed: string, get: Get): OpenedState {
        const opened = this.states.open(sealed, get.binding, this.held.instance);
        if (opened === 'expired') throw new ProtocolError(CODE.invalidParams, expiredQuestion(this.options.input.answerTimeoutMs));
        if (opened === 'elsewhere') throw new ProtocolError(CODE.invalidParams, ELSEWHERE);
        if (opened === 'invalid' || (opened.kind === 'u' && opened.upstreamId !== get.entry.upstream.id)) throw new ProtocolError(CODE.invalidParams, 'Invalid requestState');
        return opened;
    }

    /** The upstream's answer; a 2025 client is asked on its stream what a 2025 upstream asks on the way (row C). */
    #call(get: Get, continuation: Continuation | undefined): Promise<GetPromptResult | InputRequired> {
        const { entry, args, request } = get;
        if (request.input?.ask === undefined) return entry.upstream.getPrompt(entry.originalName, args, request.control, continuation);
        const onInputRequest: InputRequestHandler = (asked, signal) => this.#interactionOf(get).relay(asked, signal);
        return entry.upstream.getPrompt(entry.originalName, args, { ...request.control, onInputRequest }, continuation);
    }

    /**
     * A 2025 client's interaction, built when its upstream first asks (an input_required, or a request of its own):
     * most gets ask nothing, and they allocate nothing for it.
     */
    #interactionOf(get: Get): Interaction {
        get.interaction ??= this.#interaction(get.entry, get.request, get.request.input!);
        return get.interaction;
    }

    /** A 2026-07-28 client's first get, its upstream's requests held (nothing is, unless a 2025 upstream asks). */
    async #held(get: Get, input: ClientInput): Promise<GetPromptResult | InputRequired> {
        const { entry, args, request } = get;
        const context = { owner: { client: request.caller.scope, holder: input.holder }, input, upstream: entry.upstream, publish: this.#publishInput };
        const step = await this.held.start(onInputRequest => entry.upstream.getPrompt(entry.originalName, args, { ...request.control, onInputRequest }), context);
        return this.#heldAnswer(get, step, 0);
    }

    /** A 2026-07-28 client's retry answering a held 2025 upstream's questions. */
    async #resumed(get: Get, heldId: string, round: number): Promise<GetPromptResult | InputRequired> {
        const { caller, input, continuation, control } = get.request;
        const owner = { client: caller.scope, holder: input?.holder ?? '' };
        const resumed = this.held.resume(heldId, owner, round, continuation?.inputResponses, control?.signal);
        if (resumed === 'expired') throw new ProtocolError(CODE.invalidParams, expiredQuestion(this.options.input.answerTimeoutMs));
        if (resumed === 'invalid') throw new ProtocolError(CODE.invalidParams, 'Invalid requestState');
        return this.#heldAnswer(get, await resumed, round);
    }

    /** A held get's step as the client sees it: its questions with a state naming them (kind h), or the upstream's answer. */
    #heldAnswer(get: Get, step: HeldStep<GetPromptResult | InputRequired>, round: number): Promise<GetPromptResult | InputRequired> | InputRequired {
        if ('done' in step) return this.#answered(get, step.done, round);
        const { heldId, expiresAt, inputRequests } = step.asking;
        get.rounds = 1;
        get.path = 'request_to_mrtr';
        const requestState = this.states.sealHeld(this.held.instance, heldId, step.asking.round, get.binding, expiresAt);
        return { resultType: 'input_required', inputRequests, requestState };
    }

    /** An answer checked; `input_required` asked of a 2025 client (row B), or passed to a 2026-07-28 one sealed (row A). */
    async #answered(get: Get, answer: GetPromptResult | InputRequired, round: number): Promise<GetPromptResult | InputRequired> {
        const result = this.#sizeChecked(get.entry, answer, get.request.control?.forwarded?.requestId);
        if (!isInputRequired(result)) return result;
        if (get.request.input?.ask === undefined) return this.#passed(get, result, round + 1);
        return this.#interactionOf(get).drive(result, continuation => this.#retried(get, continuation), get.request.control?.signal);
    }

    /** Row B's retry of the upstream with the client's answers, for a caller that must still see the prompt. */
    async #retried(get: Get, continuation: Continuation): Promise<GetPromptResult | InputRequired> {
        const { entry, args, request } = get;
        if (!request.caller.visible(entry)) throw new UnknownPromptError(request.name, entry);
        return this.#sizeChecked(entry, await entry.upstream.getPrompt(entry.originalName, args, request.control, continuation), request.control?.forwarded?.requestId);
    }

    /**
     * Row A: a 2026-07-28 upstream's input_required passed to a 2026-07-28 client, its requests checked against what
     * the client declared (without `input`, for the prompts command, as they came), its state sealed with the round.
     */
    #passed(get: Get, result: InputRequired, round: number): InputRequired {
        const { entry, request } = get;
        get.rounds = 1;
        get.path = 'mrtr';
        let passed: InputRequired = result;
        if (request.input !== undefined) passed = { ...result, inputRequests: this.#interaction(entry, request, request.input).passOn(result.inputRequests, round) };
        if (result.requestState !== undefined && exceeds(result.requestState, MAX_REQUEST_STATE_BYTES)) {
            entry.upstream.reportFault('oversized_result', 'upstream requestState over 64 KiB; not forwarded', { requestId: request.control?.forwarded?.requestId });
            throw new ProtocolError(CODE.internalError, `Upstream ${entry.upstream.id} failed: requestState larger than ${MAX_REQUEST_STATE_BYTES} bytes`);
        }
        return { ...passed, requestState: this.states.sealUpstream(result.requestState, entry.upstream.id, round, get.binding) };
    }

    #interaction(entry: CatalogEntry, request: GetRequest, input: ClientInput): Interaction {
        const requestId = request.control?.forwarded?.requestId;
        return new Interaction({ upstream: entry.upstream, client: request.caller.scope, requestId, input, bounds: this.options.input, publish: this.#publishInput });
    }

    readonly #publishInput = (event: InputEvent): void => this.inputs.publish(event);

    complete(params: CompleteRequest['params'], caller: Caller, control?: CallControl, trace?: UsageEvent['trace'], onResolved?: () => void): Promise<CompleteResult> {
        const usage = new Usage('complete', caller, control?.forwarded?.requestId, trace);
        return this.#recorded(usage, this.#complete(params, caller, control, usage, onResolved));
    }

    async #complete(
        params: CompleteRequest['params'],
        caller: Caller,
        control: CallControl | undefined,
        usage: Usage,
        onResolved: (() => void) | undefined
    ): Promise<CompleteResult> {
        // Resource templates are not proxied, so there is nothing to complete for them.
        if (params.ref.type !== 'ref/prompt') return EMPTY_COMPLETION;
        const entry = (usage.entry = await this.#lookup(params.ref.name, caller));
        onResolved?.();
        const limits = { maxArguments: this.options.maxArguments, maxArgumentBytes: this.options.maxArgumentBytes };
        if (exceeds(params.argument.value, limits.maxArgumentBytes)) {
            throw new ProtocolError(CODE.invalidParams, `Argument value too large (at most ${limits.maxArgumentBytes} bytes)`);
        }
        if (params.context?.arguments !== undefined) checkStringMap(params.context.arguments, limits, 'context arguments');
        const result = await entry.upstream.complete({ ...params, ref: { ...params.ref, name: entry.originalName } }, control);
        return result === undefined ? EMPTY_COMPLETION : withinSpec(this.#sizeChecked(entry, result, control?.forwarded?.requestId));
    }

    /** Waits for one operation, publishes how it ended and how long it took, and turns upstream failures into JSON-RPC errors. */
    async #recorded<T>(usage: Usage, work: Promise<T>): Promise<T> {
        try {
            const result = await work;
            this.usage.publish(usage.ended('ok'));
            return result;
        } catch (error) {
            if (error instanceof UnknownPromptError) usage.entry = error.hidden;
            this.usage.publish(usage.ended(outcomeOf(error)));
            throw toProtocolError(error);
        }
    }

    /**
     * The entry a caller may use. A hidden prompt takes the very path of a missing one (same wait for the view,
     * same error), so neither the answer nor its timing tells them apart.
     */
    async #lookup(name: string, caller: Caller): Promise<CatalogEntry> {
        const cached = this.catalog.cachedEntry(name);
        if (cached !== undefined && caller.visible(cached)) return cached;
        const entry = (await this.catalog.view()).byName.get(name);
        if (entry === undefined || !caller.visible(entry)) throw new UnknownPromptError(name, entry);
        return entry;
    }

    /**
     * Measured as the JSON the client would receive, without serialising it (json-bounds.ts); an oversized result is an
     * upstream fault, never forwarded. Depth first: serialising a result nested thousands deep would overflow the stack.
     * `requestId`: the caller's, for the fault's line.
     */
    #sizeChecked<T>(entry: CatalogEntry, result: T, requestId: string | undefined): T {
        const { maxJsonDepth, maxResultBytes } = this.options;
        const bounds = jsonWithin(result, maxJsonDepth, maxResultBytes);
        if (bounds.within) return result;
        if (bounds.reason === 'too_deep') {
            entry.upstream.reportFault('oversized_result', 'upstream result nested deeper than limits.maxJsonDepth; not forwarded', { requestId });
            throw new ProtocolError(CODE.internalError, `Upstream ${entry.upstream.id} failed: result nested deeper than ${maxJsonDepth} levels`);
        }
        entry.upstream.reportFault('oversized_result', 'upstream result over limits.maxResultBytes; not forwarded', { requestId, bytes: bounds.bytes });
        throw new ProtocolError(CODE.internalError, `Upstream ${entry.upstream.id} failed: result larger than ${maxResultBytes} bytes`);
    }
}

/**
 * One operation's usage event, filled in as the operation goes (its entry as soon as it is known) and published as it
 * is once it ends: nothing else is built per request to record it.
 */
class Usage implements UsageEvent {
    readonly client: string;
    entry: CatalogEntry | undefined = undefined;
    outcome: Outcome = 'ok';
    seconds = 0;
    rounds?: number;
    path?: InteractionPath;
    trace?: UsageEvent['trace'];
    /**
     * A get's state, once its prompt is found: the rounds of input it put to its client. Private: the event is
     * published as it is, and the state holds the request (its arguments, its forwarded headers).
     */
    #get: Get | undefined = undefined;
    readonly #started = performance.now();

    constructor(
        readonly operation: Operation,
        caller: Caller,
        readonly requestId: string | undefined,
        trace: UsageEvent['trace']
    ) {
        this.client = caller.scope;
        if (trace !== undefined) this.trace = trace;
    }

    /** Follows `get`'s rounds of input from now on. */
    follow(get: Get): Get {
        this.#get = get;
        return get;
    }

    ended(outcome: Outcome): this {
        this.outcome = outcome;
        this.seconds = (performance.now() - this.#started) / 1000;
        const asked = this.#get?.interaction ?? this.#get;
        if (asked !== undefined && asked.rounds !== 0 && asked.path !== undefined) {
            this.rounds = asked.rounds;
            this.path = asked.path;
        }
        return this;
    }
}

/** An upstream may offer more values than the spec allows: the first 100 are passed on, with `hasMore`. */
function withinSpec(result: CompleteResult): CompleteResult {
    const { values } = result.completion;
    if (values.length <= MAX_COMPLETION_VALUES) return result;
    return { ...result, completion: { ...result.completion, values: values.slice(0, MAX_COMPLETION_VALUES), hasMore: true } };
}

function toProtocolError(error: unknown): ProtocolError {
    if (error instanceof ProtocolError) return error;
    if (error instanceof UpstreamRejectedError) return new ProtocolError(error.code, error.message, error.data);
    return new ProtocolError(CODE.internalError, error instanceof UpstreamFailedError ? error.message : 'Internal error');
}
