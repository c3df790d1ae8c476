/**
 * The MCP endpoint's three methods, for a request already admitted (see
 * admission.ts): POST carries JSON-RPC messages (without a session only an
 * `initialize`, which opens one), GET opens the session's stream for server
 * notifications, DELETE ends the session. Sessions are keyed by
 * `Mcp-Session-Id`; another client's session is answered like one that does
 * not exist, so session ids are not confirmed to strangers.
 *
 * A body is read and served as stdio reads and serves a line (../pipeline.ts),
 * with HTTP's statuses added: a lone message that is
 * not a valid one is HTTP 400 with its JSON-RPC error (-32600, or -32602 for
 * params that are no object, 200 in a session), a batch answers each bad item
 * in its array.
 *
 * A POST of the stateless revision (2026-07-28: its `MCP-Protocol-Version`
 * header, or its `_meta`, names it) is served on its own, no session, checked
 * in the order of ../../protocol/classify.ts: `_meta` without a version 400 -32602, its mirrored
 * headers against the body 400 -32020 (HeaderMismatch), an unsupported version
 * 400 -32022, malformed `_meta` 400 -32602; then a method not served 404, a
 * notification 202.
 * `Mcp-Session-Id` on such a request is ignored (a live one too, and an unknown
 * one: it is refused only once the body is known to be of the handshake era),
 * never minted nor echoed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JSONRPCMessage, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/client';
import { ANONYMOUS_CLIENT_ID } from '../../config/policy-schema.js';
import { rejectionCode, type Reject, type RejectionReason } from '../../http-server/rejections.js';
import { NO_HEADERS, sendEmpty, sendJson } from '../../http-server/respond.js';
import { isRequest } from '../../protocol/json-rpc.js';
import { claimsStateless, classify, namesStatelessRevision, type Stateless } from '../../protocol/classify.js';
import type { MirroredHeaders } from '../../protocol/headers.js';
import type { Logger } from '../../diagnostics/logger.js';
import { requestIdOf } from '../../diagnostics/log-context.js';
import { ATTR } from '../../diagnostics/tracer.js';
import type { RateLimiter } from '../../policy/rate-limiter.js';
import { batchLimit } from '../batches.js';
import { instanceOfAskId } from '../client-requests.js';
import { ALREADY_INITIALIZED, endServerSpan, errorResponse, initialize, type CacheScope, type Dispatcher, type Exchange, type RequestContext } from '../dispatcher.js';
import { readMessages, refusalAnswer, type Inbound, type Refusal } from '../inbound.js';
import { frame, InboundPipeline, isAnswered, isRefusal, LISTENING, type Channel, type PipelineRefusal, type SessionHooks, type StatelessHooks } from '../pipeline.js';
import type { RequestRegistry, Ticket } from '../requests.js';
import type { Session, SessionRefusal, SessionTable } from '../sessions.js';
import type { Subscriptions } from '../subscriptions.js';
import { readBody } from './body.js';
import { takeTokens, type Admitted } from './admission.js';
import type { StreamCloseReason } from '../endpoint.js';
import { Reply } from './reply.js';
import { traceContextOf, type TraceContext } from '../../protocol/meta.js';
import { SseStream, type SseOptions } from './sse.js';

export interface McpEndpointOptions {
    dispatcher: Dispatcher;
    sessions: SessionTable;
    subscriptions: Subscriptions;
    /** Requests in flight: a session's in its id's scope, a 2026-07-28 POST's in its own (its response). */
    requests: RequestRegistry;
    limiter: RateLimiter;
    reject: Reject;
    maxBodyBytes: number;
    /** limits.maxJsonDepth, read per request (a reload applies it at once). */
    maxJsonDepth: () => number;
    /** sessions.maxLifetimeMs: sealed into each new session id. */
    sessionLifetimeMs: number;
    /** Whether a session opened now is offered `completions`. */
    completions: () => boolean;
    /** "public" when every caller is served the same view (no authentication), else "private": for 2026-07-28 list pages. */
    cacheScope: () => CacheScope;
    /** Each stream cut because its client stopped reading. */
    onStreamClosed?: ((reason: StreamCloseReason) => void) | undefined;
    /**
     * A 2025 client's answer to a request another replica sent it (its id names another instance). Absent: refused
     * (421), saying so; the replica that asked gives up at answerTimeoutMs. Present: taken (202) and handed over.
     */
    onForeignAnswer?: ((session: Session, response: JSONRPCResponse) => void) | undefined;
    logger: Logger;
}

/** A response in a session whose id is none the gateway gives its requests. */
const UNASKED_IN_SESSION = 'Invalid Request: this response answers no request of the gateway (its requests to a client have ids it made up)';
/** An answer to another replica's request (see onForeignAnswer). */
const ANOTHER_REPLICAS_ANSWER =
    "Misdirected: this answers a request another gateway replica sent, which only it can take; route each session's requests to one replica (session affinity) for prompts that ask the user";

/** What an initialize without a session came to: its answer or refusal (`{ error }`), and the session it opened. */
interface Opened {
    answer: JSONRPCResponse | { error: { code: number } };
    protocolVersion?: string | undefined;
    session?: string | undefined;
}

/** A body refused (answered) or whose client went away. */
const UNREAD = Symbol('unread');

export class McpEndpoint {
    readonly #pipeline: InboundPipeline;

    readonly #statelessHooks: StatelessHooks<StatelessChannel> = { listen: (request, context, channel) => this.#listen(request, context, channel) };

    constructor(private readonly options: McpEndpointOptions) {
        this.#pipeline = new InboundPipeline(options);
    }

    /** `requestId`: the HTTP request's, carried on by its upstream calls. */
    async post(req: IncomingMessage, res: ServerResponse, admitted: Admitted, requestId: string): Promise<void> {
        const statelessHeader = namesStatelessRevision(header(req, 'mcp-protocol-version'));
        // Looked up now, refused only once the body is known to be of the handshake era: a stateless body ignores it.
        const found = statelessHeader || req.headers['mcp-session-id'] === undefined ? undefined : this.#findSession(req, admitted);
        if (!this.#acceptable(req, res)) return;
        const session = typeof found === 'string' ? undefined : found;
        if (session !== undefined) this.#holdOpen(session, res);
        const text = await this.#readBodyText(req, res, session);
        if (text === UNREAD) return;
        // Without a session only a stateless revision's header names one (and none of them has batches).
        const revision = session?.record.protocolVersion ?? (statelessHeader ? header(req, 'mcp-protocol-version') : undefined);
        const framed = frame(text, this.options.maxJsonDepth(), revision, batchLimit(admitted.client.rateLimit));
        if (typeof found === 'string' && !(framed.ok && claimsStateless(framed.value))) return this.options.reject(res, found);
        // Before anything walks it: neither the message nor its id is echoed.
        if (!framed.ok) return this.options.reject(res, framed.reason, { message: framed.error.message });
        if (framed.messages > 1 && !(await this.#payBatch(framed.messages, admitted, res))) return;
        // Gone while its body was inflated or its batch paid for: its close has passed, so nothing would end what is
        // taken now (a ticket is done on its response's close); serve nothing.
        if (res.destroyed) return;
        const { value } = framed;
        const inbound = readMessages(value);
        const { batch, messages, refusals } = inbound;
        const forwarded = { requestId, trace: headerTrace(req) };
        if (!batch && refusals.length > 0) {
            // Traced where it could be read as a request (a batch's refusals are the pipeline's to trace).
            const subject = { clientId: admitted.client.id, protocolVersion: session?.record.protocolVersion };
            this.#pipeline.refusedRequest(refusals[0]!, subject, { scope: res, forwarded, origin: originOf(admitted, session) });
            return this.#refuse(res, refusals[0]!, session);
        }
        // A lone notification dropped (its params are not an object): JSON-RPC answers no notification.
        if (messages.length === 0 && refusals.length === 0) return sendEmpty(res, 202, session === undefined ? NO_HEADERS : { 'mcp-session-id': session.id });
        // The body decides the era (2026-07-28 versioning): a stateless one is served so on a live session too, its
        // Mcp-Session-Id ignored, and its headers checked against it like any other.
        const classified = classify(batch ? messages : messages[0]!, { session: session?.revision, headers: mirroredHeaders(req) });
        if ('reason' in classified) {
            const subject = { clientId: admitted.client.id, protocolVersion: session?.record.protocolVersion };
            if (!batch) this.#pipeline.refusedClassified(messages[0]!, classified, subject, { scope: res, forwarded, origin: originOf(admitted, session) });
            return this.#refused(res, classified);
        }
        if (classified.era === 'stateless') return this.#serveStateless(classified, req, res, admitted, requestId);
        if (session === undefined) return this.#open(value, messages, res, admitted, { forwarded, origin: originOf(admitted, undefined) });
        return this.#serve(session, inbound, res, forwarded, originOf(admitted, session));
    }

    /** Accept and Content-Type of a POST; false once refused. */
    #acceptable(req: IncomingMessage, res: ServerResponse): boolean {
        const accept = req.headers.accept;
        if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream')) this.options.reject(res, 'not_acceptable');
        else if (!isJsonContentType(req.headers['content-type'])) this.options.reject(res, 'unsupported_media_type');
        else return true;
        return false;
    }

    /** The body's text (bounded in size; undefined when it is no UTF-8), or UNREAD once refused (or its client gone). */
    async #readBodyText(req: IncomingMessage, res: ServerResponse, session: Session | undefined): Promise<string | undefined | typeof UNREAD> {
        const { reject } = this.options;
        const body = await readBody(req, this.options.maxBodyBytes);
        if (body.kind === 'gone') return UNREAD;
        // The session may have ended (DELETE, idle sweep, shutdown) while the body arrived: an ended one serves nothing.
        if (session !== undefined && this.options.sessions.get(session.id) !== session) reject(res, 'session_not_found');
        else if (body.kind === 'too_large') reject(res, 'body_too_large');
        else if (body.kind === 'unsupported_encoding') reject(res, 'unsupported_encoding');
        else return body.kind === 'undecodable' ? undefined : body.text;
        return UNREAD;
    }

    /** The session's stream of server notifications (list_changed); one at a time. 2026-07-28 has none: 405. */
    stream(req: IncomingMessage, res: ServerResponse, admitted: Admitted): void {
        if (this.#statelessWithoutSession(req, res)) return;
        const session = this.#sessionOf(req, res, admitted);
        if (session === null) return;
        if (!(req.headers.accept ?? '').includes('text/event-stream')) {
            return this.options.reject(res, 'not_acceptable', { message: 'Not Acceptable: Client must accept text/event-stream' });
        }
        if (session.audience.subscriber !== undefined) return this.options.reject(res, 'stream_conflict');
        this.#holdOpen(session, res);
        const stream = new SseStream(res, { 'mcp-session-id': session.id }, this.#cutWhenStalled(res, 'session', { session: session.record.nonce }));
        res.once('close', () => session.audience.detach(stream));
        session.audience.attach(stream);
    }

    /**
     * DELETE ends the session everywhere: revoked (answered once the revocation is recorded, shared or not), its
     * requests in flight here cancelled, its stream here ended.
     */
    async end(req: IncomingMessage, res: ServerResponse, admitted: Admitted): Promise<void> {
        if (this.#statelessWithoutSession(req, res)) return;
        const session = this.#sessionOf(req, res, admitted);
        if (session === null) return;
        await this.options.sessions.end(session);
        this.options.logger.debug({ requestId: requestIdOf(res), session: session.record.nonce }, 'session ended by the client');
        sendEmpty(res, 200);
    }

    /** GET and DELETE belong to sessions: a 2026-07-28 client without one gets 405, as the revision says. */
    #statelessWithoutSession(req: IncomingMessage, res: ServerResponse): boolean {
        if (req.headers['mcp-session-id'] !== undefined || !namesStatelessRevision(header(req, 'mcp-protocol-version'))) return false;
        res.setHeader('allow', 'POST');
        this.options.reject(res, 'method_not_allowed', { message: 'Method not allowed: 2026-07-28 has no sessions and no GET stream; use subscriptions/listen' });
        return true;
    }

    /** One 2026-07-28 message: checked in the revision's order, then served with a context built from the request alone. */
    async #serveStateless(stateless: Stateless, req: IncomingMessage, res: ServerResponse, admitted: Admitted, requestId: string): Promise<void> {
        const { client } = admitted;
        // An anonymous client's sealed state is bound to its address too: anonymous callers share one scope.
        const caller = { clientId: client.id, cacheScope: this.options.cacheScope(), holder: client.id === ANONYMOUS_CLIENT_ID ? admitted.quotaKey : '' };
        const reply = new Reply(res, NO_HEADERS, false, this.#cutWhenStalled(res, 'answer', { client: client.id }), true);
        const channel: StatelessChannel = {
            scope: res,
            forwarded: { requestId, headers: paramHeaders(req), trace: headerTrace(req) },
            origin: originOf(admitted, undefined),
            send: reply.send,
            res,
            admitted
        };
        const taken: Ticket[] = [];
        this.#doneWith(res, taken);
        const served = this.#pipeline.serveStateless(stateless, caller, channel, taken, this.#statelessHooks);
        if (served === LISTENING) return;
        // The revision defines no notification a client sends over HTTP (closing a stream is how it cancels).
        if (served === undefined) return sendEmpty(res, 202);
        if (isRefusal(served)) return this.#refused(res, served);
        reply.finish([await served]);
    }

    /** In flight until the response is written; a client gone before then cancels them (their upstream calls stop). */
    #doneWith(res: ServerResponse, tickets: Ticket[]): void {
        res.once('close', () => {
            for (const ticket of tickets) {
                if (!res.writableFinished) ticket.cancel();
                ticket.done();
            }
        });
    }

    /** The pipeline's refusal: a request's answer (200), or the endpoint's with its status. */
    #refused(res: ServerResponse, refused: PipelineRefusal): void {
        const { reason, id, error } = refused;
        if (isAnswered(reason)) return sendJson(res, 200, refusalAnswer(refused));
        this.options.reject(res, reason, { message: error.message, data: error.data, id });
    }

    /** The response is the subscription's stream: it opens with the acknowledgment, and the client closing it ends it. */
    #listen(request: JSONRPCRequest, context: RequestContext, channel: StatelessChannel): PipelineRefusal | undefined {
        const { res, admitted } = channel;
        const { client, quotaKey } = admitted;
        let stream: SseStream | undefined;
        const sse = this.#cutWhenStalled(res, 'subscription', { client: client.id });
        const sink = { send: (message: JSONRPCMessage) => (stream ??= new SseStream(res, {}, sse)).send(message), end: () => stream?.close() };
        const refused = this.#pipeline.listen(request, context, channel, sink, { quotaKey, credentialsOf: client.id });
        if (refused === undefined) res.once('close', () => this.options.requests.cancelScope(res));
        return refused;
    }

    /**
     * A stream whose client stops reading is cut: logged once (it names no more than its request, and the session or
     * client), and counted.
     */
    #cutWhenStalled(res: ServerResponse, stream: 'session' | 'subscription' | 'answer', fields: Record<string, string>): SseOptions {
        return {
            onStalled: backlogBytes => {
                this.options.logger.warn({ requestId: requestIdOf(res), stream, ...fields, backlogBytes }, 'stream closed: its client stopped reading');
                this.options.onStreamClosed?.('slow_consumer');
            }
        };
    }

    /** Stops serving the session here (shutdown): its id still opens on another replica, or here after a restart. */
    close(session: Session): void {
        if (this.options.sessions.close(session.id)) this.options.logger.debug({ session: session.record.nonce }, 'session closed here');
    }

    /**
     * The request's session, held here or brought in from its sealed id; null once refused (no Mcp-Session-Id: 400;
     * unknown, ended, expired or another client's: 404; no room: 503).
     */
    #sessionOf(req: IncomingMessage, res: ServerResponse, admitted: Admitted): Session | null {
        const session = req.headers['mcp-session-id'] === undefined ? 'session_required' : this.#findSession(req, admitted);
        if (typeof session !== 'string') return session;
        this.options.reject(res, session);
        return null;
    }

    /** The session its Mcp-Session-Id names (present), or why none. */
    #findSession(req: IncomingMessage, { client }: Admitted): Session | SessionRefusal {
        const id = req.headers['mcp-session-id'];
        return typeof id === 'string' ? this.options.sessions.resolve(id, client.id, Date.now()) : 'session_not_found';
    }

    /** An open response keeps its session from being idle. */
    #holdOpen(session: Session, res: ServerResponse): void {
        const { sessions } = this.options;
        sessions.touch(session);
        session.openResponses++;
        res.once('close', () => {
            session.openResponses--;
            sessions.touch(session);
        });
    }

    /**
     * A batch (only where the revision has them: without a session none does, a stateless revision has none, and
     * nothing is batched before initialize) pays for its other messages now, all or none.
     */
    #payBatch(messages: number, { client, quotaKey }: Admitted, res: ServerResponse): boolean | Promise<boolean> {
        return takeTokens(this.options.limiter, client, quotaKey, res, this.options.reject, messages - 1);
    }

    /** A lone message refused: HTTP 400, but a -32602 in a session is a 200, as the dispatcher's own -32602s are. */
    #refuse(res: ServerResponse, refusal: Refusal, session: Session | undefined): void {
        const status = refusal.reason === 'invalid_params' && session !== undefined ? 200 : undefined;
        this.options.reject(res, refusal.reason, { message: refusal.error.message, id: refusal.id, ...(status === undefined ? {} : { status }) });
    }

    /** Without a session, only an initialize is taken: it opens one (#openSession), as a SERVER span when traced. */
    async #open(value: unknown, messages: JSONRPCMessage[], res: ServerResponse, admitted: Admitted, from: Pick<Exchange, 'forwarded' | 'origin'>): Promise<void> {
        const request = messages[0];
        if (Array.isArray(value) || request === undefined || !isRequest(request) || request.method !== 'initialize') return this.options.reject(res, 'session_required');
        const span = this.options.dispatcher.serverSpan(request, { clientId: admitted.client.id }, from);
        const opened = await this.#openSession(request, res, admitted);
        span?.set({ [ATTR.protocolVersion]: opened.protocolVersion, [ATTR.sessionId]: opened.session });
        endServerSpan(span, opened.answer);
    }

    /**
     * The session an initialize opens, its answer sent; or its refusal, sent. The session lives on only if its answer
     * reached the client: one whose answer could not be written is dropped at once, so it never counts against
     * maxSessions.
     */
    async #openSession(request: JSONRPCRequest, res: ServerResponse, { client, quotaKey }: Admitted): Promise<Opened> {
        const { reject, sessions, logger } = this.options;
        const completions = this.options.completions();
        const initialized = initialize(request, completions);
        if ('error' in initialized) {
            sendJson(res, 200, initialized);
            return { answer: initialized };
        }
        const rejected = (reason: RejectionReason, detail?: { message: string }): Opened => {
            reject(res, reason, detail);
            return { answer: { error: { code: rejectionCode(reason) } } };
        };
        if (sessions.full) return rejected('too_many_sessions');
        const now = Date.now();
        const { protocolVersion, input } = initialized;
        const session = sessions.create({ clientId: client.id, quotaKey, protocolVersion, completions, input, createdAt: now, expiresAt: now + this.options.sessionLifetimeMs });
        // Before the quota is asked (shared: a round trip), so a client gone meanwhile leaves nothing behind.
        res.once('close', () => {
            if (res.writableFinished) return;
            logger.debug({ requestId: requestIdOf(res), session: session.record.nonce }, 'initialize answer not delivered; session dropped');
            // Ended, not only let go: its quota is freed on every replica.
            void sessions.end(session);
        });
        if (!(await sessions.admit(session, client.maxSessions))) {
            return rejected('client_session_limit', { message: `Too many sessions for this client (at most ${client.maxSessions}); end unused ones with DELETE` });
        }
        logger.debug({ requestId: requestIdOf(res), session: session.record.nonce }, 'session opened');
        const answer: JSONRPCResponse = { jsonrpc: '2.0', id: request.id, result: initialized.result };
        sendJson(res, 200, answer, { 'mcp-session-id': session.id });
        return { answer, protocolVersion, session: session.record.nonce };
    }

    /** A batch's refused items are answered beside the others (JSON-RPC §6), in the same array. */
    async #serve(session: Session, inbound: Inbound, res: ServerResponse, forwarded: Exchange['forwarded'], origin: Exchange['origin']): Promise<void> {
        const [first] = inbound.messages;
        if (!inbound.batch && first !== undefined && !('method' in first)) return this.#answered(session, first, res);
        if (!inbound.batch && first !== undefined && isRequest(first) && first.method === 'initialize') return this.#initializedAlready(session, first, res, { forwarded, origin });
        const headers = { 'mcp-session-id': session.id };
        const reply = new Reply(res, headers, inbound.batch, this.#cutWhenStalled(res, 'answer', { session: session.record.nonce }));
        const channel: Channel = { scope: session.id, forwarded, send: reply.send, origin };
        const taken: Ticket[] = [];
        this.#doneWith(res, taken);
        const answers = this.#pipeline.serve(inbound, session, channel, taken, SESSION_HOOKS);
        if (answers === undefined) return sendEmpty(res, 202, headers);
        reply.finish(await answers);
    }

    /** A lone initialize in a session: refused (400), a SERVER span with status ERROR as the pipeline's refusals are. */
    #initializedAlready(session: Session, request: JSONRPCRequest, res: ServerResponse, from: Pick<Exchange, 'forwarded' | 'origin'>): void {
        const subject = { clientId: session.caller.scope, protocolVersion: session.revision.version };
        endServerSpan(this.options.dispatcher.serverSpan(request, subject, from), { error: ALREADY_INITIALIZED });
        this.options.reject(res, 'already_initialized', { id: request.id });
    }

    /**
     * A lone response: the client's answer to one of the gateway's requests (202, also when it comes too late: the
     * gateway stopped waiting, and told the client so). One to another replica's request is refused saying so, unless
     * something routes it there (onForeignAnswer); one with an id the gateway never gives is a 4xx, as the transport
     * says. Its id is not echoed: it would name one of the gateway's requests, not the client's.
     */
    #answered(session: Session, response: JSONRPCResponse, res: ServerResponse): void {
        const headers = { 'mcp-session-id': session.id };
        if (session.answered(response)) return sendEmpty(res, 202, headers);
        const instance = instanceOfAskId(response.id);
        if (instance === undefined) return this.options.reject(res, 'invalid_message', { message: UNASKED_IN_SESSION });
        if (instance === this.options.sessions.instance) return sendEmpty(res, 202, headers);
        const { onForeignAnswer } = this.options;
        if (onForeignAnswer === undefined) return this.options.reject(res, 'invalid_message', { status: 421, message: ANOTHER_REPLICAS_ANSWER });
        onForeignAnswer(session, response);
        sendEmpty(res, 202, headers);
    }
}

/** A 2026-07-28 POST: its response and who sent it, for a subscription's stream. */
interface StatelessChannel extends Channel {
    res: ServerResponse;
    admitted: Admitted;
}

/** A session is open here: its initialize was the POST that opened it (a lone one again is refused above, with a 400). */
const SESSION_HOOKS: SessionHooks = { initialize: request => errorResponse(request, ALREADY_INITIALIZED) };

/** Where an HTTP request came from, for its span: one object, its address worked out only if a span asks. */
function originOf(admitted: Admitted, session: Session | undefined): Exchange['origin'] {
    return { transport: 'tcp', address: admitted.address, session: session?.record.nonce };
}

/** Most `Mcp-Param-*` headers passed on from one request (Node bounds their total size already). */
const MAX_PARAM_HEADERS = 32;

/** The W3C trace context of the HTTP request (read once per POST: every message of its body carries it, unless its own `_meta` has one). */
function headerTrace(req: IncomingMessage): TraceContext | undefined {
    const { traceparent, tracestate, baggage } = req.headers;
    return traceparent === undefined ? undefined : traceContextOf(traceparent, tracestate, baggage);
}

/**
 * The request's `Mcp-Param-*` headers: the gateway recognises none (they mirror tool arguments), and the revision
 * has intermediaries forward such headers as they are, to the upstream that serves the request.
 */
function paramHeaders(req: IncomingMessage): Record<string, string> | undefined {
    let found: Record<string, string> | undefined;
    let count = 0;
    for (const [name, value] of Object.entries(req.headers)) {
        if (!name.startsWith('mcp-param-') || typeof value !== 'string' || count++ >= MAX_PARAM_HEADERS) continue;
        (found ??= {})[name] = value;
    }
    return found;
}

/** What the request mirrors of its body in headers (2026-07-28). */
function mirroredHeaders(req: IncomingMessage): MirroredHeaders {
    return { protocolVersion: header(req, 'mcp-protocol-version'), method: header(req, 'mcp-method'), name: header(req, 'mcp-name') };
}

function header(req: IncomingMessage, name: string): string | undefined {
    const value = req.headers[name];
    return typeof value === 'string' ? value : undefined;
}

/** `application/json`, in any case, with no charset but UTF-8 (the only one JSON has). */
export function isJsonContentType(header: string | undefined): boolean {
    if (header === 'application/json') return true;
    if (header === undefined) return false;
    const [type = '', ...parameters] = header.split(';');
    if (type.trim().toLowerCase() !== 'application/json') return false;
    return parameters.every(parameter => {
        const [name = '', value = ''] = parameter.split('=');
        return name.trim().toLowerCase() !== 'charset' || /^"?utf-8"?$/i.test(value.trim());
    });
}
