/**
 * The gateway's own requests to one 2025-era client: what an upstream asks on a prompt's way (elicitation/create,
 * sampling/createMessage, roots/list), put to the client whose request caused it, on that request's stream (an SSE
 * answer over HTTP, stdout over stdio), and its answer taken back from what the client sends (a POSTed response, a
 * line). One table per session; nothing of one session's requests reaches another's.
 *
 * Ids are strings `<instance>.<n>`: `instance` names the gateway process that asked (replicas do not share asks:
 * an answer that reaches another replica is told apart from a late one, instanceOfAskId), `n` counts per process, so
 * an answer to a request of a session's earlier life here never matches a new one.
 *
 * Every request ends once: answered (its result checked with readAnswer, or the client's error, bounded), or not
 * answered within `timeoutMs`, or aborted by the caller (the upstream withdrew its request, or the client's request
 * ended), or with the session. Whenever the gateway stops waiting unanswered, the client is told with
 * `notifications/cancelled` first, so its user is not left with a form nobody reads: on the request's stream, or
 * when that is gone on the session's own (the GET stream), if it has one.
 */
import { randomUUID } from 'node:crypto';
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCResponse } from '@modelcontextprotocol/client';
import { UpstreamRejectedError } from '../catalog/upstream-port.js';
import { cannotCarryError, CODE, readAnswerError } from '../protocol/errors.js';
import { forRevision, readAnswer, type InputAnswer, type InputMethod, type InputRequest } from '../protocol/input-requests.js';
import type { Revision } from '../protocol/revisions.js';

/** Most requests out to one client at once (the config's cap on maxPerRound): more is refused, never queued. */
export const MAX_OUTSTANDING_ASKS = 64;

/** Puts one message on the stream of the request being served; false once that stream is gone. */
export type SendToClient = (message: JSONRPCMessage) => boolean;

export interface ClientRequestsOptions {
    /** The next request id (askIds): unique among this gateway's requests to every client. */
    mintId: () => string;
    /** inputRequests.answerTimeoutMs, read per request (a reload applies it at once). */
    timeoutMs: () => number;
    /** Default MAX_OUTSTANDING_ASKS. */
    maxOutstanding?: number;
}

/** A request out to the client. */
interface Asked {
    readonly method: InputMethod;
    readonly send: SendToClient;
    /** Ends it with the client's answer. */
    answer(answer: InputAnswer): void;
    /** Ends it unanswered: the client is told (notifications/cancelled, `reason`), the asker gets `error`. */
    fail(reason: string, error: Error): void;
}

/** An instance tag (mintInstanceTag), a dot, a count. */
const ASK_ID = /^([A-Za-z0-9_-]{8})\.[1-9]\d{0,15}$/;

/** Ids `<instance>.<n>` for one gateway process. */
export function askIds(instance: string): () => string {
    let next = 0;
    return () => `${instance}.${++next}`;
}

/** The instance a request id of the gateway's names; undefined when the id is no id the gateway mints. */
export function instanceOfAskId(id: unknown): string | undefined {
    return typeof id === 'string' ? ASK_ID.exec(id)?.[1] : undefined;
}

export class ClientRequests {
    readonly #asked = new Map<string, Asked>();
    readonly #maxOutstanding: number;

    constructor(
        private readonly options: ClientRequestsOptions,
        /** The session's own stream, for a cancellation whose request's stream is gone. */
        private readonly standalone: (notification: JSONRPCNotification) => void = () => {}
    ) {
        this.#maxOutstanding = options.maxOutstanding ?? MAX_OUTSTANDING_ASKS;
    }

    /** Requests out now. */
    get size(): number {
        return this.#asked.size;
    }

    /**
     * Puts `request` to the client as `revision` takes it (forRevision: a url elicitation gets an elicitationId where
     * the revision needs one) through `send`, and resolves with its answer. Rejects with an UpstreamRejectedError
     * (-32603, the client's to see) when it cannot be put (the revision cannot carry it, too many out, the stream gone)
     * or is not answered in time; with the signal's reason once `signal` aborts. The caller checked that the client
     * declared what the request needs (missingNeed).
     */
    ask(request: InputRequest, revision: Revision, send: SendToClient, signal: AbortSignal): Promise<InputAnswer> {
        if (signal.aborted) return Promise.reject(abortReason(signal));
        const adapted = forRevision(request, revision, randomUUID);
        if ('cannot' in adapted) return Promise.reject(rejected(cannotCarryError(adapted.cannot).message));
        if (this.#asked.size >= this.#maxOutstanding) return Promise.reject(rejected(`Too many questions out to this client at once (at most ${this.#maxOutstanding})`));
        const id = this.options.mintId();
        const timeoutMs = this.options.timeoutMs();
        return new Promise<InputAnswer>((resolve, reject) => {
            const end = () => {
                this.#asked.delete(id);
                clearTimeout(timer);
                signal.removeEventListener('abort', onAbort);
            };
            const asked: Asked = {
                method: request.method,
                send,
                answer: answer => {
                    end();
                    resolve(answer);
                },
                fail: (reason, error) => {
                    end();
                    const cancelled: JSONRPCNotification = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } };
                    if (!send(cancelled)) this.standalone(cancelled);
                    reject(error);
                }
            };
            const onAbort = () => asked.fail('The upstream no longer needs the answer', abortReason(signal));
            const seconds = `${Math.round(timeoutMs / 100) / 10} s`;
            const timer = setTimeout(
                () => asked.fail(`No answer within ${seconds}`, rejected(`The client sent no answer within ${seconds} (inputRequests.answerTimeoutMs)`)),
                timeoutMs
            );
            signal.addEventListener('abort', onAbort, { once: true });
            this.#asked.set(id, asked);
            if (send({ jsonrpc: '2.0', id, method: request.method, params: adapted.params })) return;
            end();
            reject(rejected("The client's stream for this request is closed"));
        });
    }

    /**
     * A response from the client: true when it answers a request of ours that is out (its result checked, or its
     * error bounded; a malformed result settles the request as an error answer, never passed on as a result); false
     * when none is out under its id (late, a duplicate, another replica's or the client's mistake).
     */
    take(response: JSONRPCResponse): boolean {
        const asked = typeof response.id === 'string' ? this.#asked.get(response.id) : undefined;
        if (asked === undefined) return false;
        asked.answer(answerOf(asked.method, response));
        return true;
    }

    /** Ends every request out (the session ended, the gateway stops): each asker gets an error with `reason`. */
    cancelAll(reason: string): void {
        for (const asked of [...this.#asked.values()]) asked.fail(reason, rejected(reason));
    }
}

/** The client's answer as the upstream may get it: a checked result, or an error (the client's, bounded, or ours). */
function answerOf(method: InputMethod, response: JSONRPCResponse): InputAnswer {
    if ('result' in response) {
        const result = readAnswer(method, response.result);
        if (result !== undefined) return { result };
    } else {
        const error = readAnswerError(response.error);
        if (error !== undefined) return error;
    }
    return { error: { code: CODE.internalError, message: `The client answered ${method} with a malformed result` } };
}

/** A request to the client that failed: the client's to see (the upstream layer passes it on). */
function rejected(message: string): UpstreamRejectedError {
    return new UpstreamRejectedError(message, CODE.internalError);
}

function abortReason(signal: AbortSignal): Error {
    return signal.reason instanceof Error ? signal.reason : new Error('The request to the client was cancelled');
}
