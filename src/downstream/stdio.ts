/**
 * The downstream side over stdio: one client, one session, newline-delimited
 * JSON-RPC on the process's stdin and stdout, read and served as HTTP reads and
 * serves a body (pipeline.ts). A line is bounded by limits.maxBodyBytes and by
 * limits.maxJsonDepth: what is no valid message gets a JSON-RPC error under its
 * id when it has a readable one. The channel is one id space for requests in
 * flight, and closing stdin cancels every one of them. Until `initialize`
 * the session speaks the newest revision, and a second `initialize` is
 * refused; notifications wait until the client has sent
 * `notifications/initialized`.
 *
 * The gateway's own requests to the client (what an upstream asks on a
 * prompt's way) go out as lines among the answers, with string ids; a line
 * that is a response answers one of them, or is dropped (late, or no request
 * of the gateway's): nothing is written for it.
 *
 * A request whose `_meta` claims a protocol version is of the stateless
 * revision (2026-07-28) and served on its own, beside the session if there is
 * one; its change notifications come only through `subscriptions/listen`,
 * tagged with the subscription's id on the one channel, and end with the
 * connection (nothing of it survives a reconnect).
 */
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/client';
import { ANONYMOUS_CLIENT_ID } from '../config/policy-schema.js';
import { describeError, type Logger } from '../diagnostics/logger.js';
import { requestIdFrom } from '../diagnostics/log-context.js';
import type { ClientProfile } from '../policy/clients.js';
import { classify, type Stateless } from '../protocol/classify.js';
import { LATEST_HANDSHAKE } from '../protocol/revisions.js';
import { LineReader } from '../lib/lines.js';
import { refusalError } from '../protocol/errors.js';
import { isRequest } from '../protocol/json-rpc.js';
import { MAX_BATCH_MESSAGES } from './batches.js';
import type { Subscriber } from './delivery.js';
import { readMessages, refusalAnswer, type Inbound } from './inbound.js';
import { ALREADY_INITIALIZED, errorResponse, initialize, type Dispatcher, type Exchange } from './dispatcher.js';
import { frame, InboundPipeline, isRefusal, LISTENING, type Answer, type Channel, type SessionHooks, type StatelessCaller, type StatelessHooks } from './pipeline.js';
import type { RequestRegistry, Ticket } from './requests.js';
import type { SubscriptionSink, Subscriptions } from './subscriptions.js';
import type { Endpoint } from './endpoint.js';
import type { Session, SessionRecord, SessionTable } from './sessions.js';

/** The channel's session id, and the scope of its requests in flight (both eras': one id space). */
const SESSION_ID = 'stdio';
/** What the spans of its requests name of where they came from. */
const STDIO_ORIGIN = Object.freeze({ transport: 'pipe' as const });

/** Nothing to end on stdio: the channel outlives a subscription. */
const NO_END = (): void => {};

export interface StdioEndpointOptions {
    client: ClientProfile;
    dispatcher: Dispatcher;
    sessions: SessionTable;
    subscriptions: Subscriptions;
    /** Requests in flight: the channel is one scope (its session's and its 2026-07-28 requests share one id space). */
    requests: RequestRegistry;
    /** Whether `completions` is offered to the client (decided at start and at each initialize). */
    completions: () => boolean;
    /** limits.maxBodyBytes: the longest line taken. */
    maxLineBytes: number;
    /** limits.maxJsonDepth, read per message. */
    maxJsonDepth: () => number;
    logger: Logger;
    input?: Readable;
    output?: Writable;
}

export interface StdioEndpoint extends Endpoint {
    /** Resolves when the client closes stdin. */
    closed: Promise<void>;
}

type Reply = JSONRPCMessage | JSONRPCMessage[];

const isAnswer = (answer: Answer): answer is JSONRPCResponse => answer !== undefined;

/** One client, so draining means refusing its new requests (with an error answer) while the ones taken finish. */
export function startStdioEndpoint(options: StdioEndpointOptions): StdioEndpoint {
    const { sessions, requests, logger } = options;
    const input = options.input ?? process.stdin;
    const output = options.output ?? process.stdout;
    // A client gone mid-answer (EPIPE) ends the session through stdin; nothing to do here but not crash.
    output.on('error', (error: unknown) => logger.debug({ err: describeError(error) }, 'stdout write failed'));
    // False once stdout is gone: a request to the client then fails at once rather than waiting for an answer.
    const channel = new StdioChannel(options, (reply: Reply) => {
        if (output.destroyed || output.writableEnded) return false;
        output.write(`${JSON.stringify(reply)}\n`);
        return true;
    });

    const reader = new LineReader({
        maxBytes: options.maxLineBytes,
        overlong: 'report',
        edgeBytes: 0,
        onLine: line => {
            if (line.trim() === '') return;
            const requestId = requestIdFrom(undefined);
            channel.handle(line, { requestId }).catch((error: unknown) => logger.error({ requestId, err: describeError(error) }, 'stdio message failed'));
        },
        onOverlong: () => channel.unreadable(refusalError('body_too_large'))
    });
    // Every request of the channel, both eras', listens included, stops unanswered.
    const end = () => {
        sessions.close(SESSION_ID);
        requests.cancelScope(SESSION_ID);
    };
    const closed = new Promise<void>(resolve => {
        const ended = () => {
            reader.end();
            end();
            resolve();
        };
        input.once('end', ended);
        input.once('close', ended);
    });
    input.on('data', (chunk: Buffer) => reader.push(chunk));

    return {
        closed,
        drain: () => requests.refuseNew(),
        settled: timeoutMs => requests.settled(timeoutMs),
        close: () => {
            input.pause();
            end();
            return Promise.resolve();
        }
    };
}

/** The one client on the pipe: its session (the pipe is the session), and its 2026-07-28 requests beside it. */
class StdioChannel {
    readonly #pipeline: InboundPipeline;
    readonly #session: Session;
    readonly #peer: Subscriber;
    /** What is the channel's own in serving its messages: its session's handshake, its subscriptions' sink. */
    readonly #hooks: SessionHooks & StatelessHooks<Channel>;
    /** One client on the channel: what it may see does not depend on credentials it presents. */
    readonly #caller: StatelessCaller;
    /** Whether the client's initialize was answered; until then the session speaks the newest revision. */
    #handshakeDone = false;

    constructor(
        private readonly options: StdioEndpointOptions,
        private readonly write: (reply: Reply) => boolean
    ) {
        this.#pipeline = new InboundPipeline(options);
        this.#peer = { deliver: write };
        this.#caller = { clientId: options.client.id, cacheScope: options.client.id === ANONYMOUS_CLIENT_ID ? 'public' : 'private' };
        this.#session = options.sessions.open(this.#record(LATEST_HANDSHAKE.version), 'stdio');
        const sink: SubscriptionSink = { send: write, end: NO_END };
        const quota = { quotaKey: options.client.id };
        this.#hooks = {
            initialize: request => this.#initialize(request),
            initialized: () => this.#session.audience.attach(this.#peer),
            listen: (request, context, channel) => this.#pipeline.listen(request, context, channel, sink, quota)
        };
    }

    /** What cannot be read as a message: an error without an id. */
    unreadable(error: { code: number; message: string }): void {
        this.write({ jsonrpc: '2.0', id: null, error } as unknown as JSONRPCMessage);
    }

    /** One line is one request (a batch's messages share its id): its lines name it, HTTP upstreams receive it. */
    async handle(line: string, forwarded: Exchange['forwarded']): Promise<void> {
        const framed = frame(line, this.options.maxJsonDepth(), this.#session.record.protocolVersion, MAX_BATCH_MESSAGES);
        if (!framed.ok) return this.unreadable(framed.error);
        const inbound = readMessages(framed.value);
        const { batch, messages } = inbound;
        // The line decides the era, once, as a body does over HTTP: a lone message may claim a revision; a batch never does.
        const classified = messages.length === 0 ? undefined : classify(batch ? messages : messages[0]!, { session: this.#session.revision });
        const channel: Channel = { scope: SESSION_ID, send: this.write, forwarded, origin: STDIO_ORIGIN };
        if (classified !== undefined && 'reason' in classified) {
            if (!batch) this.#pipeline.refusedClassified(messages[0]!, classified, { clientId: this.#caller.clientId, protocolVersion: this.#session.revision.version }, channel);
            // Over stdio nothing answers a notification (over HTTP its POST gets a status, and the error with it).
            if (isRequest(messages[0]!)) this.write(refusalAnswer(classified));
            return;
        }
        const taken: Ticket[] = [];
        try {
            const reply = await (classified?.era === 'stateless' ? this.#stateless(classified, channel, taken) : this.#served(inbound, channel, taken));
            if (reply !== undefined) this.write(reply);
        } finally {
            // Done once written: a shutdown waits for the line, not only for the answer.
            for (const ticket of taken) ticket.done();
        }
    }

    /** The line's messages in the session: their answers (an array for a batch), or undefined when none is due. */
    async #served(inbound: Inbound, channel: Channel, taken: Ticket[]): Promise<Reply | undefined> {
        const served = this.#pipeline.serve(inbound, this.#session, channel, taken, this.#hooks);
        const given = served === undefined ? [] : (await served).filter(isAnswer);
        if (given.length === 0) return undefined;
        return inbound.batch ? given : given[0];
    }

    /** Served on its own, beside the session; its change notifications come through subscriptions/listen on the channel. */
    async #stateless(stateless: Stateless, channel: Channel, taken: Ticket[]): Promise<Reply | undefined> {
        const served = this.#pipeline.serveStateless(stateless, this.#caller, channel, taken, this.#hooks);
        if (served === undefined || served === LISTENING) return undefined;
        return isRefusal(served) ? refusalAnswer(served) : served;
    }

    /** One initialize per session in the 2025 lifecycle: a second is refused, as over HTTP (the channel is the session). */
    #initialize(request: JSONRPCRequest): JSONRPCResponse {
        if (this.#handshakeDone) return errorResponse(request, ALREADY_INITIALIZED);
        const initialized = initialize(request, this.options.completions());
        if ('error' in initialized) return initialized;
        this.#handshakeDone = true;
        this.#session.renegotiate(this.#record(initialized.protocolVersion, initialized.input));
        return { jsonrpc: '2.0', id: request.id, result: initialized.result };
    }

    /** The pipe is the session: its record is never sealed, and it ends with the pipe. `input`: what the client can be asked. */
    #record(protocolVersion: string, input = 0): SessionRecord {
        const now = Date.now();
        const { id } = this.options.client;
        return {
            id: SESSION_ID,
            nonce: SESSION_ID,
            clientId: id,
            quotaKey: id,
            protocolVersion,
            completions: this.options.completions(),
            input,
            createdAt: now,
            expiresAt: Number.MAX_SAFE_INTEGER,
            lastSeen: now
        };
    }
}
