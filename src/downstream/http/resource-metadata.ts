/**
 * The MCP listener's side of OAuth: each policy's ResourceServer bound to the
 * listener's address (for the default resource URL on loopback), and the
 * Protected Resource Metadata document (RFC 9728) at
 * /.well-known/oauth-protected-resource and its path-suffixed forms. The
 * document is public: any origin may read it (browser-based MCP clients fetch
 * it cross-origin), caches may keep it, and it is served only in jwt mode with
 * authorization servers to name (authorizationServers, else the issuer; 404
 * otherwise). A loopback listener's default
 * resource is served as the request's Host spells it (see resource-server.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Reject } from '../../http-server/rejections.js';
import { sendEmpty, sendText } from '../../http-server/respond.js';
import { routeKey, type RouteHandler } from '../../http-server/routes.js';
import type { GatewayPolicy } from '../../policy/policy.js';
import { listenerResource, METADATA_PATH, ResourceServer, type MetadataDocument, type ResourceServerSettings } from '../../policy/resource-server.js';

/** Short enough that a reload's change reaches clients soon; the ETag makes re-reading cheap. */
const CACHE_CONTROL = 'public, max-age=300';
const PREFLIGHT_MAX_AGE_SEC = '86400';

export interface ListenerAddress {
    host: string;
    /** The port as bound (listen.port may be 0). */
    port: () => number;
    path: string;
}

/** The ResourceServer of a policy (built once per policy: a reload brings a new one), undefined outside jwt mode. */
export function resourceServers(listener: ListenerAddress): (policy: GatewayPolicy) => ResourceServer | undefined {
    const bound = new WeakMap<ResourceServerSettings, ResourceServer>();
    return policy => {
        const settings = policy.resourceServer;
        if (settings === undefined) return undefined;
        let server = bound.get(settings);
        if (server === undefined) {
            server = new ResourceServer(settings, listenerResource(listener.host, listener.port(), listener.path));
            bound.set(settings, server);
        }
        return server;
    };
}

/** The metadata route for this route key, if it is one and a document is served. */
export function metadataRoute(server: ResourceServer | undefined, listenPath: string, key: string, reject: Reject): RouteHandler | undefined {
    const document = server?.metadata;
    if (document === undefined || !key.startsWith(METADATA_PATH)) return undefined;
    // The root form, the form suffixed with listen.path, and the one the resource URL implies (a proxy may map paths).
    const paths = [METADATA_PATH, `${METADATA_PATH}${listenPath}`, new URL(server!.metadataUrl!).pathname];
    if (!paths.some(path => routeKey(path) === key)) return undefined;
    return (req, res) => serveMetadata(req, res, server!.at(req.headers.host)?.metadata ?? document, reject);
}

function serveMetadata(req: IncomingMessage, res: ServerResponse, document: MetadataDocument, reject: Reject): void {
    // No credentials are involved, so "*" is safe and lets any browser-based client read it.
    const headers = { 'access-control-allow-origin': '*', 'cache-control': CACHE_CONTROL, etag: document.etag };
    if (req.method === 'OPTIONS') {
        // The SDK's discovery sends MCP-Protocol-Version, which makes browsers ask first.
        return sendEmpty(res, 204, {
            'access-control-allow-origin': '*',
            'access-control-allow-methods': 'GET, HEAD',
            'access-control-allow-headers': 'mcp-protocol-version',
            'access-control-max-age': PREFLIGHT_MAX_AGE_SEC
        });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD, OPTIONS');
        return reject(res, 'method_not_allowed');
    }
    if (matchesEtag(req.headers['if-none-match'], document.etag)) {
        // No Content-Length: on a 304 it would describe the 200's body.
        res.writeHead(304, headers);
        res.end();
        return;
    }
    sendText(res, 200, document.body, 'application/json', headers);
}

/** If-None-Match compares weakly (RFC 9110, 13.1.2): a W/ prefix does not matter. */
function matchesEtag(header: string | undefined, etag: string): boolean {
    if (header === undefined) return false;
    return header.split(',').some(candidate => {
        const tag = candidate.trim();
        return tag === '*' || tag === etag || tag === `W/${etag}`;
    });
}
