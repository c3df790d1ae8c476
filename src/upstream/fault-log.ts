/**
 * Reports an upstream's faults: every one is counted, and logged at most once
 * per kind every few seconds (with how many were left unlogged), so an upstream
 * printing garbage or flooding notifications cannot flood the log as well.
 */
import type { FaultKind } from '../diagnostics/faults.js';
import type { Logger } from '../diagnostics/logger.js';
import { LineBudget } from './output-log.js';

const LOG_EVERY_MS = 10_000;

export class FaultLog {
    readonly #budgets = new Map<FaultKind, LineBudget>();

    constructor(
        private readonly log: Logger,
        private readonly onFault: (kind: FaultKind) => void,
        private readonly now: () => number = Date.now
    ) {}

    /** Counts without logging: for faults whose log line is written elsewhere. */
    count(kind: FaultKind): void {
        this.onFault(kind);
    }

    report(kind: FaultKind, message: string, details: Record<string, unknown> = {}): void {
        this.onFault(kind);
        let budget = this.#budgets.get(kind);
        if (budget === undefined) this.#budgets.set(kind, (budget = new LineBudget(1, LOG_EVERY_MS)));
        if (!budget.admit(this.now())) return;
        const suppressed = budget.takeDropped();
        this.log.warn({ fault: kind, ...details, ...(suppressed > 0 ? { alsoSince: suppressed } : {}) }, message);
    }
}
