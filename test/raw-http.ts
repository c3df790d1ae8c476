/**
 * Raw Streamable HTTP for tests that must see statuses, headers and streams an SDK client hides: sessions, POSTs,
 * GET streams and SSE parsing (whole bodies, or message by message as they arrive).
 */
import type { ReadableStreamReadResult } from 'node:stream/web';
import { Agent, type Dispatcher } from 'undici';

export const JSON_AND_SSE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

export interface JsonRpcMessage {
    jsonrpc: '2.0';
    id?: string | number | null;
    method?: string;
    params?: Record<string, unknown>;
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: unknown };
}

export function initializeBody(protocolVersion = '2025-06-18', id: string | number = 1) {
    return { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
}

/**
 * Requests sent through it come from `localAddress`: any of 127.0.0.0/8 reaches this machine, so each address is
 * another client as the gateway sees it. Close it when done.
 */
export function clientAt(localAddress: string): Agent {
    return new Agent({ localAddress });
}

export interface SendOptions {
    signal?: AbortSignal;
    /** Sent through this agent (see clientAt) instead of fetch's own. */
    from?: Dispatcher;
}

/** A POST as a client sends it; a string body goes as it is (hand-written or broken JSON), anything else as JSON. */
export function post(url: string, body: unknown, headers: Record<string, string> = {}, { signal, from }: SendOptions = {}): Promise<Response> {
    const text = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
    return fetch(url, { method: 'POST', headers: { ...JSON_AND_SSE, ...headers }, body: text, ...(signal ? { signal } : {}), ...dispatcher(from) });
}

/**
 * fetch's `dispatcher` option for the agent. The global fetch is the undici bundled with Node and typed by
 * undici-types, the agent comes from the undici package: two copies of the same interface that TypeScript cannot
 * match up, while Node's fetch drives the agent through the handler API undici 7 still accepts.
 */
function dispatcher(from: Dispatcher | undefined): Pick<RequestInit, 'dispatcher'> {
    return from === undefined ? {} : { dispatcher: from as unknown as RequestInit['dispatcher'] };
}

export interface RawSession {
    id: string;
    /** Session id and negotiated protocol version, as a client sends them on every later request. */
    headers: Record<string, string>;
    /** The agent the session was opened through: its later requests come the same way. */
    from?: Dispatcher;
}

export interface OpenOptions {
    /** Replaces the usual initialize body (see initializeBody). */
    initialize?: unknown;
    /** Sends the session's requests through this agent (see clientAt). */
    from?: Dispatcher;
}

/** What a client sends on every request of its session: MCP-Protocol-Version only from 2025-06-18, which brought it. */
export function sessionHeaders(id: string, protocolVersion: string): Record<string, string> {
    return { 'mcp-session-id': id, ...(protocolVersion >= '2025-06-18' ? { 'mcp-protocol-version': protocolVersion } : {}) };
}

/** initialize + notifications/initialized, as a client does it. */
export async function openRawSession(
    url: string,
    protocolVersion = '2025-06-18',
    extra: Record<string, string> = {},
    { initialize = initializeBody(protocolVersion), from }: OpenOptions = {}
): Promise<RawSession> {
    const init = await post(url, initialize, extra, { from });
    if (init.status !== 200) throw new Error(`initialize answered ${init.status}: ${await init.text()}`);
    const id = init.headers.get('mcp-session-id');
    if (id === null) throw new Error('initialize answered without Mcp-Session-Id');
    const [answer] = await messagesOf(init);
    const negotiated = (answer?.result as { protocolVersion?: string } | undefined)?.protocolVersion ?? protocolVersion;
    const headers = { ...extra, ...sessionHeaders(id, negotiated) };
    const initialized = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers, { from });
    await initialized.body?.cancel();
    if (initialized.status !== 202) throw new Error(`notifications/initialized answered ${initialized.status}`);
    return { id, headers, ...(from ? { from } : {}) };
}

/** Opens a session's standalone GET stream. */
export function getStream(url: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Response> {
    return fetch(url, { method: 'GET', headers: { ...headers, accept: 'text/event-stream' }, ...(signal ? { signal } : {}) });
}

/** Ends a session, as a client leaving does. */
export function deleteSession(url: string, headers: Record<string, string>): Promise<Response> {
    return fetch(url, { method: 'DELETE', headers });
}

/** Every JSON-RPC message of a POST's answer: the JSON body (one message, or a batch's array), or each `data:` of an SSE body read to its end. */
export async function messagesOf(response: Response): Promise<JsonRpcMessage[]> {
    const text = await response.text();
    if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) return parseSse(text).map(data => JSON.parse(data) as JsonRpcMessage);
    return text === '' ? [] : [JSON.parse(text) as JsonRpcMessage | JsonRpcMessage[]].flat();
}

/** The `data` of each event in an SSE text (events without data, such as priming events, are skipped). */
export function parseSse(text: string): string[] {
    const events: string[] = [];
    for (const block of text.split(/\r?\n\r?\n/)) {
        const data = block
            .split(/\r?\n/)
            .filter(line => line.startsWith('data:'))
            .map(line => line.slice(5).replace(/^ /, ''));
        if (data.length > 0 && data.join('\n') !== '') events.push(data.join('\n'));
    }
    return events;
}

/** Each JSON-RPC message of an SSE body as soon as its event is complete; ends with the stream (cancel `reader` to stop). */
export async function* sseMessages(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<JsonRpcMessage> {
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
        const chunk: ReadableStreamReadResult<Uint8Array> = await reader.read();
        if (chunk.done) return;
        buffer += decoder.decode(chunk.value, { stream: true });
        let end: number;
        while ((end = buffer.search(/\r?\n\r?\n/)) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
            for (const data of parseSse(block)) yield JSON.parse(data) as JsonRpcMessage;
        }
    }
}

/** One request on a session; its status and every message of its answer. */
export async function call(
    url: string,
    session: RawSession,
    method: string,
    params: Record<string, unknown> = {},
    id: string | number = 2,
    headers: Record<string, string> = session.headers
): Promise<{ status: number; messages: JsonRpcMessage[]; response: JsonRpcMessage | undefined }> {
    const response = await post(url, { jsonrpc: '2.0', id, method, params }, headers, { from: session.from });
    const messages = await messagesOf(response);
    return { status: response.status, messages, response: messages.find(message => message.id === id && message.method === undefined) };
}

/**
 * An SSE stream read as it arrives (a standalone GET stream, or a POST answer still streaming): `next` waits for
 * the first message, not yet taken, that passes `predicate`.
 */
export class SseReader {
    readonly messages: JsonRpcMessage[] = [];
    ended = false;
    #taken = 0;
    #waiters: (() => void)[] = [];
    readonly #done: Promise<void>;
    readonly #reader: ReadableStreamDefaultReader<Uint8Array>;

    constructor(readonly response: Response) {
        if (response.body === null) throw new Error('no body to read');
        const reader = (this.#reader = response.body.getReader());
        this.#done = (async () => {
            try {
                for await (const message of sseMessages(reader)) {
                    this.messages.push(message);
                    this.#wake();
                }
            } catch {
                // cancelled or cut off: the stream has ended either way
            } finally {
                this.ended = true;
                this.#wake();
            }
        })();
    }

    #wake(): void {
        for (const wake of this.#waiters.splice(0)) wake();
    }

    /** The next message passing `predicate`; rejects after `ms` or if the stream ends first. */
    async next(predicate: (message: JsonRpcMessage) => boolean = () => true, ms = 20_000): Promise<JsonRpcMessage> {
        const deadline = Date.now() + ms;
        for (;;) {
            const index = this.messages.findIndex((message, i) => i >= this.#taken && predicate(message));
            if (index !== -1) {
                this.#taken = index + 1;
                return this.messages[index]!;
            }
            if (this.ended) throw new Error('the stream ended without such a message');
            const left = deadline - Date.now();
            if (left <= 0) throw new Error('timed out waiting for a message on the stream');
            await new Promise<void>(resolve => {
                const timer = setTimeout(resolve, left);
                this.#waiters.push(() => {
                    clearTimeout(timer);
                    resolve();
                });
            });
        }
    }

    /** Resolves when the server ends the stream; rejects after `ms`. */
    async closed(ms = 20_000): Promise<void> {
        await Promise.race([this.#done, new Promise((_, reject) => setTimeout(() => reject(new Error('the stream did not end')), ms).unref())]);
    }

    async cancel(): Promise<void> {
        await this.#reader.cancel().catch(() => {});
        await this.#done;
    }
}

/** What a 2026-07-28 client puts in every request's `_meta` (a stateless revision: no session, no handshake). */
export function modernMeta(protocolVersion = '2026-07-28', clientCapabilities: Record<string, unknown> = {}): Record<string, unknown> {
    return {
        'io.modelcontextprotocol/protocolVersion': protocolVersion,
        'io.modelcontextprotocol/clientInfo': { name: 'raw-modern', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': clientCapabilities
    };
}

/** A 2026-07-28 request body: `params` with the request `_meta` merged in. */
export function modernRequest(method: string, params: Record<string, unknown> = {}, id: string | number = 1, protocolVersion = '2026-07-28') {
    const meta = { ...modernMeta(protocolVersion), ...((params._meta as Record<string, unknown> | undefined) ?? {}) };
    return { jsonrpc: '2.0' as const, id, method, params: { ...params, _meta: meta } };
}

/**
 * The headers a 2026-07-28 client mirrors from the body: MCP-Protocol-Version, Mcp-Method, and Mcp-Name for a
 * prompts/get (in the base64 sentinel form when the name is not a plain header value).
 */
export function modernHeaders(body: { method: string; params?: Record<string, unknown> }, protocolVersion = '2026-07-28'): Record<string, string> {
    const headers: Record<string, string> = { 'mcp-protocol-version': protocolVersion, 'mcp-method': body.method };
    const name = body.params?.name;
    if (body.method === 'prompts/get' && typeof name === 'string') headers['mcp-name'] = headerValue(name);
    return headers;
}

function headerValue(value: string): string {
    const plain = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !(value.startsWith('=?base64?') && value.endsWith('?='));
    return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** One stateless 2026-07-28 request, with the headers a conforming client sends (`headers` adds or overrides). */
export function postModern(url: string, method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}, options: SendOptions = {}): Promise<Response> {
    const body = modernRequest(method, params);
    return post(url, body, { ...modernHeaders(body), ...headers }, options);
}
