/**
 * One engine for a prompt that asks its client something on the way (elicitation, sampling, roots), whichever era
 * asks and whichever answers (docs/protocol-revisions.md "Input requests across eras"). An upstream asks in one of
 * two ways: a 2026-07-28 upstream answers `input_required` (its `inputRequests` and `requestState`); a 2025 upstream
 * sends a request of its own, which the upstream layer ties to the call that caused it and hands to the call's
 * `onInputRequest`. A client answers in one of two ways: a 2025 client is asked on the stream of its request
 * (`ClientInput.ask`); a 2026-07-28 client gets `input_required` and retries. Four paths:
 * - `mrtr` (2026 upstream, 2026 client): passed on, its state sealed (the service does it, request-state.ts);
 * - `mrtr_to_request` (2026 upstream, 2025 client): `Interaction.drive` asks each round, retries the upstream;
 * - `request` (2025 upstream, 2025 client): `Interaction.relay` puts each request to the client;
 * - `request_to_mrtr` (2025 upstream, 2026 client): `HeldInteractions` (held-interactions.ts) keeps the upstream's
 *   call open and its requests waiting while the client answers them in `input_required` rounds.
 * What a client did not declare is never put to it (missingCapabilityError, the upstream's request answered with an error and its call
 * cancelled); every round, answer and wait is bounded (InteractionBounds). No I/O: the ports do it; timers only.
 */
import { ProtocolError } from '@modelcontextprotocol/client';
import type { GetPromptResult } from '@modelcontextprotocol/client';
import { exceeds } from '../lib/json-bounds.js';
import { cannotCarryError, CODE, missingCapabilityError } from '../protocol/errors.js';
import {
    forRevision,
    missingNeed,
    readAnswer,
    readInputRequests,
    type InputAnswer,
    type InputCapabilities,
    type InputMethod,
    type InputRequest
} from '../protocol/input-requests.js';
import type { Revision } from '../protocol/revisions.js';
import {
    InputRefusedError,
    isInputRequired,
    UpstreamFailedError,
    UpstreamRejectedError,
    type CallControl,
    type Continuation,
    type InputRequired,
    type UpstreamPort
} from './upstream-port.js';
import type { CancelSignal } from '../lib/cancel-signal.js';
import { untilAborted } from '../lib/until-aborted.js';

/** How the caller's client answers input requests, per request (built by the dispatcher). */
export interface ClientInput {
    readonly capabilities: InputCapabilities;
    readonly revision: Revision;
    /** A 2025 client: puts one request on the stream of the request being served. Absent: a 2026-07-28 client (input_required + retry). */
    readonly ask?: ((request: InputRequest, signal: AbortSignal) => Promise<InputAnswer>) | undefined;
    /** What sealed state is bound to besides the caller's scope: the anonymous client's address over HTTP; '' otherwise. */
    readonly holder: string;
}

/** config inputRequests, and the largest answer a client may send (limits.maxBodyBytes). Read per request: a reload applies at once. */
export interface InteractionBounds {
    readonly answerTimeoutMs: number;
    readonly maxRounds: number;
    readonly maxPerRound: number;
    readonly maxTotalMs: number;
    readonly maxHeld: number;
    readonly maxHeldPerClient: number;
    readonly maxAnswerBytes: number;
}

/** The row of the table an input request took (module comment). */
export type InteractionPath = 'mrtr' | 'mrtr_to_request' | 'request' | 'request_to_mrtr';

/** How one input request ended: `passed` handed to a 2026-07-28 client (its answer comes with a retry, if ever). */
export type InputOutcome = 'answered' | 'passed' | 'refused' | 'timeout' | 'cancelled' | 'failed';

/** One input request's end, for metrics: names and labels only, never what was asked or answered. */
export interface InputEvent {
    readonly upstream: string;
    readonly client: string;
    readonly path: InteractionPath;
    readonly method: InputMethod;
    readonly outcome: InputOutcome;
}

/** What an upstream call is given to relay its requests (upstream-port.ts CallControl.onInputRequest). */
export type InputRequestHandler = NonNullable<CallControl['onInputRequest']>;

/** The part of the upstream an interaction needs: its name, and where its faults are counted. */
export type InteractionUpstream = Pick<UpstreamPort, 'id' | 'reportFault'>;

/**
 * The client did not answer, or answered with an error where the interaction cannot go on: -32603 with these words
 * (an UpstreamRejectedError, so that the upstream layer ends the upstream's call with it and its words reach the client).
 */
export class ClientInputError extends UpstreamRejectedError {
    constructor(
        message: string,
        readonly outcome: 'timeout' | 'cancelled' | 'failed'
    ) {
        super(message, CODE.internalError);
    }
}

/** A 2026-07-28 revision never needs an elicitation id minted; for a 2025 client the asking port mints it. */
const NO_ELICITATION_ID = () => '';

/** `request` as `client` takes it, checked: missingCapabilityError naming what it did not declare, or what its revision cannot carry. */
export function askable(client: ClientInput, request: InputRequest): InputRequest {
    const need = missingNeed(client.capabilities, request);
    if (need !== undefined) throw new InputRefusedError(missingCapabilityError(need));
    const adapted = forRevision(request, client.revision, NO_ELICITATION_ID);
    if ('cannot' in adapted) throw new InputRefusedError(cannotCarryError(adapted.cannot));
    return { method: request.method, params: adapted.params };
}

/** "2 s", "60 s", "1.5 s". */
function seconds(ms: number): string {
    return `${Math.round(ms / 100) / 10} s`;
}

/** -32602's words for a retry whose held question is past its time, or no longer held (answered, cancelled). */
export function expiredQuestion(answerTimeoutMs: number): string {
    return `The question expired (inputRequests.answerTimeoutMs, ${seconds(answerTimeoutMs)}); get the prompt again without requestState`;
}

export function noAnswer(ms: number): ClientInputError {
    return new ClientInputError(`The client gave no answer within ${seconds(ms)}`, 'timeout');
}

/** Aborts with `reason()` after `ms`, or when `parent` aborts; `done(failed)` clears both, and aborts what is still asked when the round failed. */
function boundedSignal(ms: number, reason: () => Error, parent: CancelSignal | undefined): { signal: AbortSignal; done: (failed: boolean) => void } {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(reason()), ms);
    const onAbort = () => controller.abort(new ClientInputError('The client request was cancelled', 'cancelled'));
    parent?.addEventListener('abort', onAbort, { once: true });
    if (parent?.aborted === true) onAbort();
    return {
        signal: controller.signal,
        done: failed => {
            clearTimeout(timer);
            parent?.removeEventListener('abort', onAbort);
            if (failed && !controller.signal.aborted) controller.abort(new ClientInputError('The interaction ended', 'cancelled'));
        }
    };
}

/** The error an asking port's rejection ends the interaction with: its own when it is one of ours, else in our words. */
function endedBy(error: unknown): Error {
    if (error instanceof UpstreamRejectedError || error instanceof UpstreamFailedError) return error;
    if (error instanceof ProtocolError) return new ClientInputError(error.message, 'failed');
    return new ClientInputError('The client did not answer', 'cancelled');
}

export interface InteractionOptions {
    readonly upstream: InteractionUpstream;
    /** The caller's client id, for events. */
    readonly client: string;
    /** The client request's id, named by the upstream's fault lines. */
    readonly requestId?: string | undefined;
    readonly input: ClientInput;
    readonly bounds: InteractionBounds;
    readonly publish: (event: InputEvent) => void;
    readonly now?: (() => number) | undefined;
}

/** One prompts/get whose client is a 2025 one, asked on its request's stream: rows `mrtr_to_request` and `request`. */
export class Interaction {
    /** Rounds of input so far: each input_required answered, each upstream request put to the client. */
    rounds = 0;
    /** The row taken, once an upstream asked. */
    path: InteractionPath | undefined;
    readonly #now: () => number;

    constructor(private readonly options: InteractionOptions) {
        this.#now = options.now ?? Date.now;
    }

    /**
     * Row `mrtr_to_request`: a 2026-07-28 upstream's `input_required` asked of the 2025 client round by round, the
     * upstream retried with the answers and its own state (which never leaves the gateway), until it completes.
     * Every request of a round is checked before any is asked; an error answer ends the interaction.
     */
    async drive(first: InputRequired, retry: (continuation: Continuation) => Promise<GetPromptResult | InputRequired>, signal?: CancelSignal): Promise<GetPromptResult> {
        const { maxTotalMs, answerTimeoutMs } = this.options.bounds;
        const deadline = this.#now() + maxTotalMs;
        let result: GetPromptResult | InputRequired = first;
        this.path = 'mrtr_to_request';
        while (isInputRequired(result)) {
            this.#nextRound(true);
            const requests = this.#readRound(result.inputRequests);
            for (const request of requests.values()) this.#checked(request, 'mrtr_to_request');
            const left = deadline - this.#now();
            if (left <= 0) throw new ClientInputError(`The prompt took longer than inputRequests.maxTotalMs (${seconds(maxTotalMs)})`, 'timeout');
            const inputResponses = await this.#askRound(requests, Math.min(answerTimeoutMs, left), signal);
            result = await retry({ inputResponses, requestState: result.requestState });
        }
        return result;
    }

    /**
     * Row `mrtr`: round `round` of a 2026-07-28 upstream's input_required, as its 2026-07-28 client is asked it: every
     * request checked against what the client declared (a refusal ends the get), past maxRounds the upstream's fault.
     */
    passOn(inputRequests: Record<string, unknown> | undefined, round: number): Record<string, InputRequest> {
        this.rounds = round - 1;
        this.path = 'mrtr';
        this.#nextRound(true);
        const passed: Record<string, InputRequest> = {};
        for (const [key, request] of this.#readRound(inputRequests)) passed[key] = this.#checked(request, 'mrtr');
        for (const request of Object.values(passed)) this.#publish(request.method, 'mrtr', 'passed');
        return passed;
    }

    /** A round's `inputRequests` (absent: none, the upstream wants its state back only); malformed or too many is the upstream's fault. */
    #readRound(inputRequests: Record<string, unknown> | undefined): ReadonlyMap<string, InputRequest> {
        if (inputRequests === undefined) return new Map();
        const read = readInputRequests(inputRequests, this.options.bounds.maxPerRound);
        if (typeof read !== 'string') return read;
        const { upstream } = this.options;
        upstream.reportFault('invalid_result', `upstream input_required refused: ${read}`, { requestId: this.options.requestId });
        throw new UpstreamFailedError(upstream.id, read, undefined);
    }

    /**
     * Row `request`: what a 2025 upstream's call relays each of its requests to (the service's InputRequestHandler,
     * which builds the interaction on the first). Each is checked, put to the client within answerTimeoutMs, and its
     * answer (a result, checked, or the client's error) sent back. A refusal, a timeout or a client gone rejects: the
     * upstream layer answers the upstream's request with an error, cancels its call, and the client's get fails with it.
     */
    async relay(request: InputRequest, upstreamSignal: AbortSignal): Promise<InputAnswer> {
        this.path = 'request';
        this.#nextRound(false);
        this.#checked(request, 'request');
        const { answerTimeoutMs } = this.options.bounds;
        const bounded = boundedSignal(answerTimeoutMs, () => noAnswer(answerTimeoutMs), upstreamSignal);
        const answer = await this.#answerOf(request, bounded.signal, 'request').finally(() => bounded.done(false));
        this.#publish(request.method, 'request', 'answered');
        return answer;
    }

    /** Counts a round; past maxRounds the interaction is the upstream's fault (`report`: counted here, else by the upstream layer). */
    #nextRound(report: boolean): void {
        const { maxRounds } = this.options.bounds;
        if (++this.rounds <= maxRounds) return;
        const { upstream } = this.options;
        const reason = `asked for input more than ${maxRounds} rounds (inputRequests.maxRounds)`;
        if (report) upstream.reportFault('input_rounds', `upstream ${reason}`, { requestId: this.options.requestId });
        throw new UpstreamFailedError(upstream.id, reason, report ? undefined : 'input_rounds');
    }

    #checked(request: InputRequest, path: InteractionPath): InputRequest {
        try {
            return askable(this.options.input, request);
        } catch (refusal) {
            this.#publish(request.method, path, 'refused');
            throw refusal;
        }
    }

    /** Asks every request of a round at once; the first failure ends the round (the other questions cancelled). */
    async #askRound(requests: ReadonlyMap<string, InputRequest>, timeoutMs: number, signal: CancelSignal | undefined): Promise<Record<string, unknown>> {
        const bounded = boundedSignal(timeoutMs, () => noAnswer(timeoutMs), signal);
        let failed = true;
        try {
            const answers = await Promise.all(
                [...requests].map(async ([key, request]) => {
                    const answer = await this.#answerOf(request, bounded.signal, 'mrtr_to_request');
                    if ('error' in answer) {
                        this.#publish(request.method, 'mrtr_to_request', 'failed');
                        throw new ClientInputError(`The client answered ${request.method} with error ${answer.error.code}: ${answer.error.message}`, 'failed');
                    }
                    this.#publish(request.method, 'mrtr_to_request', 'answered');
                    return [key, answer.result] as const;
                })
            );
            failed = false;
            return this.#bounded(Object.fromEntries(answers));
        } finally {
            bounded.done(failed);
        }
    }

    #bounded(inputResponses: Record<string, unknown>): Record<string, unknown> {
        const { maxAnswerBytes } = this.options.bounds;
        if (!exceeds(JSON.stringify(inputResponses), maxAnswerBytes)) return inputResponses;
        throw new ClientInputError(`The client's answers are larger than ${maxAnswerBytes} bytes (limits.maxBodyBytes)`, 'failed');
    }

    /** The client's answer: its result checked (malformed: an error answer), or its error; a rejection in our words. */
    async #answerOf(request: InputRequest, signal: AbortSignal, path: InteractionPath): Promise<InputAnswer> {
        let answer: InputAnswer;
        try {
            answer = await untilAborted(this.options.input.ask!(request, signal), signal);
        } catch (error) {
            const ended = endedBy(error);
            this.#publish(request.method, path, ended instanceof ClientInputError ? ended.outcome : 'failed');
            throw ended;
        }
        if ('error' in answer) return answer;
        const result = readAnswer(request.method, answer.result);
        return result === undefined ? { error: { code: CODE.internalError, message: `The client's answer to ${request.method} is malformed` } } : { result };
    }

    #publish(method: InputMethod, path: InteractionPath, outcome: InputOutcome): void {
        this.options.publish({ upstream: this.options.upstream.id, client: this.options.client, path, method, outcome });
    }
}
