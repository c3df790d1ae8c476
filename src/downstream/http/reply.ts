/**
 * The answer to a POST that carried requests. JSON, once every response is
 * known (an array for a batch); SSE only when something must reach the client
 * before that: a progress notification of a request that asked for progress,
 * or the gateway's own request to a 2025 client (what an upstream asks on the
 * prompt's way, which the client answers with a POST of its own). The stream
 * opens with it, and the responses follow on it. A POST whose requests all end
 * unanswered (cancelled, or their session ended) gets an empty stream, which
 * tells the client no more than that.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { JSONRPCMessage, JSONRPCResponse } from '@modelcontextprotocol/client';
import { sendJson } from '../../http-server/respond.js';
import { CODE } from '../../protocol/errors.js';
import { SseStream, type SseOptions } from './sse.js';

export class Reply {
    #stream: SseStream | undefined;

    constructor(
        private readonly res: ServerResponse,
        private readonly headers: OutgoingHttpHeaders,
        /** The body was a batch: a JSON answer is an array. */
        private readonly batch: boolean,
        private readonly sse: SseOptions = {},
        /** A 2026-07-28 request: its answer's HTTP status follows its error (see statusOf). */
        private readonly stateless = false
    ) {}

    /** Puts `message` on the answer's stream (opened by the first), ahead of the responses; false once the answer is gone or written. */
    readonly send = (message: JSONRPCMessage): boolean => {
        if (this.res.destroyed || this.res.writableEnded) return false;
        (this.#stream ??= new SseStream(this.res, this.headers, this.sse)).send(message);
        // A stream cut for its backlog is gone as well.
        return !this.res.destroyed;
    };

    finish(answers: readonly (JSONRPCResponse | undefined)[]): void {
        const responses = answers.filter(answer => answer !== undefined);
        if (this.res.destroyed) return;
        if (this.#stream === undefined && responses.length > 0) {
            sendJson(this.res, this.#statusOf(responses), this.batch ? responses : responses[0], this.headers);
            return;
        }
        const stream = (this.#stream ??= new SseStream(this.res, this.headers, this.sse));
        for (const response of responses) stream.send(response);
        stream.close();
    }

    /**
     * 200, but 400 for a 2026-07-28 request whose client lacks a capability (-32021, an upstream's passed on): the
     * revision says so over HTTP. An SSE answer, already opened by progress, stays 200.
     */
    #statusOf(responses: readonly JSONRPCResponse[]): number {
        const [only] = responses;
        return this.stateless && only !== undefined && 'error' in only && only.error.code === CODE.missingClientCapability ? 400 : 200;
    }
}
