/**
 * The configured clients (and the anonymous one) with what the policy layer
 * needs of each: its prompt filter and its limits. API keys are looked up by
 * digest in constant time over all clients.
 */
import { timingSafeEqual } from 'node:crypto';
import { ANONYMOUS_CLIENT_ID, sha256 } from '../config/policy-schema.js';
import type { GatewayConfig } from '../config/schema.js';
import { compilePromptFilter, type NameFilter } from './prompt-filter.js';
import type { RateLimit } from './token-bucket.js';

export interface ClientProfile {
    readonly id: string;
    /** The client's own policy, on exposed names. */
    readonly prompts: NameFilter;
    readonly maxSessions: number;
    readonly rateLimit: RateLimit;
    /** jwt mode: scopes this client's tokens need besides auth.requiredScopes. */
    readonly requiredScopes: readonly string[];
}

type ClientFields = Pick<GatewayConfig, 'clients' | 'anonymous' | 'limits'>;

export class ClientDirectory {
    readonly anonymous: ClientProfile;
    readonly #byId = new Map<string, ClientProfile>();
    readonly #keys: { digest: Buffer; client: ClientProfile }[] = [];

    constructor(config: ClientFields) {
        const { limits } = config;
        this.anonymous = {
            id: ANONYMOUS_CLIENT_ID,
            prompts: compilePromptFilter(config.anonymous.prompts),
            maxSessions: limits.maxSessionsPerClient,
            rateLimit: limits.rateLimit,
            requiredScopes: []
        };
        this.#byId.set(ANONYMOUS_CLIENT_ID, this.anonymous);
        for (const client of config.clients) {
            const profile: ClientProfile = {
                id: client.id,
                prompts: compilePromptFilter(client.prompts),
                maxSessions: client.maxSessions ?? limits.maxSessionsPerClient,
                rateLimit: { ...limits.rateLimit, ...client.rateLimit },
                requiredScopes: client.requiredScopes ?? []
            };
            this.#byId.set(client.id, profile);
            if (client.apiKeySha256 !== undefined) this.#keys.push({ digest: Buffer.from(client.apiKeySha256, 'hex'), client: profile });
        }
    }

    /** A configured client, or the anonymous one for "anonymous". */
    get(id: string): ClientProfile | undefined {
        return this.#byId.get(id);
    }

    /** The client whose key this is. Every stored digest is compared, so the time taken says nothing about which matched. */
    byApiKey(key: string): ClientProfile | undefined {
        const digest = Buffer.from(sha256(key), 'hex');
        let found: ClientProfile | undefined;
        for (const entry of this.#keys) {
            if (timingSafeEqual(entry.digest, digest)) found = entry.client;
        }
        return found;
    }
}
