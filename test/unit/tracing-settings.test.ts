import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/config/issues.js';
import { GatewayConfigSchema } from '../../src/config/schema.js';
import { tracingSettings } from '../../src/observability/tracing.js';

const tracing = (block: Record<string, unknown> = {}) => GatewayConfigSchema.shape.tracing.parse(block);

function configError(run: () => unknown): string {
    try {
        run();
    } catch (error) {
        assert.ok(error instanceof ConfigError);
        return error.message;
    }
    assert.fail('no ConfigError');
}

describe('tracing settings: the config block over the standard OTEL_* environment', () => {
    test('off unless the environment or the config asks for it', () => {
        assert.equal(tracingSettings(tracing(), {}), undefined);
        assert.equal(tracingSettings(tracing(), { OTEL_SERVICE_NAME: 'x' }), undefined);
        assert.ok(tracingSettings(tracing(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }));
        assert.ok(tracingSettings(tracing(), { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }));
        assert.ok(tracingSettings(tracing(), { OTEL_TRACES_EXPORTER: 'otlp' }));
        assert.ok(tracingSettings(tracing({ enabled: true }), {}));
    });

    test('OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none turn it off; the config wins over the environment', () => {
        const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
        assert.equal(tracingSettings(tracing(), { ...endpoint, OTEL_SDK_DISABLED: 'true' }), undefined);
        assert.equal(tracingSettings(tracing(), { ...endpoint, OTEL_TRACES_EXPORTER: 'none' }), undefined);
        assert.ok(tracingSettings(tracing({ enabled: true }), { ...endpoint, OTEL_SDK_DISABLED: 'true' }));
        assert.equal(tracingSettings(tracing({ enabled: false }), endpoint), undefined);
    });

    test('the endpoint: the traces path added to a base URL, a traces URL taken as it is, the config over both', () => {
        assert.equal(tracingSettings(tracing(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })!.url, 'http://c:4318/v1/traces');
        assert.equal(tracingSettings(tracing(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })!.url, 'http://c:4318/v1/traces');
        const both = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/custom' };
        assert.equal(tracingSettings(tracing(), both)!.url, 'http://t:9/custom');
        assert.equal(tracingSettings(tracing({ endpoint: 'https://o:4318' }), both)!.url, 'https://o:4318/v1/traces');
        assert.equal(tracingSettings(tracing({ enabled: true }), {})!.url, 'http://localhost:4318/v1/traces');
    });

    test('defaults: protobuf, parentbased_always_on, the BSP bounds; the environment and the config set them', () => {
        const on = { OTEL_TRACES_EXPORTER: 'otlp' };
        assert.deepEqual(tracingSettings(tracing(), on), {
            url: 'http://localhost:4318/v1/traces',
            protocol: 'http/protobuf',
            serviceName: undefined,
            sampler: 'parentbased_always_on',
            samplerArg: 1,
            headers: {},
            compression: 'none',
            resourceAttributes: {},
            maxQueueSize: 2048,
            maxExportBatchSize: 512,
            scheduledDelayMs: 5000,
            processorTimeoutMs: 30_000,
            exportTimeoutMs: 10_000
        });
        const env = {
            ...on,
            OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
            OTEL_TRACES_SAMPLER: 'traceidratio',
            OTEL_TRACES_SAMPLER_ARG: '0.25',
            OTEL_BSP_MAX_QUEUE_SIZE: '100',
            OTEL_BSP_SCHEDULE_DELAY: '50',
            OTEL_BSP_EXPORT_TIMEOUT: '700'
        };
        const fromEnv = tracingSettings(tracing(), env)!;
        assert.deepEqual(
            [fromEnv.protocol, fromEnv.sampler, fromEnv.samplerArg, fromEnv.maxQueueSize, fromEnv.maxExportBatchSize, fromEnv.scheduledDelayMs, fromEnv.processorTimeoutMs],
            ['http/json', 'traceidratio', 0.25, 100, 100, 50, 700]
        );
        const fromConfig = tracingSettings(tracing({ protocol: 'http/protobuf', sampler: 'always_off', serviceName: 'gw', maxQueueSize: 7, exportTimeoutMs: 9 }), env)!;
        assert.deepEqual(
            [fromConfig.protocol, fromConfig.sampler, fromConfig.serviceName, fromConfig.maxQueueSize, fromConfig.exportTimeoutMs],
            ['http/protobuf', 'always_off', 'gw', 7, 9]
        );
    });

    test("the exporter's timeout: OTEL_EXPORTER_OTLP_TRACES_TIMEOUT over OTEL_EXPORTER_OTLP_TIMEOUT, the config over both; never the processor's", () => {
        const on = { OTEL_TRACES_EXPORTER: 'otlp', OTEL_BSP_EXPORT_TIMEOUT: '700' };
        assert.equal(tracingSettings(tracing(), on)!.exportTimeoutMs, 10_000);
        assert.equal(tracingSettings(tracing(), { ...on, OTEL_EXPORTER_OTLP_TIMEOUT: '1500' })!.exportTimeoutMs, 1500);
        assert.equal(tracingSettings(tracing(), { ...on, OTEL_EXPORTER_OTLP_TIMEOUT: '1500', OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '2500' })!.exportTimeoutMs, 2500);
        assert.equal(tracingSettings(tracing({ exportTimeoutMs: 9 }), { ...on, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '2500' })!.exportTimeoutMs, 9);
        assert.equal(tracingSettings(tracing(), { ...on, OTEL_EXPORTER_OTLP_TIMEOUT: '1500' })!.processorTimeoutMs, 700);
        assert.match(
            configError(() => tracingSettings(tracing(), { ...on, OTEL_EXPORTER_OTLP_TIMEOUT: 'soon' })),
            /OTEL_EXPORTER_OTLP_TIMEOUT: must be an integer from 1 to 600000/
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { ...on, OTEL_EXPORTER_OTLP_TIMEOUT: '0' })),
            /OTEL_EXPORTER_OTLP_TIMEOUT: must be an integer from 1/
        );
    });

    test('headers, compression and resource attributes come from the environment given, the config over it', () => {
        const env = {
            OTEL_TRACES_EXPORTER: 'otlp',
            OTEL_EXPORTER_OTLP_HEADERS: 'x-team=a,x-key=general',
            OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-key=traces%20only',
            OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'gzip',
            OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test,service.name=from-attributes,team=a%20b',
            OTEL_SERVICE_NAME: 'from-service-name'
        };
        const settings = tracingSettings(tracing(), env)!;
        assert.deepEqual(settings.headers, { 'x-team': 'a', 'x-key': 'traces only' });
        assert.equal(settings.compression, 'gzip');
        assert.deepEqual(settings.resourceAttributes, { 'deployment.environment': 'test', 'service.name': 'from-service-name', team: 'a b' });
        assert.deepEqual(tracingSettings(tracing({ headers: { 'x-key': 'configured' } }), env)!.headers, { 'x-team': 'a', 'x-key': 'configured' });
        assert.match(
            configError(() => tracingSettings(tracing(), { ...env, OTEL_EXPORTER_OTLP_COMPRESSION: 'zstd', OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: '' })),
            /OTEL_EXPORTER_OTLP_COMPRESSION: "zstd" is not supported: use "gzip" or "none"/
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { ...env, OTEL_RESOURCE_ATTRIBUTES: 'team' })),
            /OTEL_RESOURCE_ATTRIBUTES: /
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { ...env, OTEL_EXPORTER_OTLP_HEADERS: 'bad%20name=x' })),
            /OTEL_EXPORTER_OTLP_HEADERS: holds a header name that is no HTTP token/
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { ...env, OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-key=a%0Ab' })),
            /OTEL_EXPORTER_OTLP_TRACES_HEADERS: /
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { ...env, OTEL_EXPORTER_OTLP_CERTIFICATE: 'ca.pem' })),
            /OTEL_EXPORTER_OTLP_CERTIFICATE: is not supported: .*NODE_EXTRA_CA_CERTS/
        );
    });

    test('grpc, unknown samplers or exporters and malformed numbers or URLs: a config error naming the variable and the fix', () => {
        const on = { OTEL_TRACES_EXPORTER: 'otlp' };
        assert.match(
            configError(() => tracingSettings(tracing(), { ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })),
            /OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not supported: use "http\/protobuf".*4318/
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { ...on, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })),
            /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL/
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { ...on, OTEL_TRACES_SAMPLER: 'jaeger_remote' })),
            /OTEL_TRACES_SAMPLER: .*parentbased_always_on/
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { OTEL_TRACES_EXPORTER: 'zipkin' })),
            /OTEL_TRACES_EXPORTER: "zipkin" is not supported: use "otlp"/
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { ...on, OTEL_TRACES_SAMPLER_ARG: '2' })),
            /OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1/
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { ...on, OTEL_BSP_MAX_QUEUE_SIZE: 'lots' })),
            /OTEL_BSP_MAX_QUEUE_SIZE: must be an integer/
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })),
            /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http/
        );
        assert.equal(tracingSettings(tracing({ enabled: false }), { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), undefined);
    });

    test("the environment's queue, batch and timeout are bounded as the config's are: a queue of 10^15 spans is no bound", () => {
        const on = { OTEL_TRACES_EXPORTER: 'otlp' };
        assert.match(
            configError(() => tracingSettings(tracing(), { ...on, OTEL_BSP_MAX_QUEUE_SIZE: '1000000000000000' })),
            /OTEL_BSP_MAX_QUEUE_SIZE: must be an integer from 1 to 1000000/
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { ...on, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1000000000000000' })),
            /OTEL_BSP_MAX_EXPORT_BATCH_SIZE: must be an integer from 1 to 1000000/
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { ...on, OTEL_BSP_EXPORT_TIMEOUT: '86400000' })),
            /OTEL_BSP_EXPORT_TIMEOUT: must be an integer from 1 to 600000/
        );
        assert.match(
            configError(() => tracingSettings(tracing(), { ...on, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '86400000' })),
            /OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: must be an integer from 1 to 600000/
        );
        assert.equal(tracingSettings(tracing(), { ...on, OTEL_BSP_MAX_QUEUE_SIZE: '1000000' })?.maxQueueSize, 1_000_000);
    });

    test('the config block refuses grpc with the same fix, and malformed values', () => {
        assert.match(GatewayConfigSchema.shape.tracing.safeParse({ protocol: 'grpc' }).error!.issues[0]!.message, /use "http\/protobuf".*4318/);
        assert.equal(GatewayConfigSchema.shape.tracing.safeParse({ endpoint: 'ftp://x' }).success, false);
        assert.equal(GatewayConfigSchema.shape.tracing.safeParse({ samplerArg: 1.5 }).success, false);
        assert.equal(GatewayConfigSchema.shape.tracing.safeParse({ headers: { 'bad name': 'x' } }).success, false);
    });
});
