/**
 * The HTTP side of one connection to an upstream: a keep-alive undici Pool on
 * its origin, so requests reuse sockets and no more than a bounded number are
 * open at once, and the headers every request carries (the configured ones,
 * credentials from the URL or from `auth`; the X-Request-Id of the client
 * request served, when the caller names one). A request refused with 401
 * while carrying a token that can be renewed is sent once more with a new
 * one. Bodies are Node streams, read by the caller under its own bounds.
 * Requests go through undici's handler interface, not its request(): that
 * wraps each in an async resource, a promise, a stream of its own and an
 * AbortSignal's listener; here an exchange is aborted through undici's own hook.
 */
import { Readable } from 'node:stream';
import { errors, Pool, util, type Dispatcher } from 'undici';
import type { UpstreamCredentials } from '../auth/credentials.js';
import { urlCredentials } from '../../lib/url-credentials.js';
import { REQUEST_ID_HEADER } from '../../diagnostics/log-context.js';
import { ignore, readBoundedStream, type Collected } from '../../lib/byte-collector.js';
import type { Exchange } from './exchanges.js';

export interface UpstreamHttpOptions {
    /** The upstream's URL; a user and password in it are sent as Basic credentials (unless headers hold some). */
    url: URL;
    /** Sent on every request. */
    headers: Readonly<Record<string, string>>;
    /** Most sockets open at once. */
    connections: number;
    /** From `auth`: the Authorization header of every request (the config allows no other then). */
    credentials?: UpstreamCredentials | undefined;
}

export interface HttpCall {
    method: 'GET' | 'POST' | 'DELETE';
    /** Default: the upstream's URL. Must be on its origin. */
    url?: URL;
    /** This request's own headers; they win over the configured ones. */
    headers: Record<string, string>;
    body?: string;
    /** Aborting it aborts the request, or its body's reading once answered (which closes the socket). */
    exchange: Exchange;
    /**
     * Longest wait for the response headers, and between body chunks. 0: none, for streams that may be quiet for
     * long and for requests the caller times out itself.
     */
    timeoutMs: number;
    /** The id of the client request this call serves, sent as X-Request-Id; none for the gateway's own calls. */
    requestId?: string | undefined;
}

/** An answer of UpstreamHttp (or undici's own, of a token endpoint). */
export interface HttpResponse {
    statusCode: number;
    headers: Dispatcher.ResponseData['headers'];
    body: Readable;
}

/** What is read of a body that is thrown away: enough to reuse the socket for a short one, no more. */
const DISCARD_LIMIT = 64 * 1024;

export class UpstreamHttp {
    readonly #pool: Pool;
    readonly #url: URL;
    readonly #headers: Record<string, string>;
    readonly #credentials: UpstreamCredentials | undefined;

    constructor(options: UpstreamHttpOptions) {
        this.#url = withoutCredentials(options.url);
        this.#headers = baseHeaders(options.url, options.headers);
        this.#credentials = options.credentials;
        this.#pool = new Pool(this.#url.origin, { connections: options.connections, pipelining: 1 });
    }

    get url(): URL {
        return this.#url;
    }

    /** Fails with the token request's error when no token can be had (see auth/token-request.ts). */
    request(call: HttpCall): Promise<HttpResponse> {
        const credentials = this.#credentials;
        return credentials === undefined ? this.#send(call, undefined) : this.#authorized(call, credentials);
    }

    async #authorized(call: HttpCall, credentials: UpstreamCredentials): Promise<HttpResponse> {
        const authorization = await credentials.authorization(call.exchange.signal);
        const response = await this.#sendAuthorized(call, authorization, credentials);
        if (response.statusCode !== 401 || !credentials.mayRenew(authorization)) return response;
        // Refused before it was looked at, so sending it again is safe; a second 401 is the caller's to see.
        await discard(response);
        return this.#sendAuthorized(call, await credentials.renew(authorization, call.exchange.signal), credentials);
    }

    async #sendAuthorized(call: HttpCall, authorization: string, credentials: UpstreamCredentials): Promise<HttpResponse> {
        const response = await this.#send(call, authorization);
        if (response.statusCode !== 401) credentials.accepted(authorization);
        return response;
    }

    #send(call: HttpCall, authorization: string | undefined): Promise<HttpResponse> {
        const url = call.url ?? this.#url;
        const { requestId } = call;
        const headers: Record<string, string> = { ...this.#headers };
        if (authorization !== undefined) headers.authorization = authorization;
        if (requestId !== undefined) headers[REQUEST_ID_HEADER] = requestId;
        Object.assign(headers, call.headers);
        return new Promise((resolve, reject) => {
            const options = {
                method: call.method,
                path: `${url.pathname}${url.search}`,
                headers,
                body: call.body ?? null,
                headersTimeout: call.timeoutMs,
                bodyTimeout: call.timeoutMs
            };
            this.#pool.dispatch(options, new ExchangeHandler(call.exchange, resolve, reject));
        });
    }

    /** Closes every socket at once; requests still running fail. */
    close(): Promise<void> {
        return this.#pool.destroy();
    }
}

export function isSuccess(response: HttpResponse): boolean {
    return response.statusCode >= 200 && response.statusCode <= 299;
}

/** `text/event-stream` from `Text/Event-Stream; charset=utf-8`; "" without one. */
export function mediaType(response: HttpResponse): string {
    const value = response.headers['content-type'];
    return (Array.isArray(value) ? (value[0] ?? '') : (value ?? '')).split(';', 1)[0]!.trim().toLowerCase();
}

export function headerValue(response: HttpResponse, name: string): string | undefined {
    const value = response.headers[name];
    return Array.isArray(value) ? value[0] : value;
}

/** Throws a body away without looking at it. */
export function discard(response: HttpResponse): Promise<void> {
    const { body } = response;
    if (body.destroyed) return Promise.resolve();
    return new Promise(resolve => {
        let read = 0;
        body.on('error', ignore)
            .on('close', resolve)
            .on('end', () => body.destroy())
            .on('data', (chunk: Buffer) => {
                read += chunk.length;
                if (read > DISCARD_LIMIT) body.destroy();
            });
    });
}

/**
 * A body, read up to `limit` bytes and no further: past it (or when its Content-Length says it will pass it) the
 * reading stops, and the caller must abort the exchange, which closes the socket.
 */
export function readBounded(response: HttpResponse, limit: number): Promise<Collected> {
    return readBoundedStream(response.body, Number(headerValue(response, 'content-length')), limit);
}

function baseHeaders(url: URL, configured: Readonly<Record<string, string>>): Record<string, string> {
    // Lower-cased, so a configured "Accept" cannot sit beside the transport's own "accept".
    const headers = Object.fromEntries(Object.entries(configured).map(([name, value]) => [name.toLowerCase(), value]));
    const credentials = urlCredentials(url);
    if (headers.authorization === undefined && credentials !== undefined) headers.authorization = credentials.authorization;
    return headers;
}

function withoutCredentials(url: URL): URL {
    const bare = new URL(url);
    bare.username = '';
    bare.password = '';
    return bare;
}

/**
 * One request on the pool, answered as a plain Readable body the socket is paused behind (its reader's pace).
 * Aborting the exchange aborts the request, or destroys the body once answered; destroying the body before its end
 * aborts the request, which closes its socket.
 */
class ExchangeHandler implements Dispatcher.DispatchHandler {
    #abort: ((error: Error) => void) | undefined;
    #body: Readable | undefined;
    #resolve: ((response: HttpResponse) => void) | undefined;
    #reject: ((error: Error) => void) | undefined;
    /** Its end was read, or it failed: nothing left to abort. */
    #over = false;

    constructor(
        private readonly exchange: Exchange,
        resolve: (response: HttpResponse) => void,
        reject: (error: Error) => void
    ) {
        this.#resolve = resolve;
        this.#reject = reject;
    }

    readonly #aborted = (): void => {
        const reason = new errors.RequestAbortedError();
        // Its reader, if any, hears the error; a body nobody reads (yet, or any more) must not throw it.
        if (this.#body !== undefined) this.#body.on('error', ignore).destroy(reason);
        else this.#abort?.(reason);
    };

    onConnect(abort: (error: Error) => void): void {
        if (this.exchange.aborted) return abort(new errors.RequestAbortedError());
        this.#abort = abort;
        this.exchange.attach(this.#aborted);
    }

    onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
        if (statusCode < 200) return true;
        const abort = this.#abort!;
        const body = new Readable({
            read: resume,
            destroy: (error, callback) => {
                if (!this.#over) {
                    this.#end();
                    abort(error ?? new errors.RequestAbortedError());
                }
                callback(error);
            }
        });
        this.#body = body;
        const resolve = this.#resolve!;
        this.#resolve = this.#reject = undefined;
        resolve({ statusCode, headers: util.parseHeaders(rawHeaders), body });
        return true;
    }

    onData(chunk: Buffer): boolean {
        return this.#body!.push(chunk);
    }

    onComplete(): void {
        this.#end();
        this.#body!.push(null);
    }

    onError(error: Error): void {
        this.#end();
        if (this.#body === undefined) this.#reject?.(error);
        else this.#body.on('error', ignore).destroy(error);
    }

    #end(): void {
        this.#over = true;
        this.exchange.detach(this.#aborted);
    }
}
