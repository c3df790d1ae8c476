/** Exponential backoff with "equal jitter": half the step fixed, half random, capped at `maxMs`. */
export interface BackoffPolicy {
    initialMs: number;
    maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 250, maxMs: 30_000 };

export function backoffDelay(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF, random: () => number = Math.random): number {
    const step = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(attempt, 30));
    return Math.round(step / 2 + (random() * step) / 2);
}
