/**
 * The graceful stop: no new requests, subscriptions answered and closed,
 * 2025 upstreams' questions held for 2026-07-28 clients given up (nobody can
 * retry into a gateway that is stopping: their upstream calls are cancelled),
 * requests in flight given up to `shutdownTimeoutMs` to finish and then
 * cancelled with an error answer, the endpoint closed, and then every part
 * that holds timers, connections or children (stdio upstreams get SIGTERM,
 * then SIGKILL).
 */
import type { Catalog } from '../catalog/catalog.js';
import type { SharedState } from '../cluster/shared-state.js';
import type { Logger } from '../diagnostics/logger.js';
import type { ChangeDelivery } from '../downstream/delivery.js';
import type { Endpoint } from '../downstream/endpoint.js';
import type { RequestRegistry } from '../downstream/requests.js';
import type { Subscriptions } from '../downstream/subscriptions.js';
import type { AdminServer } from '../observability/admin-server.js';
import type { Telemetry } from '../observability/telemetry.js';
import type { RunningTracing } from '../observability/tracing.js';
import type { LiveSettings } from './reload.js';
import type { UpstreamPool } from '../upstream/pool.js';

/** At shutdown, how long the cancelled requests' error answers get to be written. */
const ANSWER_GRACE_MS = 1000;

/** What holds timers, connections or children: closed last at shutdown, and when the start fails half-way. */
export interface ClosableParts {
    telemetry: Telemetry;
    admin?: AdminServer | undefined;
    delivery: ChangeDelivery;
    catalog: Catalog;
    pool: UpstreamPool;
    shared: SharedState;
    live: LiveSettings;
    /** Spans of everything above are exported last (bounded by shutdownTimeoutMs). */
    tracing: Pick<RunningTracing, 'shutdown'>;
}

export async function closeParts({ telemetry, admin, delivery, catalog, pool, shared, live, tracing }: ClosableParts): Promise<void> {
    telemetry.close();
    await admin?.close();
    delivery.close();
    catalog.close();
    await pool.close();
    await shared.close();
    await tracing.shutdown(live.config.shutdownTimeoutMs);
}

/** Upstream calls held open for a client's retry (issue 28's row D: catalog/held-interactions.ts HeldInteractions). */
export interface HeldCalls {
    /** Each held call's question answered with an error (`reason`) and the call cancelled upstream. */
    cancelAll(reason: string): void;
}

export interface ShutdownParts extends ClosableParts {
    endpoint: Endpoint;
    held?: HeldCalls | undefined;
    subscriptions: Subscriptions;
    requests: RequestRegistry;
    shutdownTimeoutMs: number;
    logger: Logger;
}

export async function shutdown(parts: ShutdownParts): Promise<void> {
    const { endpoint, subscriptions, requests, shutdownTimeoutMs, logger } = parts;
    endpoint.drain();
    // A retry would be refused now: nothing is gained by keeping the upstream waiting.
    parts.held?.cancelAll('The gateway is shutting down');
    // Answered (the revision's graceful end) and closed: a listen stream is a request that never ends.
    subscriptions.closeAll();
    if (!(await endpoint.settled(shutdownTimeoutMs))) {
        logger.warn({ inFlight: requests.countOf('call'), bodiesBeingRead: requests.held, waitedMs: shutdownTimeoutMs }, 'requests still in flight at shutdown; cancelling them');
        // An error answer: a client whose response stream just ends would wait for its own timeout.
        requests.cancelAll();
        await endpoint.settled(ANSWER_GRACE_MS);
    }
    await endpoint.close();
    await closeParts(parts);
}
