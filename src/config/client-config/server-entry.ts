/**
 * One server of a client config file made a gateway upstream (without its id, which the importer gives): its
 * transport from `type` (or from `command` / `url` without one), its fields checked against FIELD_RULES, its
 * strings expanded as the client would expand them. The result is checked by the upstream schema afterwards.
 */
import path from 'node:path';
import type { ClientFormat } from './format.js';
import { FIELD_RULES, HTTP_FIELDS, STDIO_FIELDS } from './fields.js';
import { expand, type VariableReader, type VariableScope } from './variables.js';

type Path = (string | number)[];

export interface EntryContext {
    format: ClientFormat;
    variables: VariableReader | undefined;
    scope: VariableScope;
    /** Paths are relative to the server's entry. */
    problem(path: Path, message: string): void;
    warn(path: Path, message: string): void;
    /** A value a placeholder expanded to that is a secret (see variables.ts), wherever it went. */
    secret(value: string): void;
}

export interface ServerEntry {
    /** A gateway upstream without its id, before validation. */
    upstream: Record<string, unknown>;
    /** Absolute path of the env file to read into `env` (stdio only). */
    envFile: string | undefined;
}

type Transport = 'stdio' | 'streamable-http' | 'http' | 'sse';

/** undefined when the entry is broken (its problems reported). */
export function readServerEntry(entry: Record<string, unknown>, context: EntryContext): ServerEntry | undefined {
    checkFields(entry, context);
    const transport = transportOf(entry, context);
    if (transport === undefined) return undefined;
    const values = new EntryValues(entry, context);
    const folder = context.scope.workspaceFolder;
    if (transport === 'stdio') {
        warnUnused(entry, HTTP_FIELDS, 'a remote server; this one is started with its command', context);
        const command = values.required('command', 'the program to start');
        const args = values.strings('args');
        const env = values.map('env');
        const cwd = values.string('cwd');
        const envFile = values.string('envFile');
        if (command === undefined) return undefined;
        // Relative paths mean what they meant to the client, which starts servers from the project folder.
        return {
            upstream: { transport, command, args: args ?? [], env: env ?? {}, cwd: path.resolve(folder, cwd ?? '.') },
            envFile: envFile === undefined ? undefined : path.resolve(folder, envFile)
        };
    }
    warnUnused(entry, STDIO_FIELDS, 'a server the client starts; this one is reached at its url', context);
    const url = values.required('url', "the server's MCP endpoint");
    const headers = values.map('headers');
    if (url === undefined) return undefined;
    if (/^(?:unix|pipe):/i.test(url)) {
        context.problem(['url'], 'a Unix socket or named pipe, which the gateway cannot reach; serve the server over TCP (http://127.0.0.1:PORT/...)');
        return undefined;
    }
    return { upstream: { transport, url, headers: headers ?? {} }, envFile: undefined };
}

function checkFields(entry: Record<string, unknown>, context: EntryContext): void {
    for (const [field, value] of Object.entries(entry)) {
        const rule = Object.hasOwn(FIELD_RULES, field) ? FIELD_RULES[field] : undefined;
        if (rule === undefined) context.warn([field], 'not a field the gateway knows; it is not applied');
        else if (rule.kind === 'client-only') context.warn([field], `${rule.what}: a setting of the client, with no effect in the gateway`);
        else if (rule.kind === 'refused' && (rule.when?.(value) ?? true)) context.problem([field], `${rule.what}; ${rule.fix}`);
    }
}

function transportOf(entry: Record<string, unknown>, context: EntryContext): Transport | undefined {
    const type = entry.type;
    if (type === undefined) {
        if (entry.command !== undefined) return 'stdio';
        // The file does not say which HTTP transport: the gateway tries Streamable HTTP, then legacy SSE.
        if (entry.url !== undefined) return 'http';
        context.problem([], 'has neither "command" (a program the client starts) nor "url" (a server it connects to); add one');
        return undefined;
    }
    if (type === 'stdio' || type === 'sse') return type;
    if (type === 'http') return context.format.httpTransport;
    context.problem(['type'], `must be "stdio", "http" or "sse"${typeof type === 'string' && type.length <= 40 ? `, not ${JSON.stringify(type)}` : ''}`);
    return undefined;
}

function warnUnused(entry: Record<string, unknown>, fields: readonly string[], kind: string, context: EntryContext): void {
    for (const field of fields) if (entry[field] !== undefined) context.warn([field], `is for ${kind}, so it has no effect`);
}

/** The entry's values, type-checked and expanded; each problem reported at its path. */
class EntryValues {
    constructor(
        private readonly entry: Record<string, unknown>,
        private readonly context: EntryContext
    ) {}

    required(field: string, what: string): string | undefined {
        if (this.entry[field] === undefined) {
            this.context.problem([], `needs "${field}", ${what}`);
            return undefined;
        }
        return this.string(field);
    }

    string(field: string): string | undefined {
        const value = this.entry[field];
        return value === undefined ? undefined : this.#text(value, [field]);
    }

    strings(field: string): string[] | undefined {
        const value = this.entry[field];
        if (value === undefined) return undefined;
        if (!Array.isArray(value)) return this.#wrong([field], 'an array of strings', value);
        const out = value.map((item: unknown, index) => this.#text(item, [field, index]));
        return out.every(item => item !== undefined) ? out : undefined;
    }

    /** env and headers: string values; numbers (VS Code allows them) as text; null (VS Code: unset it) is ignored. */
    map(field: string): Record<string, string> | undefined {
        const value = this.entry[field];
        if (value === undefined) return undefined;
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return this.#wrong([field], 'an object of strings', value);
        const out: Record<string, string> = {};
        for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
            if (item === null) {
                this.context.warn(
                    [field, key],
                    "null unsets a variable of the client's environment; the gateway's servers start from a small one of their own (PATH, HOME, ...), so it is ignored"
                );
                continue;
            }
            const text = typeof item === 'number' ? String(item) : this.#text(item, [field, key]);
            if (text !== undefined) Object.defineProperty(out, key, { value: text, enumerable: true, writable: true, configurable: true });
        }
        return out;
    }

    #text(value: unknown, at: Path): string | undefined {
        if (typeof value !== 'string') return this.#wrong(at, 'a string', value);
        const { variables, scope } = this.context;
        if (variables === undefined) return value;
        return expand(value, variables, scope, { problem: problem => this.context.problem(at, problem), secret: secret => this.context.secret(secret) });
    }

    #wrong(at: Path, expected: string, value: unknown): undefined {
        this.context.problem(at, `expected ${expected}, got ${describeValue(value)}`);
        return undefined;
    }
}

/** Never the value itself: it may be a secret. */
function describeValue(value: unknown): string {
    if (value === null) return 'null';
    if (Array.isArray(value)) return 'an array';
    if (typeof value === 'string') return 'a string';
    return typeof value === 'object' ? 'an object' : typeof value;
}
