/**
 * OpenTelemetry traces: the settings (the config's `tracing` block over the standard OTEL_* environment, read from
 * the environment the gateway is given), and starting them: the SDK itself lives in otel.ts, loaded only when traces
 * are exported.
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { ConfigError, type ConfigIssue } from '../config/issues.js';
import { MAX_EXPORT_TIMEOUT_MS, MAX_SPAN_QUEUE, OTLP_PROTOCOL_FIX, OTLP_PROTOCOLS, TRACE_SAMPLERS, type GatewayConfig } from '../config/schema.js';
import type { Logger } from '../diagnostics/logger.js';
import { NO_TRACER, type Tracer } from '../diagnostics/tracer.js';
import { keyValueList } from '../lib/key-value-list.js';

type Environment = Readonly<Record<string, string | undefined>>;
type TracingConfig = GatewayConfig['tracing'];
type Protocol = (typeof OTLP_PROTOCOLS)[number];
export type SamplerName = (typeof TRACE_SAMPLERS)[number];
type Compression = (typeof COMPRESSIONS)[number];

const COMPRESSIONS = ['none', 'gzip'] as const;

/** What the tracer is built from, every default applied. */
export interface TracingSettings {
    /** Where spans are posted (the traces path included). */
    url: string;
    protocol: Protocol;
    /** service.name; undefined: OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES, else the gateway's name. */
    serviceName: string | undefined;
    sampler: SamplerName;
    samplerArg: number;
    /** Sent to the collector: the environment's (OTEL_EXPORTER_OTLP_HEADERS, then _TRACES_HEADERS), the config's over them. */
    headers: Record<string, string>;
    compression: Compression;
    /** The environment's resource attributes (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME over its service.name). */
    resourceAttributes: Record<string, string>;
    maxQueueSize: number;
    maxExportBatchSize: number;
    scheduledDelayMs: number;
    /** How long the span processor waits for one export (OTEL_BSP_EXPORT_TIMEOUT). */
    processorTimeoutMs: number;
    /** How long the exporter waits for the collector, retries included (OTEL_EXPORTER_OTLP_TIMEOUT). */
    exportTimeoutMs: number;
}

const DEFAULT_BASE_URL = 'http://localhost:4318';
const TRACES_PATH = 'v1/traces';
/** The exporter's defaults (its own exporters' component type, for its self-observability, which goes nowhere). */
/** The environment names the settings are read from: one ConfigError names the variable. */
const ENVIRONMENT = 'environment';

/** Whether traces are exported at all: the config's `enabled` wins; else the standard environment says. */
function tracingWanted(config: TracingConfig, env: Environment, issues: ConfigIssue[]): boolean {
    if (config.enabled !== undefined) return config.enabled;
    if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
    const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
    if (exporter === 'none') return false;
    if (exporter !== undefined && exporter !== '' && exporter !== 'otlp') {
        issues.push({ path: ['OTEL_TRACES_EXPORTER'], message: `"${exporter}" is not supported: use "otlp" (or "none" to turn traces off)` });
        return false;
    }
    return exporter === 'otlp' || nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) !== undefined || nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) !== undefined;
}

/** The environment's bounds are the config's: a queue of 10^15 spans would bound nothing. */
const SPAN_COUNT = { min: 1, max: MAX_SPAN_QUEUE, integer: true };
const EXPORT_TIMEOUT = { min: 1, max: MAX_EXPORT_TIMEOUT_MS, integer: true };

/**
 * The tracing settings, or undefined when tracing is off. Throws ConfigError (exit 2) naming the variable or field
 * for a value that cannot be used, e.g. OTEL_EXPORTER_OTLP_PROTOCOL=grpc.
 */
export function tracingSettings(config: TracingConfig, env: Environment): TracingSettings | undefined {
    const issues: ConfigIssue[] = [];
    const wanted = tracingWanted(config, env, issues);
    if (!wanted) return failOn(issues, undefined);
    const settings: TracingSettings = {
        url: traceUrl(config, env, issues),
        protocol: config.protocol ?? envProtocol(env, issues),
        serviceName: config.serviceName,
        sampler: config.sampler ?? envSampler(env, issues),
        samplerArg: config.samplerArg ?? envNumber(env, 'OTEL_TRACES_SAMPLER_ARG', 1, issues, { min: 0, max: 1 }),
        headers: { ...envHeaders(env, 'OTEL_EXPORTER_OTLP_HEADERS', issues), ...envHeaders(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', issues), ...config.headers },
        compression: envCompression(env, issues),
        resourceAttributes: envResourceAttributes(env, issues),
        maxQueueSize: config.maxQueueSize ?? envNumber(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, issues, SPAN_COUNT),
        maxExportBatchSize: envNumber(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, issues, SPAN_COUNT),
        scheduledDelayMs: envNumber(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, issues, { min: 0, integer: true }),
        processorTimeoutMs: envNumber(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000, issues, EXPORT_TIMEOUT),
        exportTimeoutMs:
            config.exportTimeoutMs ??
            envNumber(env, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', envNumber(env, 'OTEL_EXPORTER_OTLP_TIMEOUT', 10_000, issues, EXPORT_TIMEOUT), issues, EXPORT_TIMEOUT)
    };
    refuseCertificateFiles(env, issues);
    // The batch cannot exceed the queue (the SDK would refuse it): the smaller bound wins.
    settings.maxExportBatchSize = Math.min(settings.maxExportBatchSize, settings.maxQueueSize);
    return failOn(issues, settings);
}

function failOn<T>(issues: ConfigIssue[], value: T): T {
    if (issues.length > 0) throw new ConfigError(ENVIRONMENT, issues);
    return value;
}

function nonEmpty(value: string | undefined): string | undefined {
    const trimmed = value?.trim();
    return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/** The config's endpoint, else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
function traceUrl(config: TracingConfig, env: Environment, issues: ConfigIssue[]): string {
    if (config.endpoint !== undefined) return withTracesPath(config.endpoint);
    const specific = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
    if (specific !== undefined) return checkedUrl(specific, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', issues) ?? '';
    const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) ?? DEFAULT_BASE_URL;
    const url = checkedUrl(base, 'OTEL_EXPORTER_OTLP_ENDPOINT', issues);
    return url === undefined ? '' : withTracesPath(url);
}

function withTracesPath(base: string): string {
    return base.endsWith('/') ? `${base}${TRACES_PATH}` : `${base}/${TRACES_PATH}`;
}

function checkedUrl(value: string, variable: string, issues: ConfigIssue[]): string | undefined {
    const url = URL.canParse(value) ? new URL(value) : undefined;
    if (url?.protocol === 'http:' || url?.protocol === 'https:') return value;
    issues.push({ path: [variable], message: 'must be an http:// or https:// URL (the collector\'s OTLP/HTTP endpoint, e.g. "http://otel-collector:4318")' });
    return undefined;
}

function envProtocol(env: Environment, issues: ConfigIssue[]): Protocol {
    const set = firstSet(env, ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']);
    if (set === undefined) return 'http/protobuf';
    if ((OTLP_PROTOCOLS as readonly string[]).includes(set.value)) return set.value as Protocol;
    issues.push({ path: [set.variable], message: `"${set.value}" is not supported: ${OTLP_PROTOCOL_FIX}` });
    return 'http/protobuf';
}

const CERTIFICATE_VARIABLES = ['CERTIFICATE', 'CLIENT_CERTIFICATE', 'CLIENT_KEY'].flatMap(name => [`OTEL_EXPORTER_OTLP_${name}`, `OTEL_EXPORTER_OTLP_TRACES_${name}`]);

/** TLS files for the collector are not read: said at start rather than found out from failing exports. */
function refuseCertificateFiles(env: Environment, issues: ConfigIssue[]): void {
    for (const variable of CERTIFICATE_VARIABLES)
        if (nonEmpty(env[variable]) !== undefined)
            issues.push({ path: [variable], message: 'is not supported: trust a private CA with NODE_EXTRA_CA_CERTS; client certificates for the collector are not supported' });
}

/** The first of the traces-specific variable and the general one that is set (OTel's order). */
function firstSet(env: Environment, variables: readonly string[]): { variable: string; value: string } | undefined {
    for (const variable of variables) {
        const value = nonEmpty(env[variable]);
        if (value !== undefined) return { variable, value };
    }
    return undefined;
}

function envCompression(env: Environment, issues: ConfigIssue[]): Compression {
    const set = firstSet(env, ['OTEL_EXPORTER_OTLP_TRACES_COMPRESSION', 'OTEL_EXPORTER_OTLP_COMPRESSION']);
    if (set === undefined) return 'none';
    if ((COMPRESSIONS as readonly string[]).includes(set.value)) return set.value as Compression;
    issues.push({ path: [set.variable], message: `"${set.value}" is not supported: use "gzip" or "none"` });
    return 'none';
}

/** A `key=value,...` variable; one with an item that cannot be read is refused (its values are not repeated: headers hold secrets). */
function envKeyValues(env: Environment, variable: string, issues: ConfigIssue[]): Record<string, string> {
    const raw = nonEmpty(env[variable]);
    if (raw === undefined) return {};
    const { values, skipped } = keyValueList(raw);
    if (skipped > 0) issues.push({ path: [variable], message: 'must be key=value pairs separated by commas, keys and values URL-encoded' });
    return values;
}

/** Headers for the collector: a name or value Node would refuse to send is refused here, at start, rather than failing every export. */
function envHeaders(env: Environment, variable: string, issues: ConfigIssue[]): Record<string, string> {
    const headers = envKeyValues(env, variable, issues);
    try {
        for (const [name, value] of Object.entries(headers)) {
            validateHeaderName(name);
            validateHeaderValue(name, value);
        }
    } catch {
        issues.push({ path: [variable], message: 'holds a header name that is no HTTP token, or a value with control characters' });
    }
    return headers;
}

/**
 * The resource attribute OTEL_SERVICE_NAME sets (semantic conventions' ATTR_SERVICE_NAME, spelled out: loading
 * that package costs ~18 ms at every start, traces or not; otel.ts, loaded only for traces, uses it).
 */
const SERVICE_NAME = 'service.name';

function envResourceAttributes(env: Environment, issues: ConfigIssue[]): Record<string, string> {
    const attributes = envKeyValues(env, 'OTEL_RESOURCE_ATTRIBUTES', issues);
    const serviceName = nonEmpty(env.OTEL_SERVICE_NAME);
    return serviceName === undefined ? attributes : { ...attributes, [SERVICE_NAME]: serviceName };
}

function envSampler(env: Environment, issues: ConfigIssue[]): SamplerName {
    const value = nonEmpty(env.OTEL_TRACES_SAMPLER)?.toLowerCase();
    if (value === undefined) return 'parentbased_always_on';
    if ((TRACE_SAMPLERS as readonly string[]).includes(value)) return value as SamplerName;
    issues.push({ path: ['OTEL_TRACES_SAMPLER'], message: `"${value}" is not supported: use one of ${TRACE_SAMPLERS.join(', ')}` });
    return 'parentbased_always_on';
}

function envNumber(env: Environment, variable: string, fallback: number, issues: ConfigIssue[], bounds: { min: number; max?: number; integer?: boolean }): number {
    const raw = nonEmpty(env[variable]);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    const { min, max = Number.MAX_SAFE_INTEGER, integer = false } = bounds;
    if (Number.isFinite(value) && value >= min && value <= max && (!integer || Number.isInteger(value))) return value;
    issues.push({ path: [variable], message: `must be ${integer ? 'an integer' : 'a number'} from ${min}${max === Number.MAX_SAFE_INTEGER ? '' : ` to ${max}`}` });
    return fallback;
}

/**
 * Why spans never reached the collector: `queue_full`, dropped as they ended because the export queue
 * (tracing.maxQueueSize) was full; `export_failed`, in an export that failed (after the exporter's own retries).
 */
export type SpanDropReason = 'queue_full' | 'export_failed';

/** The traces a gateway exports, and how they end. */
export interface RunningTracing {
    readonly tracer: Tracer;
    /** Spans lost so far, by reason; undefined when tracing is off. */
    readonly spansDropped: (() => Record<SpanDropReason, number>) | undefined;
    /** Exports what is queued (bounded by `timeoutMs`) and stops. */
    shutdown(timeoutMs: number): Promise<void>;
}

const OFF: RunningTracing = Object.freeze({ tracer: NO_TRACER, spansDropped: undefined, shutdown: () => Promise.resolve() });

/**
 * Tracing as the settings ask: off, the no-op tracer; on, the OpenTelemetry SDK (observability/otel.ts), loaded only
 * then: a gateway that exports no traces never loads it (about 90 ms and 10 MB at start, measured).
 */
export async function startTracing(settings: TracingSettings | undefined, logger: Logger): Promise<RunningTracing> {
    if (settings === undefined) return OFF;
    const { startOtel } = await import('./otel.js');
    return startOtel(settings, logger);
}
