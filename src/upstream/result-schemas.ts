/**
 * What an upstream's results must hold before the gateway uses them, checked
 * by hand: each field the gateway or a client relies on is checked as strictly
 * as the SDK (2.4.0) checks it, and nothing is taken away (the SDK strips fields
 * it does not know, such as a prompt argument's `title`, which a gateway should
 * pass on). A check reads the value in place, without copying it, and never
 * descends into `_meta` or other free-form members, so a result nested
 * thousands deep costs no more than its known fields (its depth is bounded
 * later, before it is serialised). Measured against zod in
 * bench/upstream-client.ts: a fraction of the cost, see the report there.
 */
import type { CompleteResult, GetPromptResult, Implementation, Prompt, ServerCapabilities } from '@modelcontextprotocol/client';
import type { InputRequired } from '../catalog/upstream-port.js';
import { isRecord } from '../lib/is-record.js';
import { META } from '../protocol/meta.js';

/** A check of an untrusted value, which it then may be used as. */
export type ResultGuard<T> = (value: unknown) => value is T;

type Fields = Record<string, unknown>;

function isString(value: unknown): value is string {
    return typeof value === 'string';
}

function isOptional(value: unknown, check: (value: unknown) => boolean): boolean {
    return value === undefined || check(value);
}

function isOptionalString(value: unknown): boolean {
    return value === undefined || typeof value === 'string';
}

function isArrayOf(value: unknown, check: (item: unknown) => boolean): boolean {
    if (!Array.isArray(value)) return false;
    for (const item of value) if (!check(item)) return false;
    return true;
}

const isRole = (value: unknown) => value === 'user' || value === 'assistant';

const BASE64_BODY = /^[A-Za-z0-9+/]*$/;
const ASCII_WHITESPACE = /[\t\n\f\r ]/g;

/** Base64 as `atob` reads it (the SDK's check): whitespace is ignored, and padding is optional. */
function isBase64(value: unknown): boolean {
    if (typeof value !== 'string') return false;
    const text = value.search(ASCII_WHITESPACE) === -1 ? value : value.replace(ASCII_WHITESPACE, '');
    const body = text.length % 4 === 0 && text.endsWith('=') ? text.slice(0, text.endsWith('==') ? -2 : -1) : text;
    return body.length % 4 !== 1 && BASE64_BODY.test(body);
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/** An RFC 3339 date-time with seconds and a zone (`Z` or an offset), on a day that exists. */
function isDateTime(value: unknown): boolean {
    if (typeof value !== 'string') return false;
    const match = DATE_TIME.exec(value);
    if (match === null) return false;
    const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
    if (month < 1 || month > 12 || day < 1) return false;
    const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    const days = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
    return day <= days;
}

function isIcon(value: unknown): boolean {
    return (
        isRecord(value) &&
        isString(value.src) &&
        isOptionalString(value.mimeType) &&
        isOptional(value.sizes, sizes => isArrayOf(sizes, isString)) &&
        (value.theme === undefined || value.theme === 'light' || value.theme === 'dark')
    );
}

function isAnnotations(value: unknown): boolean {
    return (
        isRecord(value) &&
        isOptional(value.audience, audience => isArrayOf(audience, isRole)) &&
        isOptional(value.priority, priority => typeof priority === 'number' && priority >= 0 && priority <= 1) &&
        isOptional(value.lastModified, isDateTime)
    );
}

/** What every content block may carry besides its own fields. */
function hasCommonFields(block: Fields): boolean {
    return isOptional(block.annotations, isAnnotations) && isOptional(block._meta, isRecord);
}

function isResourceContents(value: unknown): boolean {
    return isRecord(value) && isString(value.uri) && isOptionalString(value.mimeType) && isOptional(value._meta, isRecord) && (isString(value.text) || isBase64(value.blob));
}

function isContentBlock(value: unknown): boolean {
    if (!isRecord(value) || !hasCommonFields(value)) return false;
    switch (value.type) {
        case 'text':
            return isString(value.text);
        case 'image':
        case 'audio':
            return isBase64(value.data) && isString(value.mimeType);
        case 'resource':
            return isResourceContents(value.resource);
        case 'resource_link':
            return (
                isString(value.name) &&
                isString(value.uri) &&
                isOptionalString(value.title) &&
                isOptionalString(value.description) &&
                isOptionalString(value.mimeType) &&
                isOptional(value.size, size => typeof size === 'number') &&
                isOptional(value.icons, icons => isArrayOf(icons, isIcon))
            );
        default:
            return false;
    }
}

function isPromptMessage(value: unknown): boolean {
    return isRecord(value) && isRole(value.role) && isContentBlock(value.content);
}

/** The members every result may carry. */
function isResult(value: unknown): value is Fields {
    return isRecord(value) && isOptional(value._meta, isRecord);
}

export const isGetPromptResult: ResultGuard<GetPromptResult> = (value): value is GetPromptResult =>
    isResult(value) && isOptionalString(value.description) && isArrayOf(value.messages, isPromptMessage);

function isPromptArgument(value: unknown): boolean {
    return (
        isRecord(value) &&
        isString(value.name) &&
        isOptionalString(value.title) &&
        isOptionalString(value.description) &&
        isOptional(value.required, required => typeof required === 'boolean')
    );
}

function isPrompt(value: unknown): boolean {
    return (
        isRecord(value) &&
        isString(value.name) &&
        isOptionalString(value.title) &&
        isOptionalString(value.description) &&
        isOptional(value.arguments, args => isArrayOf(args, isPromptArgument)) &&
        isOptional(value.icons, icons => isArrayOf(icons, isIcon)) &&
        isOptional(value._meta, isRecord)
    );
}

/** A `prompts/list` page. */
export interface PromptPage {
    prompts: Prompt[];
    nextCursor?: string;
    /** A 2026-07-28 server's caching hint, as sent: checked where it is read. */
    ttlMs?: unknown;
}

export const isPromptPage: ResultGuard<PromptPage> = (value): value is PromptPage => isResult(value) && isArrayOf(value.prompts, isPrompt) && isOptionalString(value.nextCursor);

/**
 * A completion. The SDK refuses one with more than 100 values as an invalid result; the gateway takes it and
 * passes on the first 100 (see the service), as a direct client could have used the rest of the answer.
 */
export const isCompleteResult: ResultGuard<CompleteResult> = (value): value is CompleteResult => {
    if (!isResult(value) || !isRecord(value.completion)) return false;
    const { values, total, hasMore } = value.completion;
    return isArrayOf(values, isString) && isOptional(total, Number.isSafeInteger) && isOptional(hasMore, more => typeof more === 'boolean');
};

/** What the `initialize` handshake must return; only the capabilities the gateway reads are checked inside. */
export interface InitializeResult {
    protocolVersion: string;
    capabilities: ServerCapabilities;
    serverInfo: Implementation;
    instructions?: string;
}

export const isInitializeResult: ResultGuard<InitializeResult> = (value): value is InitializeResult => {
    if (!isResult(value) || !isString(value.protocolVersion) || !isOptionalString(value.instructions)) return false;
    const { capabilities, serverInfo } = value;
    return (
        isRecord(capabilities) &&
        isOptional(capabilities.prompts, isRecord) &&
        isOptional(capabilities.completions, isRecord) &&
        isRecord(serverInfo) &&
        isString(serverInfo.name) &&
        isString(serverInfo.version)
    );
};

/** What `server/discover` must return (2026-07-28); only what the gateway reads is checked inside. */
export interface DiscoverResult {
    supportedVersions: string[];
    capabilities: ServerCapabilities;
    _meta?: Record<string, unknown>;
}

export const isDiscoverResult: ResultGuard<DiscoverResult> = (value): value is DiscoverResult => {
    if (!isResult(value) || !isArrayOf(value.supportedVersions, isString)) return false;
    const { capabilities } = value;
    return isRecord(capabilities) && isOptional(capabilities.prompts, isRecord) && isOptional(capabilities.completions, isRecord) && isOptional(value._meta, isRecord);
};

/** A prompt, or a 2026-07-28 server asking for input first (what it asks is the client's to read). */
export const isGetPromptAnswer: ResultGuard<GetPromptResult | InputRequired> = (value): value is GetPromptResult | InputRequired =>
    isGetPromptResult(value) ||
    (isResult(value) &&
        value.resultType === 'input_required' &&
        isOptional(value.inputRequests, isRecord) &&
        isOptionalString(value.requestState) &&
        isOptional(value._meta, isRecord));

/**
 * A result without what a 2026-07-28 server adds for its own client (`resultType`, caching hints, its `serverInfo`
 * in `_meta`): the gateway answers its clients with its own.
 */
export function withoutEnvelope<T extends object>(result: T): T {
    const { resultType: _type, ttlMs: _ttl, cacheScope: _scope, ...rest } = result as Record<string, unknown>;
    const meta = rest._meta;
    if (isRecord(meta) && META.serverInfo in meta) {
        const { [META.serverInfo]: _info, ...others } = meta;
        if (Object.keys(others).length > 0) rest._meta = others;
        else delete rest._meta;
    }
    return rest as T;
}

/** Any result at all: a ping's answer only has to come. */
export const isAnyResult: ResultGuard<Fields> = isResult;
