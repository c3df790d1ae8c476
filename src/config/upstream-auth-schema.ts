/**
 * How the gateway authenticates to an HTTP upstream (`auth` of a streamable-http, sse or http upstream): a static
 * bearer token, or OAuth 2.1 client credentials, with which it gets its own access tokens from the upstream's
 * authorization server. Never the client's token: passing it through is what the MCP authorization spec forbids
 * (see docs/upstream-auth.md).
 */
import { z } from 'zod';
import { httpUrl, secureUrl } from './url-schema.js';

/** Printable ASCII without spaces: what an Authorization header value can carry after "Bearer ". */
const headerToken = z.string().regex(/^[\x21-\x7e]+$/, { message: 'must be printable ASCII without spaces, as it travels in an HTTP header' });

/** RFC 6749 section 3.3: scope tokens of %x21 / %x23-5B / %x5D-7E, separated by single spaces. */
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/;

const oneLine = z
    .string()
    .min(1)
    .regex(/^[^\0\r\n]*$/, { message: 'must not contain line breaks or NUL characters' });

const BearerAuthSchema = z
    .strictObject({
        type: z.literal('bearer'),
        token: headerToken.describe('The token, sent as "Authorization: Bearer <token>" with every request. Use "${VAR}" to keep it out of the file.')
    })
    .describe('A static bearer token, the same as an Authorization header in headers.');

const ClientCredentialsAuthSchema = z
    .strictObject({
        type: z.literal('clientCredentials'),
        tokenUrl: secureUrl('the authorization server\'s token endpoint, e.g. "https://auth.example.com/oauth2/token"', {
            query: 'allowed',
            credentialsFix: "put the client's credentials in clientId and clientSecret"
        }).describe("Token endpoint of the upstream's authorization server. The client secret is sent there, so https:// (http:// only to a loopback host such as 127.0.0.1)."),
        clientId: oneLine.describe("The gateway's client id at the authorization server."),
        clientSecret: oneLine.describe('The gateway\'s client secret; use "${VAR}" to keep it out of the file. Never logged.'),
        scope: z
            .string()
            .regex(SCOPE, { message: 'must be scope names separated by single spaces (no quotes or backslashes)' })
            .optional()
            .describe("Space-separated scopes to ask for. Default: none (the authorization server's default)."),
        resource: z
            .union([httpUrl('The resource indicator.'), z.literal(false)])
            .optional()
            .describe(
                'RFC 8707 resource indicator sent with the token request, which binds the token to this upstream. Default: the upstream\'s url without credentials, fragment, query or a lone "/" path (its canonical form in the MCP authorization spec); false sends none (for servers that refuse the parameter).'
            ),
        clientAuth: z
            .enum(['basic', 'post'])
            .default('basic')
            .describe(
                'How the client authenticates to the token endpoint: "basic" (HTTP Basic, client_secret_basic) or "post" (client_id and client_secret in the form body, client_secret_post).'
            )
    })
    .describe('OAuth 2.1 client credentials grant: the gateway gets access tokens for this upstream itself, caches them and renews them before they expire.');

export const UpstreamAuthSchema = z
    .discriminatedUnion('type', [BearerAuthSchema, ClientCredentialsAuthSchema])
    .optional()
    .describe('How the gateway authenticates to this upstream. Set Authorization here or in headers, not both.');

export type UpstreamAuth = NonNullable<z.infer<typeof UpstreamAuthSchema>>;

/** Cross-field checks of an HTTP upstream with `auth`: nothing else may set its Authorization header. */
export function checkUpstreamAuth(
    upstream: { id: string; url: string; headers: Record<string, string>; auth?: UpstreamAuth | undefined },
    path: readonly (string | number)[],
    ctx: z.RefinementCtx
): void {
    if (upstream.auth === undefined) return;
    for (const name of Object.keys(upstream.headers)) {
        if (name.toLowerCase() !== 'authorization') continue;
        ctx.addIssue({
            code: 'custom',
            path: [...path, 'headers', name],
            message: `conflicts with auth (${upstream.auth.type}), which sets Authorization for upstream "${upstream.id}"; remove one of them`
        });
    }
    const url = URL.canParse(upstream.url) ? new URL(upstream.url) : undefined;
    if (url !== undefined && (url.username !== '' || url.password !== '')) {
        ctx.addIssue({
            code: 'custom',
            path: [...path, 'url'],
            message: `holds a user and password (sent as Basic credentials), which conflicts with auth (${upstream.auth.type}); remove them from the URL`
        });
    }
}
