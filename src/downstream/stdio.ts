/**
 * The downstream side over stdio: one client, one session, newline-delimited
 * JSON-RPC on the process's stdin and stdout, served by the same dispatcher as
 * HTTP. A line is bounded by limits.maxBodyBytes and by limits.maxJsonDepth,
 * and read as HTTP reads a body (inbound.ts): what is no valid message gets a
 * JSON-RPC error under its id when it has a readable one. Until `initialize`
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
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/client';
import { ANONYMOUS_CLIENT_ID } from '../config/policy-schema.js';
import { readJson } from '../lib/json-text.js';
import { describeError, type Logger } from '../diagnostics/logger.js';
import { inRequest, requestIdFrom } from '../diagnostics/log-context.js';
import type { ClientProfile } from '../policy/clients.js';
import { LineReader } from '../upstream/lines.js';
import { judgeBatch, MAX_BATCH_MESSAGES } from './batches.js';
import type { Subscriber } from './delivery.js';
import { readMessages, refusalAnswer } from './inbound.js';
import { errorResponse, initialize, invalidParams, type Dispatcher, type Exchange, type RequestContext } from './dispatcher.js';
import { claimedVersion, claimsVersion, isModernVersion, modernMetaOf, unsupportedVersionError } from './era.js';
import { revisionOf } from './revisions.js';
import { honouredFilter, type Subscriptions } from './subscriptions.js';
import type { Endpoint } from './endpoint.js';
import { BEGIN_REFUSALS, Ticket, type RequestKind, type RequestRegistry } from './requests.js';
import type { SessionRecord, SessionTable } from './sessions.js';
import { LATEST_PROTOCOL_VERSION } from './versions.js';

const SESSION_ID = 'stdio';

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
    const { client, dispatcher, sessions, requests, logger } = options;
    const input = options.input ?? process.stdin;
    const output = options.output ?? process.stdout;
    // A client gone mid-answer (EPIPE) ends the session through stdin; nothing to do here but not crash.
    output.on('error', (error: unknown) => logger.debug({ err: describeError(error) }, 'stdout write failed'));
    const write = (reply: Reply) => void output.write(`${JSON.stringify(reply)}\n`);
    const peer: Subscriber = { deliver: write };

    // The pipe is the session: its record is never sealed, and it ends with the pipe.
    const recordFor = (protocolVersion: string): SessionRecord => {
        const now = Date.now();
        return {
            id: SESSION_ID,
            nonce: SESSION_ID,
            clientId: client.id,
            quotaKey: client.id,
            protocolVersion,
            completions: options.completions(),
            createdAt: now,
            expiresAt: Number.MAX_SAFE_INTEGER,
            lastSeen: now
        };
    };
    const session = sessions.open(recordFor(LATEST_PROTOCOL_VERSION), 'stdio');

    const unreadable = (code: number, message: string) => write({ jsonrpc: '2.0', id: null, error: { code, message } } as unknown as JSONRPCMessage);

    /** Taken, or refused with its answer (its id in use on the channel, or the gateway stopping). */
    function begin(request: JSONRPCRequest, kind: RequestKind): Ticket | JSONRPCMessage {
        const ticket = requests.begin(SESSION_ID, request.id, kind);
        return typeof ticket === 'string' ? errorResponse(request, BEGIN_REFUSALS[ticket]) : ticket;
    }

    /** Answered by the dispatcher; its ticket is done once the line holding the answer is written. */
    async function call(request: JSONRPCRequest, context: RequestContext, forwarded: Exchange['forwarded'], taken: Ticket[]): Promise<JSONRPCMessage | undefined> {
        const ticket = begin(request, 'call');
        if (!(ticket instanceof Ticket)) return ticket;
        taken.push(ticket);
        return dispatcher.answer(request, { context, signal: ticket.signal, notify: write, forwarded });
    }

    function modernContext(protocolVersion: string): RequestContext {
        // One client on the channel: what it may see does not depend on credentials it presents.
        const cacheScope = client.id === ANONYMOUS_CLIENT_ID ? 'public' : 'private';
        return { caller: sessions.callerFor(client.id), revision: revisionOf(protocolVersion), completions: options.completions(), cacheScope };
    }

    async function answerModern(request: JSONRPCRequest, forwarded: Exchange['forwarded'], taken: Ticket[]): Promise<JSONRPCMessage | undefined> {
        const protocolVersion = claimedVersion(request.params);
        if (protocolVersion !== undefined && !isModernVersion(protocolVersion)) return errorResponse(request, unsupportedVersionError(protocolVersion, 'body'));
        if (protocolVersion === undefined || modernMetaOf(request.params) === undefined) {
            const { code, message } = invalidParams(request.method);
            return errorResponse(request, { code, message });
        }
        const context = modernContext(protocolVersion);
        if (request.method === 'subscriptions/listen') return listen(request, context);
        return call(request, context, forwarded, taken);
    }

    /** Acknowledged on the channel; no answer until the gateway ends it (shutdown). */
    function listen(request: JSONRPCRequest, context: RequestContext): JSONRPCMessage | undefined {
        const filter = honouredFilter(request.params);
        if (filter === undefined) {
            const { code, message } = invalidParams(request.method);
            return errorResponse(request, { code, message });
        }
        const ticket = begin(request, 'listen');
        if (!(ticket instanceof Ticket)) return ticket;
        const subscription = options.subscriptions.open(request.id, context.caller.scope, client.id, filter, { send: write, end: () => ticket.done() });
        if (typeof subscription === 'string') {
            ticket.done();
            return errorResponse(request, { code: -32000, message: 'Too many subscriptions' });
        }
        // Cancelled by the client (notifications/cancelled) or with the channel: nothing more is sent.
        ticket.signal.addEventListener('abort', () => {
            subscription.cancel();
            ticket.done();
        });
        return undefined;
    }

    /** Whether the client's initialize was answered; until then the session speaks the newest revision. */
    let handshakeDone = false;

    async function answer(request: JSONRPCRequest, forwarded: Exchange['forwarded'], taken: Ticket[]): Promise<JSONRPCMessage | undefined> {
        if (request.method !== 'initialize' && claimsVersion(request.params)) return answerModern(request, forwarded, taken);
        if (request.method !== 'initialize') return call(request, session, forwarded, taken);
        const ticket = begin(request, 'call');
        if (!(ticket instanceof Ticket)) return ticket;
        taken.push(ticket);
        // One initialize per session in the 2025 lifecycle: a second is refused, as over HTTP (the channel is the session).
        if (handshakeDone) return errorResponse(request, { code: -32600, message: 'Invalid Request: Server already initialized' });
        const initialized = initialize(request.params, options.completions());
        if (initialized === undefined) {
            const { code, message } = invalidParams('initialize');
            return errorResponse(request, { code, message });
        }
        handshakeDone = true;
        session.renegotiate(recordFor(initialized.protocolVersion));
        return { jsonrpc: '2.0', id: request.id, result: initialized.result };
    }

    /** One line is one request (a batch's messages share its id): its lines name it, HTTP upstreams receive it. */
    async function handle(line: string, forwarded: Exchange['forwarded']): Promise<void> {
        const read = readJson(line, options.maxJsonDepth());
        if (!read.ok) return unreadable(read.error.code, read.error.message);
        const verdict = judgeBatch(read.value, session.record.protocolVersion, MAX_BATCH_MESSAGES);
        if (!verdict.ok) return unreadable(-32600, verdict.message);
        const { batch, messages, refusals } = readMessages(read.value);
        const answers: Promise<JSONRPCMessage | undefined>[] = [];
        const taken: Ticket[] = [];
        for (const message of messages) {
            if ('method' in message && 'id' in message) answers.push(answer(message, forwarded, taken));
            else if ('method' in message && message.method === 'notifications/initialized') session.audience.attach(peer);
            else if ('method' in message) requests.cancelNamed(message, SESSION_ID);
        }
        try {
            const given = [...refusals.map(refusalAnswer), ...(await Promise.all(answers)).filter(reply => reply !== undefined)];
            if (given.length > 0) write(batch ? given : given[0]!);
        } finally {
            for (const ticket of taken) ticket.done();
        }
    }

    const reader = new LineReader({
        maxBytes: options.maxLineBytes,
        overlong: 'report',
        edgeBytes: 0,
        onLine: line => {
            if (line.trim() === '') return;
            const requestId = requestIdFrom(undefined);
            inRequest(requestId, () => handle(line, { requestId })).catch((error: unknown) => logger.error({ err: describeError(error) }, 'stdio message failed'));
        },
        onOverlong: () => unreadable(-32600, 'Request body too large')
    });
    const closed = new Promise<void>(resolve => {
        const end = () => {
            reader.end();
            // Every request of the channel, both eras', listens included, stops unanswered.
            sessions.close(SESSION_ID);
            requests.cancelScope(SESSION_ID);
            resolve();
        };
        input.once('end', end);
        input.once('close', end);
    });
    input.on('data', (chunk: Buffer) => reader.push(chunk));

    return {
        closed,
        drain: () => requests.refuseNew(),
        settled: timeoutMs => requests.settled(timeoutMs),
        close: () => {
            input.pause();
            sessions.close(SESSION_ID);
            requests.cancelScope(SESSION_ID);
            return Promise.resolve();
        }
    };
}
