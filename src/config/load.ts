/** Reads, interpolates and validates a config file into a `GatewayConfig`. */
import path from 'node:path';
import type { z } from 'zod';
import type { ImportNote } from './client-config/import.js';
import { importUpstreams, resolveUserPath } from './client-config/load.js';
import { interpolateEnv, literalText, type Environment } from './interpolate.js';
import { MAX_CONFIG_DEPTH, parseJsonc } from './jsonc.js';
import { nearestKey } from './suggest.js';
import { ConfigError, type ConfigIssue } from './issues.js';
import { JwksSchema } from './policy-schema.js';
import { isRecord } from '../lib/is-record.js';
import { exceedsDepth } from '../lib/json-bounds.js';
import { readTextFile } from './read-text-file.js';
import { GatewayConfigSchema, type GatewayConfig } from './schema.js';
import { environmentSecrets, secretExpansionsIn, withSecretExpansions } from './secrets.js';

/**
 * Relative paths (`cwd` of stdio upstreams, `path` of files upstreams, `auth.jwksFile`) are resolved against the file's folder.
 * @internal the config alone, for tests (the CLI uses loadGatewayConfig, which also returns the import notes)
 */
export async function loadConfigFile(file: string, env: Environment = process.env): Promise<GatewayConfig> {
    return (await loadGatewayConfig({ file }, env)).config;
}

export interface ConfigRequest {
    /** The gateway config file; without one, the default settings. */
    file?: string | undefined;
    /** MCP client config files given with `--from` (relative to the working directory), added to `upstreamsFrom`. */
    from?: readonly string[] | undefined;
}

export interface LoadedConfig {
    config: GatewayConfig;
    /** Warnings and notices about the imported client config files, for the operator. */
    notes: ImportNote[];
    /** Where each imported upstream stands in its client config file, by id. */
    origins: Map<string, string>;
}

/**
 * The gateway config with the upstreams of its client config files (`upstreamsFrom`, `--from`). Every file read or
 * tried (the config, client config files, env files) is added to `touched`, also when loading fails.
 */
export async function loadGatewayConfig(request: ConfigRequest, env: Environment = process.env, touched = new Set<string>()): Promise<LoadedConfig> {
    const from = (request.from ?? []).map(file => resolveUserPath(process.cwd(), file));
    const file = request.file;
    const source = file ?? `--from ${request.from?.join(' ') ?? ''}`;
    let document: unknown = {};
    if (file !== undefined) {
        touched.add(path.resolve(file));
        document = parseJson(await readTextFile(file, 'config files', { source: file, path: [], fix: 'pass an existing JSON file with --config' }), file);
    }
    const fromConfig = withFromFiles(document, from);
    const baseDir = file === undefined ? process.cwd() : path.dirname(path.resolve(file));
    const config = resolvePaths(validate(document, source, env), baseDir);
    const withJwks = { ...config, auth: await readJwksFile(config.auth, source) };
    return importUpstreams(withJwks, source, fromConfig, env, touched);
}

/** Appends the `--from` files to the document's upstreamsFrom; returns how many entries the document had itself. */
function withFromFiles(document: unknown, from: readonly string[]): number {
    if (!isRecord(document)) return 0;
    const record = document;
    const listed = Array.isArray(record.upstreamsFrom) ? (record.upstreamsFrom as unknown[]) : undefined;
    if (from.length === 0 || (record.upstreamsFrom !== undefined && listed === undefined)) return listed?.length ?? 0;
    // The document is interpolated next: a "${" in a path is not a variable.
    record.upstreamsFrom = [...(listed ?? []), ...from.map(file => ({ file: literalText(file) }))];
    return listed?.length ?? 0;
}

/** A JWKS file's keys become the inline `jwks`, so the policy layer does no file I/O and a reload re-reads them. */
async function readJwksFile(auth: GatewayConfig['auth'], source: string): Promise<GatewayConfig['auth']> {
    if (auth.mode !== 'jwt' || auth.jwksFile === undefined) return auth;
    const fail = (message: string): never => {
        throw new ConfigError(source, [{ path: ['auth', 'jwksFile'], message }]);
    };
    const text = await readTextFile(auth.jwksFile, 'JWKS files', { source, path: ['auth', 'jwksFile'], fix: 'point it at a JWKS JSON file' });
    let document: unknown;
    try {
        document = JSON.parse(text);
    } catch {
        fail('is not valid JSON; it must hold a JWKS document {"keys": [...]}');
    }
    if (exceedsDepth(document, MAX_CONFIG_DEPTH)) fail(`is nested deeper than ${MAX_CONFIG_DEPTH} levels (the limit for JWKS files); it must hold a JWKS document {"keys": [...]}`);
    const jwks = JwksSchema.safeParse(document);
    if (!jwks.success) fail('is not a JWKS document: it needs a "keys" array of JWKs with "kty"');
    return { ...auth, jwks: jwks.data };
}

/**
 * Validates config text: JSON, where comments and trailing commas are allowed. `source` names the file in error messages.
 * Exported for tests and benchmarks, which build their configs as text, and for `prompts --url` (setup/prompts-command).
 */
export function parseConfig(text: string, source: string, env: Environment): GatewayConfig {
    return validate(parseJson(text, source), source, env);
}

function parseJson(text: string, source: string): unknown {
    const document = parseJsonc(text);
    if (!document.ok) {
        const at = `line ${document.line}, column ${document.column}`;
        const message =
            document.tooDeep === true
                ? `${document.problem} at ${at} (the limit for config files); flatten it there`
                : `not valid JSON at ${at}: ${document.problem}; fix the syntax there`;
        throw new ConfigError(source, [{ path: [], message }]);
    }
    return document.value;
}

function validate(document: unknown, source: string, env: Environment): GatewayConfig {
    const interpolated = interpolateEnv(document, env);
    if (interpolated.issues.length > 0) throw new ConfigError(source, interpolated.issues);
    const parsed = GatewayConfigSchema.safeParse(interpolated.value, { reportInput: true });
    if (!parsed.success)
        throw new ConfigError(
            source,
            parsed.error.issues.map(issue => toConfigIssue(issue, interpolated.value))
        );
    return withSecretExpansions(parsed.data, [...secretExpansionsIn(parsed.data, interpolated.expansions), ...environmentSecrets(env)]);
}

function resolvePaths(config: GatewayConfig, baseDir: string): GatewayConfig {
    const auth = config.auth;
    return {
        ...config,
        auth: auth.mode === 'jwt' && auth.jwksFile !== undefined ? { ...auth, jwksFile: path.resolve(baseDir, auth.jwksFile) } : auth,
        upstreamsFrom: config.upstreamsFrom.map(from => ({ ...from, file: resolveUserPath(baseDir, from.file) })),
        upstreams: config.upstreams.map(upstream => {
            if (upstream.transport === 'stdio') return { ...upstream, cwd: path.resolve(baseDir, upstream.cwd ?? '.') };
            if (upstream.transport === 'files') return { ...upstream, path: path.resolve(baseDir, upstream.path) };
            return upstream;
        })
    };
}

function toConfigIssue(issue: z.core.$ZodIssue, document: unknown): ConfigIssue {
    return { path: issue.path, message: describeIssue(issue, document) };
}

function describeIssue(issue: z.core.$ZodIssue, document: unknown): string {
    switch (issue.code) {
        case 'unrecognized_keys':
            return describeUnknownKeys(issue.keys, issue.path, document);
        case 'invalid_type':
            return issue.input === undefined ? `is required (expected ${issue.expected})` : `expected ${issue.expected}, got ${describeValue(issue.input)}`;
        case 'invalid_union':
            if (issue.discriminator === 'transport') return 'has a missing or unknown "transport"; use "stdio", "streamable-http", "sse", "http" or "files"';
            return issue.message;
        case 'invalid_value':
            return `must be one of ${issue.values.map(value => JSON.stringify(value)).join(', ')}`;
        case 'too_small':
            if (issue.origin === 'array') return issue.message.startsWith('add ') ? issue.message : `needs at least ${String(issue.minimum)} item(s)`;
            if (issue.origin === 'string') return issue.message.startsWith('must') ? issue.message : `must not be shorter than ${String(issue.minimum)} character(s)`;
            return `must be at least ${String(issue.minimum)}`;
        case 'too_big':
            if (issue.origin === 'string') return `must not be longer than ${String(issue.maximum)} characters`;
            return `must be at most ${String(issue.maximum)}`;
        default:
            return issue.message;
    }
}

/** `unknown key "prot"; did you mean "port"?`, or, with no near key, what to do about it. */
function describeUnknownKeys(keys: readonly string[], path: readonly PropertyKey[], document: unknown): string {
    const nearest = keys.map(key => nearestKey(GatewayConfigSchema, path, document, key));
    if (keys.length === 1 && nearest[0] !== undefined) return `unknown key ${JSON.stringify(keys[0])}; did you mean ${JSON.stringify(nearest[0])}?`;
    const described = keys.map((key, index) => {
        const near = nearest[index];
        return near === undefined ? JSON.stringify(key) : `${JSON.stringify(key)} (did you mean ${JSON.stringify(near)}?)`;
    });
    return `unknown key${keys.length > 1 ? 's' : ''} ${described.join(', ')}; remove ${keys.length > 1 ? 'them' : 'it'} or fix the spelling`;
}

function describeValue(value: unknown): string {
    if (value === null) return 'null';
    if (Array.isArray(value)) return 'an array';
    // String values are not echoed: after interpolation they may hold secrets.
    if (typeof value === 'string') return 'a string';
    if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${value}`;
    return typeof value === 'object' ? 'an object' : typeof value;
}
