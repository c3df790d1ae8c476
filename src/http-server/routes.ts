/**
 * A few GET routes by exact path (health checks, metrics, the dashboard): all
 * the routing the gateway's listeners need beside the MCP endpoint. HEAD is
 * answered like GET (Node leaves out the body). Paths match as they did when
 * express routed them: in any case, with or without one trailing slash.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export class Routes {
    readonly #get = new Map<string, RouteHandler>();

    get(paths: string | string[], handler: RouteHandler): this {
        for (const path of Array.isArray(paths) ? paths : [paths]) this.#get.set(routeKey(path), handler);
        return this;
    }

    /** Another set's routes too (its own where both have a path). */
    merge(other: Routes): this {
        for (const [path, handler] of other.#get) if (!this.#get.has(path)) this.#get.set(path, handler);
        return this;
    }

    /** `key` as routeKeyOf gives it. */
    match(method: string | undefined, key: string): RouteHandler | undefined {
        return method === 'GET' || method === 'HEAD' ? this.#get.get(key) : undefined;
    }
}

/** What a path is matched by: lower case, without one trailing slash. */
export function routeKey(path: string): string {
    return (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).toLowerCase();
}

/** The route key of a request target's path (its query left out). */
export function routeKeyOf(url: string | undefined): string {
    if (url === undefined) return '/';
    const query = url.indexOf('?');
    return routeKey(query === -1 ? url : url.slice(0, query));
}
