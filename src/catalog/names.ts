/**
 * How upstream prompt names become exposed names, and the name table of a
 * view. Exposed names are resolved by table lookup, never by splitting
 * strings, so a name such as `a__b__c` maps to exactly the one prompt that
 * produced it.
 */
import type { Logger } from '../diagnostics/logger.js';
import type { CatalogEntry, CatalogView } from './catalog.js';
import type { UpstreamList } from './list-cache.js';
import { curateList, NO_OVERRIDES, type CuratedPrompt } from './overrides.js';
import type { Segment } from './paginate.js';
import type { UpstreamPort } from './upstream-port.js';

export interface NamingRule {
    separator: string;
}

function exposedName(rule: NamingRule, upstreamId: string, namespaced: boolean, promptName: string): string {
    return namespaced ? `${upstreamId}${rule.separator}${promptName}` : promptName;
}

/**
 * Whether an unprefixed name would sit in a namespaced upstream's namespace
 * (`docs__x` while upstream `docs` is namespaced): such names stay reserved for it.
 */
function inReservedNamespace(rule: NamingRule, name: string, namespacedIds: ReadonlySet<string>): boolean {
    const at = name.indexOf(rule.separator);
    return at > 0 && namespacedIds.has(name.slice(0, at));
}

const EMPTY_LIST: UpstreamList = { prompts: [], digests: [], names: [], version: 'empty' };

/** An upstream's list as clients see it (see overrides.ts), aligned with its prompts. */
export type Curate = (upstream: UpstreamPort, list: UpstreamList) => readonly (CuratedPrompt | undefined)[];

const AS_LISTED: Curate = (_upstream, list) => curateList(list.prompts, list.digests, NO_OVERRIDES).prompts;

/**
 * The view of `lists` (one per upstream of `order`, undefined where there is none): one segment per upstream in
 * config order, each prompt under its exposed name. A name taken twice goes to the first upstream in config order;
 * an unprefixed name in a namespaced upstream's namespace is left out. Either way the entry is undefined for
 * everyone, so pages and cursors still walk the upstream's full list (by the upstream's own names, so a renamed
 * prompt keeps its place). `curate` applies the upstream's overrides; a prompt it leaves out is left out the same way.
 */
export function nameTable(order: readonly UpstreamPort[], lists: readonly (UpstreamList | undefined)[], naming: NamingRule, log: Logger, curate: Curate = AS_LISTED): CatalogView {
    const byName = new Map<string, CatalogEntry>();
    const namespacedIds = new Set(order.filter(upstream => upstream.config.namespace).map(upstream => upstream.id));
    const segments = order.map((upstream, index): Segment<CatalogEntry> => {
        const list = lists[index] ?? EMPTY_LIST;
        const entries = curate(upstream, list).map(curated => {
            if (curated === undefined) return undefined;
            const name = exposedName(naming, upstream.id, upstream.config.namespace, curated.localName);
            if (!upstream.config.namespace && inReservedNamespace(naming, name, namespacedIds)) {
                log.warn({ prompt: name.slice(0, 64), upstream: upstream.id }, "unprefixed prompt name lies in a namespaced upstream's namespace; leaving it out");
                return undefined;
            }
            const owner = byName.get(name);
            if (owner !== undefined) {
                log.warn({ prompt: name.slice(0, 64), kept: owner.upstream.id, dropped: upstream.id }, 'prompt name clash; keeping the first upstream in config order');
                return undefined;
            }
            const { originalName, prompt, digest, defaults } = curated;
            const entry: CatalogEntry = { exposedName: name, upstream, originalName, prompt: { ...prompt, name }, digest, defaults };
            byName.set(name, entry);
            return entry;
        });
        return { upstreamId: upstream.id, version: list.version, names: list.names, entries };
    });
    return { segments, byName };
}
