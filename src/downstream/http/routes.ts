/**
 * A few GET routes by exact path (health checks, metrics, the dashboard): all
 * the routing the gateway's listeners need beside the MCP endpoint. HEAD is
 * answered like GET (Node leaves out the body).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export class Routes {
    readonly #get = new Map<string, RouteHandler>();

    get(paths: string | string[], handler: RouteHandler): this {
        for (const path of Array.isArray(paths) ? paths : [paths]) this.#get.set(path, handler);
        return this;
    }

    /** Another set's routes too (its own where both have a path). */
    merge(other: Routes): this {
        for (const [path, handler] of other.#get) if (!this.#get.has(path)) this.#get.set(path, handler);
        return this;
    }

    match(method: string | undefined, path: string): RouteHandler | undefined {
        return method === 'GET' || method === 'HEAD' ? this.#get.get(path) : undefined;
    }
}

/** The path of a request target, without its query. */
export function pathOf(url: string | undefined): string {
    if (url === undefined) return '/';
    const query = url.indexOf('?');
    return query === -1 ? url : url.slice(0, query);
}
