/**
 * The prompt catalog page (`catalog.path`, default /catalog): a page and its
 * files, served on the MCP listener behind the same Host and Origin checks as
 * the endpoint. The page holds no data: its script is an MCP client of the
 * endpoint, so what it shows is what the visitor's credentials get there. It
 * is served with auth on too (unlike the operator routes), as it is for
 * clients. It lives in downstream, beside the endpoint it is a client of: one
 * route module and a folder of files, not a layer of its own.
 */
import type { AuthConfig } from '../../config/policy-schema.js';
import { CATALOG_PAGE_FILES } from '../../config/schema.js';
import { sendText } from '../../http-server/respond.js';
import { Routes } from '../../http-server/routes.js';
import { assetRoutes, pathBase, readAsset, readAssets } from '../../http-server/static-assets.js';
import { VERSION } from '../../version.js';
import type { ListenerRoutes } from './endpoint.js';

export interface CatalogPageOptions {
    /** catalog.path */
    path: string;
    /** listen.path: where the page sends its MCP requests. */
    endpointPath: string;
    /** Read per page load: a reload that changes auth.mode applies to the next one. */
    authMode: () => AuthConfig['mode'];
    /** namespace.separator: the page tells a prompt's upstream by it. */
    separator: string;
    /** catalog.serverName */
    serverName: string;
}

/** The page's folder: it ships beside the compiled code (the build copies it). */
const CATALOG_FOLDER = new URL('./catalog-page/', import.meta.url);

/**
 * Its own script, style and same-origin requests, images and audio of rendered prompts as data: URLs, nothing else:
 * no inline code, no other origin, no framing, no form submission (a credential never lands in a URL), and Trusted
 * Types with no policy, so no string ever becomes markup or code.
 */
const CATALOG_CSP =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; media-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'";

const PAGE_HEADERS = {
    'content-security-policy': CATALOG_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    // The page carries the current auth mode.
    'cache-control': 'no-store',
    'cross-origin-opener-policy': 'same-origin'
};

export function catalogPageRoutes(options: CatalogPageOptions): ListenerRoutes {
    const base = pathBase(options.path);
    const page = pageRenderer(readAsset(CATALOG_FOLDER, 'index.html'), {
        base,
        endpoint: options.endpointPath,
        separator: options.separator,
        serverName: options.serverName,
        version: VERSION
    });
    const routes = new Routes().get([base, `${base}/`], (_req, res) => sendText(res, 200, page(options.authMode()), 'text/html; charset=utf-8', PAGE_HEADERS));
    assetRoutes(routes, base, readAssets(CATALOG_FOLDER, CATALOG_PAGE_FILES), { 'cache-control': 'no-cache' });
    return (req, path) => routes.match(req.method, path);
}

/**
 * The page for an auth mode: `{{name}}` placeholders filled in one pass (a value is never scanned for placeholders),
 * each value escaped for an HTML attribute. Three modes, so each page is made once.
 */
function pageRenderer(template: string, values: Record<string, string>): (auth: string) => string {
    const pages = new Map<string, string>();
    return auth => {
        let page = pages.get(auth);
        if (page === undefined) {
            const all: Record<string, string> = { ...values, auth };
            page = template.replace(/\{\{(\w+)\}\}/g, (placeholder, name: string) => (Object.hasOwn(all, name) ? escapeAttribute(all[name]!) : placeholder));
            pages.set(auth, page);
        }
        return page;
    };
}

const ATTRIBUTE_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeAttribute(value: string): string {
    return value.replace(/[&<>"']/g, char => ATTRIBUTE_ESCAPES[char]!);
}
