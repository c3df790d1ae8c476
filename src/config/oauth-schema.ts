/**
 * The fields of `auth` (mode jwt) that make the gateway an OAuth 2.1 resource
 * server as the MCP authorization specification describes: its canonical URL
 * (RFC 8707 audience), the authorization servers named in its Protected
 * Resource Metadata (RFC 9728) and the scopes it asks for. Cross-field rules
 * live in `checkOAuthConfig`, called from the policy checks.
 */
import { z } from 'zod';
import { isLoopback } from '../lib/loopback.js';
import { httpUrl, secureUrl } from './url-schema.js';

// RFC 6749 section 3.3: a scope token is printable ASCII without space, '"' or '\' (so it quotes safely in a header).
const scopeToken = z
    .string()
    .regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, { message: 'must be one scope token: printable ASCII without spaces, quotes or backslashes (RFC 6749, 3.3)' })
    .max(256)
    .refine(scope => scope !== 'offline_access', {
        message: '"offline_access" asks for refresh tokens, which are the client\'s business, not the resource\'s (MCP authorization, "Refresh Tokens"); leave it out'
    });

const scopeList = z.array(scopeToken).refine(scopes => new Set(scopes).size === scopes.length, { message: 'lists a scope twice' });

export const oauthFields = {
    resource: secureUrl('e.g. "https://gw.example.com/mcp"')
        .optional()
        .describe(
            'The gateway\'s canonical URL as clients reach it (its RFC 8707 resource indicator), e.g. "https://gw.example.com/mcp". When set, or when authorizationServers is, a token\'s "aud" must contain it. Default on a loopback listen.host: http://<loopback name>:<port><listen.path>, with the loopback name (localhost, 127.0.0.1, [::1]) the request\'s Host uses; required with authorizationServers on other addresses or with listen.trustProxy.'
        ),
    authorizationServers: z
        .array(secureUrl('the issuer URL, e.g. "https://auth.example.com/realms/mcp"'))
        .min(1, { message: 'add at least one issuer URL, or leave authorizationServers out' })
        .optional()
        .describe(
            'Issuer URLs of the authorization servers that issue tokens for the gateway, exactly as their metadata\'s "issuer" spells them. Listed in the Protected Resource Metadata (RFC 9728) served at /.well-known/oauth-protected-resource, which MCP clients read to find where to log in; also the accepted "iss" values unless "issuer" is set. Default: "issuer", when it is an https:// URL (then tokens are not bound to the resource unless "resource" is set).'
        ),
    scopesSupported: scopeList
        .optional()
        .describe('Scopes advertised as "scopes_supported" in the Protected Resource Metadata: what a client asks for when a challenge names none. Default: requiredScopes.'),
    requiredScopes: scopeList
        .default([])
        .describe(
            'Scopes every token must carry (in its "scope" claim, space separated, or "scp"); a token without one of them gets HTTP 403 insufficient_scope. Named in every 401 challenge\'s "scope".'
        ),
    resourceName: z.string().min(1).max(200).optional().describe('Human-readable name of the gateway, advertised as "resource_name" in the Protected Resource Metadata.'),
    resourceDocumentation: httpUrl().optional().describe('URL of documentation for people using the gateway, advertised as "resource_documentation".')
};

interface OAuthFields {
    resource?: string | undefined;
    authorizationServers?: string[] | undefined;
}

/**
 * Why the resource URL cannot be left to its default, if it cannot: off loopback the gateway cannot know the URL its
 * clients use (a proxy, TLS, a DNS name in front), nor behind a proxy on the same machine (listen.trustProxy), whose
 * clients would be told a loopback URL. Also checked after `--host`, which may move a config off loopback.
 */
export function missingResource(config: { auth: { mode: string } & OAuthFields; listen: { host: string; path: string; trustProxy?: string[] | undefined } }): string | undefined {
    const { auth, listen } = config;
    if (auth.mode !== 'jwt' || auth.authorizationServers === undefined || auth.resource !== undefined) return undefined;
    const why = unknownOwnUrl(listen);
    return why === undefined ? undefined : `is required with authorizationServers when ${why}, e.g. "https://gw.example.com${listen.path}"`;
}

/**
 * Why the listener's address is not the URL clients use (so no resource can default to it), or undefined when it is:
 * off loopback a proxy, TLS or a DNS name may stand in front, and behind a trusted proxy one does.
 */
export function unknownOwnUrl(listen: { host: string; trustProxy?: string[] | undefined }): string | undefined {
    if (!isLoopback(listen.host)) return `listen.host (${listen.host}) is not a loopback address: set the URL clients use to reach the MCP endpoint`;
    if (listen.trustProxy !== undefined) return 'listen.trustProxy is set: clients come through the proxy, so set the URL they use to reach the MCP endpoint there';
    return undefined;
}

/** Rules across the OAuth fields and the rest of the config; adds issues like the main schema's superRefine. */
export function checkOAuthConfig(
    config: {
        auth: { mode: string } & OAuthFields;
        listen: { host: string; path: string; trustProxy?: string[] | undefined };
        clients: { requiredScopes?: string[] | undefined }[];
    },
    ctx: z.core.$RefinementCtx
): void {
    const missing = missingResource(config);
    if (missing !== undefined) ctx.addIssue({ code: 'custom', path: ['auth', 'resource'], message: missing });
    if (config.auth.mode === 'jwt') return;
    config.clients.forEach((client, index) => {
        if (client.requiredScopes !== undefined) {
            ctx.addIssue({
                code: 'custom',
                path: ['clients', index, 'requiredScopes'],
                message: `takes effect only with auth.mode "jwt" (scopes come from tokens); remove it or switch auth.mode`
            });
        }
    });
}

export const clientScopesField = scopeList
    .optional()
    .describe("jwt mode: scopes this client's tokens must carry besides auth.requiredScopes (HTTP 403 insufficient_scope without them).");
