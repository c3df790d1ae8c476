/**
 * The params of each method the gateway serves, checked by hand: a few
 * property tests per request, where a schema library's parse costs
 * microseconds. The shapes are the spec's (every revision from 2024-11-05 to
 * 2025-11-25 agrees on them); objects stay open, as in the spec, so a field a
 * later revision adds passes. What only the catalog can judge (argument
 * names, sizes, cursors) is left to it, which names what is wrong.
 *
 * The envelope was checked before (src/protocol/json-rpc.ts): `params` is an
 * object or absent.
 */
import type { CompleteRequest } from '@modelcontextprotocol/client';
import type { Continuation } from '../catalog/upstream-port.js';
import { isRecord } from '../lib/is-record.js';
import { isRequestId } from '../protocol/json-rpc.js';

export type Params = Record<string, unknown> | undefined;

export type ProgressToken = string | number;

/** What every request's params may carry: `_meta`, with a progress token the client wants progress under. */
interface Meta {
    progressToken?: ProgressToken | undefined;
}

export interface ListParams extends Meta {
    cursor?: string | undefined;
}

export interface GetParams extends Meta {
    name: string;
    /** Checked by the catalog, which names the argument at fault. */
    arguments: unknown;
    continuation?: Continuation;
}

export interface CompleteParams extends Meta {
    /** As the client sent it: everything but `context.arguments` is checked here, that by the catalog. */
    request: CompleteRequest['params'];
}

export interface InitializeParams {
    protocolVersion: string;
    capabilities: Record<string, unknown>;
    clientInfo: { name: string; version: string };
}

/** The request's `_meta`, or undefined when it is malformed (not an object, or a progress token of another type). */
export function metaOf(params: Params): Meta | undefined {
    const meta = params?._meta;
    if (meta === undefined) return {};
    if (!isRecord(meta)) return undefined;
    const progressToken = meta.progressToken;
    if (progressToken === undefined) return {};
    // Echoed in every progress notification of the request: bounded as ids are.
    return isRequestId(progressToken) ? { progressToken } : undefined;
}

export function listParams(params: Params): ListParams | undefined {
    const meta = metaOf(params);
    const cursor = params?.cursor;
    if (meta === undefined || (cursor !== undefined && typeof cursor !== 'string')) return undefined;
    return { ...meta, cursor };
}

export function getParams(params: Params): GetParams | undefined {
    const meta = metaOf(params);
    if (meta === undefined || typeof params?.name !== 'string') return undefined;
    const { inputResponses, requestState } = params;
    // A retry after input_required (2026-07-28): the answers, and the state as the gateway sealed it.
    if ((inputResponses !== undefined && !isRecord(inputResponses)) || (requestState !== undefined && typeof requestState !== 'string')) return undefined;
    const continuation = inputResponses === undefined && requestState === undefined ? undefined : { inputResponses, requestState };
    return { ...meta, name: params.name, arguments: params.arguments, ...(continuation === undefined ? {} : { continuation }) };
}

export function completeParams(params: Params): CompleteParams | undefined {
    const meta = metaOf(params);
    if (meta === undefined || params === undefined) return undefined;
    const { ref, argument, context } = params;
    const validRef = isRecord(ref) && ((ref.type === 'ref/prompt' && typeof ref.name === 'string') || (ref.type === 'ref/resource' && typeof ref.uri === 'string'));
    const validArgument = isRecord(argument) && typeof argument.name === 'string' && typeof argument.value === 'string';
    if (!validRef || !validArgument || (context !== undefined && !isRecord(context))) return undefined;
    // The casts cover only context.arguments, which the catalog checks before anything uses it.
    return { ...meta, request: params as CompleteRequest['params'] };
}

export function initializeParams(params: Params): InitializeParams | undefined {
    if (params === undefined || metaOf(params) === undefined) return undefined;
    const { protocolVersion, capabilities, clientInfo } = params;
    if (typeof protocolVersion !== 'string' || !isRecord(capabilities) || !isRecord(clientInfo)) return undefined;
    if (typeof clientInfo.name !== 'string' || typeof clientInfo.version !== 'string') return undefined;
    return { protocolVersion, capabilities, clientInfo: { name: clientInfo.name, version: clientInfo.version } };
}
