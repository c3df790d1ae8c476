/**
 * Reading the gateway's /metrics as Prometheus would: the text format parsed by a real parser
 * (parse-prometheus-text-format), not by regexes of our own.
 *
 * That parser folds a histogram's or summary's series into one sample and drops their labels (it follows an old
 * client_python parser, which allowed no labels there). Read without TYPE lines, every series is an untyped family
 * of its own (`x_bucket`, `x_count`, `x_sum`, and the summary's quantile series under `x`), labels intact; the
 * typed parse is kept for the families' types.
 */
import parsePrometheusTextFormat, { type PrometheusMetricFamily } from 'parse-prometheus-text-format';

export interface Scrape {
    /** Every series, by sample name, with all its labels. */
    series: PrometheusMetricFamily[];
    /** Family name -> type (COUNTER, GAUGE, HISTOGRAM, SUMMARY). */
    types: Map<string, string>;
}

export type Families = Scrape;

export async function scrape(url: string, headers: Record<string, string> = {}): Promise<Scrape> {
    const response = await fetch(url, { headers });
    if (response.status !== 200) throw new Error(`GET ${url}: HTTP ${response.status}`);
    if (!(response.headers.get('content-type') ?? '').startsWith('text/plain; version=0.0.4')) {
        throw new Error(`GET ${url}: content-type ${response.headers.get('content-type')}`);
    }
    return parseExposition(await response.text());
}

export function parseExposition(text: string): Scrape {
    const typed = parsePrometheusTextFormat(text);
    const untyped = parsePrometheusTextFormat(
        text
            .split('\n')
            .filter(line => !line.startsWith('# TYPE '))
            .join('\n')
    );
    return { series: untyped, types: new Map(typed.map(family => [family.name, family.type])) };
}

/** Untyped, a histogram's series alternate (`_bucket`s, `_sum`, `_count`, per label set): a name recurs, its samples are joined. */
function seriesOf(scraped: Scrape, name: string) {
    return scraped.series.filter(candidate => candidate.name === name).flatMap(candidate => candidate.metrics);
}

/** Every sample of a series: its labels and its value. */
export function sampleList(scraped: Scrape, name: string): { labels: Record<string, string>; value: number }[] {
    return seriesOf(scraped, name).map(sample => ({ labels: sample.labels ?? {}, value: Number(sample.value) }));
}

/** Every sample of a series as "label=value,..." -> value (labels in the order given). */
export function samples(scraped: Scrape, name: string, labelNames: readonly string[]): Map<string, number> {
    return new Map(sampleList(scraped, name).map(sample => [labelNames.map(label => `${label}=${sample.labels[label] ?? ''}`).join(','), sample.value]));
}

/** The value of the one sample with exactly these labels (0 when absent, as a counter that never moved). */
export function value(scraped: Scrape, name: string, labels: Record<string, string> = {}): number {
    const sample = seriesOf(scraped, name).find(candidate => sameLabels(candidate.labels ?? {}, labels));
    return sample === undefined ? 0 : Number(sample.value);
}

/** A histogram's or summary's observation count for exactly these labels. */
export function count(scraped: Scrape, name: string, labels: Record<string, string> = {}): number {
    return value(scraped, `${name}_count`, labels);
}

/** A histogram's observation count summed over every label set holding these labels (its other labels any): PromQL's `sum without (...)`. */
export function countOver(scraped: Scrape, name: string, labels: Record<string, string>): number {
    return sampleList(scraped, `${name}_count`)
        .filter(sample => Object.entries(labels).every(([label, expected]) => sample.labels[label] === expected))
        .reduce((sum, sample) => sum + sample.value, 0);
}

/** A histogram's cumulative count at bucket `le` for exactly these labels. */
export function bucket(scraped: Scrape, name: string, le: string, labels: Record<string, string> = {}): number {
    return value(scraped, `${name}_bucket`, { ...labels, le });
}

/** Every value a label takes in a series. */
export function labelValues(scraped: Scrape, name: string, label: string): Set<string> {
    return new Set(seriesOf(scraped, name).flatMap(sample => (sample.labels?.[label] === undefined ? [] : [sample.labels[label]])));
}

/** Every label name used by a series. */
export function labelNames(scraped: Scrape, name: string): Set<string> {
    return new Set(seriesOf(scraped, name).flatMap(sample => Object.keys(sample.labels ?? {})));
}

function sameLabels(actual: Record<string, string>, expected: Record<string, string>): boolean {
    const keys = Object.keys(actual);
    return keys.length === Object.keys(expected).length && keys.every(key => actual[key] === expected[key]);
}

export interface FamilySummary {
    type: string;
    samples: number;
    /** Label name to the values seen, over all the family's series. */
    labels: Map<string, Set<string>>;
}

/** Each family with the labels of all its series (a histogram's `_bucket`/`_sum`/`_count`, a summary's quantiles). */
export function familiesOf(scraped: Scrape): Map<string, FamilySummary> {
    const families = new Map<string, FamilySummary>();
    for (const [name, type] of scraped.types) {
        const family: FamilySummary = { type, samples: 0, labels: new Map() };
        families.set(name, family);
        const parts = type === 'HISTOGRAM' ? ['_bucket', '_sum', '_count'] : type === 'SUMMARY' ? ['', '_sum', '_count'] : [''];
        for (const sample of parts.flatMap(suffix => seriesOf(scraped, `${name}${suffix}`))) {
            family.samples++;
            for (const [label, labelValue] of Object.entries(sample.labels ?? {})) {
                let values = family.labels.get(label);
                if (values === undefined) family.labels.set(label, (values = new Set()));
                values.add(labelValue);
            }
        }
    }
    return families;
}
