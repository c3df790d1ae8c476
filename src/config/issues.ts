/** One problem found in a config file, and the error that carries all of them. */
export interface ConfigIssue {
    /** Where in the document: ['upstreams', 0, 'id']. Empty for the document itself. */
    path: readonly PropertyKey[];
    message: string;
}

/** `upstreams[0].headers.Authorization`; keys that are not identifiers are quoted. */
export function formatPath(path: readonly PropertyKey[]): string {
    let out = '';
    for (const part of path) {
        if (typeof part === 'number') out += `[${part}]`;
        else if (typeof part === 'string' && /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(part)) out += out === '' ? part : `.${part}`;
        else out += `[${JSON.stringify(String(part))}]`;
    }
    return out === '' ? '(top level)' : out;
}

export class ConfigError extends Error {
    override readonly name = 'ConfigError';

    constructor(
        readonly source: string,
        readonly issues: readonly ConfigIssue[]
    ) {
        super(`Invalid config ${source}:\n` + issues.map(issue => `  - ${formatPath(issue.path)}: ${issue.message}`).join('\n'));
    }
}
