/**
 * The HTTP exchanges a transport has in flight, each with an AbortController
 * of its own: those of JSON-RPC requests by request id, so cancelling a request
 * aborts its POST and the SSE stream answering it, and all of them at once when
 * the transport closes. Nothing outlives an aborted exchange: its socket is
 * closed and its waits end.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestId } from '../../protocol/json-rpc.js';

export class Exchanges {
    readonly #all = new Set<AbortController>();
    readonly #byRequest = new Map<RequestId, AbortController>();
    #closed = false;

    /** A new exchange, for request `requestId` if given; born aborted once closed. */
    open(requestId?: RequestId): AbortController {
        const exchange = new AbortController();
        if (this.#closed) exchange.abort();
        this.#all.add(exchange);
        if (requestId !== undefined) this.#byRequest.set(requestId, exchange);
        return exchange;
    }

    /** The exchange is over: forget it. */
    done(exchange: AbortController, requestId?: RequestId): void {
        this.#all.delete(exchange);
        if (requestId !== undefined && this.#byRequest.get(requestId) === exchange) this.#byRequest.delete(requestId);
    }

    /** Aborts the exchange of request `requestId`, if it is still running. */
    abort(requestId: RequestId): void {
        this.#byRequest.get(requestId)?.abort();
    }

    /** Aborts every exchange, and every later one as it opens. */
    abortAll(): void {
        this.#closed = true;
        for (const exchange of this.#all) exchange.abort();
    }

    get closed(): boolean {
        return this.#closed;
    }
}

/** Waits `ms` unless `exchange` is aborted first; resolves false then. */
export async function pause(ms: number, exchange: AbortController): Promise<boolean> {
    try {
        await sleep(ms, undefined, { signal: exchange.signal, ref: false });
        return true;
    } catch {
        return false;
    }
}
