/**
 * `subscriptions/listen` (2026-07-28): a client's long-lived request for the
 * change notifications it names. The gateway honours `promptsListChanged`
 * only (it serves no tools or resources): the acknowledgment says so, and
 * nothing else is ever sent. Each subscription that asked for prompts is an
 * Audience of change delivery with its caller's scope, so it hears the same
 * coalesced, per-client notifications as a 2025 session, a hidden prompt's
 * change never. Every message carries the listen request's id as
 * `subscriptionId`. When the gateway ends a subscription (shutdown), it
 * answers the listen request, which tells the client the end was graceful;
 * when the client ends it (closing its stream, or `notifications/cancelled` on
 * stdio), nothing more is sent. Bounded in all and per client. A reload that
 * removes the HTTP client that opened a subscription, or changes how it proves
 * who it is, ends it the same graceful way (closeClients).
 */
import type { JSONRPCMessage, JSONRPCNotification } from '@modelcontextprotocol/client';
import type { RequestId } from '../protocol/json-rpc.js';
import type { Audience, ChangeDelivery, Subscriber } from './delivery.js';
import { META } from '../protocol/meta.js';

/** Where a subscription's messages go: an SSE response, or the stdio channel. */
export interface SubscriptionSink {
    send(message: JSONRPCMessage): void;
    /** The stream ends (HTTP); nothing on stdio, whose channel other messages share. */
    end(): void;
}

export interface SubscriptionLimits {
    /** subscriptions.max: open at once in the whole gateway. */
    max: number;
    /** subscriptions.maxPerClient: open at once per client (per address for the anonymous client). */
    maxPerClient: number;
}

export type Refusal = 'too_many_subscriptions' | 'client_subscription_limit';

/** The notifications asked for, as the gateway will honour them; undefined when the params are malformed. */
export function honouredFilter(params: unknown): { promptsListChanged?: true } | undefined {
    if (typeof params !== 'object' || params === null) return undefined;
    const filter = (params as { notifications?: unknown }).notifications;
    if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) return undefined;
    const prompts = (filter as { promptsListChanged?: unknown }).promptsListChanged;
    if (prompts !== undefined && typeof prompts !== 'boolean') return undefined;
    return prompts === true ? { promptsListChanged: true } : {};
}

export class Subscription implements Subscriber {
    #audience: Audience | undefined;
    #open = true;

    constructor(
        readonly id: RequestId,
        readonly quotaKey: string,
        private readonly sink: SubscriptionSink,
        private readonly table: Subscriptions,
        /** The client whose credentials opened it (HTTP); undefined on stdio, where none are presented. */
        readonly credentialsOf: string | undefined
    ) {}

    /** @internal the table's */
    start(filter: { promptsListChanged?: true }, audience: Audience | undefined): void {
        this.sink.send(this.#tagged({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: filter } }));
        this.#audience = audience;
        audience?.attach(this);
    }

    deliver(notification: JSONRPCNotification): void {
        if (this.#open) this.sink.send(this.#tagged(notification));
    }

    /** The client ended it: nothing more is sent. */
    cancel(): void {
        this.#leave();
    }

    /** The gateway ends it: the listen request's answer, then the end of the stream. */
    close(): void {
        if (!this.#open) return;
        this.sink.send({ jsonrpc: '2.0', id: this.id, result: { resultType: 'complete', _meta: { [META.subscriptionId]: this.id } } });
        this.#leave();
        this.sink.end();
    }

    #leave(): void {
        if (!this.#open) return;
        this.#open = false;
        const audience = this.#audience;
        this.#audience = undefined;
        // Leaving delivery would call close() on the attached subscriber: detach first.
        audience?.detach(this);
        audience?.leave();
        this.table.forget(this);
    }

    #tagged(notification: JSONRPCNotification): JSONRPCNotification {
        const params = notification.params ?? {};
        return { ...notification, params: { ...params, _meta: { ...params._meta, [META.subscriptionId]: this.id } } };
    }
}

export class Subscriptions {
    readonly #open = new Set<Subscription>();
    readonly #perQuota = new Map<string, number>();
    #nextAudience = 1;

    constructor(
        private readonly delivery: ChangeDelivery,
        private readonly limits: () => SubscriptionLimits
    ) {}

    get size(): number {
        return this.#open.size;
    }

    /** Acknowledged and open; or why not (nothing was sent). */
    open(id: RequestId, scope: string, quotaKey: string, filter: { promptsListChanged?: true }, sink: SubscriptionSink, credentialsOf?: string): Subscription | Refusal {
        const { max, maxPerClient } = this.limits();
        if (this.#open.size >= max) return 'too_many_subscriptions';
        if ((this.#perQuota.get(quotaKey) ?? 0) >= maxPerClient) return 'client_subscription_limit';
        const subscription = new Subscription(id, quotaKey, sink, this, credentialsOf);
        this.#open.add(subscription);
        this.#perQuota.set(quotaKey, (this.#perQuota.get(quotaKey) ?? 0) + 1);
        const audience = filter.promptsListChanged ? this.delivery.join(`listen-${this.#nextAudience++}`, scope) : undefined;
        subscription.start(filter, audience);
        return subscription;
    }

    /** Ends every subscription gracefully (shutdown). */
    closeAll(): void {
        for (const subscription of [...this.#open]) subscription.close();
    }

    /** Ends, gracefully, every subscription opened with the credentials of one of `clientIds`; how many it ended. */
    closeClients(clientIds: ReadonlySet<string>): number {
        const ending = [...this.#open].filter(subscription => subscription.credentialsOf !== undefined && clientIds.has(subscription.credentialsOf));
        for (const subscription of ending) subscription.close();
        return ending.length;
    }

    /** @internal a subscription that ended */
    forget(subscription: Subscription): void {
        if (!this.#open.delete(subscription)) return;
        const left = (this.#perQuota.get(subscription.quotaKey) ?? 1) - 1;
        if (left > 0) this.#perQuota.set(subscription.quotaKey, left);
        else this.#perQuota.delete(subscription.quotaKey);
    }
}
