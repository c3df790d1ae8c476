/**
 * The MCP methods the gateway serves, for every transport (Streamable HTTP and
 * stdio hand it parsed, envelope-checked messages): `ping`, `prompts/list`,
 * `prompts/get`, `completion/complete`, and the notifications `initialized` and
 * `cancelled`. `initialize` itself is the transport's (it opens the session),
 * with the answer built here.
 *
 * Errors: a method the gateway does not serve is -32601, malformed params
 * -32602 `Invalid params for <method>`, and the catalog's errors pass as they
 * are (it throws JSON-RPC errors). Anything else is -32603 "Internal error":
 * messages never carry exception text, inputs or internals; the log gets them.
 * A request cancelled by its client, or whose session ended, gets no answer; one
 * reusing the id of a request still in flight in its session is -32600.
 */
import {
    ProtocolError,
    ProtocolErrorCode,
    type InitializeResult,
    type JSONRPCErrorResponse,
    type JSONRPCNotification,
    type JSONRPCRequest,
    type JSONRPCResponse
} from '@modelcontextprotocol/client';
import type { PromptService } from '../catalog/service.js';
import { cancelledRequestId } from '../lib/json-rpc.js';
import { describeError, type Logger } from '../observability/logger.js';
import { GATEWAY_INFO } from '../version.js';
import type { InFlight } from './in-flight.js';
import { completeParams, getParams, initializeParams, listParams, metaOf, type InitializeParams, type Params, type ProgressToken } from './params.js';
import { adaptGetPrompt, adaptProgress, adaptPromptList } from './revisions.js';
import type { Session } from './sessions.js';
import { negotiateVersion } from './versions.js';

/** What an upstream call is given: the catalog's PromptService takes it with get and complete. */
type CallControl = NonNullable<Parameters<PromptService['get']>[3]>;

/** One request as its transport carries it. */
export interface Exchange {
    session: Session;
    /** Aborted when the client cancels, goes away, or its session ends: the upstream call stops, the answer is dropped. */
    cancel: AbortController;
    /** Sends a notification about this request (progress) where its answer goes; absent where none can go. */
    notify?: ((notification: JSONRPCNotification) => void) | undefined;
}

export interface DispatcherOptions {
    service: PromptService;
    inFlight: InFlight;
    logger: Logger;
}

export interface Initialized {
    /** What the client sent, checked. */
    params: InitializeParams;
    /** The revision settled on. */
    protocolVersion: string;
    result: InitializeResult;
}

/** The answer to `initialize`, or undefined when its params are malformed. */
export function initialize(params: Params, completions: boolean): Initialized | undefined {
    const valid = initializeParams(params);
    if (valid === undefined) return undefined;
    const protocolVersion = negotiateVersion(valid.protocolVersion);
    const capabilities = { prompts: { listChanged: true }, ...(completions ? { completions: {} } : {}) };
    return { params: valid, protocolVersion, result: { protocolVersion, capabilities, serverInfo: GATEWAY_INFO } };
}

export function invalidParams(method: string): ProtocolError {
    return new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params for ${method}`);
}

function methodNotFound(): ProtocolError {
    return new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
}

export class Dispatcher {
    constructor(private readonly options: DispatcherOptions) {}

    /** The response to `request`; undefined when it was cancelled (no answer is due). Never throws. */
    async answer(request: JSONRPCRequest, exchange: Exchange): Promise<JSONRPCResponse | undefined> {
        const { session, cancel } = exchange;
        // Ids are how notifications/cancelled names a request: a second one in flight under the same id would make it ambiguous.
        if (session.requests.has(request.id)) {
            return errorResponse(request, { code: ProtocolErrorCode.InvalidRequest, message: 'Invalid Request: id already in use by a request in flight' });
        }
        session.requests.set(request.id, cancel);
        try {
            const result = await this.#run(request, exchange);
            return cancel.signal.aborted ? undefined : { jsonrpc: '2.0', id: request.id, result };
        } catch (error) {
            return cancel.signal.aborted ? undefined : errorResponse(request, this.#errorOf(error, request.method));
        } finally {
            if (session.requests.get(request.id) === cancel) session.requests.delete(request.id);
        }
    }

    notification(notification: JSONRPCNotification, session: Session): void {
        if (notification.method !== 'notifications/cancelled') return;
        const requestId = cancelledRequestId(notification);
        if (requestId !== undefined) session.requests.get(requestId)?.abort();
    }

    async #run(request: JSONRPCRequest, exchange: Exchange): Promise<Record<string, unknown>> {
        const { method } = request;
        const params: Params = request.params;
        const { service, inFlight } = this.options;
        const { session } = exchange;
        switch (method) {
            case 'ping':
                if (metaOf(params) === undefined) throw invalidParams(method);
                return {};
            case 'prompts/list': {
                const valid = listParams(params) ?? throwError(invalidParams(method));
                return adaptPromptList(await inFlight.track(() => service.list(valid.cursor, session.caller)), session.revision);
            }
            case 'prompts/get': {
                const valid = getParams(params) ?? throwError(invalidParams(method));
                const control = this.#control(exchange, valid.progressToken);
                return adaptGetPrompt(await inFlight.track(() => service.get(valid.name, valid.arguments, session.caller, control)), session.revision);
            }
            case 'completion/complete': {
                if (!session.record.completions) throw methodNotFound();
                const valid = completeParams(params) ?? throwError(invalidParams(method));
                const control = this.#control(exchange, valid.progressToken);
                return inFlight.track(() => service.complete(valid.request, session.caller, control));
            }
            case 'initialize':
                throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'Invalid Request: Server already initialized');
            default:
                throw methodNotFound();
        }
    }

    /**
     * Cancellation, and progress when the client asked for it: the upstream gets a token of the gateway's own, and
     * each of its progress notifications reaches the client under the client's token, where the answer goes.
     */
    #control({ cancel, notify, session }: Exchange, progressToken: ProgressToken | undefined): CallControl {
        const signal = cancel.signal;
        if (progressToken === undefined || notify === undefined) return { signal };
        return {
            signal,
            onProgress: progress => {
                if (signal.aborted) return;
                notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, ...adaptProgress(progress, session.revision) } });
            }
        };
    }

    #errorOf(error: unknown, method: string): JSONRPCErrorResponse['error'] {
        if (error instanceof ProtocolError && Number.isSafeInteger(error.code)) return { code: error.code, message: error.message };
        this.options.logger.error({ err: describeError(error), method }, 'request failed; answered "Internal error"');
        return { code: ProtocolErrorCode.InternalError, message: 'Internal error' };
    }
}

export function errorResponse(request: Pick<JSONRPCRequest, 'id'>, error: JSONRPCErrorResponse['error']): JSONRPCErrorResponse {
    return { jsonrpc: '2.0', id: request.id, error };
}

function throwError(error: Error): never {
    throw error;
}
