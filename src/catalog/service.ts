/**
 * The gateway's three prompt operations over the catalog: list a page of the
 * merged view, get a prompt from its owning upstream, complete an argument.
 * Transport-agnostic: it takes request params and throws JSON-RPC errors.
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import type {
    CompleteRequest,
    CompleteResult,
    GetPromptResult,
    ListPromptsResult,
    Prompt
} from '@modelcontextprotocol/client';
import { UpstreamFailedError, UpstreamRejectedError } from '../upstream/errors.js';
import type { CallControl } from '../upstream/session.js';
import { checkStringMap, exceeds, quote, validateArguments } from './arguments.js';
import type { Catalog, CatalogEntry } from './catalog.js';
import type { CursorCodec } from './cursor.js';
import type { Visibility } from './fingerprint.js';
import { paginate } from './paginate.js';

export const EMPTY_COMPLETION: CompleteResult = { completion: { values: [], hasMore: false } };

/** The spec's bound on completion values in one result. */
const MAX_COMPLETION_VALUES = 100;

export interface PromptServiceOptions {
    pageSize: number;
    maxArguments: number;
    maxArgumentBytes: number;
    /** Largest result passed back, as JSON bytes. */
    maxResultBytes: number;
    /** Whether arguments a prompt does not declare are forwarded to this upstream. */
    passUnknownArguments: (upstreamId: string) => boolean;
}

/** Who is asking: cursors are bound to its scope, and it sees only the prompts `visible` lets through. */
export interface Caller {
    scope: string;
    visible: Visibility;
}

export class PromptService {
    constructor(
        private readonly catalog: Catalog,
        private cursors: CursorCodec,
        private options: PromptServiceOptions
    ) {}

    /** A reload's new cursor key and page size; cursors sealed with an old key become invalid. */
    reconfigure(cursors: CursorCodec, options: PromptServiceOptions): void {
        this.cursors = cursors;
        this.options = options;
    }

    async list(cursor: string | undefined, caller: Caller): Promise<ListPromptsResult> {
        const start = cursor === undefined ? undefined : this.cursors.decode(cursor);
        if (cursor !== undefined && (start === undefined || start.scope !== caller.scope)) {
            throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor');
        }
        const view = await this.catalog.view();
        const page = paginate(view.segments, start, this.options.pageSize, (id, version) => this.catalog.history(id, version), caller.visible);
        const prompts: Prompt[] = page.items.map(entry => entry.prompt);
        return page.next === undefined ? { prompts } : { prompts, nextCursor: this.cursors.encode({ ...page.next, scope: caller.scope }) };
    }

    async get(name: string, args: unknown, caller: Caller, control?: CallControl): Promise<GetPromptResult> {
        const entry = await this.#lookup(name, caller);
        const { maxArguments, maxArgumentBytes } = this.options;
        const passUnknown = this.options.passUnknownArguments(entry.upstream.id);
        const validArgs = validateArguments(entry.prompt, args, { maxArguments, maxArgumentBytes, passUnknown });
        let result: GetPromptResult;
        try {
            result = await entry.upstream.getPrompt(entry.originalName, validArgs, control);
        } catch (error) {
            throw toProtocolError(error);
        }
        return this.#sizeChecked(entry, result);
    }

    async complete(params: CompleteRequest['params'], caller: Caller, control?: CallControl): Promise<CompleteResult> {
        // Resource templates are not proxied, so there is nothing to complete for them.
        if (params.ref.type !== 'ref/prompt') return EMPTY_COMPLETION;
        const entry = await this.#lookup(params.ref.name, caller);
        const limits = { maxArguments: this.options.maxArguments, maxArgumentBytes: this.options.maxArgumentBytes };
        if (exceeds(params.argument.value, limits.maxArgumentBytes)) {
            throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Argument value too large (at most ${limits.maxArgumentBytes} bytes)`);
        }
        if (params.context?.arguments !== undefined) checkStringMap(params.context.arguments, limits, 'context arguments');
        let result: CompleteResult | undefined;
        try {
            result = await entry.upstream.complete({ ...params, ref: { ...params.ref, name: entry.originalName } }, control);
        } catch (error) {
            throw toProtocolError(error);
        }
        return result === undefined ? EMPTY_COMPLETION : withinSpec(this.#sizeChecked(entry, result));
    }

    /**
     * The entry a caller may use. A hidden prompt takes the very path of a missing one (same wait for the view,
     * same error), so neither the answer nor its timing tells them apart.
     */
    async #lookup(name: string, caller: Caller): Promise<CatalogEntry> {
        const cached = this.catalog.cachedEntry(name);
        if (cached !== undefined && caller.visible(cached)) return cached;
        const entry = (await this.catalog.view()).byName.get(name);
        if (entry === undefined || !caller.visible(entry)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${quote(name)}`);
        return entry;
    }

    /** Measured as the JSON the client would receive; an oversized result is an upstream fault, never forwarded. */
    #sizeChecked<T>(entry: CatalogEntry, result: T): T {
        const limit = this.options.maxResultBytes;
        const json = JSON.stringify(result);
        if (!exceeds(json, limit)) return result;
        entry.upstream.reportFault('oversized_result', 'upstream result over limits.maxResultBytes; not forwarded', { bytes: Buffer.byteLength(json) });
        throw new ProtocolError(ProtocolErrorCode.InternalError, `Upstream ${entry.upstream.id} failed: result larger than ${limit} bytes`);
    }
}

/** An upstream may offer more values than the spec allows: the first 100 are passed on, with `hasMore`. */
function withinSpec(result: CompleteResult): CompleteResult {
    const { values } = result.completion;
    if (values.length <= MAX_COMPLETION_VALUES) return result;
    return { ...result, completion: { ...result.completion, values: values.slice(0, MAX_COMPLETION_VALUES), hasMore: true } };
}

function toProtocolError(error: unknown): ProtocolError {
    if (error instanceof UpstreamRejectedError) return new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
    return new ProtocolError(ProtocolErrorCode.InternalError, error instanceof UpstreamFailedError ? error.message : 'Internal error');
}
