/**
 * MCP client transport for Streamable HTTP upstreams, on undici instead of
 * web fetch, unlike the SDK's:
 * - every body is read under a bound (limits.maxUpstreamMessageBytes, or for
 *   prompts/get and completion/complete the result limit): a bigger JSON answer
 *   is not read further, its exchange is aborted and its request gets the
 *   stand-in error; a bigger SSE event costs no more than the bound;
 * - a request the client cancels (on timeout, or for the caller) has its POST and
 *   SSE answer aborted at once, and close() aborts everything, so no socket is
 *   left open;
 * - errors carry the HTTP status only, never the response body.
 * Also: Mcp-Session-Id and MCP-Protocol-Version on every request after the
 * handshake; the standalone GET stream for server messages, reconnected after
 * the server's `retry` with Last-Event-ID; a server's request on a request's
 * answer stream is handed on tied to that request; an answer stream that ends early is
 * resumed the same way; the session is ended with DELETE on close (bounded).
 * Under the stateless revision (2026-07-28): no session and no GET stream;
 * each request mirrors its method (and a prompt's name) in headers; a
 * notification is never posted (closing an exchange is how a request is
 * cancelled); a 4xx whose body is a JSON-RPC error answering the request (the
 * revision answers that way) is that request's answer.
 */
import { SdkError, SdkErrorCode, type JSONRPCMessage, type JSONRPCRequest } from '@modelcontextprotocol/client';
import { encodeHeaderValue } from '../../lib/header-value.js';
import { answeredId, cancelledRequestId, isRequest, type RequestId } from '../../protocol/json-rpc.js';
import { CODE, isSpecReservedError } from '../../protocol/errors.js';
import { UpstreamHttpError, UpstreamWireError } from '../errors.js';
import { messageLimit, oversizedResponse, type ReadLimit } from '../oversized.js';
import { readPaced } from '../paced-read.js';
import type { Forwarded } from '../../catalog/upstream-port.js';
import { Exchange, pause } from './exchanges.js';
import { answerLimit, answersRequest, decodeMessages, messageFault } from './messages.js';
import { SseParser } from './sse-parser.js';
import { MAX_STREAM_FAILURES, reconnectDelay } from './sse-stream.js';
import { HttpTransport, traceHeaders, unexpectedContent } from './transport-base.js';
import { discard, headerValue, isSuccess, mediaType, readBounded, type HttpResponse } from './upstream-http.js';
import { ATTR } from '../../diagnostics/tracer.js';

/** The DELETE that ends the session at close waits no longer than this (or timeoutMs, if shorter). */
const DELETE_TIMEOUT_MS = 2000;
/** How long an answer's SSE stream may stay open after the answer before its exchange is cut. */
const ANSWERED_STREAM_GRACE_MS = 1000;
/** The most read of a refusal's body (a JSON-RPC error is small). */
const REFUSAL_BYTES = 64 * 1024;

function streamEnded(id: RequestId): JSONRPCMessage {
    return { jsonrpc: '2.0', id, error: { code: CODE.internalError, message: 'stream ended without an answer' } };
}

export class StreamableHttpTransport extends HttpTransport {
    #sessionId: string | undefined;
    /** The server's last `retry`, for every stream of the session. */
    #retryMs: number | undefined;
    #listening = false;

    async start(): Promise<void> {}

    /** Not async itself: a request's promise is #request's own, with no layer over it. */
    send(message: JSONRPCMessage, forwarded?: Forwarded): Promise<void> {
        if (this.exchanges.closed) return Promise.reject(new SdkError(SdkErrorCode.NotConnected, 'Not connected'));
        return isRequest(message) ? this.#request(message, forwarded) : this.#notify(message, forwarded);
    }

    async #notify(message: JSONRPCMessage, forwarded: Forwarded | undefined): Promise<void> {
        const cancelled = cancelledRequestId(message);
        if (cancelled !== undefined) this.exchanges.abort(cancelled);
        if (this.#stateless) return;
        const response = await this.postMessage(message, undefined, undefined, forwarded);
        if (response !== undefined && 'method' in message && message.method === 'notifications/initialized' && !this.#listening) {
            this.#listening = true;
            void this.#listen();
        }
    }

    get #stateless(): boolean {
        return this.revision?.era === 'stateless';
    }

    /** What a request mirrors of its body, where the revision says so. */
    #mirrored(message: JSONRPCRequest): Record<string, string> {
        if (this.revision?.mirroredHeaders !== true) return {};
        const name = message.method === 'prompts/get' ? message.params?.name : undefined;
        return typeof name === 'string' ? { 'mcp-method': message.method, 'mcp-name': encodeHeaderValue(name) } : { 'mcp-method': message.method };
    }

    /** A stateless server's JSON-RPC error in a 4xx body, as the answer to request `id`; undefined otherwise (body consumed). */
    async #refusal(response: HttpResponse, id: RequestId): Promise<JSONRPCMessage | undefined> {
        if (!this.#stateless || mediaType(response) !== 'application/json') {
            await discard(response);
            return undefined;
        }
        const decoded = decodeMessages(await readBounded(response, REFUSAL_BYTES), messageLimit(REFUSAL_BYTES));
        const answer = decoded.kind === 'messages' && decoded.messages.length === 1 ? decoded.messages[0] : undefined;
        if (answer === undefined || !('error' in answer)) return undefined;
        if (answer.id === id) return answer;
        // A refusal before the body was read has no id; one with a code only the revision uses is still this answer.
        return answer.id === null && isSpecReservedError(answer.error.code) ? { ...answer, id } : undefined;
    }

    protected override headers(own: Record<string, string>): Record<string, string> {
        if (this.#sessionId !== undefined) own['mcp-session-id'] = this.#sessionId;
        return super.headers(own);
    }

    /** Ends the session, bounded: the server would forget it by itself in time, nothing is lost if this fails. */
    protected override async farewell(): Promise<void> {
        if (this.#sessionId === undefined) return;
        const ms = Math.min(this.options.timeoutMs, DELETE_TIMEOUT_MS);
        const exchange = new Exchange();
        const timer = setTimeout(() => exchange.abort(), ms).unref();
        try {
            await discard(await this.http.request({ method: 'DELETE', headers: this.headers({}), exchange, timeoutMs: ms }));
        } catch {
            // Unreachable, or too slow: see above.
        } finally {
            clearTimeout(timer);
        }
    }

    /**
     * A request: its answer is a JSON body or an SSE stream, both read under the bound for its method. It carries what
     * it was given of the client request it serves, and nothing else of any client's.
     */
    async #request(message: JSONRPCRequest, forwarded: Forwarded | undefined): Promise<void> {
        const { id } = message;
        const requestId = forwarded?.requestId;
        const exchange = this.exchanges.open(id);
        let streaming = false;
        try {
            const response = await this.http.request({
                method: 'POST',
                headers: this.headers({
                    ...forwarded?.headers,
                    ...traceHeaders(forwarded),
                    accept: 'application/json, text/event-stream',
                    'content-type': 'application/json',
                    ...this.#mirrored(message)
                }),
                body: JSON.stringify(message),
                exchange,
                // The client times the request out and cancels it, which aborts this exchange.
                timeoutMs: 0,
                requestId
            });
            if (!isSuccess(response)) {
                const refusal = await this.#refusal(response, id);
                if (refusal !== undefined) return this.deliver(refusal);
                throw new UpstreamHttpError(response.statusCode);
            }
            if (message.method === 'initialize') this.#sessionId = headerValue(response, 'mcp-session-id');
            // Accepted, to be answered on the server's event stream.
            if (response.statusCode === 202) return await discard(response);
            const limit = answerLimit(message.method, this.options.limits());
            const type = mediaType(response);
            if (type === 'text/event-stream') {
                streaming = true;
                void this.#readAnswerStream(response, id, exchange, limit, forwarded, message.method === 'subscriptions/listen');
                return;
            }
            if (type !== 'application/json') {
                await discard(response);
                throw unexpectedContent();
            }
            const body = await readBounded(response, limit.bytes);
            if (body.kind === 'oversized') {
                exchange.abort();
                return this.deliver(oversizedResponse(id, limit));
            }
            const decoded = decodeMessages(body, limit);
            if (decoded.kind !== 'messages') throw messageFault(decoded.kind);
            for (const answer of decoded.messages) this.deliver(answer);
        } catch (error) {
            // Aborted here: cancelled, answered by a stand-in, or closed; the client has settled the request already.
            if (exchange.aborted) return;
            this.report(error, requestId);
            throw error;
        } finally {
            if (!streaming) this.exchanges.done(exchange, id);
        }
    }

    /**
     * The SSE stream answering request `id`: its messages (progress, then the answer) are handed on. If it ends
     * before the answer after events with ids, it is resumed from the last one with a GET, as the server asked.
     */
    async #readAnswerStream(first: HttpResponse, id: RequestId, exchange: Exchange, limit: ReadLimit, forwarded: Forwarded | undefined, endless = false): Promise<void> {
        let answered = false;
        let hangUp: NodeJS.Timeout | undefined;
        const parser = new SseParser({
            maxDataBytes: limit.bytes,
            onRetry: ms => (this.#retryMs = ms),
            onEvent: event => {
                if (answered) return;
                for (const message of this.messagesOf(event, limit, forwarded?.requestId)) {
                    if (answeredId(message) === id) answered = true;
                    // A request of the server's on this stream serves this request (a 2025 server's elicitation, say).
                    this.deliver(message, isRequest(message) ? id : undefined);
                }
                // A server should end the stream after the answer; one that keeps it open would hold a socket of the
                // pool for good. It gets a moment (ending it lets the socket be reused), then the exchange is cut.
                if (answered) hangUp = setTimeout(() => exchange.abort(), ANSWERED_STREAM_GRACE_MS).unref();
            },
            // The answer is too big: it is failed at once and the rest of it is not read.
            onOversized: head => {
                if (answered || !answersRequest(head, id)) return;
                answered = true;
                this.deliver(oversizedResponse(id, limit));
                exchange.abort();
            }
        });
        try {
            for (let response: HttpResponse | undefined = first; response !== undefined;) {
                try {
                    await readPaced(response.body, parser, this.pace, exchange.signal);
                } catch (error) {
                    if (exchange.aborted) return;
                    // Cut off mid-way: said at once, so the liveness check can find a dead server before the timeout.
                    this.report(error, forwarded?.requestId);
                }
                if (answered || exchange.aborted) return;
                // A subscription has no timeout to end it: its end without an answer fails it, so it is opened again.
                if (endless && (parser.lastEventId === undefined || this.#stateless)) return this.deliver(streamEnded(id));
                if (parser.lastEventId === undefined) return this.report(new UpstreamWireError('answer stream ended without the answer', undefined), forwarded?.requestId);
                response = await this.#reopen(exchange, parser.lastEventId, forwarded);
            }
        } finally {
            clearTimeout(hangUp);
            this.exchanges.done(exchange, id);
        }
    }

    /** The standalone GET stream: notifications (list_changed) and requests from the server, for the whole session. */
    async #listen(): Promise<void> {
        const parser = new SseParser({
            maxDataBytes: this.options.limits().maxUpstreamMessageBytes,
            onRetry: ms => (this.#retryMs = ms),
            onEvent: event => {
                for (const message of this.messagesOf(event, messageLimit(this.options.limits().maxUpstreamMessageBytes))) this.deliver(message);
            }
        });
        const exchange = this.exchanges.open();
        try {
            let response: HttpResponse | undefined;
            try {
                response = await this.openStream(exchange, {});
            } catch (error) {
                if (exchange.aborted) return;
                this.report(error);
                response = await this.#reopen(exchange, undefined, undefined);
            }
            while (response !== undefined) {
                try {
                    await readPaced(response.body, parser, this.pace, exchange.signal);
                } catch (error) {
                    if (exchange.aborted) return;
                    this.report(error);
                }
                response = await this.#reopen(exchange, parser.lastEventId, undefined);
            }
        } finally {
            this.exchanges.done(exchange);
        }
    }

    /**
     * Reopens a stream after its delay, from `lastEventId`: undefined when closed, when the server offers no stream
     * (405), or after MAX_STREAM_FAILURES failed attempts in a row (the last failure is reported). A request's answer
     * stream (`forwarded`) is resumed with what its POST carried of its client request, each attempt an event of its span.
     */
    async #reopen(exchange: Exchange, lastEventId: string | undefined, forwarded: Forwarded | undefined): Promise<HttpResponse | undefined> {
        const headers = lastEventId === undefined ? traceHeaders(forwarded) : { ...traceHeaders(forwarded), 'last-event-id': lastEventId };
        for (let failures = 0; ; failures++) {
            if (!(await pause(reconnectDelay(this.#retryMs, failures), exchange))) return undefined;
            forwarded?.span?.event('mcp.stream.resume', { [ATTR.streamAttempt]: failures + 1 });
            try {
                return await this.openStream(exchange, headers ?? {}, forwarded?.requestId);
            } catch (error) {
                if (exchange.aborted) return undefined;
                if (failures + 1 >= MAX_STREAM_FAILURES) {
                    this.report(error, forwarded?.requestId);
                    return undefined;
                }
            }
        }
    }
}
