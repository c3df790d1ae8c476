/**
 * A `key=value,...` list as OpenTelemetry writes them (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES): items
 * split on `,`, anything after `;` left out, keys and values trimmed and percent-decoded. An item without a key or a
 * value, or that does not decode, is left out (as the OTel SDK leaves it out); `skipped` counts them.
 */
export function keyValueList(list: string): { values: Record<string, string>; skipped: number } {
    const values: Record<string, string> = {};
    let skipped = 0;
    for (const item of list.split(',')) {
        const pair = item.split(';', 1)[0]!;
        const separator = pair.indexOf('=');
        const key = pair.slice(0, separator).trim();
        const value = pair.slice(separator + 1).trim();
        if (pair.trim() === '') continue;
        try {
            if (separator <= 0 || key === '' || value === '') throw new URIError('no key or value');
            values[decodeURIComponent(key)] = decodeURIComponent(value);
        } catch {
            skipped += 1;
        }
    }
    return { values, skipped };
}
