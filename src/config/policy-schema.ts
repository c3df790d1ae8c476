/**
 * The security half of the config schema: who the clients are, how they prove
 * it, which prompts each may use, and the limits every request is held to.
 * Cross-field rules live in `checkPolicyConfig`, called from the main schema.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { checkOAuthConfig, clientScopesField, oauthFields } from './oauth-schema.js';
import { httpUrl } from './url-schema.js';

/** Reserved: the caller when `auth.mode` is "none", and the default `--client` of --stdio. */
export const ANONYMOUS_CLIENT_ID = 'anonymous';

const glob = z
    .string()
    .min(1, { message: 'must not be empty; use "*" for every prompt' })
    .max(512)
    .describe('A picomatch glob over prompt names: * ? [abc] {a,b}; "/" and "." are ordinary characters.');

export const PromptPolicySchema = z
    .strictObject({
        allow: z.array(glob).optional().describe('Only prompts matching one of these globs are visible. Absent: every prompt (that no deny hides).'),
        deny: z.array(glob).default([]).describe('Prompts matching one of these globs are hidden, even when allowed: deny wins.')
    })
    .prefault({});

const rateLimitFields = {
    requestsPerSecond: z.number().min(0).max(1_000_000).describe('Sustained requests per second per client (token bucket refill rate). 0 turns rate limiting off.'),
    burst: z.number().int().min(1).max(1_000_000).describe('Bucket size: requests a client may send at once after being quiet.')
};

const clientId = z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$/, {
        message: 'must be 1-128 characters of letters, digits and ". _ @ : -", starting with a letter or digit'
    })
    .refine(id => id !== ANONYMOUS_CLIENT_ID, { message: `"${ANONYMOUS_CLIENT_ID}" is reserved for unauthenticated callers; pick another id` })
    .describe('Client id: shown in logs and metrics, matched against the JWT claim in jwt mode.');

const sha256Hex = z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, { message: 'must be 64 hex digits (the SHA-256 of the key, e.g. `printf %s "$KEY" | sha256sum`)' })
    .transform(hex => hex.toLowerCase());

export const ClientSchema = z
    .strictObject({
        id: clientId,
        apiKeySha256: sha256Hex.optional().describe("Hex SHA-256 of the client's API key (apiKey mode). Preferred: the config never holds the key."),
        apiKey: z
            .string()
            .min(16, { message: 'must be at least 16 characters; generate one with `openssl rand -hex 32`' })
            .max(4096)
            .optional()
            .describe('The client\'s API key, usually "${ENV_VAR}"; hashed at load and never kept or logged.'),
        prompts: PromptPolicySchema.describe('Prompts this client may use, by exposed name.'),
        requiredScopes: clientScopesField,
        maxSessions: z.number().int().min(1).max(1_000_000).optional().describe('Overrides limits.maxSessionsPerClient for this client.'),
        rateLimit: z
            .strictObject({ requestsPerSecond: rateLimitFields.requestsPerSecond.optional(), burst: rateLimitFields.burst.optional() })
            .optional()
            .describe('Overrides limits.rateLimit for this client.')
    })
    .refine(client => client.apiKey === undefined || client.apiKeySha256 === undefined, {
        message: 'set "apiKey" or "apiKeySha256", not both',
        path: ['apiKey']
    })
    // The plain key is replaced by its digest here, so nothing after loading ever holds it.
    .transform(({ apiKey, ...client }) => (apiKey === undefined ? client : { ...client, apiKeySha256: sha256(apiKey) }));

export type ClientConfig = z.infer<typeof ClientSchema>;

export const JwksSchema = z.strictObject({ keys: z.array(z.looseObject({ kty: z.string() })).min(1) });

const jwtAlgorithms = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

export const AuthSchema = z
    .discriminatedUnion('mode', [
        z.strictObject({ mode: z.literal('none') }).describe('No credentials: every caller is the anonymous client.'),
        z.strictObject({ mode: z.literal('apiKey') }).describe('Each client sends its key as "Authorization: Bearer <key>" or "X-API-Key: <key>".'),
        z
            .strictObject({
                mode: z.literal('jwt'),
                secret: z
                    .string()
                    .min(32, { message: 'must be at least 32 characters (256 bits) for HS256' })
                    .optional()
                    .describe('Shared HMAC secret (HS256/384/512), usually "${JWT_SECRET}".'),
                jwks: JwksSchema.optional().describe('The public keys inline, as a JWKS document.'),
                jwksFile: z.string().min(1).optional().describe('Path of a JWKS JSON file with the public keys, relative to this file; read at start and on reload.'),
                jwksUrl: httpUrl().optional().describe('URL of a JWKS document (fetched on demand and cached).'),
                issuer: z
                    .string()
                    .min(1)
                    .optional()
                    .describe(
                        'Required "iss" claim. Default: any of authorizationServers, when set. Without authorizationServers, an https:// issuer is the authorization server the Protected Resource Metadata names.'
                    ),
                audience: z
                    .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
                    .optional()
                    .describe('Accepted "aud" value(s).'),
                clientIdClaim: z.string().min(1).default('sub').describe('Claim holding the client id; it must name a configured client.'),
                algorithms: z.array(z.enum(jwtAlgorithms)).min(1).optional().describe('Accepted "alg" values. Default: HS256 with a secret, the asymmetric ones with JWKS.'),
                clockToleranceSec: z.number().int().min(0).max(600).default(30).describe('Leeway for "exp" and "nbf".'),
                ...oauthFields
            })
            .describe(
                'Each client sends a signed JWT as "Authorization: Bearer <jwt>"; it must carry "exp". With authorizationServers the gateway is an OAuth 2.1 resource server as MCP clients expect (docs/authorization.md).'
            )
    ])
    .default({ mode: 'none' })
    .describe('How HTTP callers prove which client they are. Missing or bad credentials get HTTP 401.');

export type AuthConfig = z.infer<typeof AuthSchema>;

export const LimitsSchema = z
    .strictObject({
        maxBodyBytes: z.number().int().min(1024).default(1_048_576).describe('Largest accepted HTTP request body (HTTP 413 beyond).'),
        maxArguments: z.number().int().min(0).max(10_000).default(64).describe('Most arguments in one prompts/get (-32602 beyond).'),
        maxArgumentBytes: z
            .number()
            .int()
            .min(1)
            .max(64 * 1_048_576)
            .default(65_536)
            .describe('Largest argument value, in UTF-8 bytes, in prompts/get and completion/complete (-32602 beyond).'),
        maxResultBytes: z
            .number()
            .int()
            .min(1024)
            .max(1_073_741_824)
            .default(4_194_304)
            .describe('Largest upstream result passed back, as JSON bytes (-32603 beyond, counted as fault "oversized_result").'),
        maxUpstreamMessageBytes: z
            .number()
            .int()
            .min(65_536)
            .max(1_073_741_824)
            .default(16_777_216)
            .describe(
                'Largest message read from an upstream (a stdio line, an HTTP body or one SSE event), in bytes. Reading stops there: a bigger answer fails only its own request (fault "oversized_result"), a bigger notification is dropped.'
            ),
        maxPromptBytes: z
            .number()
            .int()
            .min(1024)
            .max(67_108_864)
            .default(65_536)
            .describe(
                'Largest prompt definition taken from an upstream\'s list, as JSON bytes; a bigger one is left out of the catalog (fault "oversized_prompt"), its siblings stay.'
            ),
        maxPromptsPerUpstream: z
            .number()
            .int()
            .min(1)
            .max(1_000_000)
            .default(100_000)
            .describe('Most prompts read from one upstream\'s list; the rest are left out (fault "list_truncated").'),
        maxListBytes: z
            .number()
            .int()
            .min(65_536)
            .max(4_294_967_296)
            .default(67_108_864)
            .describe(
                'Most bytes of prompt definitions (as JSON) kept from one upstream\'s list; the prompts beyond are left out (fault "list_truncated"). Bounds the memory a hostile or runaway upstream can make the gateway hold.'
            ),
        maxJsonDepth: z
            .number()
            .int()
            .min(8)
            .max(1000)
            .default(64)
            .describe(
                'Deepest nesting of objects and arrays accepted in a client message, a prompt definition or an upstream result. Deeper client messages get -32600; deeper prompts are left out and deeper results fail their request.'
            ),
        maxSessionsPerClient: z.number().int().min(1).max(1_000_000).default(100).describe('Most open HTTP sessions per client (HTTP 429 beyond).'),
        rateLimit: z
            .strictObject({
                requestsPerSecond: rateLimitFields.requestsPerSecond.default(100),
                burst: rateLimitFields.burst.default(200)
            })
            .prefault({})
            .describe('Per-client token bucket over HTTP requests to the MCP endpoint; beyond it HTTP 429 with Retry-After.')
    })
    .prefault({});

export const CorsSchema = z
    .strictObject({
        origins: z
            .array(z.string().regex(/^https?:\/\/[^/\s]+$/, { message: 'must be an origin such as "https://app.example.com" (scheme, host, optional port)' }))
            .min(1)
            .describe('Browser origins allowed to call the endpoint cross-origin; they pass the Origin check too.'),
        maxAgeSec: z.number().int().min(0).max(86_400).default(600).describe('How long browsers may cache a preflight answer.')
    })
    .optional()
    .describe('Cross-origin access for browser clients. Absent: no CORS headers, so browsers block cross-origin calls.');

interface PolicyFields {
    auth: AuthConfig;
    clients: ClientConfig[];
    listen: { host: string; path: string };
}

/** Rules across fields of the security settings; adds issues like the main schema's superRefine. */
export function checkPolicyConfig(config: PolicyFields, ctx: z.core.$RefinementCtx): void {
    const ids = new Map<string, number>();
    const keys = new Map<string, number>();
    config.clients.forEach((client, index) => {
        const first = ids.get(client.id);
        if (first !== undefined) {
            ctx.addIssue({ code: 'custom', path: ['clients', index, 'id'], message: `duplicate id "${client.id}" (also clients[${first}].id)` });
        } else {
            ids.set(client.id, index);
        }
        if (client.apiKeySha256 !== undefined) {
            const sameKey = keys.get(client.apiKeySha256);
            if (sameKey !== undefined) {
                ctx.addIssue({ code: 'custom', path: ['clients', index], message: `has the same API key as clients[${sameKey}]; give each client its own key` });
            } else {
                keys.set(client.apiKeySha256, index);
            }
        }
        // A client whose `apiKey` was itself rejected has its own message already.
        if (config.auth.mode === 'apiKey' && client.apiKeySha256 === undefined && !Object.hasOwn(client, 'apiKey')) {
            ctx.addIssue({ code: 'custom', path: ['clients', index], message: 'needs "apiKeySha256" or "apiKey" because auth.mode is "apiKey"' });
        }
    });
    if (config.auth.mode !== 'none' && config.clients.length === 0) {
        ctx.addIssue({ code: 'custom', path: ['clients'], message: `add at least one client: with auth.mode "${config.auth.mode}" no one could connect` });
    }
    if (config.auth.mode === 'jwt') checkJwtConfig(config.auth, ctx);
    checkOAuthConfig(config, ctx);
}

function checkJwtConfig(auth: Extract<AuthConfig, { mode: 'jwt' }>, ctx: z.core.$RefinementCtx): void {
    const sources = (['secret', 'jwks', 'jwksFile', 'jwksUrl'] as const).filter(key => auth[key] !== undefined);
    if (sources.length !== 1) {
        ctx.addIssue({
            code: 'custom',
            path: ['auth'],
            message: sources.length === 0 ? 'needs one of "secret", "jwks", "jwksFile" or "jwksUrl"' : `set only one of ${sources.map(key => `"${key}"`).join(', ')}`
        });
    }
    const algorithms = auth.algorithms ?? [];
    const symmetric = algorithms.filter(alg => alg.startsWith('HS'));
    if (auth.secret !== undefined && symmetric.length !== algorithms.length) {
        ctx.addIssue({ code: 'custom', path: ['auth', 'algorithms'], message: 'with "secret" only HS256, HS384 and HS512 apply' });
    }
    if (auth.secret === undefined && symmetric.length > 0) {
        ctx.addIssue({ code: 'custom', path: ['auth', 'algorithms'], message: 'HS* algorithms need "secret"; JWKS keys use RS*, PS*, ES* or EdDSA' });
    }
}

export function sha256(text: string): string {
    return createHash('sha256').update(text, 'utf8').digest('hex');
}
