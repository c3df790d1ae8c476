/**
 * What both transports do with a client's text once they have bounded its size:
 * framing (`frame`: JSON, depth, the revision's batch rule), the envelope of
 * each message (inbound.ts), the era and the checks of a 2026-07-28 request
 * (../protocol/classify.ts, which the transports call) and its context,
 * `subscriptions/listen`, notifications, and the one message loop (`serve`
 * for a session's messages, `serveStateless` for a 2026-07-28 one) that serves
 * requests through the one registry of requests in flight (requests.ts) and the
 * dispatcher. The same message gets the same JSON-RPC outcome on both; a
 * transport keeps only what is its own (hooks: HTTP its headers, statuses,
 * streams, session lookup, `initialize` opening a session; stdio its lines,
 * writes, EOF, its channel's session and its handshake).
 */
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/client';
import { ATTR } from '../diagnostics/tracer.js';
import { NOT_JSON, readJson } from '../protocol/json-text.js';
import { judgeBatch } from '../protocol/batches.js';
import type { ClassifyRefusal, Stateless } from '../protocol/classify.js';
import { refusal, refusalError, type Refusal } from '../protocol/errors.js';
import { isRequest } from '../protocol/json-rpc.js';
import { claimedVersion } from '../protocol/meta.js';
import { revisionOf } from '../protocol/revisions.js';
import { endServerSpan, errorResponse, type CacheScope, type Dispatcher, type Exchange, type RequestContext, type SpanSubject } from './dispatcher.js';
import { refusalAnswer, type Inbound, type Refusal as InboundRefusal } from './inbound.js';
import { Ticket, type RequestRegistry, type RequestScope } from './requests.js';
import type { SessionTable } from './sessions.js';
import { honouredFilter, type SubscriptionSink, type Subscriptions } from './subscriptions.js';

/** Refusals that are a request's answer like any other (HTTP 200), not the endpoint's. */
export type AnsweredReason = 'invalid_filter' | 'duplicate_id';

/**
 * Why a message is refused before it is served, named as the HTTP side counts it (it adds the status): the same
 * JSON-RPC error on both transports.
 */
export type EndpointReason =
    | 'invalid_message'
    | 'invalid_request_meta'
    | 'header_mismatch'
    | 'unsupported_protocol_version'
    | 'unknown_method'
    | 'too_many_subscriptions'
    | 'client_subscription_limit'
    | 'shutting_down';

export type PipelineRefusalReason = AnsweredReason | EndpointReason;

export function isAnswered(reason: PipelineRefusalReason): reason is AnsweredReason {
    return reason === 'invalid_filter' || reason === 'duplicate_id';
}

export type PipelineRefusal = Refusal<PipelineRefusalReason>;

/** What a body or line holds, parsed, bounded and its batch allowed; or why not (answered without an id). */
export type Framed = { ok: true; value: unknown; messages: number } | { ok: false; reason: 'parse_error' | 'too_deep' | 'batch_refused'; error: { code: number; message: string } };

/**
 * The first rungs, after the transport's own size bound: JSON (nesting bounded, a byte order mark allowed), then a
 * batch only where `revision` has them, of at most `maxBatch` messages. `text` undefined: no UTF-8 (HTTP).
 */
export function frame(text: string | undefined, maxDepth: number, revision: string | undefined, maxBatch: number): Framed {
    const read = text === undefined ? NOT_JSON : readJson(text, maxDepth);
    if (!read.ok) return read;
    const verdict = judgeBatch(read.value, revision, maxBatch);
    if (!verdict.ok) return { ok: false, reason: 'batch_refused', error: refusalError('batch_refused', { message: verdict.message }) };
    return { ok: true, value: read.value, messages: verdict.messages };
}

/** Who sends a request, as its transport established it; and where what concerns it goes. */
export interface Channel {
    /** The id space its requests are unique in (requests.ts). */
    scope: RequestScope;
    /** Where what concerns a request goes before its answer (progress, the gateway's requests to a 2025 client); absent where nothing can go. */
    send?: Exchange['send'];
    forwarded?: Exchange['forwarded'];
    origin?: Exchange['origin'];
}

/** A 2025 session as the pipeline serves it: responses from its client may answer the gateway's requests to it. */
export interface SessionContext extends RequestContext {
    /** Whether `response` answered a request of the gateway's that is out (sessions.ts); absent: none ever is. */
    answered?(response: JSONRPCResponse): boolean;
}

/** Who a 2026-07-28 request is served as: it has no session, so the transport says. */
export interface StatelessCaller {
    clientId: string;
    cacheScope: CacheScope;
    /** What a 2026-07-28 client's sealed state is bound to besides its scope: the anonymous client's address over HTTP; '' when absent. */
    holder?: string | undefined;
}

/** A message's answer; undefined when none is due (cancelled, or a listen whose stream is its answer). */
export type Answer = JSONRPCResponse | undefined;

/** What is the transport's own in serving a session's messages. */
export interface SessionHooks {
    /** A lone `initialize` (a batch's is refused), its ticket taken: its answer (stdio renegotiates its session). */
    initialize(request: JSONRPCRequest): JSONRPCResponse;
    /** `notifications/initialized`: the session's notifications may flow to the channel (absent: nothing to do). */
    initialized?(): void;
}

/** What is the transport's own in serving a 2026-07-28 message: where a subscription's notifications go. */
export interface StatelessHooks<C extends Channel> {
    /** `subscriptions/listen`, its context built: opened on the transport's sink (pipeline `listen`), or why not. */
    listen(request: JSONRPCRequest, context: RequestContext, channel: C): PipelineRefusal | undefined;
    initialized?(): void;
}

/** A `subscriptions/listen` opened: the transport's sink answers it (HTTP: the response is its stream). */
export const LISTENING = Symbol('listening');

export interface PipelineOptions {
    dispatcher: Dispatcher;
    requests: RequestRegistry;
    subscriptions: Subscriptions;
    sessions: SessionTable;
    /** Whether `completions` is offered (read per request: a reload applies it at once). */
    completions: () => boolean;
}

export class InboundPipeline {
    constructor(private readonly options: PipelineOptions) {}

    /**
     * The context to serve a 2026-07-28 message with (classified: its checks passed), built from the request alone; or
     * why not: a method not served. A notification is taken (nothing is served for it).
     */
    statelessContext({ message, revision }: Stateless, caller: StatelessCaller): RequestContext | PipelineRefusal {
        const context: RequestContext = {
            caller: this.options.sessions.callerFor(caller.clientId),
            revision,
            completions: this.options.completions(),
            cacheScope: caller.cacheScope,
            holder: caller.holder
        };
        if (!('id' in message)) return context;
        if (message.method === 'subscriptions/listen' ? revision.subscriptionsListen : this.options.dispatcher.serves(message.method, context)) return context;
        return refusal('unknown_method', message.id);
    }

    /**
     * A body's messages in a session, taken in order (a `notifications/cancelled` reaches the requests before it, not
     * those after): requests begin and are answered, notifications are taken, responses answer the gateway's requests
     * to the client (one that answers none is dropped: late, or not the gateway's). The answers to write, the refused
     * items' first (JSON-RPC §6: a batch answers each); undefined when none is due (no request, no refusal). Each
     * request taken is pushed on `taken`: the transport calls `done` once its answer is written.
     */
    serve(inbound: Inbound, session: SessionContext, channel: Channel, taken: Ticket[], hooks: SessionHooks): Promise<Answer[]> | undefined {
        const { messages, refusals } = inbound;
        let answers: Promise<Answer>[] | undefined;
        for (const message of messages) {
            if (isRequest(message)) {
                (answers ??= []).push(
                    message.method === 'initialize' ? Promise.resolve(this.#initialize(message, session, channel, taken, hooks)) : this.answer(message, session, channel, taken)
                );
            } else if ('method' in message) this.notification(message, channel, hooks);
            else session.answered?.(message);
        }
        for (const refused of refusals) this.refusedRequest(refused, session, channel);
        if (answers === undefined && refusals.length === 0) return undefined;
        return collect(answers ?? [], refusals);
    }

    /**
     * A 2026-07-28 message (classified: its checks passed), served on its own with a context built from it alone: a
     * request's answer, a notification taken (undefined), a listen opened (LISTENING), or why not (nothing was sent).
     */
    serveStateless<C extends Channel>(
        stateless: Stateless,
        caller: StatelessCaller,
        channel: C,
        taken: Ticket[],
        hooks: StatelessHooks<C>
    ): Promise<Answer> | PipelineRefusal | typeof LISTENING | undefined {
        const context = this.statelessContext(stateless, caller);
        const { message } = stateless;
        if (isRefusal(context)) {
            if (isRequest(message)) this.#traceRefusal(message, context.error, { clientId: caller.clientId, protocolVersion: stateless.revision.version }, channel);
            return context;
        }
        if (!isRequest(message)) return this.notification(message, channel, hooks);
        if (message.method === 'subscriptions/listen') return hooks.listen(message, context, channel) ?? LISTENING;
        return this.answer(message, context, channel, taken);
    }

    /**
     * A notification of the channel's client: `notifications/initialized` is the transport's (`hooks`), and
     * `notifications/cancelled` stops the request it names in the channel's scope.
     */
    notification(notification: JSONRPCNotification, channel: Channel, hooks?: { initialized?(): void }): undefined {
        if (notification.method === 'notifications/initialized' && hooks?.initialized !== undefined) hooks.initialized();
        else this.options.requests.cancelNamed(notification, channel.scope);
        return undefined;
    }

    /**
     * A message refused as it was read (its params no object) that could be read as a request all the same: traced
     * like one served (a SERVER span, status ERROR), so operators see refusals. Others (no method, no id) are not.
     */
    refusedRequest(refused: InboundRefusal, subject: SpanSubject | RequestContext, channel: Channel): void {
        if (refused.method === undefined || refused.id === null) return;
        this.#traceRefusal({ jsonrpc: '2.0', id: refused.id, method: refused.method }, refused.error, subject, channel);
    }

    /**
     * A lone message the transport's classify refused (protocol/classify.ts: its `_meta`, its headers against its
     * body, its version) that is a request: traced as refusedRequest traces one, under the revision it claims if the
     * gateway knows it (an unknown claim is a client's payload, never an attribute).
     */
    refusedClassified(message: JSONRPCMessage, refused: ClassifyRefusal, subject: SpanSubject, channel: Channel): void {
        if (!isRequest(message)) return;
        const claimed = revisionOf(claimedVersion(message.params) ?? '')?.version;
        this.#traceRefusal(message, refused.error, claimed === undefined ? subject : { ...subject, protocolVersion: claimed }, channel);
    }

    /** A request refused before it was served, as a SERVER span with status ERROR (nothing with tracing off). */
    #traceRefusal(request: JSONRPCRequest, error: PipelineRefusal['error'], subject: SpanSubject | RequestContext, channel: Channel): void {
        endServerSpan(this.options.dispatcher.serverSpan(request, subject, channel), { error });
    }

    /**
     * An initialize is a request in flight like any other (its id taken in the scope, its SERVER span); what it does is
     * the transport's.
     */
    #initialize(request: JSONRPCRequest, session: SessionContext, channel: Channel, taken: Ticket[], hooks: SessionHooks): JSONRPCResponse {
        const span = this.options.dispatcher.serverSpan(request, session, channel);
        const ticket = this.#begin(request, channel.scope, 'call');
        const response = ticket instanceof Ticket ? (taken.push(ticket), hooks.initialize(request)) : errorResponse(request, ticket.error);
        // The revision it settled on, not the one the session spoke before.
        if (span !== undefined && 'result' in response) span.set({ [ATTR.protocolVersion]: (response.result as { protocolVersion?: string }).protocolVersion });
        endServerSpan(span, response);
        return response;
    }

    /**
     * Serves a request: taken in the channel's scope (refused if its id is in use there, or the gateway is stopping),
     * answered by the dispatcher. Its ticket is pushed on `taken`: the transport calls `done` once the answer is
     * written. Undefined when no answer is due (cancelled).
     */
    answer(request: JSONRPCRequest, context: RequestContext, channel: Channel, taken: Ticket[]): Promise<JSONRPCResponse | undefined> {
        const ticket = this.#begin(request, channel.scope, 'call');
        if (!(ticket instanceof Ticket)) {
            this.#traceRefusal(request, ticket.error, context, channel);
            return Promise.resolve(errorResponse(request, ticket.error));
        }
        taken.push(ticket);
        return this.options.dispatcher.answer(request, { context, ticket, send: channel.send, forwarded: channel.forwarded, origin: channel.origin });
    }

    /**
     * `subscriptions/listen`: acknowledged on `sink` and open until either side ends it (the gateway: shutdown, with
     * its answer; the client: `notifications/cancelled` on stdio, its stream closed over HTTP, the channel gone), or
     * why not (nothing was sent). Its SERVER span covers the opening alone (opened, or refused: status ERROR): a span
     * is exported only once it ends, and a subscription may stay open for days; what it delivers has spans of its own
     * (PRODUCER, linked to the upstream's notification).
     */
    listen(
        request: JSONRPCRequest,
        context: RequestContext,
        channel: Channel,
        sink: SubscriptionSink,
        quota: { quotaKey: string; credentialsOf?: string }
    ): PipelineRefusal | undefined {
        const span = this.options.dispatcher.serverSpan(request, context, channel);
        const refused = this.#open(request, context, channel, sink, quota);
        endServerSpan(span, refused ?? OPENED);
        return refused;
    }

    #open(
        request: JSONRPCRequest,
        context: RequestContext,
        channel: Channel,
        sink: SubscriptionSink,
        quota: { quotaKey: string; credentialsOf?: string }
    ): PipelineRefusal | undefined {
        const filter = honouredFilter(request.params);
        if (filter === undefined) return refusal('invalid_filter', request.id);
        const ticket = this.#begin(request, channel.scope, 'listen');
        if (!(ticket instanceof Ticket)) return ticket;
        const ended: SubscriptionSink = {
            send: message => sink.send(message),
            end: () => {
                sink.end();
                ticket.done();
            }
        };
        const subscription = this.options.subscriptions.open(request.id, context.caller.scope, quota.quotaKey, filter, ended, quota.credentialsOf);
        if (typeof subscription === 'string') {
            ticket.done();
            return refusal(subscription, request.id);
        }
        ticket.addEventListener('abort', () => {
            subscription.cancel();
            ticket.done();
        });
        return undefined;
    }

    #begin(request: JSONRPCRequest, scope: RequestScope, kind: 'call' | 'listen'): Ticket | PipelineRefusal {
        const ticket = this.options.requests.begin(scope, request.id, kind);
        return ticket instanceof Ticket ? ticket : refusal(ticket, request.id);
    }
}

/** A subscription opened: its span's outcome (no error). */
const OPENED = Object.freeze({});

/** The refused items' answers, then each request's in order. */
function collect(answers: readonly Promise<Answer>[], refusals: Inbound['refusals']): Promise<Answer[]> {
    // The common body, one request: no Promise.all and no async frame around it.
    return answers.length === 1 && refusals.length === 0 ? answers[0]!.then(alone) : collectAll(answers, refusals);
}

function alone(answer: Answer): Answer[] {
    return [answer];
}

async function collectAll(answers: readonly Promise<Answer>[], refusals: Inbound['refusals']): Promise<Answer[]> {
    const served = await Promise.all(answers);
    return refusals.length === 0 ? served : [...(refusals.map(refusalAnswer) as JSONRPCResponse[]), ...served];
}

export function isRefusal(value: object): value is PipelineRefusal {
    return 'reason' in value && 'error' in value;
}
