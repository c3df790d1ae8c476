/**
 * Catalog changes delivered to clients. Whoever is to hear of changes to the
 * list it sees (a 2025-era session; later a subscriptions/listen stream) is an
 * Audience, with the scope that decides what it sees and the fingerprint of
 * the list it was last told about. A coalesced change notifies only the
 * audiences whose fingerprint changed, once per burst. An audience reaches its
 * client through a Subscriber (a session's GET stream, the stdio peer): one
 * without a subscriber at the moment keeps the notification pending and gets
 * it when a subscriber attaches.
 */
import type { JSONRPCNotification } from '@modelcontextprotocol/client';
import type { CatalogChange, CatalogView } from '../catalog/catalog.js';
import type { Bus } from '../lib/bus.js';
import { describeError, type Logger } from '../diagnostics/logger.js';
import { ATTR, MAX_SPAN_LINKS, type TraceSpan, type Tracer } from '../diagnostics/tracer.js';
import type { TraceContext } from '../protocol/meta.js';

/** A way to hand server notifications to one client. */
export interface Subscriber {
    deliver(notification: JSONRPCNotification): void;
    /** The audience is gone (its session ended): a stream of its own ends too. */
    close?(): void;
}

const LIST_CHANGED: JSONRPCNotification = { jsonrpc: '2.0', method: 'notifications/prompts/list_changed' };

export interface ChangeDeliveryOptions {
    changes: Bus<CatalogChange>;
    /** The view clients currently know: the baseline of a new audience. */
    currentView: () => CatalogView | undefined;
    /** What a scope sees of a view, as a digest; cached by the caller, which drops it when the rules change. */
    fingerprint: (view: CatalogView, scope: string) => string;
    /** A list_changed notification was handed to a subscriber. */
    onNotified?: () => void;
    logger: Logger;
    /** A PRODUCER span per notification sent, linked to the upstream notifications that caused it. */
    tracer?: Tracer | undefined;
}

export class Audience {
    /** Fingerprint of the list this audience was last told about; undefined when unknown (the next change notifies). */
    fingerprint: string | undefined;
    pending = false;
    /** With `pending` (tracing on): the upstream notifications' spans the held notification links to. */
    pendingLinks: readonly TraceContext[] | undefined;
    #subscriber: Subscriber | undefined;

    constructor(
        /** Names it in logs (a session id). */
        readonly id: string,
        readonly scope: string,
        private readonly delivery: ChangeDelivery
    ) {}

    get subscriber(): Subscriber | undefined {
        return this.#subscriber;
    }

    /** From now on notifications go to `subscriber`; one held back meanwhile goes at once. */
    attach(subscriber: Subscriber): void {
        this.#subscriber = subscriber;
        if (this.pending) this.delivery.notify(this);
    }

    /** Only if it is still the one attached. */
    detach(subscriber: Subscriber): void {
        if (this.#subscriber === subscriber) this.#subscriber = undefined;
    }

    /** Leaves delivery for good, and closes the subscriber. */
    leave(): void {
        const subscriber = this.#subscriber;
        this.#subscriber = undefined;
        this.delivery.leave(this);
        subscriber?.close?.();
    }
}

export class ChangeDelivery {
    readonly #audiences = new Set<Audience>();
    readonly #unsubscribe: () => void;

    constructor(private readonly options: ChangeDeliveryOptions) {
        this.#unsubscribe = options.changes.subscribe(change => this.#onChange(change.view, change.traces));
    }

    /**
     * Never throws: a baseline that cannot be taken is left unknown, so the next published change notifies the
     * audience (at worst once too often).
     */
    join(id: string, scope: string): Audience {
        const audience = new Audience(id, scope, this);
        try {
            const view = this.options.currentView();
            audience.fingerprint = view === undefined ? undefined : this.options.fingerprint(view, scope);
        } catch (error) {
            this.options.logger.error({ session: id, err: describeError(error) }, 'view fingerprint failed; the session is notified of the next change');
        }
        this.#audiences.add(audience);
        return audience;
    }

    leave(audience: Audience): void {
        this.#audiences.delete(audience);
    }

    /** Delivers list_changed to the audience now, or holds it until a subscriber attaches. */
    notify(audience: Audience, links?: readonly TraceContext[]): void {
        const subscriber = audience.subscriber;
        if (subscriber === undefined) {
            audience.pending = true;
            if (links !== undefined) audience.pendingLinks = [...(audience.pendingLinks ?? []), ...links].slice(-MAX_SPAN_LINKS);
            return;
        }
        audience.pending = false;
        const span = this.#span(audience, links ?? audience.pendingLinks);
        audience.pendingLinks = undefined;
        this.options.onNotified?.();
        try {
            subscriber.deliver(LIST_CHANGED);
        } catch (error) {
            span?.fail('not_delivered');
            this.options.logger.debug({ session: audience.id, err: describeError(error) }, 'list_changed not delivered');
        }
        span?.end();
    }

    /** The notification's own span (a root), linked to what caused it: links, not one trace for every client. */
    #span(audience: Audience, links: readonly TraceContext[] | undefined): TraceSpan | undefined {
        const { tracer } = this.options;
        if (tracer?.enabled !== true) return undefined;
        return tracer.start(LIST_CHANGED.method, { kind: 'producer', links, attributes: { [ATTR.method]: LIST_CHANGED.method, [ATTR.clientId]: audience.scope } });
    }

    close(): void {
        this.#unsubscribe();
        this.#audiences.clear();
    }

    #onChange(view: CatalogView, traces: readonly TraceContext[] | undefined): void {
        for (const audience of this.#audiences) {
            const fingerprint = this.options.fingerprint(view, audience.scope);
            if (fingerprint === audience.fingerprint) continue;
            audience.fingerprint = fingerprint;
            this.notify(audience, traces);
        }
    }
}
