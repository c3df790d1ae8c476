/**
 * How upstream prompt names become exposed names. Exposed names are resolved by
 * table lookup (see `buildView`), never by splitting strings, so a name such as
 * `a__b__c` maps to exactly the one prompt that produced it.
 */
export interface NamingRule {
    separator: string;
}

export function exposedName(rule: NamingRule, upstreamId: string, namespaced: boolean, promptName: string): string {
    return namespaced ? `${upstreamId}${rule.separator}${promptName}` : promptName;
}
