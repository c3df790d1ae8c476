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
import type { Catalog, CatalogEntry } from './catalog.js';
import type { CursorCodec } from './cursor.js';
import { paginate } from './paginate.js';

export const EMPTY_COMPLETION: CompleteResult = { completion: { values: [], hasMore: false } };

export interface PromptServiceOptions {
    pageSize: number;
}

/** Who is asking; cursors are bound to it. */
export interface Caller {
    scope: string;
}

export class PromptService {
    constructor(
        private readonly catalog: Catalog,
        private cursors: CursorCodec,
        private options: PromptServiceOptions
    ) {}

    /** A reload's new cursor key and page size; cursors signed with an old key become invalid. */
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
        const page = paginate(view.segments, start, this.options.pageSize, (id, version) => this.catalog.history(id, version));
        const prompts: Prompt[] = page.items.map(entry => entry.prompt);
        return page.next === undefined ? { prompts } : { prompts, nextCursor: this.cursors.encode({ ...page.next, scope: caller.scope }) };
    }

    async get(name: string, args: unknown, signal?: AbortSignal): Promise<GetPromptResult> {
        const entry = await this.#lookup(name);
        const validArgs = validateArguments(entry.prompt, args);
        try {
            return await entry.upstream.getPrompt(entry.originalName, validArgs, signal);
        } catch (error) {
            throw toProtocolError(error);
        }
    }

    async complete(params: CompleteRequest['params'], signal?: AbortSignal): Promise<CompleteResult> {
        // Resource templates are not proxied, so there is nothing to complete for them.
        if (params.ref.type !== 'ref/prompt') return EMPTY_COMPLETION;
        const entry = await this.#lookup(params.ref.name);
        try {
            const result = await entry.upstream.complete({ ...params, ref: { ...params.ref, name: entry.originalName } }, signal);
            return result ?? EMPTY_COMPLETION;
        } catch (error) {
            throw toProtocolError(error);
        }
    }

    async #lookup(name: string): Promise<CatalogEntry> {
        const entry = this.catalog.cachedEntry(name) ?? (await this.catalog.view()).byName.get(name);
        if (entry === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${name}`);
        return entry;
    }
}

/**
 * Arguments must be strings; every argument the prompt declares as required
 * must be present. Undeclared arguments pass through: the upstream decides.
 */
export function validateArguments(prompt: Prompt, args: unknown): Record<string, string> | undefined {
    if (args === undefined || args === null) {
        assertRequiredPresent(prompt, new Map());
        return undefined;
    }
    if (typeof args !== 'object' || Array.isArray(args)) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid arguments: expected an object of string values');
    }
    // A Map keeps names such as "__proto__" as plain data.
    const values = new Map(Object.entries(args));
    const notStrings = [...values].filter(([, value]) => typeof value !== 'string').map(([key]) => key);
    if (notStrings.length > 0) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments: values must be strings (${notStrings.map(quote).join(', ')})`);
    }
    assertRequiredPresent(prompt, values);
    return args as Record<string, string>;
}

function assertRequiredPresent(prompt: Prompt, values: ReadonlyMap<string, unknown>): void {
    const missing = (prompt.arguments ?? []).filter(arg => arg.required === true && !values.has(arg.name)).map(arg => arg.name);
    if (missing.length > 0) {
        throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `Missing required argument${missing.length > 1 ? 's' : ''}: ${missing.map(quote).join(', ')}`
        );
    }
}

function quote(name: string): string {
    return JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}...` : name);
}

function toProtocolError(error: unknown): ProtocolError {
    if (error instanceof UpstreamRejectedError) return new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
    return new ProtocolError(ProtocolErrorCode.InternalError, error instanceof UpstreamFailedError ? error.message : 'Internal error');
}
