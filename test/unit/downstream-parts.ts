/**
 * The downstream layer over real parts, for unit tests that serve messages without a gateway: the change delivery,
 * the registry of requests in flight, the session table, subscriptions and the dispatcher, around a given service.
 */
import { pino } from 'pino';
import type { CatalogChange } from '../../src/catalog/catalog.js';
import type { PromptService } from '../../src/catalog/service.js';
import { ChangeDelivery } from '../../src/downstream/delivery.js';
import { Dispatcher } from '../../src/downstream/dispatcher.js';
import { RequestRegistry } from '../../src/downstream/requests.js';
import { LocalRevocations } from '../../src/downstream/revocations.js';
import { SessionSeal } from '../../src/downstream/session-seal.js';
import { SessionTable, type SessionTableOptions } from '../../src/downstream/sessions.js';
import { Subscriptions } from '../../src/downstream/subscriptions.js';
import { Bus } from '../../src/lib/bus.js';

export interface DownstreamPartsOptions {
    /** Subscriptions allowed in all and per client (10). */
    maxSubscriptions?: number;
    /** How the sessions ask their clients (issue 28's questions); none: they ask nothing. */
    asking?: SessionTableOptions['asking'];
}

export function downstreamParts(service: PromptService, { maxSubscriptions = 10, asking }: DownstreamPartsOptions = {}) {
    const logger = pino({ level: 'silent' });
    const delivery = new ChangeDelivery({ changes: new Bus<CatalogChange>(), currentView: () => undefined, fingerprint: () => '', logger });
    const requests = new RequestRegistry();
    const sessions = new SessionTable({
        delivery,
        callerFor: scope => ({ scope, visible: () => true }),
        seal: new SessionSeal([], ''),
        revocations: new LocalRevocations(),
        requests,
        max: 10,
        asking
    });
    const subscriptions = new Subscriptions(delivery, () => ({ max: maxSubscriptions, maxPerClient: maxSubscriptions }));
    const dispatcher = new Dispatcher({ service, logger, ttlMs: () => ({ list: 1000, discover: 1000 }) });
    return { logger, requests, sessions, subscriptions, dispatcher };
}
