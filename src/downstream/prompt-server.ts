/**
 * Builds the MCP `Server` for one downstream session. One per session: sharing
 * a Server between sessions leaks responses across clients (GHSA-345p-7cg4-v4c7).
 */
// The low-level Server is marked deprecated in favour of McpServer, which cannot serve a proxied, paginated list.
import {
    ProtocolError,
    ProtocolErrorCode,
    Server,
    specTypeSchemas,
    type CompleteRequest,
    type JSONRPCRequest,
    type Result,
    type ServerContext
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Caller, PromptService } from '../catalog/service.js';
import { inSomeRequest } from '../observability/request-context.js';
import type { CallControl } from '../upstream/session.js';
import { GATEWAY_INFO } from '../version.js';
import type { InFlight } from './in-flight.js';
import { adaptGetPrompt, adaptPromptList, adaptProgress, revisionOf, type Revision } from './revisions.js';

/**
 * Params are checked with our own schemas: the SDK's built-in check answers a
 * malformed request with -32603 and a dump of zod issues, where a client should
 * get -32602. Argument values are checked by the service, which names them.
 */
const GetPromptParams = z.looseObject({ name: z.string(), arguments: z.unknown().optional() });

/** zod's record type drops an own "__proto__" key, so context arguments are taken as they came and checked by the service. */
const CompleteParams = z.looseObject({
    ref: z.discriminatedUnion('type', [
        z.looseObject({ type: z.literal('ref/prompt'), name: z.string() }),
        z.looseObject({ type: z.literal('ref/resource'), uri: z.string() })
    ]),
    argument: z.looseObject({ name: z.string(), value: z.string() }),
    context: z.looseObject({ arguments: z.unknown().optional() }).optional()
});

export interface PromptServerOptions {
    service: PromptService;
    caller: Caller;
    /** Declare `completions` (true when any upstream offers it). */
    completions: boolean;
    inFlight: InFlight;
}

/** Handlers registered here with schemas; any other handler is the SDK's own (initialize, ping, ...). */
const GATEWAY_METHODS = new Set(['prompts/list', 'prompts/get', 'completion/complete']);

/**
 * The SDK answers a request its own handlers cannot validate (a malformed `initialize` or `ping`) with -32603 and
 * the validation report as the message. Here that becomes -32602 "Invalid params", and any other non-protocol error
 * a plain "Internal error": messages never carry reports, inputs or internals.
 */
class GatewayServer extends Server {
    protected override _wrapHandler(
        method: string,
        handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>
    ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
        const wrapped = super._wrapHandler(method, handler);
        return async (request, ctx) => {
            try {
                return await wrapped(request, ctx);
            } catch (error) {
                if (error instanceof ProtocolError) {
                    if (error.code === ProtocolErrorCode.InvalidParams && error.message.startsWith('Invalid params for ')) {
                        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params for ${method}`);
                    }
                    throw error;
                }
                if (GATEWAY_METHODS.has(method)) throw new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error');
                throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params for ${method}`);
            }
        };
    }
}

export function createPromptServer({ service, caller, completions, inFlight }: PromptServerOptions): Server {
    const server = new GatewayServer(GATEWAY_INFO, {
        capabilities: { prompts: { listChanged: true }, ...(completions ? { completions: {} } : {}) }
    });
    // Read per request: the version is negotiated by `initialize`, after the handlers are in place.
    const revision = () => revisionOf(server.getNegotiatedProtocolVersion());
    // Over HTTP the request already has an id (its response header); stdio messages get one here.
    const handle = <T>(work: () => Promise<T>) => inSomeRequest(() => inFlight.track(work));
    server.setRequestHandler('prompts/list', { params: specTypeSchemas.PaginatedRequestParams }, params =>
        handle(async () => adaptPromptList(await service.list(params.cursor, caller), revision()))
    );
    server.setRequestHandler('prompts/get', { params: GetPromptParams }, (params, ctx) =>
        handle(async () => {
            const clientRevision = revision();
            return adaptGetPrompt(await service.get(params.name, params.arguments, caller, control(ctx, clientRevision)), clientRevision);
        })
    );
    if (completions) {
        server.setRequestHandler('completion/complete', { params: CompleteParams }, (params, ctx) =>
            // The cast covers only context.arguments, which the service checks before anything uses it.
            handle(() => service.complete(params as CompleteRequest['params'], caller, control(ctx, revision())))
        );
    }
    return server;
}

/**
 * Cancellation, and progress when the client asked for it: the upstream gets a token of the gateway's own, and each
 * of its progress notifications reaches the client under the client's token, on the stream of the client's request.
 */
function control(ctx: ServerContext, revision: Revision): CallControl {
    const signal = cancellation(ctx);
    const progressToken = ctx.mcpReq._meta?.progressToken;
    if (progressToken === undefined) return { signal };
    return {
        signal,
        onProgress: progress => {
            const params = { progressToken, ...adaptProgress(progress, revision) };
            // A client gone meanwhile is noticed by the cancellation signal; a lost progress update needs no more.
            ctx.mcpReq.notify({ method: 'notifications/progress', params }).catch(() => {});
        }
    };
}

/**
 * Aborts when the client cancels (`notifications/cancelled`) or, over HTTP, when the request's connection goes
 * away; the upstream call then sends its own `notifications/cancelled` upstream.
 */
function cancellation(ctx: ServerContext): AbortSignal {
    const disconnected = ctx.http?.req?.signal;
    return disconnected === undefined ? ctx.mcpReq.signal : AbortSignal.any([ctx.mcpReq.signal, disconnected]);
}
