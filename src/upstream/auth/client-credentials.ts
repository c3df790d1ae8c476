/**
 * Access tokens of the OAuth 2.1 client credentials grant for one upstream:
 * - held while they live, and renewed ahead of their expiry in the background
 *   (see refreshLead), while requests go on with the one held; a token without
 *   expires_in is held until the upstream refuses it;
 * - one token request at a time: every request that needs a token meanwhile
 *   waits for that one;
 * - after a 401 from the upstream, renewed once for the request to be sent
 *   again; a new token refused again right away is not renewed again before a
 *   backoff, so an upstream that refuses every token cannot make the gateway
 *   hammer the authorization server;
 * - after a failed token request, the next one waits for a backoff (the
 *   upstream's reconnect policy); meanwhile requests fail at once with the same
 *   error (see token-request.ts for what it says, and never says).
 * Every token is added to the log's redaction list as it arrives.
 */
import { Agent } from 'undici';
import { setLearnedSecrets } from '../../diagnostics/redaction.js';
import { backoffDelay, type BackoffPolicy } from '../../lib/backoff.js';
import { untilAborted } from '../../lib/until-aborted.js';
import type { UpstreamCredentials } from './credentials.js';
import { requestToken, TokenRequestError, type Grant, type TokenRequest } from './token-request.js';

interface Held {
    /** The Authorization header value. */
    value: string;
    token: string;
    expiresAt: number;
}

/** The longest delay setTimeout takes (2^31-1 ms, 24.8 days): a longer one fires after 1 ms instead. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Renew at 80% of a token's life, or 60 s before it ends if that comes first; never before half of it. */
export function refreshLead(lifetimeMs: number): number {
    return Math.min(Math.max(lifetimeMs * 0.2, 60_000), lifetimeMs * 0.5);
}

export class ClientCredentialsSource implements UpstreamCredentials {
    #held: Held | undefined;
    /** The last token issued (held or not): redacted along with the next. */
    #latestToken: string | undefined;
    #fetching: Promise<string> | undefined;
    #failure: { error: Error; until: number } | undefined;
    #failures = 0;
    /** Renewals after a 401 since the upstream last took a token, and when the next may start. */
    #rejections = 0;
    #renewNotBefore = 0;
    #timer: NodeJS.Timeout | undefined;
    readonly #closing = new AbortController();
    /** Sockets to the token endpoint of this upstream alone, closed with it. */
    readonly #agent = new Agent({ connections: 2 });

    constructor(
        private readonly request: TokenRequest,
        private readonly backoff: () => BackoffPolicy
    ) {}

    authorization(signal?: AbortSignal): Promise<string> {
        const held = this.#held;
        if (held !== undefined && Date.now() < held.expiresAt) return Promise.resolve(held.value);
        return untilAborted(this.#fetch(), signal);
    }

    mayRenew(rejected: string): boolean {
        // Renewed by another request meanwhile: sending again with the new token is free.
        if (this.#held?.value !== rejected) return true;
        return this.#rejections === 0 || Date.now() >= this.#renewNotBefore;
    }

    renew(rejected: string, signal?: AbortSignal): Promise<string> {
        if (this.#held?.value === rejected) {
            this.#renewNotBefore = Date.now() + backoffDelay(this.#rejections++, this.backoff());
            this.#held = undefined;
            clearTimeout(this.#timer);
        }
        return this.authorization(signal);
    }

    accepted(used: string): void {
        if (this.#held?.value === used) this.#rejections = 0;
    }

    close(): void {
        this.#closing.abort();
        clearTimeout(this.#timer);
        this.#held = undefined;
        setLearnedSecrets(this, []);
        this.#agent.destroy().catch(() => {});
    }

    /** The token request under way, or a new one; during a backoff, the last failure at once. */
    #fetch(): Promise<string> {
        if (this.#fetching !== undefined) return this.#fetching;
        const failure = this.#failure;
        if (failure !== undefined && Date.now() < failure.until) return Promise.reject(failure.error);
        // Shared by every request that needs a token meanwhile, and its renewals after: no request's.
        const fetching = this.#ask().finally(() => {
            if (this.#fetching === fetching) this.#fetching = undefined;
        });
        // Its waiters handle its failure, and a renewal ahead of expiry may have none.
        fetching.catch(() => {});
        this.#fetching = fetching;
        return fetching;
    }

    async #ask(): Promise<string> {
        const started = Date.now();
        try {
            const grant = await requestToken(this.request, this.#agent, this.#closing.signal);
            if (this.#closing.signal.aborted) throw new TokenRequestError('closed');
            this.#failures = 0;
            this.#failure = undefined;
            return this.#keep(grant, started);
        } catch (error) {
            if (this.#closing.signal.aborted) throw error;
            const reason = error instanceof TokenRequestError ? error : new TokenRequestError('token request failed');
            this.#failure = { error: reason, until: Date.now() + backoffDelay(this.#failures++, this.backoff()) };
            throw reason;
        }
    }

    /** Holds the new token (its life counted from when it was asked for) and plans its renewal. */
    #keep(grant: Grant, asked: number): string {
        const previous = this.#latestToken;
        this.#latestToken = grant.accessToken;
        const lifetimeMs = grant.expiresInSec === undefined ? undefined : grant.expiresInSec * 1000;
        const held = { value: `Bearer ${grant.accessToken}`, token: grant.accessToken, expiresAt: lifetimeMs === undefined ? Infinity : asked + lifetimeMs };
        this.#held = held;
        // The one before too: a request that carried it may still be logged about.
        setLearnedSecrets(this, previous === undefined ? [held.token] : [held.token, previous]);
        clearTimeout(this.#timer);
        if (lifetimeMs !== undefined) this.#renewAt(held.expiresAt - refreshLead(lifetimeMs));
        return held.value;
    }

    /** Renews at `at`; a wait longer than one timer can hold (a token of more than a month) is made of several. */
    #renewAt(at: number): void {
        clearTimeout(this.#timer);
        const delay = Math.max(0, at - Date.now());
        const reached = delay <= MAX_TIMER_MS;
        this.#timer = setTimeout(() => (reached ? this.#renewAhead() : this.#renewAt(at)), Math.min(delay, MAX_TIMER_MS)).unref();
    }

    /** Renewal ahead of expiry; if it fails, tried again after the backoff while the token held still lives. */
    #renewAhead(): void {
        this.#fetch().catch(() => {
            const [held, failure] = [this.#held, this.#failure];
            if (this.#closing.signal.aborted || held === undefined || failure === undefined) return;
            if (failure.until < held.expiresAt) this.#renewAt(failure.until);
        });
    }
}
