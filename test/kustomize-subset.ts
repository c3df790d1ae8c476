/**
 * Renders a kustomization the way `kubectl kustomize` would, for the few features deploy/kubernetes uses
 * (there is no kubectl on these machines): resources (files and folders), configMapGenerator with files and
 * no hash suffix, patches merged by kind and name, namespace, labels on metadata only, images and replicas.
 * Anything else in a kustomization.yaml is refused, so a feature added to the manifests cannot be skipped
 * here in silence. Patches are merged map by map, lists replaced whole: unlike a strategic merge, so a patch
 * must not hold lists (the renderer refuses one that does).
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

export interface KubeObject {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; labels?: Record<string, string> };
    [field: string]: unknown;
}

interface Kustomization {
    resources?: string[];
    configMapGenerator?: { name: string; files: string[]; options?: { disableNameSuffixHash?: boolean } }[];
    patches?: { path: string }[];
    namespace?: string;
    labels?: { pairs: Record<string, string>; includeSelectors?: boolean }[];
    images?: { name: string; newName?: string; newTag?: string }[];
    replicas?: { name: string; count: number }[];
}

const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'configMapGenerator', 'patches', 'namespace', 'labels', 'images', 'replicas']);

/** Kinds without a namespace, among those these manifests use. */
const CLUSTER_SCOPED = new Set(['Namespace']);

export async function readKustomization(dir: string): Promise<Kustomization> {
    const document = parse(await readFile(path.join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization & Record<string, unknown>;
    const unsupported = Object.keys(document).filter(key => !SUPPORTED.has(key));
    if (unsupported.length > 0) throw new Error(`${dir}: kustomize features this renderer does not apply: ${unsupported.join(', ')}`);
    return document;
}

export async function readObjects(file: string): Promise<KubeObject[]> {
    const documents = parseAllDocuments(await readFile(file, 'utf8'));
    return documents.map(document => {
        if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]!.message}`);
        return document.toJS() as KubeObject;
    });
}

export async function render(dir: string): Promise<KubeObject[]> {
    const kustomization = await readKustomization(dir);
    const objects: KubeObject[] = [];
    for (const resource of kustomization.resources ?? []) {
        const target = path.join(dir, resource);
        objects.push(...((await stat(target)).isDirectory() ? await render(target) : await readObjects(target)));
    }
    for (const generator of kustomization.configMapGenerator ?? []) objects.push(await generateConfigMap(dir, generator));
    for (const patch of kustomization.patches ?? []) for (const change of await readObjects(path.join(dir, patch.path))) applyPatch(objects, change);
    for (const object of objects) transform(object, kustomization);
    return objects;
}

async function generateConfigMap(dir: string, generator: NonNullable<Kustomization['configMapGenerator']>[number]): Promise<KubeObject> {
    if (generator.options?.disableNameSuffixHash !== true) throw new Error(`${generator.name}: only generators without a hash suffix are rendered`);
    const data: Record<string, string> = {};
    for (const file of generator.files) data[path.basename(file)] = await readFile(path.join(dir, file), 'utf8');
    return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: generator.name }, data };
}

function applyPatch(objects: KubeObject[], change: KubeObject): void {
    const target = objects.find(object => object.kind === change.kind && object.metadata.name === change.metadata.name);
    if (target === undefined) throw new Error(`patch for ${change.kind} ${change.metadata.name}: no such object`);
    mergeInto(target, change);
}

function mergeInto(target: Record<string, unknown>, change: Record<string, unknown>): void {
    for (const [key, value] of Object.entries(change)) {
        if (Array.isArray(value)) throw new Error(`patch field ${key} is a list; lists are merged by key in kustomize, not here`);
        const current = target[key];
        if (isMap(value) && isMap(current)) mergeInto(current, value);
        else target[key] = value;
    }
}

function isMap(value: unknown): value is Record<string, unknown> {
    return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function transform(object: KubeObject, kustomization: Kustomization): void {
    const { namespace } = kustomization;
    if (namespace !== undefined) {
        if (object.kind === 'Namespace') object.metadata.name = namespace;
        else if (!CLUSTER_SCOPED.has(object.kind)) object.metadata.namespace = namespace;
    }
    for (const { pairs, includeSelectors } of kustomization.labels ?? []) {
        if (includeSelectors === true) throw new Error('labels with includeSelectors are not rendered');
        object.metadata.labels = { ...object.metadata.labels, ...pairs };
    }
    for (const { name, count } of kustomization.replicas ?? []) {
        if (object.kind === 'Deployment' && object.metadata.name === name) (object.spec as Record<string, unknown>).replicas = count;
    }
    for (const container of podContainers(object)) container.image = retag(container.image, kustomization.images ?? []);
}

function podContainers(object: KubeObject): { image: string }[] {
    if (object.kind !== 'Deployment') return [];
    const pod = (object.spec as { template: { spec: { containers: { image: string }[]; initContainers?: { image: string }[] } } }).template.spec;
    return [...pod.containers, ...(pod.initContainers ?? [])];
}

/** `name[:tag]` as kustomize's images transformer rewrites it (digests are not used here). */
function retag(image: string, images: NonNullable<Kustomization['images']>): string {
    const colon = image.lastIndexOf(':');
    const [name, tag] = colon > image.lastIndexOf('/') ? [image.slice(0, colon), image.slice(colon + 1)] : [image, undefined];
    const rule = images.find(candidate => candidate.name === name);
    if (rule === undefined) return image;
    const newTag = rule.newTag ?? tag;
    return `${rule.newName ?? name}${newTag === undefined ? '' : `:${newTag}`}`;
}
