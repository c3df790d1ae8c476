/**
 * The prompt catalog page (`catalog.path`, default /catalog): a page and its
 * files, served on the MCP listener behind the same Host and Origin checks as
 * the endpoint. The page holds no data: its script is an MCP client of the
 * endpoint, so what it shows is what the visitor's credentials get there. It
 * is served with auth on too (unlike the operator routes), as it is for
 * clients. It lives in downstream, beside the endpoint it is a client of: one
 * route module and a folder of files, not a layer of its own.
 */
import { readdirSync } from 'node:fs';
import type { AuthConfig } from '../../config/policy-schema.js';
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
    /** Read per page load (limits and pageSize can be reloaded): the most the page reads of one answer. */
    maxResponseBytes: () => number;
}

/** What one answer of the endpoint may hold besides its prompts or its result (the JSON-RPC envelope, _meta, a cursor). */
const ENVELOPE_BYTES = 1 << 20;
/** The largest limits.maxResultBytes: past it a browser tab would not hold the text anyway. */
const MOST_RESPONSE_BYTES = 1 << 30;

/**
 * The most the page may need to read of one answer the gateway sends it: a prompts/get result passed back whole
 * (limits.maxResultBytes) or a list page of pageSize prompts each up to limits.maxPromptBytes, plus the envelope;
 * at most 1 GiB of content.
 */
export function catalogResponseBytes(limits: { maxResultBytes: number; maxPromptBytes: number }, pageSize: number): number {
    return Math.min(Math.max(limits.maxResultBytes, pageSize * limits.maxPromptBytes), MOST_RESPONSE_BYTES) + ENVELOPE_BYTES;
}

/** The page's folder: it ships beside the compiled code (the build copies it). */
const CATALOG_FOLDER = new URL('./catalog-page/', import.meta.url);

/** Every script and stylesheet of the page's folder, served below the page: a new file needs no list to be added to. */
function catalogFiles(): string[] {
    return readdirSync(CATALOG_FOLDER, { withFileTypes: true })
        .filter(entry => entry.isFile() && /\.(?:js|css)$/.test(entry.name))
        .map(entry => entry.name)
        .sort();
}

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
    const routes = new Routes().get([base, `${base}/`], (_req, res) =>
        sendText(res, 200, page({ auth: options.authMode(), maxResponseBytes: String(options.maxResponseBytes()) }), 'text/html; charset=utf-8', PAGE_HEADERS)
    );
    assetRoutes(routes, base, readAssets(CATALOG_FOLDER, catalogFiles()), { 'cache-control': 'no-cache' });
    return (req, path) => routes.match(req.method, path);
}

/**
 * The page for the values read per load: `{{name}}` placeholders filled in one pass (a value is never scanned for
 * placeholders), each value escaped for an HTML attribute. Few combinations (three auth modes, a bound changed only
 * by a reload), so each page is made once, and at most eight are kept.
 */
function pageRenderer(template: string, values: Record<string, string>): (perLoad: Record<string, string>) => string {
    const pages = new Map<string, string>();
    return perLoad => {
        const key = JSON.stringify(perLoad);
        let page = pages.get(key);
        if (page === undefined) {
            const all: Record<string, string> = { ...values, ...perLoad };
            page = template.replace(/\{\{(\w+)\}\}/g, (placeholder, name: string) => (Object.hasOwn(all, name) ? escapeAttribute(all[name]!) : placeholder));
            // Reloads that change the bound each add one: kept few, made again when asked for.
            if (pages.size >= 8) pages.clear();
            pages.set(key, page);
        }
        return page;
    };
}

const ATTRIBUTE_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeAttribute(value: string): string {
    return value.replace(/[&<>"']/g, char => ATTRIBUTE_ESCAPES[char]!);
}
