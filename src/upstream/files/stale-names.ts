/**
 * Config that still names a prompt file by its path (`team__ops/incident`), as
 * the `markdown` format did before every format named a file after its file
 * (docs/prompt-files.md, Names). Such an allow or deny pattern, or override
 * key, matches nothing now: a deny stops hiding, an allow stops showing, an
 * override stops applying. One warning for each, naming the field, the old
 * name and the new one where it follows (a glob has none); never an error, so
 * a gateway upgraded in place still starts. Pure: the CLI reports these with
 * the config's other notes (at start, at each reload, and in --check).
 */
import type { ImportNote } from '../../config/client-config/import.js';
import { formatPath } from '../../config/issues.js';
import type { FilesUpstreamConfig, GatewayConfig } from '../../config/schema.js';
import { renamedAfterFile } from './formats/names.js';

type FieldPath = (string | number)[];

interface Policy {
    allow?: readonly string[] | undefined;
    deny?: readonly string[] | undefined;
}

/** A pattern or key about one files upstream's prompts: `prefix` is what the exposed name puts before the upstream's own name. */
interface Named {
    upstream: FilesUpstreamConfig;
    prefix: string;
    name: string;
}

const GLOB = /[*?[\]{}()!+@]/;
const SHOWN_CHARACTERS = 128;

export function staleNameNotes(config: GatewayConfig): ImportNote[] {
    const notes: ImportNote[] = [];
    const warn = (path: FieldPath, named: Named) => {
        if (named.name.includes('/')) notes.push({ level: 'warning', message: describe(path, named) });
    };
    config.upstreams.forEach((upstream, index) => {
        if (upstream.transport !== 'files') return;
        const own = (name: string): Named => ({ upstream, prefix: '', name });
        forEachPattern(upstream.prompts, ['upstreams', index, 'prompts'], (pattern, path) => warn(path, own(pattern)));
        for (const key of Object.keys(upstream.overrides)) warn(['upstreams', index, 'overrides', key], own(key));
    });
    const owner = exposedOwner(config);
    const policies: [FieldPath, Policy][] = [
        [['prompts'], config.prompts],
        [['anonymous', 'prompts'], config.anonymous.prompts],
        ...config.clients.map((client, index): [FieldPath, Policy] => [['clients', index, 'prompts'], client.prompts])
    ];
    for (const [at, policy] of policies) {
        forEachPattern(policy, at, (pattern, path) => {
            const named = owner(pattern);
            if (named !== undefined) warn(path, named);
        });
    }
    return notes;
}

function forEachPattern(policy: Policy, at: FieldPath, visit: (pattern: string, path: FieldPath) => void): void {
    for (const field of ['allow', 'deny'] as const) policy[field]?.forEach((pattern, index) => visit(pattern, [...at, field, index]));
}

/**
 * The files upstream an exposed-name pattern is about: the one whose prefix (`team__`) it starts with; for an
 * upstream with `namespace: false`, a name with no wildcard when every upstream without a namespace serves files
 * (otherwise the name may be another server's, which may have a "/").
 */
function exposedOwner(config: GatewayConfig): (pattern: string) => Named | undefined {
    const separator = config.namespace.separator;
    const namespaced = config.upstreams.filter(upstream => upstream.namespace);
    const bare = config.upstreams.filter(upstream => !upstream.namespace);
    const bareFiles = bare.every(upstream => upstream.transport === 'files') ? bare[0] : undefined;
    return pattern => {
        const upstream = namespaced.find(candidate => pattern.startsWith(`${candidate.id}${separator}`));
        if (upstream !== undefined) {
            const prefix = `${upstream.id}${separator}`;
            return upstream.transport === 'files' ? { upstream, prefix, name: pattern.slice(prefix.length) } : undefined;
        }
        return bareFiles?.transport === 'files' && !GLOB.test(pattern) ? { upstream: bareFiles, prefix: '', name: pattern } : undefined;
    };
}

function describe(path: FieldPath, { upstream, prefix, name }: Named): string {
    const renamed = GLOB.test(name) ? undefined : renamedAfterFile(upstream.format, name);
    const effect = path.at(-2) === 'deny' ? 'what it hid is shown now' : path.at(-2) === 'overrides' ? 'it applies to nothing now' : 'it matches nothing now';
    const fix = renamed === undefined ? 'name the prompts without their folders' : `use ${JSON.stringify(`${prefix}${renamed}`)}`;
    return (
        `${formatPath(path)}: ${JSON.stringify(`${prefix}${name}`.slice(0, SHOWN_CHARACTERS))} names a prompt of files upstream "${upstream.id}" with its folder, ` +
        `but prompt files are named after their file now, without their folders (docs/prompt-files.md, Names): ${effect}; ${fix}`
    );
}
