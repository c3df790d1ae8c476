/**
 * Types for parse-prometheus-text-format 1.1.1, which ships none (its dist is a CommonJS
 * `module.exports = parsePrometheusTextFormat`). The shape is its prom2json-like output:
 * one entry per metric family; histograms put `le` into `buckets` and summaries put
 * `quantile` into `quantiles`, with `count` and `sum` beside them. Every number stays a string.
 */
declare module 'parse-prometheus-text-format' {
    export interface PrometheusSample {
        value?: string;
        labels?: Record<string, string>;
        buckets?: Record<string, string>;
        quantiles?: Record<string, string>;
        count?: string;
        sum?: string;
    }

    export interface PrometheusMetricFamily {
        name: string;
        /** '' when the family has no HELP line. */
        help: string;
        /** The TYPE line's type upper-cased: COUNTER, GAUGE, HISTOGRAM, SUMMARY or UNTYPED. */
        type: string;
        metrics: PrometheusSample[];
    }

    /** Throws on a line that is not valid text format. */
    export default function parsePrometheusTextFormat(text: string): PrometheusMetricFamily[];
}
