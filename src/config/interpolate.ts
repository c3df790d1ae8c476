/**
 * `${VAR}` and `${VAR:-default}` substitution in every string value of a parsed
 * JSON document. Pure: the environment is passed in. Keys are never rewritten,
 * and `$${` stands for a literal `${`.
 */
import type { ConfigIssue } from './issues.js';

const PLACEHOLDER = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\{[^}]*\}?/g;

export type Environment = Readonly<Record<string, string | undefined>>;

/** One placeholder's variable and value, and the whole string it went into (for the secret rules, see config/secrets.ts). */
export interface Expansion {
    name: string;
    value: string;
    into: string;
}

export interface InterpolationResult {
    value: unknown;
    issues: ConfigIssue[];
    /** Every value taken from the environment (defaults are written in the file, so they are not here). */
    expansions: Expansion[];
}

/** `text` as a config string that interpolates back to itself: each `${` written `$${` (a path may hold one). */
export function literalText(text: string): string {
    return text.replaceAll('${', () => '$${');
}

export function interpolateEnv(document: unknown, env: Environment): InterpolationResult {
    const found: Found = { issues: [], expansions: [] };
    const value = walk(document, [], env, found);
    return { value, ...found };
}

interface Found {
    issues: ConfigIssue[];
    expansions: Expansion[];
}

function walk(node: unknown, path: (string | number)[], env: Environment, found: Found): unknown {
    if (typeof node === 'string') return substitute(node, path, env, found);
    if (Array.isArray(node)) return node.map((item, index) => walk(item, [...path, index], env, found));
    if (node !== null && typeof node === 'object') {
        // Object.entries and defineProperty keep keys such as "__proto__" as plain data.
        const out: Record<string, unknown> = {};
        for (const [key, child] of Object.entries(node)) {
            Object.defineProperty(out, key, {
                value: walk(child, [...path, key], env, found),
                enumerable: true,
                writable: true,
                configurable: true
            });
        }
        return out;
    }
    return node;
}

function substitute(text: string, path: (string | number)[], env: Environment, { issues, expansions }: Found): string {
    if (!text.includes('$')) return text;
    const values: Omit<Expansion, 'into'>[] = [];
    const into = text.replace(PLACEHOLDER, (match, name: string | undefined, fallback: string | undefined) => {
        if (match === '$${') return '${';
        if (name === undefined) {
            issues.push({
                path,
                message: `malformed placeholder "${match}"; write \${NAME} or \${NAME:-default} (NAME: letters, digits, "_")`
            });
            return match;
        }
        // Own properties only: `${constructor}` must not find Object.prototype.constructor.
        const fromEnv = Object.hasOwn(env, name) ? env[name] : undefined;
        if (fromEnv !== undefined && !(fromEnv === '' && fallback !== undefined)) {
            values.push({ name, value: fromEnv });
            return fromEnv;
        }
        if (fallback !== undefined) return fallback;
        issues.push({
            path,
            message: `environment variable ${name} is not set; set it, or give a default with \${${name}:-default}`
        });
        return '';
    });
    for (const value of values) expansions.push({ ...value, into });
    return into;
}
