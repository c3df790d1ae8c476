/**
 * How upstream prompt names become exposed names. Exposed names are resolved by
 * table lookup (the catalog's view), never by splitting strings, so a name such
 * as `a__b__c` maps to exactly the one prompt that produced it.
 */
export interface NamingRule {
    separator: string;
}

export function exposedName(rule: NamingRule, upstreamId: string, namespaced: boolean, promptName: string): string {
    return namespaced ? `${upstreamId}${rule.separator}${promptName}` : promptName;
}

/**
 * Whether an unprefixed name would sit in a namespaced upstream's namespace
 * (`docs__x` while upstream `docs` is namespaced): such names stay reserved for it.
 */
export function inReservedNamespace(rule: NamingRule, name: string, namespacedIds: ReadonlySet<string>): boolean {
    const at = name.indexOf(rule.separator);
    return at > 0 && namespacedIds.has(name.slice(0, at));
}
