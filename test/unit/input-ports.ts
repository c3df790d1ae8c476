/**
 * In-memory ports for the input engine's unit tests (src/catalog/interaction.ts): an upstream behind the catalog's
 * port whose prompts/get is a script that may answer input_required (a 2026-07-28 upstream) or ask through the call's
 * onInputRequest (a 2025 upstream, as the upstream layer relays it: a rejection answers the request with an error and
 * cancels the call, which fails with it), and clients that answer as the test says.
 */
import type { GetPromptResult } from '@modelcontextprotocol/client';
import type { ClientInput, InteractionBounds } from '../../src/catalog/interaction.js';
import { UpstreamFailedError, UpstreamRejectedError, type CallControl, type Continuation, type InputRequired } from '../../src/catalog/upstream-port.js';
import { inputCapabilities, type InputAnswer, type InputRequest } from '../../src/protocol/input-requests.js';
import { revisionOf } from '../../src/protocol/revisions.js';
import { FakeUpstream, prompt } from './fake-upstream.js';

/** config inputRequests' defaults, and a body bound. */
export const BOUNDS: InteractionBounds = {
    answerTimeoutMs: 60_000,
    maxRounds: 10,
    maxPerRound: 8,
    maxTotalMs: 600_000,
    maxHeld: 1000,
    maxHeldPerClient: 16,
    maxAnswerBytes: 4096
};

export const CONFIRM: InputRequest = {
    method: 'elicitation/create',
    params: { mode: 'form', message: 'Deploy?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }
};
export const SAMPLE: InputRequest = { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 } };
export const OPEN_URL: InputRequest = { method: 'elicitation/create', params: { mode: 'url', message: 'Sign in', url: 'https://example.com/login', elicitationId: 'e-1' } };
export const ACCEPTED = { action: 'accept', content: { ok: true } };
export const DONE: GetPromptResult = { messages: [{ role: 'user', content: { type: 'text', text: 'done' } }] };

/** What a script sees of one prompts/get. */
export interface ScriptedCall {
    readonly args: Record<string, string> | undefined;
    readonly continuation: Continuation | undefined;
    /** A 2025 upstream's request to the client, relayed as the upstream layer does. */
    readonly ask: (request: InputRequest) => Promise<InputAnswer>;
}

/** An upstream whose prompts/get answers as `script` says; counts what the upstream layer would have cancelled. */
export class ScriptedUpstream extends FakeUpstream {
    script: (call: ScriptedCall) => Promise<GetPromptResult | InputRequired> = () => Promise.resolve(DONE);
    readonly continuations: (Continuation | undefined)[] = [];
    /** Its requests whose handler rejected: answered with an error, the call cancelled. */
    cancelled = 0;
    /** Its requests' signals still open: `withdraw` aborts them, as its notifications/cancelled would. */
    readonly outstanding = new Set<AbortController>();

    constructor(id: string) {
        super(id, [prompt('ask', ['who'])]);
    }

    override getPrompt(name: string, args: Record<string, string> | undefined, control?: CallControl, continuation?: Continuation): Promise<GetPromptResult> {
        this.gets.push({ name, args, control });
        this.continuations.push(continuation);
        return this.script({ args, continuation, ask: request => this.#ask(control, request) }) as Promise<GetPromptResult>;
    }

    withdraw(): void {
        for (const controller of this.outstanding) controller.abort();
    }

    async #ask(control: CallControl | undefined, request: InputRequest): Promise<InputAnswer> {
        const handler = control?.onInputRequest;
        // Not tied to a client request: the gateway answers it itself.
        if (handler === undefined) return { error: { code: -32603, message: 'unrelated' } };
        const controller = new AbortController();
        this.outstanding.add(controller);
        try {
            return await handler(request, controller.signal);
        } catch (error) {
            this.cancelled++;
            throw error instanceof UpstreamRejectedError || error instanceof UpstreamFailedError ? error : new UpstreamFailedError(this.id, 'the client did not answer', undefined);
        } finally {
            this.outstanding.delete(controller);
        }
    }
}

/** One question put to a scripted 2025 client, for the test to answer. */
export interface Asked {
    readonly request: InputRequest;
    readonly signal: AbortSignal;
    answer(answer: InputAnswer): void;
}

/** A client of `version` declaring `declared`; a 2025 one (`asks`) records each question for the test to answer. */
export function clientOf(version: string, declared: unknown, holder = ''): { input: ClientInput; asked: Asked[]; next: () => Promise<Asked> } {
    const revision = revisionOf(version)!;
    const asked: Asked[] = [];
    let waiting: ((asked: Asked) => void) | undefined;
    const ask = (request: InputRequest, signal: AbortSignal) =>
        new Promise<InputAnswer>(answer => {
            const question = { request, signal, answer };
            asked.push(question);
            waiting?.(question);
            waiting = undefined;
        });
    const input: ClientInput = { capabilities: inputCapabilities(declared, revision), revision, holder, ...(revision.handshake ? { ask } : {}) };
    let seen = 0;
    const next = () => (asked.length > seen ? Promise.resolve(asked[seen++]!) : new Promise<Asked>(resolve => (waiting = question => (seen++, resolve(question)))));
    return { input, asked, next };
}

export const EVERYTHING = { elicitation: { form: {}, url: {} }, sampling: { context: {}, tools: {} }, roots: {} };
