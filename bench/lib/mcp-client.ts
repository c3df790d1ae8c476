/**
 * The bench's MCP client: raw JSON-RPC over undici keep-alive connections, nothing per request but one
 * serialization, one POST and one parse, so that what the bench times is the server (an SDK client costs more per
 * request than a gateway should). A channel is one session on one connection (undici `Client`), or on a shared
 * `Pool` when many sessions or many requests in flight share connections.
 *
 * Two transports: Streamable HTTP (initialize, then every request a POST answered with JSON or an SSE stream), and
 * the legacy HTTP+SSE transport (a GET stream carries every answer; requests are POSTed to the endpoint it names),
 * which mcp-hub's endpoint speaks. Every failure rejects: an HTTP status other than the expected, a JSON-RPC error,
 * a stream that ends, no answer within the timeout.
 */
import { Client, Pool, type Dispatcher } from 'undici';

export const TIMEOUT_MS = 60_000;

export type Result = Record<string, unknown>;

export interface JsonRpcMessage {
    jsonrpc: '2.0';
    id?: string | number | null;
    method?: string;
    params?: Record<string, unknown>;
    result?: Result;
    error?: { code: number; message: string };
}

export interface Channel {
    /** One request; its result. */
    call(method: string, params?: Record<string, unknown>): Promise<Result>;
    close(): Promise<void>;
}

/** Keep-alive connections to `origin`: one (an undici Client), or a pool of `connections`. */
export function connect(origin: string, connections = 1): Dispatcher {
    const options = { headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS, keepAliveTimeout: 60_000 };
    return connections === 1 ? new Client(origin, options) : new Pool(origin, { ...options, connections });
}

/**
 * A connection for a long-lived SSE stream: quiet for as long as nothing happens (while other targets take their
 * turn, minutes in a full run), so no body timeout; each request on it has its own timer.
 */
export function connectStream(origin: string): Dispatcher {
    return new Client(origin, { headersTimeout: TIMEOUT_MS, bodyTimeout: 0, keepAliveTimeout: 60_000 });
}

class RpcError extends Error {
    constructor(
        readonly code: number,
        message: string
    ) {
        super(`JSON-RPC error ${code}: ${message}`);
    }
}

export function initializeParams(protocolVersion = '2025-06-18') {
    return { protocolVersion, capabilities: {}, clientInfo: { name: 'gateway-bench', version: '1.0.0' } };
}

/** The `data` of each complete event in `text`, and what is left of it (an event not complete yet). */
function sseEvents(text: string): { events: { event: string; data: string }[]; rest: string } {
    const events: { event: string; data: string }[] = [];
    const blocks = text.split(/\r?\n\r?\n/);
    const rest = blocks.pop() ?? '';
    for (const block of blocks) {
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split(/\r?\n/)) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length > 0) events.push({ event, data: data.join('\n') });
    }
    return { events, rest };
}

/** Calls `onEvent` for each event of an SSE body as it arrives. */
export function readEvents(body: Dispatcher.ResponseData['body'], onEvent: (event: { event: string; data: string }) => void): void {
    let buffer = '';
    body.setEncoding('utf8');
    body.on('data', (chunk: string) => {
        const { events, rest } = sseEvents(buffer + chunk);
        buffer = rest;
        for (const event of events) onEvent(event);
    });
    // The stream's end (or its cut-off) is the owner's concern: it closes it, or sees its requests fail.
    body.on('error', () => {});
}

export function resultOf(message: JsonRpcMessage | undefined, id: number): Result {
    if (message === undefined) throw new Error(`no answer to request ${id}`);
    if (message.error !== undefined) throw new RpcError(message.error.code, message.error.message);
    if (message.result === undefined) throw new Error(`answer to request ${id} without result`);
    return message.result;
}

export interface StreamableOptions {
    /** Open a session (initialize + notifications/initialized) first. Default: true. */
    session?: boolean;
    /** Sent with every request, e.g. { authorization: 'Bearer <key>' }. */
    headers?: Record<string, string>;
    /** Connections to send through (shared by other channels: closing the channel leaves them open). */
    via?: Dispatcher;
    protocolVersion?: string;
    /**
     * Speak a stateless revision (2026-07-28 on): no session; every request carries the version, client info and
     * capabilities in `_meta`, and mirrors its method (and a prompt's name) in headers, as a conforming client does.
     */
    stateless?: string;
}

/** What a stateless client puts in each request's `_meta`. */
function statelessMeta(protocolVersion: string): Record<string, unknown> {
    return {
        'io.modelcontextprotocol/protocolVersion': protocolVersion,
        'io.modelcontextprotocol/clientInfo': { name: 'gateway-bench', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {}
    };
}

/** A session over Streamable HTTP. */
export class StreamableChannel implements Channel {
    #nextId = 1;
    readonly #origin: string;
    readonly #path: string;
    readonly #headers: Record<string, string>;
    readonly #dispatcher: Dispatcher;
    readonly #owned: boolean;
    readonly #meta: Record<string, unknown> | undefined;
    sessionId: string | undefined;

    private constructor(url: URL, options: StreamableOptions) {
        this.#origin = url.origin;
        this.#path = url.pathname + url.search;
        this.#headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...options.headers };
        this.#owned = options.via === undefined;
        this.#dispatcher = options.via ?? connect(url.origin);
        if (options.stateless !== undefined) {
            this.#meta = statelessMeta(options.stateless);
            this.#headers['mcp-protocol-version'] = options.stateless;
        }
    }

    static async open(url: string, options: StreamableOptions = {}): Promise<StreamableChannel> {
        const channel = new StreamableChannel(new URL(url), options);
        if (options.session === false || options.stateless !== undefined) return channel;
        try {
            const { message, headers } = await channel.#exchange('initialize', initializeParams(options.protocolVersion));
            const init = resultOf(message, 0) as { protocolVersion?: string };
            const session = headers['mcp-session-id'];
            if (typeof session === 'string') {
                channel.sessionId = session;
                channel.#headers['mcp-session-id'] = session;
            }
            if (init.protocolVersion !== undefined && init.protocolVersion >= '2025-06-18') channel.#headers['mcp-protocol-version'] = init.protocolVersion;
            await channel.notify('notifications/initialized');
            return channel;
        } catch (error) {
            await channel.close();
            throw error;
        }
    }

    async call(method: string, params: Record<string, unknown> = {}): Promise<Result> {
        const id = this.#nextId++;
        return resultOf((await this.#exchange(method, params, id)).message, id);
    }

    async notify(method: string): Promise<void> {
        const { statusCode, body } = await this.#dispatcher.request({ path: this.#path, method: 'POST', headers: this.#headers, body: JSON.stringify({ jsonrpc: '2.0', method }) });
        await body.dump();
        if (statusCode !== 202) throw new Error(`${method} answered HTTP ${statusCode}`);
    }

    /** Opens the session's GET stream on a connection of its own; `onMessage` gets every message on it. Call the answer to close it. */
    async listen(onMessage: (message: JsonRpcMessage) => void): Promise<() => Promise<void>> {
        const stream = connectStream(this.#origin);
        const { statusCode, body } = await stream.request({ path: this.#path, method: 'GET', headers: { ...this.#headers, accept: 'text/event-stream' } });
        if (statusCode !== 200) throw new Error(`GET stream answered HTTP ${statusCode}`);
        readEvents(body, event => onMessage(JSON.parse(event.data) as JsonRpcMessage));
        return () => stream.destroy().catch(() => {});
    }

    async #exchange(method: string, params: Record<string, unknown>, id = 0): Promise<{ message: JsonRpcMessage | undefined; headers: Dispatcher.ResponseData['headers'] }> {
        const stateless = this.#meta !== undefined;
        const name = typeof params.name === 'string' && method === 'prompts/get' ? { 'mcp-name': params.name } : {};
        const { statusCode, headers, body } = await this.#dispatcher.request({
            path: this.#path,
            method: 'POST',
            headers: stateless ? { ...this.#headers, 'mcp-method': method, ...name } : this.#headers,
            body: JSON.stringify({ jsonrpc: '2.0', id, method, params: stateless ? { ...params, _meta: this.#meta } : params })
        });
        const text = await body.text();
        if (statusCode !== 200) throw new Error(`${method} answered HTTP ${statusCode}: ${text.slice(0, 200)}`);
        if (!String(headers['content-type'] ?? '').includes('text/event-stream')) return { message: JSON.parse(text) as JsonRpcMessage, headers };
        const messages = sseEvents(`${text}\n\n`).events.map(event => JSON.parse(event.data) as JsonRpcMessage);
        return { message: messages.find(message => message.id === id && message.method === undefined), headers };
    }

    async close(): Promise<void> {
        if (this.#owned) await this.#dispatcher.close();
    }
}
