/** Percentiles of timing samples, and the bench's ways of printing numbers. */

export interface Percentiles {
    p50: number;
    p95: number;
    p99: number;
    samples: number;
}

export function percentiles(samples: readonly number[]): Percentiles {
    const sorted = Float64Array.from(samples).sort();
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
    return { p50: at(0.5), p95: at(0.95), p99: at(0.99), samples: sorted.length };
}

/** Microseconds `run` takes. */
export async function timedUs(run: () => Promise<unknown>): Promise<number> {
    const start = performance.now();
    await run();
    return (performance.now() - start) * 1000;
}

export const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

/** `[a, b, c]` turned `round` times: each round starts at another element, so none is always first or last. */
export function rotated<T>(items: readonly T[], round: number): T[] {
    const shift = round % Math.max(1, items.length);
    return [...items.slice(shift), ...items.slice(0, shift)];
}

const grouped = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });
export const us = (micros: number) => (Number.isFinite(micros) ? `${grouped.format(micros)} us` : 'n/a');
export const ms = (millis: number, digits = 2) => (Number.isFinite(millis) ? `${millis.toFixed(digits)} ms` : 'n/a');
export const ratio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}x` : 'n/a');
export const count = (n: number) => grouped.format(n);
export const kib = (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 1024).toFixed(1)} KiB` : 'n/a');
export const mib = (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 1024 / 1024).toFixed(0)} MiB` : 'n/a');
