/**
 * What an upstream may send back is answers to requests the gateway sent and progress for them, besides its own
 * notifications and requests. Anything else (an answer to no request in flight, a second answer, an answer after
 * a cancellation, progress under a token the gateway never gave) is dropped where it enters, and counted. The
 * SDK client reports such messages by serialising them whole; an upstream nesting one thousands deep would make
 * that overflow the stack, off any request's path, and take the gateway down.
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/client';
import { cancelledRequestId, type RequestId } from '../lib/json-rpc.js';

/** The requests in flight on one connection, by id and by progress token. Pure bookkeeping. */
export class Correlation {
    /** Each request in flight, with the progress token it gave (if any). */
    readonly #pending = new Map<RequestId, RequestId | undefined>();
    readonly #tokens = new Set<RequestId>();

    /** Every message the gateway sends: requests are expected to be answered, cancellations no longer. */
    sent(message: JSONRPCMessage): void {
        if ('method' in message && 'id' in message) {
            const token = (message.params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
            const given = typeof token === 'string' || typeof token === 'number' ? token : undefined;
            this.#pending.set(message.id, given);
            if (given !== undefined) this.#tokens.add(given);
        } else {
            const cancelled = cancelledRequestId(message);
            if (cancelled !== undefined) this.#settle(cancelled);
        }
    }

    /** Requests in flight: bounded by the upstream's concurrency, whatever it sends or fails to answer. */
    get size(): number {
        return this.#pending.size;
    }

    /** A message could not be sent: a request among them is not in flight. */
    unsent(message: JSONRPCMessage): void {
        if ('method' in message && 'id' in message) this.#settle(message.id);
    }

    /** Whether a message received may go on; an answer settles its request, so a second one would not. */
    admits(message: JSONRPCMessage): boolean {
        if ('result' in message || 'error' in message) {
            const id = (message as { id?: unknown }).id;
            if ((typeof id !== 'string' && typeof id !== 'number') || !this.#pending.has(id)) return false;
            this.#settle(id);
            return true;
        }
        if ('method' in message && message.method === 'notifications/progress' && !('id' in message)) {
            const token = message.params?.progressToken;
            return (typeof token === 'string' || typeof token === 'number') && this.#tokens.has(token);
        }
        return true;
    }

    #settle(id: RequestId): void {
        const token = this.#pending.get(id);
        this.#pending.delete(id);
        if (token !== undefined) this.#tokens.delete(token);
    }
}

/** A transport that only lets through, to the SDK client, what the correlation admits. */
export class CorrelatedTransport implements Transport {
    onclose?: () => void;
    onerror?: (error: Error) => void;
    onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
    readonly #correlation = new Correlation();

    constructor(
        private readonly inner: Transport,
        /** A message dropped: what it was, in a word (never its content). */
        onStray: (kind: 'answer' | 'progress') => void
    ) {
        inner.onclose = () => this.onclose?.();
        inner.onerror = error => this.onerror?.(error);
        inner.onmessage = (message, extra) => {
            if (this.#correlation.admits(message)) this.onmessage?.(message, extra);
            else onStray('method' in message ? 'progress' : 'answer');
        };
    }

    get sessionId(): string | undefined {
        return this.inner.sessionId;
    }

    start(): Promise<void> {
        return this.inner.start();
    }

    async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
        this.#correlation.sent(message);
        try {
            await this.inner.send(message, options);
        } catch (error) {
            // A request that never left is answered by its send failing: nothing from the upstream may settle it.
            this.#correlation.unsent(message);
            throw error;
        }
    }

    close(): Promise<void> {
        return this.inner.close();
    }

    setProtocolVersion(version: string): void {
        this.inner.setProtocolVersion?.(version);
    }

    setSupportedProtocolVersions(versions: string[]): void {
        this.inner.setSupportedProtocolVersions?.(versions);
    }
}
