/**
 * The files of a page the gateway serves as they are (the dashboard's, the
 * prompt catalog's): read once at start from the folder beside the compiled
 * code (the build copies it there), then served from memory below the page's
 * path.
 */
import { readFileSync } from 'node:fs';
import type { OutgoingHttpHeaders } from 'node:http';
import { sendText } from './respond.js';
import type { Routes } from './routes.js';

/** Content types of the files pages are made of, by extension. */
const CONTENT_TYPES: Record<string, string> = {
    html: 'text/html; charset=utf-8',
    js: 'text/javascript; charset=utf-8',
    css: 'text/css; charset=utf-8'
};

export interface StaticAsset {
    name: string;
    body: string;
    contentType: string;
}

/** Reads `files` of `folder` (a URL ending in "/") now; a missing file fails the start, not a request later. */
export function readAssets(folder: URL, files: readonly string[]): StaticAsset[] {
    return files.map(name => ({ name, body: readAsset(folder, name), contentType: contentTypeOf(name) }));
}

export function readAsset(folder: URL, file: string): string {
    return readFileSync(new URL(file, folder), 'utf8');
}

/** `GET <base>/<name>` for each asset, with `nosniff` (the browser takes the type given) and `headers`. */
export function assetRoutes(routes: Routes, base: string, assets: readonly StaticAsset[], headers: OutgoingHttpHeaders = {}): Routes {
    for (const { name, body, contentType } of assets) {
        routes.get(`${base}/${name}`, (_req, res) => sendText(res, 200, body, contentType, { ...headers, 'x-content-type-options': 'nosniff' }));
    }
    return routes;
}

/** A page's path without its trailing slash: what its files are served below. */
export function pathBase(path: string): string {
    return path.replace(/\/$/, '');
}

function contentTypeOf(file: string): string {
    const type = CONTENT_TYPES[file.slice(file.lastIndexOf('.') + 1)];
    if (type === undefined) throw new Error(`no content type known for ${file}`);
    return type;
}
