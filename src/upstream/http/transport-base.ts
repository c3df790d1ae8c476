/**
 * What the two HTTP client transports share: the transport callbacks,
 * one upstream pool, the exchanges in flight (all aborted on close), the
 * protocol version header, opening SSE streams, and handing messages on.
 * Errors reported are the transport's own (a status, a fixed phrase), never
 * what the upstream wrote.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import type { UpstreamCredentials } from '../auth/credentials.js';
import { UpstreamHttpError, UpstreamWireError } from '../errors.js';
import type { Forwarded } from '../../catalog/upstream-port.js';
import { traceEntries } from '../../protocol/meta.js';
import type { UpstreamTransport } from '../transports.js';
import type { RequestId } from '../../protocol/json-rpc.js';
import type { Revision } from '../../protocol/revisions.js';
import { Exchanges, type Exchange } from './exchanges.js';
import type { ReadLimit } from '../oversized.js';
import { decodeMessages, messageFault, type MessageLimits } from './messages.js';
import type { SseEvent } from './sse-parser.js';
import { streamPace } from '../flood.js';
import { discard, isSuccess, mediaType, UpstreamHttp, type HttpCall, type HttpResponse } from './upstream-http.js';

export interface HttpTransportOptions {
    url: URL;
    /** Configured headers, sent on every request. */
    headers: Readonly<Record<string, string>>;
    /** From `auth`: the Authorization header, renewed as it needs. */
    credentials?: UpstreamCredentials | undefined;
    /** The upstream's timeoutMs: bounds what no request timeout covers (notifications, DELETE). */
    timeoutMs: number;
    /** The upstream's maxConcurrency: the pool has this many sockets, plus a few for streams and notifications. */
    maxConcurrency: number;
    /** Read when a message is read, so a reload applies to connections already open. */
    limits: () => MessageLimits;
    /** The connection's streams brought more lines in a window than they are read at (see paced-read.ts). */
    onStreamFlood?: (() => void) | undefined;
}

/** Sockets beyond maxConcurrency: the GET stream, notifications (cancellations) and pings. */
const EXTRA_SOCKETS = 4;

export abstract class HttpTransport implements UpstreamTransport {
    onclose?: (() => void) | undefined;
    onerror?: ((error: Error, requestId?: string) => void) | undefined;
    onmessage?: ((message: JSONRPCMessage, relatedTo?: RequestId) => void) | undefined;

    protected readonly http: UpstreamHttp;
    protected readonly exchanges = new Exchanges();
    /** Every stream of the connection is read at this pace, together. */
    protected readonly pace = streamPace(() => this.options.onStreamFlood?.());
    #revision: Revision | undefined;

    constructor(protected readonly options: HttpTransportOptions) {
        this.http = new UpstreamHttp({
            url: options.url,
            headers: options.headers,
            credentials: options.credentials,
            connections: options.maxConcurrency + EXTRA_SOCKETS
        });
    }

    abstract start(): Promise<void>;
    abstract send(message: JSONRPCMessage, forwarded?: Forwarded): Promise<void>;

    setRevision(revision: Revision | undefined): void {
        this.#revision = revision;
    }

    /** The revision requests are sent under, once known (or being probed). */
    protected get revision(): Revision | undefined {
        return this.#revision;
    }

    /** Aborts every exchange at once (requests still waiting fail now), then lets the subclass say goodbye. */
    async close(): Promise<void> {
        if (this.exchanges.closed) return;
        this.exchanges.abortAll();
        this.onclose?.();
        try {
            await this.farewell();
        } finally {
            await this.http.close();
        }
    }

    /** Last words to the server after close (the pool is still open). */
    protected async farewell(): Promise<void> {}

    /** The headers of every request after the handshake, added to the request's own (`own`: a new object, made for one request). */
    protected headers(own: Record<string, string>): Record<string, string> {
        if (this.#revision !== undefined) own['mcp-protocol-version'] = this.#revision.version;
        return own;
    }

    /**
     * A POST whose answer is only a status (a notification, a response, or a legacy request, answered on the
     * stream), bounded by timeoutMs. The exchange belongs to request `id` if given, so cancelling it aborts it; it
     * carries the id of the client request it serves, if any (forwarded headers are for requests answered here).
     */
    protected async postMessage(message: JSONRPCMessage, url: URL | undefined, id: RequestId | undefined, forwarded: Forwarded | undefined): Promise<HttpResponse | undefined> {
        const exchange = this.exchanges.open(id);
        try {
            const response = await this.http.request({
                method: 'POST',
                ...(url === undefined ? {} : { url }),
                headers: this.headers({ ...traceHeaders(forwarded), accept: 'application/json, text/event-stream', 'content-type': 'application/json' }),
                body: JSON.stringify(message),
                exchange,
                timeoutMs: this.options.timeoutMs,
                requestId: forwarded?.requestId
            });
            await discard(response);
            if (!isSuccess(response)) throw new UpstreamHttpError(response.statusCode);
            return response;
        } catch (error) {
            if (exchange.aborted) return undefined;
            this.report(error, forwarded?.requestId);
            throw error;
        } finally {
            this.exchanges.done(exchange, id);
        }
    }

    /** A GET for an SSE stream; undefined when the server offers none (405). Throws for anything but a stream. */
    protected async openStream(exchange: Exchange, headers: Record<string, string>, requestId?: string): Promise<HttpResponse | undefined> {
        const call: HttpCall = {
            method: 'GET',
            headers: this.headers({ accept: 'text/event-stream', ...headers }),
            exchange,
            // A quiet stream is normal; what bounds the wait for it to open is the caller's (a handshake deadline, close).
            timeoutMs: 0,
            requestId
        };
        const response = await this.http.request(call);
        if (response.statusCode === 405) {
            await discard(response);
            return undefined;
        }
        if (!isSuccess(response)) {
            await discard(response);
            throw new UpstreamHttpError(response.statusCode);
        }
        if (mediaType(response) !== 'text/event-stream') {
            await discard(response);
            throw unexpectedContent();
        }
        return response;
    }

    /** The messages of one SSE event; what cannot be used is reported (for client request `requestId`, if any) and left out. */
    protected messagesOf(event: SseEvent, limit: ReadLimit, requestId?: string): JSONRPCMessage[] {
        if (event.type !== 'message') return [];
        const decoded = decodeMessages(event.data, limit);
        if (decoded.kind === 'messages') return decoded.messages;
        this.report(messageFault(decoded.kind), requestId);
        return [];
    }

    /** `relatedTo`: the request on whose answer stream `message`, a request of the server's, came (see UpstreamTransport). */
    protected deliver(message: JSONRPCMessage, relatedTo?: RequestId): void {
        try {
            this.onmessage?.(message, relatedTo);
        } catch (error) {
            this.report(error);
        }
    }

    protected report(error: unknown, requestId?: string): void {
        if (this.exchanges.closed) return;
        this.onerror?.(error instanceof Error ? error : new UpstreamWireError('transport error', undefined), requestId);
    }
}

/** The W3C headers of the trace context a request carries on (the `_meta` keys are the header names); none without one. */
export function traceHeaders(forwarded: Forwarded | undefined): Record<string, string> | undefined {
    return forwarded?.trace === undefined ? undefined : traceEntries(forwarded.trace);
}

export function unexpectedContent(): UpstreamWireError {
    return new UpstreamWireError('unexpected content type', 'http_error');
}
