/**
 * The HTTP exchanges a transport has in flight, each one abortable: those of JSON-RPC requests by request id, so cancelling a request
 * aborts its POST and the SSE stream answering it, and all of them at once when
 * the transport closes. Nothing outlives an aborted exchange: its socket is
 * closed and its waits end.
 *
 * An exchange is no AbortController: most are one POST answered with JSON,
 * aborted through undici's own hook (see upstream-http.ts), and an AbortSignal
 * costs more than the rest of the exchange's bookkeeping (measured: ~15 us per
 * exchange with its listener and collection). Only a stream's reading, which
 * waits on timers, asks for one.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestId } from '../../protocol/json-rpc.js';

/** One exchange: aborted once, which aborts the HTTP requests made under it and its signal, if one was asked for. */
export class Exchange {
    #aborted = false;
    /** Made the first time a signal is asked for. */
    #controller: AbortController | undefined;
    /** The HTTP requests in flight under it (one, but for a stream's reconnections), each aborted with it. */
    #requests: Set<() => void> | undefined;

    get aborted(): boolean {
        return this.#aborted;
    }

    /** For waits that take a signal (a stream's pauses and paced reads); aborted with the exchange. */
    get signal(): AbortSignal {
        if (this.#controller === undefined) {
            this.#controller = new AbortController();
            if (this.#aborted) this.#controller.abort();
        }
        return this.#controller.signal;
    }

    abort(): void {
        if (this.#aborted) return;
        this.#aborted = true;
        this.#controller?.abort();
        if (this.#requests === undefined) return;
        const requests = [...this.#requests];
        this.#requests = undefined;
        for (const abort of requests) abort();
    }

    /** An HTTP request under the exchange: `abort` is called when the exchange is aborted, until `detach`. */
    attach(abort: () => void): void {
        (this.#requests ??= new Set()).add(abort);
    }

    detach(abort: () => void): void {
        this.#requests?.delete(abort);
    }
}

export class Exchanges {
    readonly #all = new Set<Exchange>();
    readonly #byRequest = new Map<RequestId, Exchange>();
    #closed = false;

    /** A new exchange, for request `requestId` if given; born aborted once closed. */
    open(requestId?: RequestId): Exchange {
        const exchange = new Exchange();
        if (this.#closed) exchange.abort();
        this.#all.add(exchange);
        if (requestId !== undefined) this.#byRequest.set(requestId, exchange);
        return exchange;
    }

    /** The exchange is over: forget it. */
    done(exchange: Exchange, requestId?: RequestId): void {
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
export async function pause(ms: number, exchange: Exchange): Promise<boolean> {
    try {
        await sleep(ms, undefined, { signal: exchange.signal, ref: false });
        return true;
    } catch {
        return false;
    }
}
