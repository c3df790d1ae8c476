/**
 * Overrides of how an upstream's prompts appear (docs/overrides.md), applied to
 * its list where it enters the catalog, whatever the transport: a new name,
 * title, description, argument descriptions and defaults. Pure: the list and the
 * overrides in, the curated prompts and what did not apply out.
 *
 * Override and argument names are looked up in Maps, never on objects, so a
 * prompt named "constructor" or "__proto__" is a name like any other.
 */
import type { Prompt, PromptArgument } from '@modelcontextprotocol/client';
import { shortDigest } from '../lib/digest.js';

export interface ArgumentOverride {
    readonly description?: string | undefined;
    readonly default?: string | undefined;
}

export interface PromptOverride {
    readonly name?: string | undefined;
    readonly title?: string | undefined;
    readonly description?: string | undefined;
    readonly arguments?: Readonly<Record<string, ArgumentOverride>> | undefined;
}

/** One upstream's overrides, by the prompt name it lists. */
export type UpstreamOverrides = ReadonlyMap<string, PromptOverride>;

export const NO_OVERRIDES: UpstreamOverrides = new Map();

export function compileOverrides(config: Readonly<Record<string, PromptOverride>>): UpstreamOverrides {
    const entries = Object.entries(config);
    return entries.length === 0 ? NO_OVERRIDES : new Map(entries);
}

/** A listed prompt as clients see it, before namespacing. */
export interface CuratedPrompt {
    /** Its name within the upstream as exposed: the override's name, or the upstream's. */
    localName: string;
    /** Under this name gets and completions reach the upstream. */
    originalName: string;
    /** The definition under `localName`, overrides applied. */
    prompt: Prompt;
    /** Of the upstream's definition and the override: a changed override changes what clients see. */
    digest: string;
    /** Filled in for arguments the client leaves out; undefined when there are none. */
    defaults?: ReadonlyMap<string, string> | undefined;
}

/** What of the overrides did not apply to this list; every part empty when all did. */
export interface OverrideReport {
    /** Override names that match no listed prompt. */
    unmatched: string[];
    /** "<prompt>.<argument>" of argument overrides for arguments the prompt does not declare (ignored). */
    unknownArguments: string[];
    /** Renames to a name the upstream lists for another prompt: the renamed prompt is left out. */
    clashes: { prompt: string; name: string }[];
}

export interface CuratedList {
    /** Aligned with the list's prompts; undefined where a rename clashed. */
    prompts: (CuratedPrompt | undefined)[];
    report: OverrideReport;
}

export function isEmptyReport(report: OverrideReport): boolean {
    return report.unmatched.length === 0 && report.unknownArguments.length === 0 && report.clashes.length === 0;
}

/**
 * Applies `overrides` to an upstream's list (`prompts` with their `digests`, names unique). A rename never takes a
 * name the upstream lists for a prompt that keeps its own name: that prompt stays, the renamed one is left out.
 */
export function curateList(prompts: readonly Prompt[], digests: readonly string[], overrides: UpstreamOverrides): CuratedList {
    const report: OverrideReport = { unmatched: [], unknownArguments: [], clashes: [] };
    if (overrides.size === 0) {
        return { prompts: prompts.map((prompt, at) => ({ localName: prompt.name, originalName: prompt.name, prompt, digest: digests[at]! })), report };
    }
    const renamed = (prompt: Prompt) => {
        const name = overrides.get(prompt.name)?.name;
        return name !== undefined && name !== prompt.name;
    };
    const taken = new Set(prompts.filter(prompt => !renamed(prompt)).map(prompt => prompt.name));
    const listed = new Set<string>();
    const curated = prompts.map((prompt, at): CuratedPrompt | undefined => {
        listed.add(prompt.name);
        const override = overrides.get(prompt.name);
        if (override === undefined) return { localName: prompt.name, originalName: prompt.name, prompt, digest: digests[at]! };
        const applied = applyOverride(prompt, override);
        report.unknownArguments.push(...applied.unknownArguments.map(argument => `${prompt.name}.${argument}`));
        if (renamed(prompt)) {
            if (taken.has(applied.prompt.name)) {
                report.clashes.push({ prompt: prompt.name, name: applied.prompt.name });
                return undefined;
            }
            taken.add(applied.prompt.name);
        }
        const digest = shortDigest(`${digests[at]!}:${JSON.stringify(override)}`);
        return { localName: applied.prompt.name, originalName: prompt.name, prompt: applied.prompt, digest, defaults: applied.defaults };
    });
    report.unmatched = [...overrides.keys()].filter(name => !listed.has(name));
    return { prompts: curated, report };
}

/** The prompt as clients see it, the defaults of its arguments, and the argument overrides it has no argument for. */
export function applyOverride(prompt: Prompt, override: PromptOverride): { prompt: Prompt; defaults: ReadonlyMap<string, string> | undefined; unknownArguments: string[] } {
    const curated: Prompt = { ...prompt, name: override.name ?? prompt.name };
    if (override.title !== undefined) curated.title = override.title;
    if (override.description !== undefined) curated.description = override.description;
    const byArgument = new Map(Object.entries(override.arguments ?? {}));
    if (byArgument.size === 0) return { prompt: curated, defaults: undefined, unknownArguments: [] };
    const declared = new Set((prompt.arguments ?? []).map(argument => argument.name));
    const unknownArguments = [...byArgument.keys()].filter(name => !declared.has(name));
    const defaults = new Map<string, string>();
    if (prompt.arguments !== undefined) {
        curated.arguments = prompt.arguments.map(argument => {
            const change = byArgument.get(argument.name);
            if (change === undefined) return argument;
            if (change.default !== undefined) defaults.set(argument.name, change.default);
            return overriddenArgument(argument, change);
        });
    }
    return { prompt: curated, defaults: defaults.size === 0 ? undefined : defaults, unknownArguments };
}

function overriddenArgument(argument: PromptArgument, change: ArgumentOverride): PromptArgument {
    const result: PromptArgument = { ...argument };
    if (change.description !== undefined) result.description = change.description;
    // A default makes the argument optional to the client: the gateway fills it in.
    if (change.default !== undefined) result.required = false;
    return result;
}

/**
 * The client's arguments with `defaults` filled in where it left them out (an absent key; an empty string is a
 * value). Arguments that are not an object of strings pass unchanged, for validation to reject.
 */
export function withDefaults(args: unknown, defaults: ReadonlyMap<string, string> | undefined): unknown {
    if (defaults === undefined) return args;
    if (args === undefined || args === null) return Object.fromEntries(defaults);
    if (typeof args !== 'object' || Array.isArray(args)) return args;
    const missing = [...defaults].filter(([name]) => !Object.hasOwn(args, name));
    // fromEntries defines own properties: a "__proto__" key stays a key, it never reaches the prototype.
    return missing.length === 0 ? args : Object.fromEntries([...Object.entries(args), ...missing]);
}
