/**
 * Row `request_to_mrtr` of the input engine (interaction.ts): a 2025 upstream's requests for a 2026-07-28 client,
 * which cannot be asked on a stream. The upstream's call is held open on this gateway instance while the client
 * answers its questions in `input_required` rounds, each retry naming the held interaction in its sealed state.
 */
import { randomBytes } from 'node:crypto';
import { CODE } from '../protocol/errors.js';
import { readAnswer, type InputAnswer, type InputMethod, type InputRequest } from '../protocol/input-requests.js';
import {
    askable,
    ClientInputError,
    noAnswer,
    type ClientInput,
    type InputEvent,
    type InputOutcome,
    type InputRequestHandler,
    type InteractionBounds,
    type InteractionUpstream
} from './interaction.js';
import { UpstreamFailedError, UpstreamRejectedError } from './upstream-port.js';
import type { CancelSignal } from '../lib/cancel-signal.js';

/** Who a held interaction belongs to: only they may answer it. */
export interface HeldOwner {
    readonly client: string;
    readonly holder: string;
}

/** What a held interaction knows of its get. */
export interface HeldContext {
    readonly owner: HeldOwner;
    readonly input: ClientInput;
    readonly upstream: InteractionUpstream;
    readonly publish: (event: InputEvent) => void;
}

/** One round of a held interaction for the client: its questions (keyed for inputResponses), to be sealed into a requestState (kind h). */
export interface HeldRound {
    readonly heldId: string;
    readonly round: number;
    /** When the questions stop waiting (answerTimeoutMs from now). */
    readonly expiresAt: number;
    readonly inputRequests: Readonly<Record<string, InputRequest>>;
}

/** Where a held get stands once the client may see it: done (its result), or asking. */
export type HeldStep<R> = { readonly done: R } | { readonly asking: HeldRound };

/** A 2025 upstream's request waiting for the client's retry. */
interface Question {
    /** As the client is asked it (checked, adapted to its revision). */
    readonly request: InputRequest;
    asked: boolean;
    readonly settle: (answer: InputAnswer) => void;
    readonly fail: (error: Error) => void;
}

/** The upstream's call of one get, held open while its client answers. */
class Held<R> {
    /** Named once registered (its first request): a get that asks nothing costs no random bytes. */
    id = '';
    registered = false;
    round = 0;
    keys = 0;
    /** Asked and not yet answered, or not yet asked. */
    readonly questions = new Map<string, Question>();
    settled: { readonly result: R } | { readonly error: unknown } | undefined;
    /** Ended for the client (expired, gone, cancelled): whatever the upstream asks next is refused. */
    ended: Error | undefined;
    /** A retry is being served: another with the same state is a replay. */
    busy = false;
    expiresAt = 0;
    timer: NodeJS.Timeout | undefined;
    wake: (() => void) | undefined;

    constructor(readonly context: HeldContext) {}

    get ownerKey(): string {
        return `${this.context.owner.client}\n${this.context.owner.holder}`;
    }

    publish(method: InputMethod, outcome: InputOutcome): void {
        const { upstream, owner, publish } = this.context;
        publish({ upstream: upstream.id, client: owner.client, path: 'request_to_mrtr', method, outcome });
    }
}

/** Why a retry found no held interaction to answer: gone here (`expired`), or not one it may answer now (`invalid`). */
export type HeldRefusal = 'expired' | 'invalid';

/**
 * Row `request_to_mrtr`, one per gateway instance: a 2025 upstream's requests for a 2026-07-28 client. The client's
 * get starts the upstream call with a handler that queues what it asks; the client gets those questions as
 * `input_required` (a requestState naming the held interaction on this instance) while the call stays open, its
 * timeout paused by the upstream layer; the client's retry answers them and waits for the result or the next
 * questions. A question the retry leaves unanswered (or answers malformed) is asked again. Bounded: answerTimeoutMs
 * per round (then the questions are refused to the upstream, which cancels the call), maxRounds, maxHeld in all and
 * maxHeldPerClient per client and address. Nothing is registered until an upstream asks.
 */
export class HeldInteractions<R> {
    readonly #held = new Map<string, Held<R>>();
    readonly #perOwner = new Map<string, number>();
    readonly #now: () => number;

    constructor(
        /** This gateway instance's tag: sealed into each requestState, so that another replica tells it is not its own. */
        readonly instance: string,
        private readonly bounds: () => InteractionBounds,
        now: () => number = Date.now
    ) {
        this.#now = now;
    }

    get size(): number {
        return this.#held.size;
    }

    /**
     * Starts a get's upstream call with a handler that holds its requests. Resolves with its result when it ends
     * without asking, or with its first questions; rejects as the call does, or with a refusal of what it asked.
     * Nothing is built for the interaction until the upstream asks: every 2026-07-28 client's get comes here, and most
     * ask nothing (a Held and its waits cost every such get about 1.2 KiB of allocations, measured).
     */
    start(call: (onInputRequest: InputRequestHandler) => Promise<R>, context: HeldContext): Promise<HeldStep<R>> {
        return new Promise<HeldStep<R>>((resolve, reject) => {
            let held: Held<R> | undefined;
            const onInputRequest: InputRequestHandler = (request, signal) => {
                if (held === undefined) {
                    held = new Held<R>(context);
                    resolve(this.#step(held));
                }
                return this.#asked(held, request, signal);
            };
            call(onInputRequest).then(
                result => (held === undefined ? resolve({ done: result }) : this.#settle(held, { result })),
                (error: unknown) => (held === undefined ? reject(error as Error) : this.#settle(held, { error }))
            );
        });
    }

    /**
     * The client's retry: answers the questions of `round` from `inputResponses` (missing or malformed ones are asked
     * again), then waits for the result or the next questions. `signal` aborting (the client gone) ends the
     * interaction. A refusal when nothing is held under that id for this owner in that round.
     */
    resume(heldId: string, owner: HeldOwner, round: number, inputResponses: Record<string, unknown> | undefined, signal?: CancelSignal): Promise<HeldStep<R>> | HeldRefusal {
        const held = this.#held.get(heldId);
        if (held === undefined) return 'expired';
        const { client, holder } = held.context.owner;
        if (client !== owner.client || holder !== owner.holder || held.round !== round || held.busy) return 'invalid';
        clearTimeout(held.timer);
        held.busy = true;
        for (const [key, question] of held.questions) {
            const result = question.asked ? readAnswer(question.request.method, inputResponses?.[key]) : undefined;
            if (result === undefined) continue;
            held.questions.delete(key);
            held.publish(question.request.method, 'answered');
            question.settle({ result });
        }
        const gone = () => this.#end(held, new ClientInputError('The client request was cancelled', 'cancelled'), 'cancelled');
        signal?.addEventListener('abort', gone, { once: true });
        return this.#step(held).finally(() => {
            held.busy = false;
            signal?.removeEventListener('abort', gone);
        });
    }

    /** Ends every held interaction (shutdown): their questions refused to the upstreams, whose calls are cancelled. */
    cancelAll(reason: string): void {
        for (const held of [...this.#held.values()]) this.#end(held, new ClientInputError(reason, 'cancelled'), 'cancelled');
    }

    /** The handler's part: checks the request for the client and queues it; registers the interaction on its first request. */
    async #asked(held: Held<R>, request: InputRequest, signal: AbortSignal): Promise<InputAnswer> {
        if (held.ended !== undefined) throw held.ended;
        let forClient: InputRequest;
        try {
            forClient = askable(held.context.input, request);
            if (!held.registered) this.#register(held);
        } catch (refusal) {
            held.publish(request.method, 'refused');
            throw refusal;
        }
        const key = `q${++held.keys}`;
        return await new Promise<InputAnswer>((settle, fail) => {
            held.questions.set(key, { request: forClient, asked: false, settle, fail });
            signal.addEventListener(
                'abort',
                () => {
                    if (held.questions.delete(key)) fail(new ClientInputError('The upstream withdrew its request', 'cancelled'));
                },
                { once: true }
            );
            held.wake?.();
        });
    }

    #register(held: Held<R>): void {
        const { maxHeld, maxHeldPerClient } = this.bounds();
        const owned = this.#perOwner.get(held.ownerKey) ?? 0;
        if (this.#held.size >= maxHeld || owned >= maxHeldPerClient) {
            const which = this.#held.size >= maxHeld ? `inputRequests.maxHeld, ${maxHeld}` : `inputRequests.maxHeldPerClient, ${maxHeldPerClient}`;
            throw new UpstreamRejectedError(`Too many questions waiting (${which}); try again later`, CODE.internalError);
        }
        held.registered = true;
        held.id = randomBytes(12).toString('base64url');
        this.#held.set(held.id, held);
        this.#perOwner.set(held.ownerKey, owned + 1);
    }

    #settle(held: Held<R>, settled: NonNullable<Held<R>['settled']>): void {
        held.settled = settled;
        if (held.ended !== undefined) return this.#remove(held);
        held.wake?.();
    }

    /** Waits until the call ends (its result or error) or has questions (gathered for a turn of the event loop: one round for requests sent together). */
    async #step(held: Held<R>): Promise<HeldStep<R>> {
        for (;;) {
            const { settled } = held;
            if (settled !== undefined) {
                this.#remove(held);
                if ('error' in settled) throw settled.error;
                return { done: settled.result };
            }
            if (held.ended !== undefined) throw held.ended;
            if (held.questions.size > 0) {
                await new Promise(resolve => setImmediate(resolve));
                if (held.settled === undefined && held.ended === undefined && held.questions.size > 0) return { asking: this.#round(held) };
                continue;
            }
            await new Promise<void>(resolve => (held.wake = resolve));
            held.wake = undefined;
        }
    }

    /** The questions outstanding, as the next round for the client; past maxRounds the upstream's fault ends it. */
    #round(held: Held<R>): HeldRound {
        const { maxRounds, answerTimeoutMs } = this.bounds();
        if (++held.round > maxRounds) {
            const reason = `asked for input more than ${maxRounds} rounds (inputRequests.maxRounds)`;
            const error = new UpstreamFailedError(held.context.upstream.id, reason, 'input_rounds');
            this.#end(held, error, 'failed');
            throw error;
        }
        const inputRequests: Record<string, InputRequest> = {};
        for (const [key, question] of held.questions) {
            inputRequests[key] = question.request;
            if (!question.asked) held.publish(question.request.method, 'passed');
            question.asked = true;
        }
        held.expiresAt = this.#now() + answerTimeoutMs;
        held.timer = setTimeout(() => this.#end(held, noAnswer(answerTimeoutMs), 'timeout'), answerTimeoutMs);
        return { heldId: held.id, round: held.round, expiresAt: held.expiresAt, inputRequests };
    }

    /**
     * Ends an interaction for its client: each question outstanding fails with `error` (the upstream layer answers the
     * upstream's request with an error and cancels its call); whatever it asks next is refused; nothing waits for it here.
     */
    #end(held: Held<R>, error: Error, outcome: InputOutcome): void {
        if (held.ended !== undefined) return;
        held.ended = error;
        const questions = [...held.questions.values()];
        held.questions.clear();
        this.#remove(held);
        for (const question of questions) {
            held.publish(question.request.method, outcome);
            question.fail(error);
        }
        held.wake?.();
    }

    #remove(held: Held<R>): void {
        clearTimeout(held.timer);
        if (!held.registered || this.#held.get(held.id) !== held) return;
        this.#held.delete(held.id);
        const owned = (this.#perOwner.get(held.ownerKey) ?? 1) - 1;
        if (owned === 0) this.#perOwner.delete(held.ownerKey);
        else this.#perOwner.set(held.ownerKey, owned);
    }
}
