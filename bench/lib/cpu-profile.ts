/**
 * Where a process's CPU time goes, by package: each sample of a V8 CPU profile is charged to the nearest package
 * on its stack, from the running function outwards (a Node core function called by undici is undici's time; the
 * gateway's own code is "gateway: <its folder>"). Packages Node bundles (undici behind `fetch`) count as packages.
 */
import type { CpuProfile } from './inspector.js';

const UNATTRIBUTED = 'Node core, no package on the stack';
/** V8's pseudo-frames: their time is nobody's package. */
const PSEUDO_FRAMES: Record<string, string> = {
    '(garbage collector)': 'garbage collector',
    '(program)': 'native code outside JavaScript (V8, libuv, the HTTP parser)'
};

/** The package or gateway folder a script belongs to, or undefined for Node's own code and natives. */
function ownerOf(url: string): string | undefined {
    const bundled = /^node:internal\/deps\/([^/]+)/.exec(url);
    if (bundled !== null) return `${bundled[1]} (bundled in Node)`;
    const packages = url.split('/node_modules/');
    if (packages.length > 1) {
        const [scope, name] = packages.at(-1)!.split('/');
        return scope!.startsWith('@') ? `${scope}/${name}` : scope;
    }
    const gateway = /\/dist\/(?:([^/]+)\/)?[^/]+\.js$/.exec(url);
    if (gateway !== null) return `gateway: ${gateway[1] ?? 'top level'}`;
    return undefined;
}

/** Microseconds of CPU per owner over the profile (idle time left out). */
export function chargeToPackages(profile: CpuProfile): Map<string, number> {
    const byId = new Map(profile.nodes.map(node => [node.id, node]));
    const parent = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    const ownerOfNode = new Map<number, string>();
    const owner = (id: number): string => {
        const known = ownerOfNode.get(id);
        if (known !== undefined) return known;
        const { functionName, url } = byId.get(id)!.callFrame;
        const up = parent.get(id);
        const found = PSEUDO_FRAMES[functionName] ?? ownerOf(url) ?? (up === undefined ? UNATTRIBUTED : owner(up));
        ownerOfNode.set(id, found);
        return found;
    };
    const totals = new Map<string, number>();
    profile.samples.forEach((id, i) => {
        const charged = byId.get(id)?.callFrame.functionName === '(idle)' ? undefined : owner(id);
        // A sample's time is the gap to the next one.
        const micros = profile.timeDeltas[i + 1] ?? 0;
        if (charged !== undefined) totals.set(charged, (totals.get(charged) ?? 0) + micros);
    });
    return totals;
}
