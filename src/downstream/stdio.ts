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
 * A request whose `_meta` claims a protocol version is of the stateless
 * revision (2026-07-28) and served on its own, beside the session if there is
 * one; its change notifications come only through `subscriptions/listen`,
 * tagged with the subscription's id on the one channel, and end with the
 * connection (nothing of it survives a reconnect).
 */
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/client';
import { ANONYMOUS_CLIENT_ID } from '../config/policy-schema.js';
import { describeError, type Logger } from '../diagnostics/logger.js';
import { inRequest, requestIdFrom } from '../diagnostics/log-context.js';
import type { ClientProfile } from '../policy/clients.js';
import { classify, type Stateless } from '../protocol/classify.js';
import { LATEST_HANDSHAKE } from '../protocol/revisions.js';
import { LineReader } from '../lib/lines.js';
import { refusalError } from '../protocol/errors.js';
import { isRequest } from '../protocol/json-rpc.js';
import { MAX_BATCH_MESSAGES } from './batches.js';
import type { Subscriber } from './delivery.js';
import { readMessages, refusalAnswer } from './inbound.js';
import { ALREADY_INITIALIZED, errorResponse, initialize, type Dispatcher, type Exchange } from './dispatcher.js';
import { frame, InboundPipeline, isRefusal, refusalMessage, type Channel, type StatelessCaller } from './pipeline.js';
import type { RequestRegistry, Ticket } from './requests.js';
import type { Subscriptions } from './subscriptions.js';
import type { Endpoint } from './endpoint.js';
import type { Session, SessionRecord, SessionTable } from './sessions.js';

/** The channel's session id, and the scope of its requests in flight (both eras': one id space). */
const SESSION_ID = 'stdio';

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

/** One client, so draining means refusing its new requests (with an error answer) while the ones taken finish. */
export function startStdioEndpoint(options: StdioEndpointOptions): StdioEndpoint {
    const { sessions, requests, logger } = options;
    const input = options.input ?? process.stdin;
    const output = options.output ?? process.stdout;
    // A client gone mid-answer (EPIPE) ends the session through stdin; nothing to do here but not crash.
    output.on('error', (error: unknown) => logger.debug({ err: describeError(error) }, 'stdout write failed'));
    const channel = new StdioChannel(options, (reply: Reply) => void output.write(`${JSON.stringify(reply)}\n`));

    const reader = new LineReader({
        maxBytes: options.maxLineBytes,
        overlong: 'report',
        edgeBytes: 0,
        onLine: line => {
            if (line.trim() === '') return;
            const requestId = requestIdFrom(undefined);
            inRequest(requestId, () => channel.handle(line, { requestId })).catch((error: unknown) => logger.error({ err: describeError(error) }, 'stdio message failed'));
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
    /** One client on the channel: what it may see does not depend on credentials it presents. */
    readonly #caller: StatelessCaller;
    /** Whether the client's initialize was answered; until then the session speaks the newest revision. */
    #handshakeDone = false;

    constructor(
        private readonly options: StdioEndpointOptions,
        private readonly write: (reply: Reply) => void
    ) {
        this.#pipeline = new InboundPipeline(options);
        this.#peer = { deliver: write };
        this.#caller = { clientId: options.client.id, cacheScope: options.client.id === ANONYMOUS_CLIENT_ID ? 'public' : 'private' };
        this.#session = options.sessions.open(this.#record(LATEST_HANDSHAKE.version), 'stdio');
    }

    /** What cannot be read as a message: an error without an id. */
    unreadable(error: { code: number; message: string }): void {
        this.write({ jsonrpc: '2.0', id: null, error } as unknown as JSONRPCMessage);
    }

    /** One line is one request (a batch's messages share its id): its lines name it, HTTP upstreams receive it. */
    async handle(line: string, forwarded: Exchange['forwarded']): Promise<void> {
        const framed = frame(line, this.options.maxJsonDepth(), this.#session.record.protocolVersion, MAX_BATCH_MESSAGES);
        if (!framed.ok) return this.unreadable(framed.error);
        const { batch, messages, refusals } = readMessages(framed.value);
        const channel: Channel = { scope: SESSION_ID, notify: this.write, forwarded };
        const taken: Ticket[] = [];
        // The line decides the era, once, as a body does over HTTP: a lone message may claim a revision; a batch never does.
        const classified = messages.length === 0 ? undefined : classify(batch ? messages : messages[0]!, { session: this.#session.revision });
        if (classified !== undefined && 'reason' in classified) {
            // Over stdio nothing answers a notification (over HTTP its POST gets a status, and the error with it).
            if (isRequest(messages[0]!)) this.write(refusalMessage(classified));
            return;
        }
        const stateless = classified?.era === 'stateless' ? classified : undefined;
        const answers = messages.map(message => this.#take(message, stateless, channel, taken));
        try {
            const given = [...refusals.map(refusalAnswer), ...(await Promise.all(answers)).filter(reply => reply !== undefined)];
            if (given.length > 0) this.write(batch ? given : given[0]!);
        } finally {
            // Done once written: a shutdown waits for the line, not only for the answer.
            for (const ticket of taken) ticket.done();
        }
    }

    async #take(message: JSONRPCMessage, stateless: Stateless | undefined, channel: Channel, taken: Ticket[]): Promise<JSONRPCMessage | undefined> {
        // A response: the gateway sends clients no requests, so nothing awaits one.
        if (!('method' in message)) return undefined;
        if (!('id' in message)) return this.#notification(message, channel);
        if (stateless !== undefined) return this.#stateless(message, stateless, channel, taken);
        if (message.method === 'initialize') return this.#initialize(message, taken);
        return this.#pipeline.answer(message, this.#session, channel, taken);
    }

    #notification(notification: JSONRPCNotification, channel: Channel): undefined {
        if (notification.method === 'notifications/initialized') this.#session.audience.attach(this.#peer);
        else this.#pipeline.notification(notification, channel);
        return undefined;
    }

    /** Served on its own, beside the session; its change notifications come through subscriptions/listen on the channel. */
    async #stateless(request: JSONRPCRequest, stateless: Stateless, channel: Channel, taken: Ticket[]): Promise<JSONRPCMessage | undefined> {
        const context = this.#pipeline.statelessContext(stateless, this.#caller);
        if (isRefusal(context)) return refusalMessage(context);
        if (request.method !== 'subscriptions/listen') return this.#pipeline.answer(request, context, channel, taken);
        const refused = this.#pipeline.listen(request, context, channel, { send: this.write, end: NO_END }, { quotaKey: this.options.client.id });
        return refused === undefined ? undefined : refusalMessage(refused);
    }

    /** One initialize per session in the 2025 lifecycle: a second is refused, as over HTTP (the channel is the session). */
    #initialize(request: JSONRPCRequest, taken: Ticket[]): JSONRPCMessage {
        const ticket = this.#pipeline.begin(request, SESSION_ID, 'call');
        if (isRefusal(ticket)) return refusalMessage(ticket);
        taken.push(ticket);
        if (this.#handshakeDone) return errorResponse(request, ALREADY_INITIALIZED);
        const initialized = initialize(request, this.options.completions());
        if ('error' in initialized) return initialized;
        this.#handshakeDone = true;
        this.#session.renegotiate(this.#record(initialized.protocolVersion));
        return { jsonrpc: '2.0', id: request.id, result: initialized.result };
    }

    /** The pipe is the session: its record is never sealed, and it ends with the pipe. */
    #record(protocolVersion: string): SessionRecord {
        const now = Date.now();
        const { id } = this.options.client;
        return {
            id: SESSION_ID,
            nonce: SESSION_ID,
            clientId: id,
            quotaKey: id,
            protocolVersion,
            completions: this.options.completions(),
            createdAt: now,
            expiresAt: Number.MAX_SAFE_INTEGER,
            lastSeen: now
        };
    }
}
