/**
 * What every request to a gateway listener passes first, in order: CORS (a
 * preflight is answered here, only when configured), then the Host and Origin
 * checks against DNS rebinding. The MCP endpoint's own checks come after (see
 * downstream/http/admission.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';
import type { RejectionReason } from './rejections.js';
import { sendEmpty } from './respond.js';

const CORS_METHODS = 'GET,POST,DELETE';
const CORS_ALLOWED_HEADERS = 'content-type,accept,authorization,x-api-key,mcp-session-id,mcp-protocol-version,mcp-method,mcp-name,last-event-id,x-request-id';
/** 2026-07-28 `Mcp-Param-<Name>` headers have open names, which Access-Control-Allow-Headers cannot list by prefix. */
const PARAM_HEADER = /^mcp-param-[!#$%&'*+.^_`|~0-9a-z-]{1,64}$/;
const MAX_PARAM_HEADERS = 32;
const CORS_EXPOSED_HEADERS = 'mcp-session-id,mcp-protocol-version,www-authenticate,retry-after,x-request-id';

export interface BrowserSafety {
    allowedHosts: string[] | undefined;
    allowedOrigins: string[] | undefined;
    cors: { origins: string[]; maxAgeSec: number } | undefined;
}

/** Decisions on header values, kept for the values seen (clients send the same few); emptied when it grows large. */
function remembered(decide: (value: string | undefined) => boolean): (value: string | undefined) => boolean {
    const decisions = new Map<string | undefined, boolean>();
    return value => {
        let decision = decisions.get(value);
        if (decision === undefined) {
            if (decisions.size >= 256) decisions.clear();
            decisions.set(value, (decision = decide(value)));
        }
        return decision;
    };
}

/**
 * CORS first (a preflight carries no credentials), then Host, then Origin; a configured CORS origin passes the
 * Origin check. Returns the refusal, 'answered' for a preflight it answered, or undefined to go on. The SDK's checks
 * are used, not its answers: those repeat the header's value, and errors never echo headers. A public document
 * (`publicDocument`, readable from any origin and answering CORS itself) passes the Host check alone.
 */
export function browserGuards({
    allowedHosts,
    allowedOrigins,
    cors
}: BrowserSafety): (req: IncomingMessage, res: ServerResponse, publicDocument?: boolean) => RejectionReason | 'answered' | undefined {
    const corsOrigins = new Set(cors?.origins ?? []);
    const origins = allowedOrigins ?? (corsOrigins.size > 0 ? [] : undefined);
    const hostAllowed = allowedHosts === undefined ? undefined : remembered(host => validateHostHeader(host, allowedHosts).ok);
    const originAllowed = origins === undefined ? undefined : remembered(origin => corsOrigins.has(origin ?? '') || validateOriginHeader(origin, origins).ok);
    return (req, res, publicDocument = false) => {
        if (publicDocument) return hostAllowed !== undefined && !hostAllowed(req.headers.host) ? 'forbidden_host' : undefined;
        const origin = req.headers.origin;
        // Other origins get no CORS header at all and fall through to the Origin check (403), preflights included.
        if (cors !== undefined && origin !== undefined && corsOrigins.has(origin)) {
            res.setHeader('access-control-allow-origin', origin);
            res.setHeader('vary', req.method === 'OPTIONS' ? 'Origin, Access-Control-Request-Headers' : 'Origin');
            if (req.method === 'OPTIONS') {
                sendEmpty(res, 204, {
                    'access-control-allow-methods': CORS_METHODS,
                    'access-control-allow-headers': allowedHeaders(req.headers['access-control-request-headers']),
                    'access-control-max-age': String(cors.maxAgeSec)
                });
                return 'answered';
            }
            res.setHeader('access-control-expose-headers', CORS_EXPOSED_HEADERS);
        }
        if (hostAllowed === undefined) return originAllowed !== undefined && !originAllowed(origin) ? 'forbidden_origin' : undefined;
        const host = req.headers.host;
        if (!hostAllowed(host)) return 'forbidden_host';
        if (originAllowed !== undefined && !originAllowed(origin) && !sameOrigin(`${host ?? ''}\n${origin ?? ''}`)) return 'forbidden_origin';
        return undefined;
    };
}

/**
 * A page served by this listener calling it (the prompt catalog): its Origin names the Host it was loaded from. Taken
 * only once that Host passed the Host check: a DNS-rebinding page's Host is refused before, so same-origin cannot be
 * an attacker's, while with Host checks off (nothing to tell the two apart) only the configured origins pass. The
 * scheme is not compared, as a TLS proxy in front of the gateway changes it.
 */
const sameOrigin = remembered(hostAndOrigin => {
    // Neither header can hold a line break.
    const [host, origin] = hostAndOrigin!.split('\n');
    if (host === '' || origin === undefined || !URL.canParse(origin)) return false;
    const { protocol, host: originHost } = new URL(origin);
    // Through a URL of the Origin's scheme, so a default port written out in Host ("example.com:443") compares equal.
    return (protocol === 'http:' || protocol === 'https:') && URL.canParse(`${protocol}//${host}`) && new URL(`${protocol}//${host}`).host === originHost;
});

/** The fixed list, plus the `Mcp-Param-*` names the preflight asks for (bounded: a preflight is unauthenticated). */
function allowedHeaders(requested: string | undefined): string {
    if (requested === undefined) return CORS_ALLOWED_HEADERS;
    const params = requested
        .toLowerCase()
        .split(',')
        .map(name => name.trim())
        .filter(name => PARAM_HEADER.test(name))
        .slice(0, MAX_PARAM_HEADERS);
    return params.length === 0 ? CORS_ALLOWED_HEADERS : `${CORS_ALLOWED_HEADERS},${[...new Set(params)].join(',')}`;
}
