/**
 * The Authorization header an HTTP upstream's requests carry, from its `auth`:
 * a static bearer token, or tokens of the client credentials grant (see
 * client-credentials.ts). One per upstream connection, shared by every
 * transport and reconnect of it, so a token outlives a dropped connection.
 */
import { resourceUrlFromServerUrl } from '@modelcontextprotocol/client';
import type { BackoffPolicy } from '../../lib/backoff.js';
import type { HttpUpstreamConfig } from '../../config/schema.js';
import { ClientCredentialsSource } from './client-credentials.js';

export interface UpstreamCredentials {
    /** The header value for the next request; waits for a token when none is held (`signal` ends the wait). */
    authorization(signal?: AbortSignal): Promise<string>;
    /**
     * Whether a request refused with 401 while carrying `rejected` should be sent again with a new token. No for a
     * static token, and for a token the upstream keeps refusing right after it was renewed (see client-credentials.ts).
     */
    mayRenew(rejected: string): boolean;
    /** A new header value after `rejected` got a 401 (only after mayRenew); shared with every request that asks meanwhile. */
    renew(rejected: string, signal?: AbortSignal): Promise<string>;
    /** `used` was not refused: the upstream takes it. */
    accepted(used: string): void;
    /** Stops renewing; a token request under way is aborted. */
    close(): void;
}

class StaticBearer implements UpstreamCredentials {
    readonly #value: string;

    constructor(token: string) {
        this.#value = `Bearer ${token}`;
    }

    authorization(): Promise<string> {
        return Promise.resolve(this.#value);
    }

    mayRenew(): boolean {
        return false;
    }

    renew(): Promise<string> {
        return Promise.resolve(this.#value);
    }

    accepted(): void {}

    close(): void {}
}

/** The upstream's credentials; undefined without `auth`. `backoff` spaces token requests after failures. */
export function upstreamCredentials(config: HttpUpstreamConfig, backoff: () => BackoffPolicy): UpstreamCredentials | undefined {
    const { auth } = config;
    if (auth === undefined) return undefined;
    if (auth.type === 'bearer') return new StaticBearer(auth.token);
    return new ClientCredentialsSource(
        {
            tokenUrl: new URL(auth.tokenUrl),
            clientId: auth.clientId,
            clientSecret: auth.clientSecret,
            clientAuth: auth.clientAuth,
            scope: auth.scope,
            resource: auth.resource === false ? undefined : (auth.resource ?? defaultResource(config.url)),
            timeoutMs: config.timeoutMs
        },
        backoff
    );
}

/**
 * The resource an upstream's URL names, in the MCP specification's canonical form: without a fragment (the SDK's
 * rule, from RFC 8707), a user or a password, and without the lone "/" that URL parsing adds to
 * "https://mcp.example.com". Without the query too: a resource SHOULD NOT have one (RFC 8707), and an upstream's
 * query often holds a key ("?api_key=${KEY}") that has no business at the token endpoint. An upstream whose
 * resource does hold a query sets `resource`.
 */
function defaultResource(upstreamUrl: string): string {
    const url = resourceUrlFromServerUrl(upstreamUrl);
    url.username = '';
    url.password = '';
    url.search = '';
    return url.pathname === '/' ? url.origin : url.href;
}
