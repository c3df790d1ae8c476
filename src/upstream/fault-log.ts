/**
 * Reports an upstream's faults: every one is counted, and logged at most once
 * per kind every few seconds (with how many were left unlogged), so an upstream
 * printing garbage or flooding notifications cannot flood the log as well.
 */
import type { FaultKind } from '../observability/faults.js';
import type { Logger } from '../observability/logger.js';

const LOG_EVERY_MS = 10_000;

export class FaultLog {
    readonly #lastLogged = new Map<FaultKind, { at: number; suppressed: number }>();

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
        const now = this.now();
        const last = this.#lastLogged.get(kind);
        if (last !== undefined && now - last.at < LOG_EVERY_MS) {
            last.suppressed++;
            return;
        }
        const suppressed = last?.suppressed ?? 0;
        this.#lastLogged.set(kind, { at: now, suppressed: 0 });
        this.log.warn({ fault: kind, ...details, ...(suppressed > 0 ? { alsoSince: suppressed } : {}) }, message);
    }
}
