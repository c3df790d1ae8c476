/**
 * Checks a client's prompt arguments before anything is forwarded: an object of
 * strings, within the count and size limits, every required argument present,
 * and (unless the upstream takes unknown ones) only declared names. Keys are
 * handled as data: "__proto__" or "constructor" are names like any other.
 */
import { ProtocolError, type Prompt } from '@modelcontextprotocol/client';
import { CODE } from '../protocol/errors.js';
import { exceeds } from '../lib/json-bounds.js';

export interface ArgumentRules {
    maxArguments: number;
    /** Largest value, in UTF-8 bytes. */
    maxArgumentBytes: number;
    /** Forward names the prompt does not declare (when it declares its arguments at all). */
    passUnknown: boolean;
}

const DEFAULT_ARGUMENT_RULES: ArgumentRules = { maxArguments: 64, maxArgumentBytes: 65_536, passUnknown: false };

/** The arguments to forward (undefined for none), or a -32602 ProtocolError naming what is wrong. */
export function validateArguments(prompt: Prompt, args: unknown, rules: ArgumentRules = DEFAULT_ARGUMENT_RULES): Record<string, string> | undefined {
    if (args === undefined || args === null) {
        assertRequiredPresent(prompt, new Map());
        return undefined;
    }
    const values = checkStringMap(args, rules, 'arguments');
    if (!rules.passUnknown && prompt.arguments !== undefined) {
        const declared = new Set(prompt.arguments.map(argument => argument.name));
        const unknown = [...values.keys()].filter(name => !declared.has(name));
        if (unknown.length > 0) invalid(`Unknown argument${unknown.length > 1 ? 's' : ''}: ${list(unknown)}`);
    }
    assertRequiredPresent(prompt, values);
    return args as Record<string, string>;
}

/**
 * An object whose values are all strings, within the limits, as a Map (so no key is ever looked up on an object).
 * Also used for completion/complete's `context.arguments`.
 */
export function checkStringMap(value: unknown, rules: Omit<ArgumentRules, 'passUnknown'>, what: string): Map<string, string> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) invalid(`Invalid ${what}: expected an object of string values`);
    const entries = Object.entries(value);
    if (entries.length > rules.maxArguments) invalid(`Too many ${what}: ${entries.length} (at most ${rules.maxArguments})`);
    const notStrings = entries.filter(([, entry]) => typeof entry !== 'string').map(([key]) => key);
    if (notStrings.length > 0) invalid(`Invalid ${what}: values must be strings (${list(notStrings)})`);
    const tooLong = entries.filter(([, entry]) => exceeds(entry as string, rules.maxArgumentBytes)).map(([key]) => key);
    if (tooLong.length > 0) invalid(`${capitalise(what)} too large: ${list(tooLong)} (at most ${rules.maxArgumentBytes} bytes each)`);
    return new Map(entries as [string, string][]);
}

function assertRequiredPresent(prompt: Prompt, values: ReadonlyMap<string, unknown>): void {
    const missing = (prompt.arguments ?? []).filter(arg => arg.required === true && !values.has(arg.name)).map(arg => arg.name);
    if (missing.length > 0) invalid(`Missing required argument${missing.length > 1 ? 's' : ''}: ${list(missing)}`);
}

function invalid(message: string): never {
    throw new ProtocolError(CODE.invalidParams, message);
}

/** At most 10 names, each cut to 64 characters: an error message must not grow with the request. */
function list(names: readonly string[]): string {
    const shown = names.slice(0, 10).map(quote).join(', ');
    return names.length > 10 ? `${shown} and ${names.length - 10} more` : shown;
}

export function quote(name: string): string {
    return JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}...` : name);
}

function capitalise(text: string): string {
    return text.charAt(0).toUpperCase() + text.slice(1);
}
