/**
 * Allow/deny glob lists over prompt names, compiled once. Deny wins over allow;
 * no allow list means every name not denied.
 *
 * picomatch matches paths: `*` stops at "/", and "." or ".." as a path segment
 * never matches a wildcard. Prompt names are not paths, so a name such as
 * `x/../y__admin-z` must not slip past a deny of `*__admin-*`. Both the globs
 * and the names are therefore rewritten so that "/" is an ordinary character
 * and no name starts a segment: "/" becomes a private-use character and a
 * private-use prefix is put in front of both.
 */
import picomatch from 'picomatch';

export interface PromptPolicy {
    allow?: readonly string[] | undefined;
    deny?: readonly string[] | undefined;
}

export type NameFilter = (name: string) => boolean;

const SLASH = '\uE000';
const PREFIX = '\uE001';
// posix: `[!a]` is "not a" as in every shell; without it picomatch reads "! or a", and a deny list would invert.
const OPTIONS: picomatch.PicomatchOptions = { dot: true, nonegate: true, posix: true, windows: false };

/** @internal exported for its tests */
export const EVERY_NAME: NameFilter = () => true;

export function compilePromptFilter(policy: PromptPolicy): NameFilter {
    const allow = policy.allow === undefined ? undefined : matcher(policy.allow);
    const deny = policy.deny === undefined || policy.deny.length === 0 ? undefined : matcher(policy.deny);
    if (allow === undefined && deny === undefined) return EVERY_NAME;
    return name => {
        const subject = neutralise(name);
        return (allow === undefined || allow(subject)) && (deny === undefined || !deny(subject));
    };
}

function matcher(globs: readonly string[]): (subject: string) => boolean {
    // An empty allow list allows nothing, which is what it says.
    if (globs.length === 0) return () => false;
    return picomatch(globs.map(neutralise), OPTIONS);
}

function neutralise(text: string): string {
    return PREFIX + text.replaceAll('/', SLASH);
}
