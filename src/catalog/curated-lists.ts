/**
 * Each upstream's list with its overrides applied (overrides.ts), remembered per list so a view built again for
 * another upstream's change does not curate this one again, and what of the overrides did not apply: logged once
 * per change (a new list or new overrides that change the report), not on every read, and kept for /healthz.
 */
import type { Logger } from '../diagnostics/logger.js';
import type { UpstreamList } from './list-cache.js';
import type { Curate } from './names.js';
import { curateList, isEmptyReport, NO_OVERRIDES, type CuratedPrompt, type OverrideReport, type UpstreamOverrides } from './overrides.js';

/** Most names of each kind kept in a report: a log line and /healthz must not grow with a config's mistakes. */
const REPORTED_NAMES = 20;

interface Reported {
    overrides: UpstreamOverrides;
    key: string;
    report: OverrideReport;
}

export class CuratedLists {
    #overrides: ReadonlyMap<string, UpstreamOverrides> = new Map();
    readonly #memo = new WeakMap<UpstreamList, { overrides: UpstreamOverrides; prompts: readonly (CuratedPrompt | undefined)[] }>();
    readonly #reported = new Map<string, Reported>();

    constructor(private readonly log: Logger) {}

    /** The overrides of every upstream, by id (start and reload); upstreams without any may be missing. */
    set(overrides: ReadonlyMap<string, UpstreamOverrides>): void {
        this.#overrides = overrides;
    }

    /** The upstreams still configured: reports of others go. */
    keep(ids: ReadonlySet<string>): void {
        for (const id of this.#reported.keys()) if (!ids.has(id)) this.#reported.delete(id);
    }

    readonly curate: Curate = (upstream, list) => {
        const overrides = this.#of(upstream.id);
        const known = this.#memo.get(list);
        if (known?.overrides === overrides) return known.prompts;
        const curated = curateList(list.prompts, list.digests, overrides);
        this.#memo.set(list, { overrides, prompts: curated.prompts });
        this.#record(upstream.id, overrides, bounded(curated.report));
        return curated.prompts;
    };

    /** The upstream's list is not known now (not connected): a report about other overrides than today's goes. */
    unknown(upstreamId: string): void {
        if (this.#reported.get(upstreamId)?.overrides !== this.#of(upstreamId)) this.#reported.delete(upstreamId);
    }

    /** What of the upstream's overrides did not apply to its last list read; undefined when everything did. */
    report(upstreamId: string): OverrideReport | undefined {
        const reported = this.#reported.get(upstreamId)?.report;
        return reported === undefined || isEmptyReport(reported) ? undefined : reported;
    }

    #of(upstreamId: string): UpstreamOverrides {
        return this.#overrides.get(upstreamId) ?? NO_OVERRIDES;
    }

    #record(upstreamId: string, overrides: UpstreamOverrides, report: OverrideReport): void {
        const key = JSON.stringify(report);
        const previous = this.#reported.get(upstreamId);
        this.#reported.set(upstreamId, { overrides, key, report });
        if (previous?.key === key) return;
        if (!isEmptyReport(report)) {
            this.log.warn({ upstream: upstreamId, ...report }, "prompt overrides that do not apply to the upstream's list (see docs/overrides.md)");
        } else if (previous !== undefined) {
            this.log.info({ upstream: upstreamId }, 'prompt overrides all apply again');
        }
    }
}

function bounded(report: OverrideReport): OverrideReport {
    const cut = (name: string) => (name.length > 64 ? `${name.slice(0, 64)}...` : name);
    return {
        unmatched: report.unmatched.slice(0, REPORTED_NAMES).map(cut),
        unknownArguments: report.unknownArguments.slice(0, REPORTED_NAMES).map(cut),
        clashes: report.clashes.slice(0, REPORTED_NAMES).map(clash => ({ prompt: cut(clash.prompt), name: cut(clash.name) }))
    };
}
