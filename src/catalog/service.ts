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
import { exceeds, exceedsDepth } from '../lib/json-bounds.js';
import { checkStringMap, validateArguments } from './arguments.js';
import type { Catalog, CatalogEntry, Visibility } from './catalog.js';
import type { CursorCodec } from './cursor.js';
import { withDefaults } from './overrides.js';
import { paginate } from './paginate.js';
import { MAX_REQUEST_STATE_BYTES, type RequestStates } from './request-state.js';
import { isInputRequired, UpstreamFailedError, UpstreamRejectedError, type CallControl, type Continuation, type InputRequired } from './upstream-port.js';
import type { VisibleSlices } from './visible-slices.js';
import { outcomeOf, UnknownPromptError, type Operation, type UsageEvent } from './usage.js';

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
}

/** Who is asking: cursors are bound to its scope, and it sees only the prompts `visible` lets through. */
export interface Caller {
    scope: string;
    visible: Visibility;
}

export class PromptService {
    /** Every list, get and completion, once it has ended; listeners run synchronously, on the request's own path. */
    readonly usage = new Bus<UsageEvent>();

    constructor(
        private readonly catalog: Catalog,
        private cursors: CursorCodec,
        private options: PromptServiceOptions,
        private readonly slices: VisibleSlices,
        private states: RequestStates
    ) {}

    /** A reload's new keys and page size; cursors and request states sealed with an old key become invalid. */
    reconfigure(cursors: CursorCodec, options: PromptServiceOptions, states: RequestStates): void {
        this.cursors = cursors;
        this.options = options;
        this.states = states;
    }

    list(cursor: string | undefined, caller: Caller): Promise<ListPromptsResult> {
        return this.#recorded('list', caller, async () => {
            const start = cursor === undefined ? undefined : this.cursors.decode(cursor);
            if (cursor !== undefined && (start === undefined || start.scope !== caller.scope)) {
                throw new ProtocolError(CODE.invalidParams, 'Invalid cursor');
            }
            const view = await this.catalog.view();
            const slice = this.slices.of(view, caller.scope, caller.visible);
            const page = paginate(view.segments, start, this.options.pageSize, (id, version) => this.catalog.history(id, version), slice);
            const prompts: Prompt[] = page.items.map(entry => entry.prompt);
            return page.next === undefined ? { prompts } : { prompts, nextCursor: this.cursors.encode({ ...page.next, scope: caller.scope }) };
        });
    }

    /**
     * A prompt, or (from a 2026-07-28 upstream) its request for input first, whose `requestState` the gateway seals to
     * this caller and prompt; `continuation` is the client's retry with the input, its state opened here.
     */
    get(name: string, args: unknown, caller: Caller, control?: CallControl, continuation?: Continuation): Promise<GetPromptResult | InputRequired> {
        return this.#recorded('get', caller, async found => {
            const entry = found(await this.#lookup(name, caller));
            const { maxArguments, maxArgumentBytes } = this.options;
            const passUnknown = this.options.passUnknownArguments(entry.upstream.id);
            const validArgs = validateArguments(entry.prompt, withDefaults(args, entry.defaults), { maxArguments, maxArgumentBytes, passUnknown });
            const binding = { scope: caller.scope, name };
            const upstreamContinuation = continuation === undefined ? undefined : this.#opened(continuation, entry, binding);
            const result = this.#sizeChecked(entry, await entry.upstream.getPrompt(entry.originalName, validArgs, control, upstreamContinuation));
            if (!isInputRequired(result) || result.requestState === undefined) return result;
            if (exceeds(result.requestState, MAX_REQUEST_STATE_BYTES)) {
                entry.upstream.reportFault('oversized_result', 'upstream requestState over 64 KiB; not forwarded');
                throw new ProtocolError(CODE.internalError, `Upstream ${entry.upstream.id} failed: requestState larger than ${MAX_REQUEST_STATE_BYTES} bytes`);
            }
            return { ...result, requestState: this.states.seal(result.requestState, entry.upstream.id, binding) };
        });
    }

    /** The client's retry with the upstream's own state: a state sealed for another caller, prompt or upstream is -32602. */
    #opened(continuation: Continuation, entry: CatalogEntry, binding: { scope: string; name: string }): Continuation {
        const { inputResponses, requestState } = continuation;
        if (requestState === undefined) return { inputResponses };
        const opened = this.states.open(requestState, binding);
        if (opened === undefined || opened.upstreamId !== entry.upstream.id) throw new ProtocolError(CODE.invalidParams, 'Invalid requestState');
        return { inputResponses, requestState: opened.state };
    }

    complete(params: CompleteRequest['params'], caller: Caller, control?: CallControl): Promise<CompleteResult> {
        return this.#recorded('complete', caller, async found => {
            // Resource templates are not proxied, so there is nothing to complete for them.
            if (params.ref.type !== 'ref/prompt') return EMPTY_COMPLETION;
            const entry = found(await this.#lookup(params.ref.name, caller));
            const limits = { maxArguments: this.options.maxArguments, maxArgumentBytes: this.options.maxArgumentBytes };
            if (exceeds(params.argument.value, limits.maxArgumentBytes)) {
                throw new ProtocolError(CODE.invalidParams, `Argument value too large (at most ${limits.maxArgumentBytes} bytes)`);
            }
            if (params.context?.arguments !== undefined) checkStringMap(params.context.arguments, limits, 'context arguments');
            const result = await entry.upstream.complete({ ...params, ref: { ...params.ref, name: entry.originalName } }, control);
            return result === undefined ? EMPTY_COMPLETION : withinSpec(this.#sizeChecked(entry, result));
        });
    }

    /**
     * Runs one operation, publishes how it ended and how long it took, and turns upstream failures into JSON-RPC
     * errors. `found` names the catalog entry as soon as the operation knows it.
     */
    async #recorded<T>(operation: Operation, caller: Caller, run: (found: (entry: CatalogEntry) => CatalogEntry) => Promise<T>): Promise<T> {
        const started = performance.now();
        let entry: CatalogEntry | undefined;
        const found = (known: CatalogEntry) => (entry = known);
        const publish = (outcome: UsageEvent['outcome']) => {
            const seconds = (performance.now() - started) / 1000;
            this.usage.publish({ operation, client: caller.scope, entry, outcome, seconds });
        };
        try {
            const result = await run(found);
            publish('ok');
            return result;
        } catch (error) {
            if (error instanceof UnknownPromptError) entry = error.hidden;
            publish(outcomeOf(error));
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
     * Measured as the JSON the client would receive; an oversized result is an upstream fault, never forwarded.
     * Depth first: serialising a result nested thousands deep would overflow the stack.
     */
    #sizeChecked<T>(entry: CatalogEntry, result: T): T {
        if (exceedsDepth(result, this.options.maxJsonDepth)) {
            entry.upstream.reportFault('oversized_result', 'upstream result nested deeper than limits.maxJsonDepth; not forwarded');
            throw new ProtocolError(CODE.internalError, `Upstream ${entry.upstream.id} failed: result nested deeper than ${this.options.maxJsonDepth} levels`);
        }
        const limit = this.options.maxResultBytes;
        const json = JSON.stringify(result);
        if (!exceeds(json, limit)) return result;
        entry.upstream.reportFault('oversized_result', 'upstream result over limits.maxResultBytes; not forwarded', { bytes: Buffer.byteLength(json) });
        throw new ProtocolError(CODE.internalError, `Upstream ${entry.upstream.id} failed: result larger than ${limit} bytes`);
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
