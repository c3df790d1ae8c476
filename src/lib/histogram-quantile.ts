/**
 * A quantile of a Prometheus histogram from its cumulative bucket counts, as PromQL's `histogram_quantile`
 * computes it (so the dashboard and Grafana agree): the bucket the rank falls in, interpolated linearly between its
 * bounds (the first bucket's lower bound 0); a rank in the `+Inf` bucket gives the highest finite bound.
 */

/** One bucket: its upper bound (`le`, Infinity for `+Inf`) and how many observations were at most that. */
export interface CumulativeBucket {
    le: number;
    count: number;
}

/** null when the histogram holds no observation (or no finite bucket). */
export function histogramQuantile(quantile: number, buckets: readonly CumulativeBucket[]): number | null {
    const sorted = [...buckets].sort((a, b) => a.le - b.le);
    const total = sorted.at(-1)?.count ?? 0;
    if (total <= 0 || !(quantile >= 0 && quantile <= 1)) return null;
    const rank = quantile * total;
    let lower = 0;
    let below = 0;
    for (const { le, count } of sorted) {
        if (count >= rank && count > below) {
            if (le === Infinity) return Number.isFinite(lower) && sorted.length > 1 ? lower : null;
            return lower + ((le - lower) * (rank - below)) / (count - below);
        }
        lower = le;
        below = count;
    }
    return Number.isFinite(lower) ? lower : null;
}
