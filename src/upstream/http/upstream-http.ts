/**
 * The HTTP side of one connection to an upstream: a keep-alive undici Pool on
 * its origin, so requests reuse sockets and no more than a bounded number are
 * open at once, and the headers every request carries (the configured ones,
 * credentials from the URL or from `auth`; the X-Request-Id of the client
 * request served, when the caller names one). A request refused with 401
 * while carrying a token that can be renewed is sent once more with a new
 * one. Bodies are Node streams, read by the caller under its own bounds.
 */
import { Pool, type Dispatcher } from 'undici';
import type { UpstreamCredentials } from '../auth/credentials.js';
import { urlCredentials } from '../../lib/url-credentials.js';
import { REQUEST_ID_HEADER } from '../../diagnostics/log-context.js';
import { readBoundedStream, type Collected } from '../../lib/byte-collector.js';

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
    signal: AbortSignal;
    /**
     * Longest wait for the response headers, and between body chunks. 0: none, for streams that may be quiet for
     * long and for requests the caller times out itself.
     */
    timeoutMs: number;
    /** The id of the client request this call serves, sent as X-Request-Id; none for the gateway's own calls. */
    requestId?: string | undefined;
}

export type HttpResponse = Dispatcher.ResponseData;

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
        const authorization = await credentials.authorization(call.signal);
        const response = await this.#sendAuthorized(call, authorization, credentials);
        if (response.statusCode !== 401 || !credentials.mayRenew(authorization)) return response;
        // Refused before it was looked at, so sending it again is safe; a second 401 is the caller's to see.
        await discard(response);
        return this.#sendAuthorized(call, await credentials.renew(authorization, call.signal), credentials);
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
        return this.#pool.request({
            method: call.method,
            path: `${url.pathname}${url.search}`,
            headers,
            ...(call.body === undefined ? {} : { body: call.body }),
            signal: call.signal,
            headersTimeout: call.timeoutMs,
            bodyTimeout: call.timeoutMs
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
export async function discard(response: HttpResponse): Promise<void> {
    await response.body.dump({ limit: DISCARD_LIMIT }).catch(() => {});
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
