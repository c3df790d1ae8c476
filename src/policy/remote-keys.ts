/**
 * The signing keys behind auth.jwksUrl: jose's remote key set (its cache, its
 * deduplication of concurrent fetches, its key selection) fetched through a
 * bounded fetch, with what jose leaves out:
 * - the body is read up to JWKS_MAX_BYTES and no further (a bigger one, or an
 *   endless one, is refused and its connection closed);
 * - a failed fetch is remembered for FAILURE_CACHE_MS: meanwhile requests that
 *   need the keys fail at once instead of each fetching again;
 * - a token whose `kid` is unknown makes one fetch at once, even right after
 *   the last (a key rotated then is accepted), then no other such fetch for
 *   UNKNOWN_KID_COOLDOWN_MS (a stream of made-up kids is not a stream of fetches).
 */
import { createRemoteJWKSet, customFetch, errors as joseErrors, type FetchImplementation, type JWTVerifyGetKey } from 'jose';
import { systemErrorCode } from '../lib/system-error-code.js';
import { readBoundedBody } from '../lib/byte-collector.js';

/** The largest JWKS document read; real ones are a few KB. */
export const JWKS_MAX_BYTES = 1024 * 1024;
/** How long a failed fetch stands before the next request may fetch again (the 503's Retry-After says as much). */
export const FAILURE_CACHE_MS = 5_000;
/** After a fetch for an unknown kid, how long other unknown kids wait for the next regular fetch. */
export const UNKNOWN_KID_COOLDOWN_MS = 5_000;
const FETCH_TIMEOUT_MS = 5_000;
/** Keys are fetched again this long after the last fetch, whatever tokens come. */
const CACHE_MAX_AGE_MS = 600_000;

/** The key set could not be fetched, for a reason of the gateway's own wording (a status, a size, a code: no body). */
class JwksUnavailableError extends Error {
    override readonly name = 'JwksUnavailableError';
}

/** A fetch that refuses anything but a 200 and reads at most `maxBytes` of the body, cancelling the rest unread. */
function boundedFetch(maxBytes: number): FetchImplementation {
    return async (url, options) => {
        const response = await fetch(url, options);
        if (response.status !== 200) {
            await response.body?.cancel();
            throw new JwksUnavailableError(`HTTP ${response.status}`);
        }
        // Node's types leave a fetch body's chunks untyped; they are bytes.
        const body = (response.body ?? []) as AsyncIterable<Uint8Array>;
        const collected = await readBoundedBody(body, Number(response.headers.get('content-length') ?? Number.NaN), maxBytes);
        if (collected.kind === 'oversized') {
            // Closes the connection: the rest is never read.
            await response.body?.cancel();
            throw new JwksUnavailableError(`response larger than ${maxBytes} bytes`);
        }
        return new Response(collected.bytes, { status: 200, headers: response.headers });
    };
}

/** The key resolver for `url` (see the top of this file). */
export function remoteKeys(url: URL): JWTVerifyGetKey {
    const fetchBounded = boundedFetch(JWKS_MAX_BYTES);
    // Counted, not timed: a fetch begun in the same millisecond as a request, but before it, was not made for it.
    let fetchesStarted = 0;
    let failure: { error: unknown; until: number } | undefined;
    let unknownKidFetchAt = Number.NEGATIVE_INFINITY;
    let unknownKidFetch: Promise<void> | undefined;
    const remote = createRemoteJWKSet(url, {
        timeoutDuration: FETCH_TIMEOUT_MS,
        cacheMaxAge: CACHE_MAX_AGE_MS,
        // jose's own refetch on an unknown kid waits for this long after any fetch; the one below does better.
        cooldownDuration: Number.POSITIVE_INFINITY,
        [customFetch]: (href, options) => {
            fetchesStarted++;
            return fetchBounded(href, options);
        }
    });
    /** Runs `step`, remembering a failure to fetch; a remembered one is thrown without fetching while it stands. */
    const fetching = async <T>(step: () => Promise<T>): Promise<T> => {
        if (failure !== undefined && Date.now() < failure.until) throw failure.error;
        try {
            const result = await step();
            failure = undefined;
            return result;
        } catch (error) {
            if (isFetchFailure(error)) failure = { error, until: Date.now() + FAILURE_CACHE_MS };
            throw error;
        }
    };
    return async (header, token) => {
        const fetchesBefore = fetchesStarted;
        try {
            // jose fetches when it has no keys or they are stale (`fresh` is false then); else it answers from its cache.
            return await (remote.fresh ? remote(header, token) : fetching(() => remote(header, token)));
        } catch (error) {
            if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
            // Keys fetched while this request waited are as new as any: no second fetch for it.
            if (unknownKidFetch === undefined && (fetchesStarted > fetchesBefore || Date.now() - unknownKidFetchAt < UNKNOWN_KID_COOLDOWN_MS)) throw error;
            if (unknownKidFetch === undefined) {
                unknownKidFetchAt = Date.now();
                unknownKidFetch = fetching(() => remote.reload()).finally(() => (unknownKidFetch = undefined));
            }
            await unknownKidFetch;
            return remote(header, token);
        }
    };
}

/**
 * The key set could not be had: the endpoint timed out, could not be reached, answered an error or something that is
 * not a key set. jose reports a failed fetch or an unparsable body as a plain JOSEError (ERR_JOSE_GENERIC); no token
 * can cause that. Anything else jose throws is about the token.
 */
export function isFetchFailure(error: unknown): boolean {
    if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) return true;
    if (error instanceof joseErrors.JOSEError) return error.code === 'ERR_JOSE_GENERIC';
    return true;
}

/** Why a fetch failed, for the log: a phrase of the gateway's own, never what the endpoint wrote. */
export function fetchFailureReason(error: unknown): string {
    if (error instanceof JwksUnavailableError) return error.message;
    if (error instanceof joseErrors.JWKSTimeout) return `timed out after ${FETCH_TIMEOUT_MS} ms`;
    if (error instanceof joseErrors.JWKSInvalid) return 'not a JSON Web Key Set';
    if (error instanceof joseErrors.JOSEError) return 'not JSON';
    const code = systemErrorCode(error);
    return code === undefined ? 'request failed' : `request failed (${code})`;
}
