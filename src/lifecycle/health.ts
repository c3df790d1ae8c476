/**
 * What /healthz and /readyz say of the gateway: each upstream's state, load,
 * faults and overrides not applied, and whether it is ready to serve (every
 * upstream tried, every required one up). Errors name commands, paths and
 * URLs, which may hold secrets: the log's redaction applies here too.
 */
import type { Catalog } from '../catalog/catalog.js';
import type { SharedState } from '../cluster/shared-state.js';
import type { FaultCounters } from '../diagnostics/faults.js';
import type { Redactor } from '../diagnostics/redaction.js';
import type { Readiness } from '../observability/routes.js';
import type { GatewayUpstream } from '../upstream/upstream.js';

export interface HealthSources {
    /** The current upstreams, in config order. */
    upstreams: () => readonly GatewayUpstream[];
    catalog: Catalog;
    faults: FaultCounters;
    shared: SharedState;
    redactor: Redactor;
}

export interface HealthChecks {
    /** GET /healthz's details. */
    health(): Record<string, unknown>;
    /** GET /readyz's answer, its details with every upstream's health. */
    readiness(): Readiness;
}

export function healthChecks(sources: HealthSources): HealthChecks {
    const { redactor } = sources;
    return {
        health: () => redactor.redactValues({ upstreams: upstreamHealth(sources) }),
        readiness: () => {
            const state = readiness(sources);
            return { ...state, details: redactor.redactValues({ ...state.details, upstreams: upstreamHealth(sources) }) };
        }
    };
}

function upstreamHealth({ upstreams, catalog, faults }: HealthSources): Record<string, unknown>[] {
    return upstreams().map(upstream => {
        const overrides = catalog.overrideReport(upstream.id);
        return {
            id: upstream.id,
            state: upstream.state,
            required: upstream.config.required,
            ...(upstream.lastError === undefined ? {} : { error: upstream.lastError }),
            ...(upstream.problems.length === 0 ? {} : { problems: upstream.problems }),
            ...upstream.load,
            faults: faults.of(upstream.id),
            ...(overrides === undefined ? {} : { overrides })
        };
    });
}

function readiness({ upstreams, shared }: HealthSources): Readiness {
    const current = upstreams();
    const waiting = current.filter(upstream => !upstream.attempted).map(upstream => upstream.id);
    const requiredDown = current.filter(upstream => upstream.config.required && upstream.state !== 'ready').map(upstream => upstream.id);
    // Redis away (or refusing writes) does not make a replica unready: it serves on with local limits, and says so here.
    const sharedState = shared.status();
    return {
        ready: waiting.length === 0 && requiredDown.length === 0,
        details: { waiting, requiredDown, ...(sharedState === 'local' ? {} : { sharedState: sharedState === 'up' ? 'redis' : `local (${shared.downReason()})` }) }
    };
}
