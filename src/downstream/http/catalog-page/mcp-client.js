/**
 * The catalog page's MCP client: stateless 2026-07-28 POSTs to the gateway's own endpoint (server/discover,
 * prompts/list walked to the end, completion/complete, prompts/get) and one subscriptions/listen whose SSE answer
 * is read from fetch()'s body (EventSource can neither POST nor send headers).
 *
 * No DOM and no build step: the page loads this file as it is, and the unit tests import it under Node. Two pieces
 * are ports of the gateway's TypeScript (src/lib/header-value.ts `encodeHeaderValue`, the SSE framing of
 * src/downstream/http/sse.ts read back): the page cannot import them, and test/unit/catalog-client.test.ts proves
 * the header encoder equal to the server's.
 *
 * Everything read is bounded (bodies, events, pages, prompts); an error is a CatalogRequestError whose message is
 * for people: the server's own for a JSON-RPC error, else a plain sentence, never a stack or the credential. An
 * abort rejects with the signal's reason (an AbortError), never with a CatalogRequestError.
 */

export const PROTOCOL_VERSION = '2026-07-28';

const CLIENT_NAME = 'mcp-prompt-gateway-catalog';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const META_SUBSCRIPTION = 'io.modelcontextprotocol/subscriptionId';
/** Methods whose target the revision mirrors in `Mcp-Name` (of those the page sends, prompts/get only). */
const NAMED_METHODS = new Set(['prompts/get']);
/** The spec's cap on completion values. */
const MAX_COMPLETION_VALUES = 100;
/** A refusal's body is a short JSON-RPC error: more than this is not one. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** Of a server's message in an HTTP refusal, what is shown: its first line, at most this long. */
const MAX_SERVER_MESSAGE_CHARS = 512;
const LISTEN_BACKOFF_START_MS = 1000;
const LISTEN_BACKOFF_MAX_MS = 30_000;
/**
 * A listen stream silent this long is taken as cut and opened again: the gateway sends a keepalive every 15 s, so three
 * missed ones (a proxy or a network that dropped the connection without closing it).
 */
export const LISTEN_IDLE_MS = 45_000;
/** How long a refused listen (429/503) waits when the answer names no Retry-After. */
const LISTEN_REFUSED_WAIT_MS = 30_000;
/**
 * The most read of one answer unless the page is told more: the gateway's own bound (its list pages and results) is
 * given to the page, which takes the larger.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 << 20;
const INPUT_REQUIRED_MESSAGE = 'This prompt asks the client for more input (input_required), which the catalog cannot give; use it from an MCP client';

/**
 * @typedef {'unauthorized' | 'forbidden-origin' | 'forbidden' | 'rate-limited' | 'unavailable' | 'network'
 *     | 'too-large' | 'protocol' | 'rpc' | 'input-required'} CatalogErrorKind
 * @typedef {{ status?: number, code?: number, data?: unknown, retryAfterMs?: number }} CatalogErrorDetail
 * @typedef {Record<string, unknown>} JsonObject
 */

/** Why a request to the gateway failed, in a form the page can show and act on (`kind`). */
export class CatalogRequestError extends Error {
    /**
     * @param {CatalogErrorKind} kind
     * @param {string} message for people: the server's for 'rpc', else a plain sentence
     * @param {CatalogErrorDetail} [detail]
     */
    constructor(kind, message, { status = 0, code, data, retryAfterMs } = {}) {
        super(message);
        this.name = 'CatalogRequestError';
        this.kind = kind;
        /** HTTP status, or 0 when there was no answer. */
        this.status = status;
        /** The JSON-RPC error's code, for 'rpc'. */
        this.code = code;
        this.data = data;
        /** From Retry-After, for 'rate-limited' and 'unavailable'. */
        this.retryAfterMs = retryAfterMs;
    }
}

/** A plain value as it is, anything else as `=?base64?<UTF-8, base64>?=` (port of src/lib/header-value.ts). */
const PLAIN_TO_SEND = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * The header form of a value (`Mcp-Name`): as it is when plain printable ASCII and not itself sentinel-shaped,
 * else base64 of its UTF-8 (lone surrogates become U+FFFD, as Node's Buffer makes them).
 * @param {string} value
 * @returns {string}
 */
export function encodeHeaderValue(value) {
    const looksEncoded = value.startsWith('=?base64?') && value.endsWith('?=');
    if (PLAIN_TO_SEND.test(value) && !looksEncoded) return value;
    return `=?base64?${base64(new TextEncoder().encode(value))}?=`;
}

/** @param {Uint8Array} bytes */
function base64(bytes) {
    let binary = '';
    // In slices: String.fromCharCode takes its arguments on the stack.
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(binary);
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Server-Sent Events to JSON messages, chunk by chunk: lines end in LF, CRLF or CR (a CRLF may be split across
 * chunks); `:` lines are comments (the gateway's keepalives); `data:` lines of one event are joined with LF; other
 * fields are ignored; a blank line ends an event, and an event without data is none. Bytes are split on line ends
 * before decoding, which UTF-8 allows (no multi-byte sequence holds CR or LF).
 */
class SseParser {
    /** @type {Uint8Array[]} */ #line = [];
    /** @type {string[] | undefined} */ #data;
    #eventBytes = 0;
    #skipLf = false;
    #decoder = new TextDecoder();

    /** @param {number} maxEventBytes */
    constructor(maxEventBytes) {
        this.maxEventBytes = maxEventBytes;
    }

    /**
     * @param {Uint8Array} chunk
     * @returns {JsonObject[]} the events this chunk completed
     */
    push(chunk) {
        /** @type {JsonObject[]} */
        const events = [];
        let start = 0;
        if (this.#skipLf && chunk.length > 0) {
            if (chunk[0] === LF) start = 1;
            this.#skipLf = false;
        }
        for (let i = start; i < chunk.length; i++) {
            const byte = chunk[i];
            if (byte !== LF && byte !== CR) continue;
            this.#take(chunk.subarray(start, i));
            this.#endLine(events);
            if (byte === CR && i + 1 === chunk.length) this.#skipLf = true;
            else if (byte === CR && chunk[i + 1] === LF) i++;
            start = i + 1;
        }
        this.#take(chunk.subarray(start));
        return events;
    }

    /** @param {Uint8Array} bytes */
    #take(bytes) {
        if (bytes.length === 0) return;
        this.#eventBytes += bytes.length;
        if (this.#eventBytes > this.maxEventBytes) {
            throw new CatalogRequestError('too-large', `The gateway sent an event larger than ${sizeText(this.maxEventBytes)}; the catalog does not read it`);
        }
        this.#line.push(bytes.slice());
    }

    /** @param {JsonObject[]} events */
    #endLine(events) {
        const line = this.#decoder.decode(concat(this.#line));
        this.#line = [];
        if (line === '') return this.#dispatch(events);
        if (line.startsWith(':')) return;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        if (field !== 'data') return;
        const value = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
        (this.#data ??= []).push(value);
    }

    /** @param {JsonObject[]} events */
    #dispatch(events) {
        const data = this.#data;
        this.#data = undefined;
        this.#eventBytes = 0;
        if (data === undefined) return;
        events.push(parseMessage(data.join('\n'), 'an event'));
    }
}

/** @param {Uint8Array[]} parts */
function concat(parts) {
    if (parts.length === 1) return /** @type {Uint8Array} */ (parts[0]);
    const whole = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of parts) {
        whole.set(part, offset);
        offset += part.length;
    }
    return whole;
}

/**
 * A JSON object, or a 'protocol' error naming `what` it was.
 * @param {string} text
 * @param {string} what
 * @returns {JsonObject}
 */
function parseMessage(text, what) {
    /** @type {unknown} */
    let value;
    try {
        value = JSON.parse(text);
    } catch {
        throw new CatalogRequestError('protocol', `The gateway sent ${what} that is not JSON`);
    }
    if (!isObject(value)) throw new CatalogRequestError('protocol', `The gateway sent ${what} that is not a JSON-RPC message`);
    return value;
}

/**
 * @param {unknown} value
 * @returns {value is JsonObject}
 */
function isObject(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** @param {number} bytes */
function sizeText(bytes) {
    return bytes >= 1 << 20 ? `${Math.round(bytes / (1 << 20))} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

/**
 * The JSON messages of an SSE byte stream, as they complete. The stream is cancelled when the caller stops early or an
 * error is thrown: 'too-large' (one event over `maxEventBytes`), 'protocol' (an event that is not a JSON object),
 * 'network' (the stream was cut, or sent no byte for `idleMs` when given). An incomplete last event is dropped, as the
 * SSE standard says.
 * @param {ReadableStream<Uint8Array>} byteStream
 * @param {{ maxEventBytes?: number, idleMs?: number }} [options]
 * @returns {AsyncGenerator<JsonObject, void, undefined>}
 */
export async function* sseMessages(byteStream, { maxEventBytes = 1 << 20, idleMs } = {}) {
    const reader = byteStream.getReader();
    const parser = new SseParser(maxEventBytes);
    let done = false;
    try {
        while (!done) {
            const chunk = await readChunk(reader, idleMs);
            done = chunk === undefined;
            if (chunk !== undefined) yield* parser.push(chunk);
        }
    } finally {
        if (!done) reader.cancel().catch(() => undefined);
    }
}

/**
 * The next chunk, undefined at the end; a stream cut, or silent for `idleMs`, is 'network', an abort its own error.
 * @param {ReadableStreamDefaultReader<Uint8Array>} reader
 * @param {number} [idleMs]
 * @returns {Promise<Uint8Array | undefined>}
 */
async function readChunk(reader, idleMs) {
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    try {
        /** @type {Promise<never>} */
        const silent = new Promise((_resolve, reject) => {
            if (idleMs !== undefined) timer = setTimeout(() => reject(new CatalogRequestError('network', `The gateway sent nothing for ${idleMs / 1000} s`)), idleMs);
        });
        const { done, value } = await Promise.race([reader.read(), silent]);
        return done ? undefined : value;
    } catch (error) {
        if (error instanceof CatalogRequestError || isAbort(error)) throw error;
        throw new CatalogRequestError('network', 'The connection to the gateway was cut');
    } finally {
        clearTimeout(timer);
    }
}

/**
 * An abort or a timeout of a request's signal: not a failure to show.
 * @param {unknown} error
 */
export function isAbort(error) {
    return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

/**
 * A body's text, read through the stream up to `maxBytes` (a 'too-large' error past it, the rest not read).
 * @param {Response} response
 * @param {number} maxBytes
 * @returns {Promise<string>}
 */
async function readBounded(response, maxBytes) {
    const tooLarge = () =>
        new CatalogRequestError('too-large', `The gateway's answer is larger than ${sizeText(maxBytes)}; the catalog does not read it`, { status: response.status });
    if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
        response.body?.cancel().catch(() => undefined);
        throw tooLarge();
    }
    if (response.body === null) return '';
    const reader = response.body.getReader();
    /** @type {Uint8Array[]} */
    const parts = [];
    let total = 0;
    for (let chunk = await readChunk(reader); chunk !== undefined; chunk = await readChunk(reader)) {
        total += chunk.length;
        if (total > maxBytes) {
            reader.cancel().catch(() => undefined);
            throw tooLarge();
        }
        parts.push(chunk);
    }
    return new TextDecoder().decode(parts.length === 0 ? new Uint8Array(0) : concat(parts));
}

/**
 * Retry-After (seconds, or an HTTP date) in ms; undefined when absent or unreadable.
 * @param {Response} response
 */
function retryAfterMs(response) {
    const value = response.headers.get('retry-after')?.trim();
    if (value === undefined || value === '') return undefined;
    if (/^\d+$/.test(value)) return Number(value) * 1000;
    const at = Date.parse(value);
    return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** @param {Response} response */
function mediaType(response) {
    return (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/**
 * The JSON-RPC error of a message, if it is one.
 * @param {unknown} message
 * @returns {{ code: number, message: string, data?: unknown } | undefined}
 */
function rpcErrorOf(message) {
    if (!isObject(message) || !isObject(message.error)) return undefined;
    const { code, message: text, data } = message.error;
    if (typeof code !== 'number' || typeof text !== 'string') return undefined;
    return { code, message: text, data };
}

/**
 * A JSON-RPC error answer as a CatalogRequestError of kind 'rpc', with the server's message.
 * @param {{ code: number, message: string, data?: unknown }} error
 * @param {number} status
 */
function rpcError(error, status) {
    return new CatalogRequestError('rpc', error.message, { status, code: error.code, data: error.data });
}

/**
 * The server's message of a refusal, fit to show (first line, bounded), or the fallback.
 * @param {{ message: string } | undefined} error
 * @param {string} fallback
 */
function serverMessage(error, fallback) {
    const line = error?.message.split(/\r?\n/, 1)[0]?.trim() ?? '';
    return line === '' ? fallback : line.slice(0, MAX_SERVER_MESSAGE_CHARS);
}

/**
 * Why a non-2xx answer failed. Its body (bounded) is read for a JSON-RPC error: the gateway answers every refusal
 * with one.
 * @param {Response} response
 * @param {{ endpoint: string, credentialHeld: boolean }} context
 * @returns {Promise<CatalogRequestError>}
 */
async function refusal(response, { endpoint, credentialHeld }) {
    const { status } = response;
    let error;
    try {
        error = rpcErrorOf(JSON.parse(await readBounded(response, MAX_ERROR_BODY_BYTES)));
    } catch (readError) {
        if (isAbort(readError)) throw readError;
    }
    const detail = { status, retryAfterMs: retryAfterMs(response), code: error?.code, data: error?.data };
    if (status === 401) {
        const message = credentialHeld ? 'The gateway did not accept this credential' : 'The gateway asks for a credential';
        return new CatalogRequestError('unauthorized', message, detail);
    }
    if (status === 403 && error?.message === 'Forbidden: Origin not allowed') {
        const host = new URL(endpoint).hostname;
        return new CatalogRequestError('forbidden-origin', `The gateway refused this page's origin: add ${host} to listen.allowedOrigins`, detail);
    }
    if (status === 403) return new CatalogRequestError('forbidden', serverMessage(error, 'The gateway refused this request (HTTP 403)'), detail);
    if (status === 429) {
        const wait = detail.retryAfterMs === undefined ? 'later' : `in ${Math.ceil(detail.retryAfterMs / 1000)} s`;
        return new CatalogRequestError('rate-limited', serverMessage(error, `Too many requests; try again ${wait}`), detail);
    }
    if (status >= 500) return new CatalogRequestError('unavailable', serverMessage(error, `The gateway is unavailable (HTTP ${status}); try again later`), detail);
    if (error !== undefined) return rpcError(error, status);
    return new CatalogRequestError('protocol', `The gateway answered HTTP ${status} without an MCP error; is ${endpoint} its MCP endpoint?`, { status });
}

/**
 * The response to request `id` in a 200 answer: JSON, or SSE (progress first, the response last).
 * @param {Response} response
 * @param {string | number} id
 * @param {number} maxBytes
 * @returns {Promise<JsonObject>}
 */
async function answerOf(response, id, maxBytes) {
    const type = mediaType(response);
    if (type === 'application/json') {
        const message = parseMessage(await readBounded(response, maxBytes), 'an answer');
        if (message.id !== id && rpcErrorOf(message) === undefined) throw new CatalogRequestError('protocol', 'The gateway answered another request', { status: 200 });
        return message;
    }
    if (type === 'text/event-stream' && response.body !== null) {
        for await (const message of sseMessages(response.body, { maxEventBytes: maxBytes })) if (message.id === id) return message;
        throw new CatalogRequestError('network', 'The gateway ended its answer before the response', { status: 200 });
    }
    throw new CatalogRequestError('protocol', `The gateway answered ${type || 'without a content type'}, not MCP`, { status: response.status });
}

/**
 * The result of a response, or its error thrown ('rpc').
 * @param {JsonObject} message
 * @param {number} status
 * @returns {JsonObject}
 */
function resultOf(message, status) {
    const error = rpcErrorOf(message);
    if (error !== undefined) throw rpcError(error, status);
    if (!isObject(message.result)) throw new CatalogRequestError('protocol', 'The gateway sent a response without a result', { status });
    return message.result;
}

/**
 * Waits `ms`, or less when `signal` aborts (then resolves too: the caller checks the signal).
 * @param {number} ms
 * @param {AbortSignal} signal
 * @returns {Promise<void>}
 */
function pause(ms, signal) {
    return new Promise(resolve => {
        if (signal.aborted) return resolve();
        const done = () => {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            resolve();
        };
        const timer = setTimeout(done, ms);
        signal.addEventListener('abort', done, { once: true });
    });
}

/**
 * The wait before reconnect number `attempt` (0 first): 1, 2, 4 ... 30 s, each within ±25 % so that pages cut
 * together do not come back together.
 * @param {number} attempt
 * @param {() => number} random
 */
export function listenBackoffMs(attempt, random = Math.random) {
    const base = Math.min(LISTEN_BACKOFF_MAX_MS, LISTEN_BACKOFF_START_MS * 2 ** Math.min(attempt, 16));
    return Math.round(base * (0.75 + 0.5 * random()));
}

/**
 * @typedef {object} CatalogClientOptions
 * @property {string} endpoint absolute URL of the MCP endpoint
 * @property {string} clientVersion sent as clientInfo.version (the gateway's version, from the page)
 * @property {() => string | undefined} [credential] read per request; sent as `Authorization: Bearer`
 * @property {typeof globalThis.fetch} [fetch]
 * @property {number} [maxResponseBytes] the most read of one answer (JSON body or SSE event)
 * @property {() => number} [random] for the listen loop's jitter
 *
 * @typedef {{ signal?: AbortSignal }} Signalled
 * @typedef {{ prompts: JsonObject[], truncated: boolean, ttlMs?: number }} PromptList
 * @typedef {{ values: string[], hasMore: boolean, total?: number }} Completion
 * @typedef {'connecting' | 'listening' | 'reconnecting' | 'off'} ListenState
 * @typedef {object} ListenOptions
 * @property {AbortSignal} signal ends the loop (the promise resolves, no state is reported)
 * @property {() => void} [onAcknowledged] each time a stream is acknowledged (re-walk the list: changes may be missed)
 * @property {() => void} [onListChanged]
 * @property {(state: ListenState, error?: CatalogRequestError) => void} [onState]
 */

/**
 * The catalog's client of one MCP endpoint.
 * @param {CatalogClientOptions} options
 */
export function createCatalogClient({
    endpoint,
    clientVersion,
    credential = () => undefined,
    fetch = globalThis.fetch,
    maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES,
    random = Math.random
}) {
    let nextId = 1;
    let nextListen = 1;
    const meta = {
        [META_VERSION]: PROTOCOL_VERSION,
        [META_CLIENT_INFO]: { name: CLIENT_NAME, version: clientVersion },
        [META_CAPABILITIES]: {}
    };

    /**
     * POSTs one request; an HTTP refusal is thrown, a 200 returned to read.
     * @param {string} method
     * @param {JsonObject} params
     * @param {string | number} id
     * @param {AbortSignal | undefined} signal
     */
    async function post(method, params, id, signal) {
        const held = credential();
        const headers = requestHeaders(method, params, held);
        const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } });
        /** @type {Response} */
        let response;
        try {
            // Node's RequestInit type lacks `cache`, which browsers (and Node's fetch) take.
            const init = /** @type {RequestInit} */ ({ method: 'POST', headers, body, signal, credentials: 'omit', cache: 'no-store', redirect: 'error' });
            response = await fetch(endpoint, init);
        } catch (error) {
            signal?.throwIfAborted();
            if (isAbort(error)) throw error;
            throw new CatalogRequestError('network', 'The gateway did not answer; check that it is running and reachable');
        }
        if (response.status !== 200) throw await refusal(response, { endpoint, credentialHeld: held !== undefined && held !== '' });
        return response;
    }

    /**
     * @param {string} method
     * @param {JsonObject} params
     * @param {AbortSignal | undefined} signal
     */
    async function request(method, params, signal) {
        const id = nextId++;
        const response = await post(method, params, id, signal);
        return resultOf(await answerOf(response, id, maxResponseBytes), response.status);
    }

    return {
        /** @param {Signalled} [options] */
        discover: ({ signal } = {}) => request('server/discover', {}, signal),
        /** @param {Signalled & { maxPages?: number, maxPrompts?: number }} [options] */
        listPrompts: (options = {}) => walkPrompts(request, options),
        /** @param {Signalled & { prompt: string, argument: string, value: string, context?: Record<string, string> }} options */
        complete: async ({ prompt, argument, value, context, signal }) =>
            completionOf(await request('completion/complete', completionParams(prompt, argument, value, context), signal)),
        /** @param {Signalled & { name: string, arguments?: Record<string, string> }} options */
        getPrompt: async ({ name, arguments: args, signal }) => {
            const result = await request('prompts/get', args === undefined ? { name } : { name, arguments: args }, signal);
            if (result.resultType === 'input_required') throw new CatalogRequestError('input-required', INPUT_REQUIRED_MESSAGE, { status: 200 });
            return result;
        },
        /** @param {ListenOptions} options */
        listen: options => listenLoop(options, handlers => listenOnce(post, `catalog-listen-${nextListen++}`, handlers, maxResponseBytes), random)
    };
}

/**
 * The headers of a request: the revision's mirrors of the body, and the credential when one is held.
 * @param {string} method
 * @param {JsonObject} params
 * @param {string | undefined} credential
 * @returns {Record<string, string>}
 */
function requestHeaders(method, params, credential) {
    /** @type {Record<string, string>} */
    const headers = {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': PROTOCOL_VERSION,
        'Mcp-Method': method
    };
    if (NAMED_METHODS.has(method) && typeof params.name === 'string') headers['Mcp-Name'] = encodeHeaderValue(params.name);
    if (credential !== undefined && credential !== '') headers.Authorization = `Bearer ${credential}`;
    return headers;
}

/**
 * prompts/list page after page until no `nextCursor` (an empty string is a cursor), within the bounds. What the page
 * shows is checked here, once: entries without a usable name are dropped, a name seen before is not shown twice, and
 * a cursor seen before ends the walk (a server repeating a page would otherwise fill the bounds with one prompt).
 * @param {(method: string, params: JsonObject, signal: AbortSignal | undefined) => Promise<JsonObject>} request
 * @param {Signalled & { maxPages?: number, maxPrompts?: number }} options
 * @returns {Promise<PromptList>}
 */
async function walkPrompts(request, { signal, maxPages = 1000, maxPrompts = 100_000 }) {
    /** @type {Map<string, JsonObject>} */
    const prompts = new Map();
    /** @type {number | undefined} */
    let ttlMs;
    /** @type {string | undefined} */
    let cursor;
    const cursors = new Set();
    for (let page = 0; page < maxPages; page++) {
        const result = await request('prompts/list', cursor === undefined ? {} : { cursor }, signal);
        if (!Array.isArray(result.prompts)) throw new CatalogRequestError('protocol', 'The gateway sent a prompt list without prompts', { status: 200 });
        // A cached list is as fresh as its least fresh page.
        if (typeof result.ttlMs === 'number' && result.ttlMs >= 0) ttlMs = Math.min(ttlMs ?? Infinity, result.ttlMs);
        for (const entry of result.prompts) {
            const prompt = listedPrompt(entry);
            if (prompt === undefined || prompts.has(prompt.name)) continue;
            if (prompts.size === maxPrompts) return listed([...prompts.values()], true, ttlMs);
            prompts.set(prompt.name, prompt);
        }
        if (typeof result.nextCursor !== 'string' || cursors.has(result.nextCursor)) return listed([...prompts.values()], false, ttlMs);
        if (prompts.size === maxPrompts) return listed([...prompts.values()], true, ttlMs);
        cursor = result.nextCursor;
        cursors.add(cursor);
    }
    return listed([...prompts.values()], true, ttlMs);
}

/** Longest name (of a prompt or an argument) the page shows; longer ones are not names a client could use. */
const MAX_NAME_CHARS = 1024;

/**
 * @param {unknown} name
 * @returns {name is string}
 */
const isName = name => typeof name === 'string' && name !== '' && name.length <= MAX_NAME_CHARS;

/**
 * A list entry as the page uses it: an object with a name, and `arguments` a list of objects with distinct names
 * (entries of other shapes dropped); undefined for an entry without a usable name.
 * @param {unknown} entry
 * @returns {(JsonObject & { name: string }) | undefined}
 */
function listedPrompt(entry) {
    if (!isObject(entry)) return undefined;
    const { name } = entry;
    if (!isName(name)) return undefined;
    const names = new Set();
    const args = (Array.isArray(entry.arguments) ? entry.arguments : []).filter(argument => {
        if (!isObject(argument) || !isName(argument.name) || names.has(argument.name)) return false;
        names.add(argument.name);
        return true;
    });
    return { ...entry, name, arguments: args };
}

/**
 * @param {JsonObject[]} prompts
 * @param {boolean} truncated
 * @param {number | undefined} ttlMs
 * @returns {PromptList}
 */
function listed(prompts, truncated, ttlMs) {
    return ttlMs === undefined ? { prompts, truncated } : { prompts, truncated, ttlMs };
}

/**
 * completion/complete's params: the other arguments' values as context, when there are any.
 * @param {string} prompt
 * @param {string} argument
 * @param {string} value
 * @param {Record<string, string> | undefined} context
 * @returns {JsonObject}
 */
function completionParams(prompt, argument, value, context) {
    const params = { ref: { type: 'ref/prompt', name: prompt }, argument: { name: argument, value } };
    return context === undefined || Object.keys(context).length === 0 ? params : { ...params, context: { arguments: context } };
}

/**
 * @param {JsonObject} result
 * @returns {Completion}
 */
function completionOf(result) {
    const { completion } = result;
    if (!isObject(completion) || !Array.isArray(completion.values)) throw new CatalogRequestError('protocol', 'The gateway sent a completion without values', { status: 200 });
    const values = completion.values.filter(value => typeof value === 'string').slice(0, MAX_COMPLETION_VALUES);
    const answer = { values, hasMore: completion.hasMore === true };
    return typeof completion.total === 'number' ? { ...answer, total: completion.total } : answer;
}

/**
 * @typedef {ListenOptions & { onOpen: () => void }} ListenHandlers
 */

/**
 * One subscriptions/listen stream, read until it ends (the server's end, or its graceful response): resolves then,
 * throws a CatalogRequestError when refused or cut.
 * @param {(method: string, params: JsonObject, id: string, signal: AbortSignal) => Promise<Response>} post
 * @param {string} id
 * @param {ListenHandlers} options
 * @param {number} maxBytes for a JSON answer; each event is bounded to 1 MiB
 */
async function listenOnce(post, id, options, maxBytes) {
    const response = await post('subscriptions/listen', { notifications: { promptsListChanged: true } }, id, options.signal);
    if (mediaType(response) !== 'text/event-stream' || response.body === null) {
        // A refusal answered as a request's response (200), or a graceful end at once.
        resultOf(await answerOf(response, id, maxBytes), response.status);
        return;
    }
    for await (const message of sseMessages(response.body, { idleMs: LISTEN_IDLE_MS })) {
        const tag = isObject(message.params) && isObject(message.params._meta) ? message.params._meta[META_SUBSCRIPTION] : undefined;
        if (tag !== undefined && tag !== id) continue;
        if (message.method === 'notifications/subscriptions/acknowledged') {
            options.onOpen();
            options.onAcknowledged?.();
        } else if (message.method === 'notifications/prompts/list_changed') options.onListChanged?.();
        else if (message.id === id) {
            resultOf(message, 200);
            return;
        }
    }
}

/** Refusals a retry cannot mend: the listen loop stops on them. */
const FINAL_KINDS = new Set(['unauthorized', 'forbidden', 'forbidden-origin', 'rpc']);

/**
 * Keeps a listen stream open until `signal` aborts: reconnects with backoff after a cut or an end (the backoff starts
 * again once a stream is acknowledged); 401, 403 and JSON-RPC refusals stop it ('off' with the error); 429 and 503
 * are 'off' until Retry-After (or 30 s), then it reconnects.
 * @param {ListenOptions} options
 * @param {(handlers: ListenHandlers) => Promise<void>} open
 * @param {() => number} random
 */
async function listenLoop(options, open, random) {
    const { signal, onState = () => undefined } = options;
    let attempt = 0;
    const onOpen = () => {
        attempt = 0;
        onState('listening');
    };
    onState('connecting');
    while (!signal.aborted) {
        const error = await listenedUntilEnd(() => open({ ...options, onOpen }), signal);
        if (signal.aborted) return;
        if (error !== undefined && FINAL_KINDS.has(error.kind)) return onState('off', error);
        if (error !== undefined && (error.kind === 'rate-limited' || error.status === 503)) {
            onState('off', error);
            await pause(error.retryAfterMs ?? LISTEN_REFUSED_WAIT_MS, signal);
            if (!signal.aborted) onState('reconnecting');
        } else {
            onState('reconnecting', error);
            await pause(listenBackoffMs(attempt++, random), signal);
        }
    }
}

/**
 * Runs one stream; its CatalogRequestError is returned, an abort swallowed (the loop checks the signal), anything
 * else (a callback's own bug) thrown.
 * @param {() => Promise<void>} run
 * @param {AbortSignal} signal
 * @returns {Promise<CatalogRequestError | undefined>}
 */
async function listenedUntilEnd(run, signal) {
    try {
        await run();
        return undefined;
    } catch (error) {
        if (error instanceof CatalogRequestError) return error;
        if (signal.aborted) return undefined;
        throw error;
    }
}
