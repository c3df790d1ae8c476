/**
 * deploy/kubernetes: both kustomizations rendered (test/kustomize-subset.ts), every object checked against the
 * Kubernetes OpenAPI schemas (kubernetes-models), and the properties a working deployment hangs on checked
 * against each other and against the gateway's own config parser.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ServiceMonitor, type IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler, type IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget, type IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap, type IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import { Secret, type ISecret } from 'kubernetes-models/v1/Secret';
import { Service, type IService } from 'kubernetes-models/v1/Service';
import { ConfigError } from '../src/config/issues.js';
import { parseConfig } from '../src/config/load.js';
import type { GatewayConfig } from '../src/config/schema.js';
import { readKustomization, readObjects, render, type KubeObject } from './kustomize-subset.js';

const ROOT = path.resolve(import.meta.dirname, '../deploy/kubernetes');
const BASE = path.join(ROOT, 'base');
const OVERLAY = path.join(ROOT, 'overlays/example');
const GATEWAY = 'mcp-prompt-gateway';
const REDIS = 'mcp-prompt-gateway-redis';
const TIMEOUT = { timeout: 30_000 };

/** Each kind the manifests use, with its schema; a kind not here fails the validation test. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
    'apps/v1 Deployment': Deployment,
    'v1 Service': Service,
    'v1 ConfigMap': ConfigMap,
    'v1 Namespace': Namespace,
    'v1 Secret': Secret,
    'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
    'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
    'monitoring.coreos.com/v1 ServiceMonitor': ServiceMonitor
};

function validate(object: KubeObject): void {
    const Model = MODELS[`${object.apiVersion} ${object.kind}`];
    if (Model === undefined) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
    new Model(structuredClone(object) as never).validate();
}

const rendered = { base: await render(BASE), overlay: await render(OVERLAY) };

function find<T>(objects: KubeObject[], kind: string, name: string): T {
    const found = objects.find(object => object.kind === kind && object.metadata.name === name);
    assert.ok(found, `${kind} ${name} is rendered`);
    return found as unknown as T;
}

const gatewayDeployment = (objects = rendered.base) => find<IDeployment>(objects, 'Deployment', GATEWAY);
const gatewayContainer = (objects = rendered.base): IContainer => gatewayDeployment(objects).spec!.template.spec!.containers[0]!;
const gatewayJson = (objects = rendered.base) => find<IConfigMap>(objects, 'ConfigMap', `${GATEWAY}-config`).data!['gateway.json']!;

/** 32 characters each: what the Secret would hold. */
const DUMMY_ENV = {
    POD_NAMESPACE: GATEWAY,
    CURSOR_SECRET: 'c'.repeat(32),
    SESSION_SECRET: 's'.repeat(32),
    METRICS_TOKEN: 'm'.repeat(32),
    REDIS_URL: `redis://:${'r'.repeat(32)}@${REDIS}:6379/0`
};

/** The config as the gateway would load it, with what the Secret would hold. */
function gatewayConfig(text = gatewayJson()): GatewayConfig {
    return parseConfig(text, 'gateway.json', DUMMY_ENV);
}

function containerPort(container: IContainer, port: number | string | undefined): number | undefined {
    return typeof port === 'number' ? port : container.ports?.find(candidate => candidate.name === port)?.containerPort;
}

function selects(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
    const entries = Object.entries(selector ?? {});
    return entries.length > 0 && entries.every(([key, value]) => labels?.[key] === value);
}

const podLabels = (name: string, objects = rendered.base) => find<IDeployment>(objects, 'Deployment', name).spec!.template.metadata!.labels;

test('every rendered object, in the base and the overlay, is valid against its Kubernetes schema', TIMEOUT, () => {
    for (const [which, objects] of Object.entries(rendered)) {
        for (const object of objects) {
            assert.doesNotThrow(() => validate(object), `${which}: ${object.kind} ${object.metadata.name}`);
        }
    }
    const kinds = (objects: KubeObject[]) => objects.map(object => `${object.kind} ${object.metadata.name}`).sort();
    assert.deepEqual(kinds(rendered.base), [
        `ConfigMap ${GATEWAY}-config`,
        `Deployment ${GATEWAY}`,
        `Deployment ${REDIS}`,
        `HorizontalPodAutoscaler ${GATEWAY}`,
        `PodDisruptionBudget ${GATEWAY}`,
        `Service ${GATEWAY}`,
        `Service ${REDIS}`,
        `ServiceMonitor ${GATEWAY}`
    ]);
    assert.deepEqual(kinds(rendered.overlay), [...kinds(rendered.base), `ConfigMap ${GATEWAY}-tracing`, `Namespace ${GATEWAY}`].sort());
});

test('the schema check rejects a broken Deployment and an unknown kind', TIMEOUT, () => {
    const broken = structuredClone(gatewayDeployment()) as unknown as KubeObject & { spec: { replicas: unknown } };
    broken.spec.replicas = 'three';
    assert.throws(() => validate(broken), /replicas/);
    const unnamed = structuredClone(gatewayDeployment()) as unknown as KubeObject & { spec: { template: { spec: { containers: object[] } } } };
    unnamed.spec.template.spec.containers = [{ image: 'mcp-prompt-gateway' }];
    assert.throws(() => validate(unnamed), /name/);
    assert.throws(() => validate({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } }), /no schema/);
});

test('the gateway.json of the ConfigMap is a valid config for the gateway itself', TIMEOUT, () => {
    const config = gatewayConfig();
    assert.equal(config.listen.host, '0.0.0.0');
    assert.equal(config.cursorSecret, DUMMY_ENV.CURSOR_SECRET);
    assert.equal(config.metrics.bearerToken, DUMMY_ENV.METRICS_TOKEN);
    assert.equal(config.cluster?.redis?.url, DUMMY_ENV.REDIS_URL);
    assert.deepEqual(config.sessions.secrets, [DUMMY_ENV.SESSION_SECRET]);
    // The parser refuses what is wrong: the same file with a short cursorSecret does not load.
    assert.throws(() => parseConfig(gatewayJson(), 'gateway.json', { ...DUMMY_ENV, CURSOR_SECRET: 'short' }), ConfigError);
});

test('the container runs the CLI on the mounted config folder, which the ConfigMap fills and updates', TIMEOUT, () => {
    const container = gatewayContainer();
    const configFile = container.args![container.args!.indexOf('--config') + 1]!;
    assert.equal(configFile, '/etc/mcp-prompt-gateway/gateway.json');
    const mount = container.volumeMounts!.find(candidate => candidate.mountPath === path.posix.dirname(configFile));
    assert.ok(mount, 'the config folder is mounted');
    assert.equal(mount.subPath, undefined, 'a subPath mount never sees ConfigMap updates');
    const volume = gatewayDeployment().spec!.template.spec!.volumes!.find(candidate => candidate.name === mount.name);
    assert.equal(volume?.configMap?.name, `${GATEWAY}-config`);
    assert.ok(gatewayJson().length > 0, `the ConfigMap holds ${path.posix.basename(configFile)}`);
});

test('probes ask /healthz and /readyz on the port the gateway listens on, with a Host it allows', TIMEOUT, () => {
    const container = gatewayContainer();
    const config = gatewayConfig();
    const probes: [string, IProbe | undefined, string][] = [
        ['startup', container.startupProbe, '/healthz'],
        ['liveness', container.livenessProbe, '/healthz'],
        ['readiness', container.readinessProbe, '/readyz']
    ];
    for (const [name, probe, expectedPath] of probes) {
        assert.equal(probe?.httpGet?.path, expectedPath, `${name} probe path`);
        assert.equal(containerPort(container, probe.httpGet.port), config.listen.port, `${name} probe port`);
        const host = probe.httpGet.httpHeaders?.find(header => header.name.toLowerCase() === 'host')?.value;
        assert.ok(host !== undefined && config.listen.allowedHosts?.includes(host), `${name} probe sends a Host in listen.allowedHosts`);
    }
});

test("the grace period covers the preStop sleep and the gateway's shutdownTimeoutMs", TIMEOUT, () => {
    const pod = gatewayDeployment().spec!.template.spec!;
    const sleep = gatewayContainer().lifecycle?.preStop?.exec?.command;
    assert.equal(sleep?.[0], 'sleep');
    const sleepSeconds = Number(sleep[1]);
    assert.ok(sleepSeconds > 0);
    const budget = sleepSeconds + gatewayConfig().shutdownTimeoutMs / 1000;
    assert.ok(pod.terminationGracePeriodSeconds! > budget, `${pod.terminationGracePeriodSeconds} s > ${budget} s`);
});

test("every container runs as non-root with a read-only root, no capabilities and the runtime's seccomp profile", TIMEOUT, () => {
    for (const name of [GATEWAY, REDIS]) {
        const pod = find<IDeployment>(rendered.base, 'Deployment', name).spec!.template.spec!;
        assert.equal(pod.automountServiceAccountToken, false, name);
        for (const container of pod.containers) {
            const context = container.securityContext;
            assert.equal(context?.runAsNonRoot, true, name);
            assert.equal(context.readOnlyRootFilesystem, true, name);
            assert.equal(context.allowPrivilegeEscalation, false, name);
            assert.deepEqual(context.capabilities?.drop, ['ALL'], name);
            assert.equal(context.seccompProfile?.type, 'RuntimeDefault', name);
        }
    }
    const gateway = gatewayContainer();
    assert.equal(gateway.securityContext?.runAsUser, 10001);
    assert.ok(
        gateway.volumeMounts?.some(mount => mount.mountPath === '/tmp'),
        'a writable /tmp'
    );
    assert.ok(gateway.resources?.requests?.memory && gateway.resources.limits?.memory && gateway.resources.requests.cpu);
});

test("Service, PDB, HPA and ServiceMonitor all point at the gateway's pods and ports", TIMEOUT, () => {
    const labels = podLabels(GATEWAY);
    const service = find<IService>(rendered.base, 'Service', GATEWAY);
    assert.ok(selects(service.spec!.selector, labels), 'the Service selects the gateway pods');
    assert.ok(!selects(service.spec!.selector, podLabels(REDIS)), 'and not the Redis pod');
    const http = service.spec!.ports!.find(port => port.name === 'http');
    assert.equal(http?.port, 80);
    assert.equal(containerPort(gatewayContainer(), http.targetPort), 8080);

    const pdb = find<IPodDisruptionBudget>(rendered.base, 'PodDisruptionBudget', GATEWAY);
    assert.ok(selects(pdb.spec!.selector!.matchLabels, labels), 'the PDB selects the gateway pods');
    const hpa = find<IHorizontalPodAutoscaler>(rendered.base, 'HorizontalPodAutoscaler', GATEWAY);
    assert.deepEqual(hpa.spec!.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: GATEWAY });
    assert.equal(hpa.spec!.metrics?.[0]?.resource?.name, 'cpu');

    const monitor = find<IServiceMonitor>(rendered.base, 'ServiceMonitor', GATEWAY);
    assert.ok(selects(monitor.spec.selector.matchLabels, service.metadata!.labels), 'the ServiceMonitor selects the Service');
    const config = gatewayConfig();
    const endpoint = monitor.spec.endpoints[0]!;
    assert.equal(endpoint.path, config.metrics.path);
    const scraped = service.spec!.ports!.find(port => port.name === endpoint.port);
    assert.equal(containerPort(gatewayContainer(), scraped?.targetPort), config.metrics.listen?.port, 'scraped on metrics.listen');
    assert.equal(endpoint.authorization?.credentials?.key, 'METRICS_TOKEN');
});

test('rollouts and spreading keep replicas serving', TIMEOUT, () => {
    const spec = gatewayDeployment().spec!;
    assert.equal(spec.strategy?.type, 'RollingUpdate');
    assert.equal(spec.strategy.rollingUpdate?.maxUnavailable, 0);
    const spread = spec.template.spec!.topologySpreadConstraints?.[0];
    assert.equal(spread?.topologyKey, 'kubernetes.io/hostname');
    assert.ok(selects(spread.labelSelector?.matchLabels, spec.template.metadata!.labels));
});

test('Redis keeps nothing on disk, and the gateway reaches it with the shared password', TIMEOUT, () => {
    const redis = find<IDeployment>(rendered.base, 'Deployment', REDIS).spec!.template.spec!;
    const container = redis.containers[0]!;
    assert.equal(container.image, 'redis:7-alpine');
    const args = container.args!;
    assert.equal(args[args.indexOf('--save') + 1], '');
    assert.equal(args[args.indexOf('--appendonly') + 1], 'no');
    const data = container.volumeMounts!.find(mount => mount.mountPath === '/data');
    assert.ok(redis.volumes!.find(volume => volume.name === data?.name)?.emptyDir);
    const service = find<IService>(rendered.base, 'Service', REDIS);
    assert.ok(selects(service.spec!.selector, podLabels(REDIS)));
    const url = gatewayContainer().env!.find(variable => variable.name === 'REDIS_URL')?.value;
    assert.equal(url, `redis://:$(REDIS_PASSWORD)@${REDIS}:${service.spec!.ports![0]!.port}/0`);
});

test('secret.example.yaml is a valid Secret with every key the manifests read, and is never applied', TIMEOUT, async () => {
    const [example] = await readObjects(path.join(BASE, 'secret.example.yaml'));
    assert.doesNotThrow(() => validate(example!));
    assert.ok(!(await readKustomization(BASE)).resources?.includes('secret.example.yaml'));
    assert.ok(!rendered.overlay.some(object => object.kind === 'Secret'), 'no Secret is rendered');
    const read = new Set<string>();
    const text = JSON.stringify(rendered.base);
    for (const match of text.matchAll(/"secretKeyRef":\{"name":"mcp-prompt-gateway","key":"(\w+)"\}/g)) read.add(match[1]!);
    read.add(find<IServiceMonitor>(rendered.base, 'ServiceMonitor', GATEWAY).spec.endpoints[0]!.authorization!.credentials!.key);
    assert.deepEqual([...read].sort(), Object.keys((example as unknown as ISecret).stringData!).sort());
    const source = await readFile(path.join(BASE, 'gateway.json'), 'utf8');
    for (const name of ['CURSOR_SECRET', 'SESSION_SECRET', 'REDIS_URL', 'METRICS_TOKEN']) assert.ok(source.includes(`\${${name}}`), `${name} from the environment`);
});

test('the example overlay: its namespace, three replicas, a pinned image and the HPA floor', TIMEOUT, () => {
    const objects = rendered.overlay;
    for (const object of objects) {
        if (object.kind !== 'Namespace') assert.equal(object.metadata.namespace, GATEWAY, `${object.kind} ${object.metadata.name}`);
        assert.equal(object.metadata.labels?.['app.kubernetes.io/part-of'], GATEWAY);
    }
    assert.equal(gatewayDeployment(objects).spec!.replicas, 3);
    assert.equal(gatewayContainer(objects).image, 'registry.example.com/mcp-prompt-gateway:0.1.0');
    assert.equal(find<IDeployment>(objects, 'Deployment', REDIS).spec!.template.spec!.containers[0]!.image, 'redis:7-alpine');
    assert.equal(find<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler', GATEWAY).spec!.minReplicas, 3);
    assert.deepEqual(gatewayDeployment(objects).spec!.selector.matchLabels, gatewayDeployment().spec!.selector.matchLabels, 'selectors untouched');
    const config = gatewayConfig(gatewayJson(objects));
    assert.ok(config.listen.allowedHosts?.includes(`${GATEWAY}.${GATEWAY}.svc.cluster.local`), 'the Service DNS name in its namespace');
});
