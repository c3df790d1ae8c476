/**
 * The one real Tracer (diagnostics/tracer.ts), built on the official OpenTelemetry SDK: a BasicTracerProvider, never
 * registered globally, with no context manager (spans get their parent as a parameter), a BatchSpanProcessor (bounded
 * queue, export off the request path) and the OTLP/HTTP exporter (protobuf or JSON). Loaded by tracing.ts only when
 * traces are exported.
 *
 * An unreachable collector costs the queue's bound and one warning (then one line when exports succeed again); spans
 * are flushed at shutdown, within its timeout.
 */
import {
    createNoopMeter,
    ROOT_CONTEXT,
    SpanKind,
    SpanStatusCode,
    trace,
    TraceFlags,
    type Attributes,
    type Counter,
    type Link,
    type Meter,
    type MeterProvider,
    type Span,
    type SpanContext
} from '@opentelemetry/api';
import { ExportResultCode, TraceState, type ExportResult } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { createOtlpHttpExportDelegate, httpAgentFactoryFromOptions } from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonTraceSerializer, ProtobufTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
    AlwaysOffSampler,
    AlwaysOnSampler,
    BasicTracerProvider,
    BatchSpanProcessor,
    ParentBasedSampler,
    TraceIdRatioBasedSampler,
    type ReadableSpan,
    type Sampler,
    type SpanExporter
} from '@opentelemetry/sdk-trace-base';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Logger } from '../diagnostics/logger.js';
import { type SpanAttributes, type SpanKind as PortSpanKind, type SpanStart, type TraceSpan, type Tracer } from '../diagnostics/tracer.js';
import { withDeadline } from '../lib/deadline.js';
import { traceparentIds, type TraceContext } from '../protocol/meta.js';
import { VERSION } from '../version.js';
import type { RunningTracing, SamplerName, SpanDropReason, TracingSettings } from './tracing.js';

const DEFAULT_SERVICE_NAME = 'mcp-prompt-gateway';

const SPAN_EXPORTER_COMPONENT = 'otlp_http_span_exporter';
const EXPORT_CONCURRENCY = 30;
function samplerOf(name: SamplerName, ratio: number): Sampler {
    switch (name) {
        case 'always_on':
            return new AlwaysOnSampler();
        case 'always_off':
            return new AlwaysOffSampler();
        case 'traceidratio':
            return new TraceIdRatioBasedSampler(ratio);
        case 'parentbased_always_on':
            return new ParentBasedSampler({ root: new AlwaysOnSampler() });
        case 'parentbased_always_off':
            return new ParentBasedSampler({ root: new AlwaysOffSampler() });
        case 'parentbased_traceidratio':
            return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    }
}

export function startOtel(settings: TracingSettings, logger: Logger): RunningTracing {
    const dropped: Record<SpanDropReason, number> = { queue_full: 0, export_failed: 0 };
    const exporter = new WatchedExporter(newExporter(settings), settings.url, logger, count => (dropped.export_failed += count));
    // The processor is the one that knows when its queue is full: it says so on its self-observability meter.
    // (Not in the options' declared type of sdk-trace-base's processor, which passes them on to sdk-trace's, which takes it.)
    const processorOptions = {
        maxQueueSize: settings.maxQueueSize,
        maxExportBatchSize: settings.maxExportBatchSize,
        scheduledDelayMillis: settings.scheduledDelayMs,
        exportTimeoutMillis: settings.processorTimeoutMs,
        selfObsMeterProvider: queueDropMeter(count => (dropped.queue_full += count))
    };
    const provider = new BasicTracerProvider({
        resource: resourceFromAttributes({
            [ATTR_SERVICE_NAME]: DEFAULT_SERVICE_NAME,
            [ATTR_SERVICE_VERSION]: VERSION,
            ...settings.resourceAttributes,
            ...(settings.serviceName === undefined ? {} : { [ATTR_SERVICE_NAME]: settings.serviceName })
        }),
        sampler: samplerOf(settings.sampler, settings.samplerArg),
        spanProcessors: [new BatchSpanProcessor(exporter, processorOptions)]
    });
    const tracer = new OtelTracer(provider.getTracer('mcp-prompt-gateway', VERSION));
    logger.info({ collector: collectorOrigin(settings.url), protocol: settings.protocol, sampler: settings.sampler }, 'exporting traces');
    return {
        tracer,
        spansDropped: () => ({ ...dropped }),
        shutdown: timeoutMs => withDeadline(provider.shutdown(), timeoutMs, () => logger.warn({ waitedMs: timeoutMs }, 'spans still unexported at shutdown; dropped'))
    };
}

/**
 * The OTLP/HTTP exporter, every option given: the exporter classes of @opentelemetry/exporter-trace-otlp-* read
 * process.env themselves (headers, timeout, certificates), and the gateway reads the environment it is given.
 */
function newExporter(settings: TracingSettings): SpanExporter {
    const json = settings.protocol === 'http/json';
    const headers = { ...settings.headers, 'Content-Type': json ? 'application/json' : 'application/x-protobuf' };
    const delegate = createOtlpHttpExportDelegate(
        {
            url: settings.url,
            headers: () => Promise.resolve(headers),
            timeoutMillis: settings.exportTimeoutMs,
            compression: settings.compression,
            concurrencyLimit: EXPORT_CONCURRENCY,
            agentFactory: httpAgentFactoryFromOptions({ keepAlive: true })
        },
        json ? JsonTraceSerializer : ProtobufTraceSerializer,
        SPAN_EXPORTER_COMPONENT,
        TraceExporterMetricsHelper,
        undefined
    );
    return new OTLPExporterBase(delegate);
}

/** The collector's origin alone: its URL may carry credentials or tokens in its path or query. */
function collectorOrigin(url: string): string {
    return URL.canParse(url) ? new URL(url).origin : '(invalid URL)';
}

/** The SDK's span processor metric (otel.sdk.processor.span.processed) whose error.type says a span was dropped. */
const PROCESSED_SPANS_METRIC = 'otel.sdk.processor.span.processed';
const QUEUE_FULL = 'queue_full';

/**
 * A meter provider for the span processor's self-observability that keeps one thing: the spans it drops because its
 * queue is full (`onDropped`, with their count). Everything else it measures goes to a no-op meter.
 */
function queueDropMeter(onDropped: (count: number) => void): MeterProvider {
    const noop = createNoopMeter();
    const drops: Counter = {
        add: (count, attributes) => {
            if (attributes?.[ATTR_ERROR_TYPE] === QUEUE_FULL) onDropped(count);
        }
    };
    const meter: Meter = Object.create(noop, {
        createCounter: { value: (name: string, options?: Parameters<Meter['createCounter']>[1]) => (name === PROCESSED_SPANS_METRIC ? drops : noop.createCounter(name, options)) }
    }) as Meter;
    return { getMeter: () => meter };
}

/** The exporter, telling its first failure (and its recovery) once: a collector away for hours is one line, not one per batch. */
class WatchedExporter implements SpanExporter {
    #failing = false;

    constructor(
        private readonly inner: SpanExporter,
        private readonly url: string,
        private readonly logger: Logger,
        private readonly onLost: (count: number) => void
    ) {}

    export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
        this.inner.export(spans, result => {
            if (result.code !== ExportResultCode.SUCCESS) this.onLost(spans.length);
            this.#observe(result);
            done(result);
        });
    }

    #observe(result: ExportResult): void {
        const failed = result.code !== ExportResultCode.SUCCESS;
        if (failed === this.#failing) return;
        this.#failing = failed;
        const collector = collectorOrigin(this.url);
        if (failed)
            this.logger.warn(
                { collector, reason: result.error?.message },
                'traces cannot be exported; spans are dropped until the collector answers (bounded by tracing.maxQueueSize)'
            );
        else this.logger.info({ collector }, 'traces exported again');
    }

    shutdown(): Promise<void> {
        return this.inner.shutdown();
    }

    forceFlush(): Promise<void> {
        return this.inner.forceFlush?.() ?? Promise.resolve();
    }
}

const KINDS: Record<PortSpanKind, SpanKind> = {
    server: SpanKind.SERVER,
    client: SpanKind.CLIENT,
    internal: SpanKind.INTERNAL,
    producer: SpanKind.PRODUCER,
    consumer: SpanKind.CONSUMER
};

class OtelTracer implements Tracer {
    readonly enabled = true;

    constructor(private readonly tracer: ReturnType<BasicTracerProvider['getTracer']>) {}

    start(name: string, { kind, parent, attributes, links }: SpanStart): TraceSpan {
        const parentContext = parent === undefined ? undefined : spanContextOf(parent);
        const context = parentContext === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parentContext);
        const span = this.tracer.startSpan(name, { kind: KINDS[kind], attributes: attributesOf(attributes), links: linksOf(links) }, context);
        return new OtelSpan(span, parent);
    }
}

class OtelSpan implements TraceSpan {
    readonly context: TraceContext;
    readonly traceId: string;
    readonly spanId: string;
    readonly sampled: boolean;

    constructor(
        private readonly span: Span,
        parent: TraceContext | undefined
    ) {
        const { traceId, spanId, traceFlags } = span.spanContext();
        this.traceId = traceId;
        this.spanId = spanId;
        this.sampled = (traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED;
        const flags = this.sampled ? '01' : '00';
        this.context = { traceparent: `00-${traceId}-${spanId}-${flags}`, traceId, sampled: this.sampled, tracestate: parent?.tracestate, baggage: parent?.baggage };
    }

    set(attributes: SpanAttributes): void {
        this.span.setAttributes(attributesOf(attributes)!);
    }

    rename(name: string): void {
        this.span.updateName(name);
    }

    event(name: string, attributes?: SpanAttributes): void {
        this.span.addEvent(name, attributesOf(attributes));
    }

    link(context: TraceContext, attributes?: SpanAttributes): void {
        const linked = spanContextOf(context);
        if (linked !== undefined) this.span.addLink({ context: linked, attributes: attributesOf(attributes) });
    }

    fail(errorType: string, attributes?: SpanAttributes): void {
        this.span.setAttributes({ ...attributesOf(attributes), [ATTR_ERROR_TYPE]: errorType });
        this.span.setStatus({ code: SpanStatusCode.ERROR });
    }

    end(): void {
        this.span.end();
    }
}

/** A checked trace context as the SDK's parent (W3C: remote); undefined if its traceparent is not valid. */
function spanContextOf(context: TraceContext): SpanContext | undefined {
    const ids = traceparentIds(context.traceparent);
    if (ids === undefined) return undefined;
    return {
        traceId: ids.traceId,
        spanId: ids.spanId,
        traceFlags: ids.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
        isRemote: true,
        ...(context.tracestate === undefined ? {} : { traceState: new TraceState(context.tracestate) })
    };
}

function linksOf(links: readonly TraceContext[] | undefined): Link[] | undefined {
    if (links === undefined) return undefined;
    const out: Link[] = [];
    for (const link of links) {
        const context = spanContextOf(link);
        if (context !== undefined) out.push({ context });
    }
    return out;
}

/** The attributes as the SDK takes them: undefined values left out. */
function attributesOf(attributes: SpanAttributes | undefined): Attributes | undefined {
    if (attributes === undefined) return undefined;
    const out: Attributes = {};
    // A readonly list is copied: the SDK's type wants a mutable one (it copies it anyway).
    for (const [key, value] of Object.entries(attributes))
        if (value !== undefined) out[key] = Array.isArray(value) ? [...(value as readonly string[])] : (value as string | number | boolean);
    return out;
}
