/**
 * One OAuth 2.1 client credentials token request (RFC 6749 section 4.4), on
 * undici, bounded in time and in bytes read, and its answer checked before
 * anything is taken from it. What it fails with is a fixed phrase plus a
 * status, an errno code or the authorization server's registered error code:
 * never a response body, a token or the client secret, so the failure can be
 * shown in /healthz, the dashboard and the log as it is.
 */
import type { Dispatcher } from 'undici';
import { clientSecretBasic, formEncode } from '../../lib/client-secret-basic.js';
import { systemErrorCode } from '../../lib/system-error-code.js';
import { UpstreamWireError } from '../errors.js';
import { discard, mediaType, readBounded } from '../http/upstream-http.js';

export interface TokenRequest {
    tokenUrl: URL;
    clientId: string;
    clientSecret: string;
    clientAuth: 'basic' | 'post';
    scope?: string | undefined;
    /** RFC 8707 resource indicator; undefined sends none. */
    resource?: string | undefined;
    /** Longest wait for the whole answer. */
    timeoutMs: number;
}

export interface Grant {
    accessToken: string;
    /** Seconds the token lives, if the server said. */
    expiresInSec: number | undefined;
}

/** Why a token could not be had: counted and shown like any upstream failure, as `request_failed`. */
export class TokenRequestError extends UpstreamWireError {
    constructor(reason: string) {
        super(reason, 'request_failed');
    }
}

/** More than any token response needs (a JWT with many claims is a few KiB). */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** An access token goes in a header: longer ones are refused rather than sent with every request. */
const MAX_TOKEN_LENGTH = 16 * 1024;
/** Ten years: a longer lifetime is a mistake, and would overflow a timer. */
const MAX_EXPIRES_IN_SEC = 10 * 365 * 86_400;
/** RFC 6749 error codes are short words; anything else from the server is not repeated. */
const ERROR_CODE = /^[a-z][a-z0-9_.-]{0,63}$/i;
/** Printable ASCII without spaces: what can follow "Bearer " in a header. */
const HEADER_TOKEN = /^[\x21-\x7e]+$/;

/** Asks for a token; `signal` aborts it (the source closing). */
export async function requestToken(request: TokenRequest, dispatcher: Dispatcher, signal: AbortSignal): Promise<Grant> {
    const deadline = AbortSignal.timeout(request.timeoutMs);
    let response: Dispatcher.ResponseData;
    try {
        response = await dispatcher.request({
            origin: request.tokenUrl.origin,
            path: `${request.tokenUrl.pathname}${request.tokenUrl.search}`,
            method: 'POST',
            headers: requestHeaders(request),
            body: requestBody(request),
            // The deadline bounds it all (undici's own timeouts would only bound each wait, and say less).
            signal: AbortSignal.any([signal, deadline])
        });
    } catch (error) {
        throw failure(error, deadline, request.timeoutMs);
    }
    try {
        return await grantOf(response);
    } catch (error) {
        throw error instanceof TokenRequestError ? error : failure(error, deadline, request.timeoutMs);
    } finally {
        await discard(response);
    }
}

function requestHeaders(request: TokenRequest): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (request.clientAuth === 'basic') headers.authorization = clientSecretBasic(request.clientId, request.clientSecret);
    return headers;
}

function requestBody(request: TokenRequest): string {
    const fields: [string, string][] = [['grant_type', 'client_credentials']];
    if (request.scope !== undefined) fields.push(['scope', request.scope]);
    if (request.resource !== undefined) fields.push(['resource', request.resource]);
    if (request.clientAuth === 'post') fields.push(['client_id', request.clientId], ['client_secret', request.clientSecret]);
    return fields.map(([name, value]) => `${name}=${formEncode(value)}`).join('&');
}

async function grantOf(response: Dispatcher.ResponseData): Promise<Grant> {
    if (response.statusCode !== 200) throw new TokenRequestError(`token endpoint answered HTTP ${response.statusCode}${await errorCodeOf(response)}`);
    if (mediaType(response) !== 'application/json') throw invalid('not application/json');
    const body = await readBounded(response, MAX_RESPONSE_BYTES);
    if (body.kind === 'oversized') throw invalid(`larger than ${MAX_RESPONSE_BYTES} bytes`);
    let parsed: unknown;
    try {
        parsed = JSON.parse(body.bytes.toString('utf8'));
    } catch {
        throw invalid('not JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid('not a JSON object');
    const fields = parsed as Record<string, unknown>;
    const token = fields.access_token;
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !HEADER_TOKEN.test(token)) throw invalid('no usable access_token');
    if (typeof fields.token_type !== 'string' || fields.token_type.toLowerCase() !== 'bearer') throw invalid('token_type is not Bearer');
    return { accessToken: token, expiresInSec: expiresIn(fields.expires_in) };
}

/** A number of seconds, or a string of digits (some servers send one). */
function expiresIn(value: unknown): number | undefined {
    if (value === undefined || value === null) return undefined;
    const seconds = typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : value;
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_EXPIRES_IN_SEC) throw invalid('expires_in is not a positive number of seconds');
    return seconds;
}

/** " (invalid_client)" from an RFC 6749 error response, or "" when there is none to trust. */
async function errorCodeOf(response: Dispatcher.ResponseData): Promise<string> {
    if (mediaType(response) !== 'application/json') return '';
    const body = await readBounded(response, 4096);
    if (body.kind !== 'whole') return '';
    try {
        const code = (JSON.parse(body.bytes.toString('utf8')) as { error?: unknown }).error;
        return typeof code === 'string' && ERROR_CODE.test(code) ? ` (${code})` : '';
    } catch {
        return '';
    }
}

function invalid(what: string): TokenRequestError {
    return new TokenRequestError(`token response invalid (${what})`);
}

/** The token request did not get an answer: timed out, refused, reset; the errno code says which. */
function failure(error: unknown, deadline: AbortSignal, timeoutMs: number): Error {
    if (deadline.aborted) return new TokenRequestError(`token endpoint timed out after ${timeoutMs} ms`);
    if (error instanceof Error && error.name === 'AbortError') return error;
    const code = systemErrorCode(error);
    return new TokenRequestError(`token endpoint unreachable${code === undefined ? '' : ` (${code})`}`);
}
