/**
 * MCP client transport for the legacy HTTP+SSE transport (protocol
 * 2024-11-05): one GET stream whose first `endpoint` event names where to POST
 * messages (on the same origin only), and which carries every answer. Events
 * are read under limits.maxUpstreamMessageBytes, as in streamable-http.ts.
 * The stream ending ends the connection: a new stream would be a new session
 * the server knows nothing of, so the owner reconnects with a new handshake.
 */
import { SdkError, SdkErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { cancelledRequestId, isRequest } from '../../protocol/json-rpc.js';
import { UpstreamHttpError, UpstreamWireError } from '../errors.js';
import { messageLimit } from '../oversized.js';
import { readPaced } from '../paced-read.js';
import type { Forwarded } from '../../catalog/upstream-port.js';
import { SseParser, type SseEvent } from './sse-parser.js';
import { HttpTransport } from './transport-base.js';
import type { Exchange } from './exchanges.js';
import type { HttpResponse } from './upstream-http.js';

export class LegacySseTransport extends HttpTransport {
    #endpoint: URL | undefined;

    /** Opens the stream and resolves once the server said where to POST. */
    async start(): Promise<void> {
        const exchange = this.exchanges.open();
        let response: HttpResponse;
        try {
            const opened = await this.openStream(exchange, {});
            // No stream at all (405) is refused like any other status: this transport has nothing without one.
            if (opened === undefined) throw new UpstreamHttpError(405);
            response = opened;
        } catch (error) {
            this.exchanges.done(exchange);
            throw error;
        }
        await new Promise<void>((resolve, reject) => {
            const limit = messageLimit(this.options.limits().maxUpstreamMessageBytes);
            const parser = new SseParser({
                maxDataBytes: limit.bytes,
                onEvent: event => {
                    if (event.type === 'endpoint') {
                        if (this.#endpoint !== undefined) return;
                        const endpoint = this.#endpointOf(event);
                        if (endpoint instanceof URL) {
                            this.#endpoint = endpoint;
                            resolve();
                        } else {
                            reject(endpoint);
                            void this.close();
                        }
                    } else {
                        for (const message of this.messagesOf(event, limit)) this.deliver(message);
                    }
                }
            });
            readPaced(response.body, parser, this.pace, exchange.signal).then(
                () => this.#ended(exchange, undefined, reject),
                (error: unknown) => this.#ended(exchange, error, reject)
            );
        });
    }

    async send(message: JSONRPCMessage, forwarded?: Forwarded): Promise<void> {
        const endpoint = this.#endpoint;
        if (endpoint === undefined || this.exchanges.closed) throw new SdkError(SdkErrorCode.NotConnected, 'Not connected');
        const cancelled = cancelledRequestId(message);
        if (cancelled !== undefined) this.exchanges.abort(cancelled);
        // Answered at once (202); the answer itself comes on the stream.
        await this.postMessage(message, endpoint, isRequest(message) ? message.id : undefined, forwarded);
    }

    /** The stream is over: before the endpoint event that fails start(), after it the connection. */
    #ended(exchange: Exchange, error: unknown, failStart: (error: Error) => void): void {
        this.exchanges.done(exchange);
        if (this.exchanges.closed) return failStart(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));
        if (error !== undefined) this.report(error);
        if (this.#endpoint === undefined) failStart(new UpstreamWireError('stream ended before its endpoint event', undefined));
        void this.close();
    }

    /** Where to POST: only on the stream's own origin, so no message (nor header) goes to a host the config did not name. */
    #endpointOf(event: SseEvent): URL | Error {
        const refused = new UpstreamWireError("endpoint event refused (not a URL on the upstream's origin)", undefined);
        if (event.data.kind !== 'whole') return refused;
        try {
            const endpoint = new URL(event.data.bytes.toString('utf8').trim(), this.http.url);
            return endpoint.origin === this.http.url.origin ? endpoint : refused;
        } catch {
            return refused;
        }
    }
}
