/**
 * Builds the MCP `Server` for one downstream session. One per session: sharing
 * a Server between sessions leaks responses across clients (GHSA-345p-7cg4-v4c7).
 */
// The low-level Server is marked deprecated in favour of McpServer, which cannot serve a proxied, paginated list.
import { Server, specTypeSchemas } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Caller, PromptService } from '../catalog/service.js';
import { GATEWAY_INFO } from '../version.js';

/**
 * Params are checked with our own schemas: the SDK's built-in check answers a
 * malformed request with -32603 and a dump of zod issues, where a client should
 * get -32602. Argument values are checked by the service, which names them.
 */
const GetPromptParams = z.looseObject({ name: z.string(), arguments: z.unknown().optional() });

export interface PromptServerOptions {
    service: PromptService;
    caller: Caller;
    /** Declare `completions` (true when any upstream offers it). */
    completions: boolean;
}

export function createPromptServer({ service, caller, completions }: PromptServerOptions): Server {
    const server = new Server(GATEWAY_INFO, {
        capabilities: { prompts: { listChanged: true }, ...(completions ? { completions: {} } : {}) }
    });
    server.setRequestHandler('prompts/list', { params: specTypeSchemas.PaginatedRequestParams }, params =>
        service.list(params.cursor, caller)
    );
    server.setRequestHandler('prompts/get', { params: GetPromptParams }, (params, ctx) =>
        service.get(params.name, params.arguments, ctx.mcpReq.signal)
    );
    if (completions) {
        server.setRequestHandler('completion/complete', { params: specTypeSchemas.CompleteRequestParams }, (params, ctx) =>
            service.complete(params, ctx.mcpReq.signal)
        );
    }
    return server;
}
