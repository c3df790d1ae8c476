/**
 * `upstreamsFrom` (and `--from`) at load: reads each client config file and the env files its servers name,
 * imports it, validates the upstreams it makes with the upstream schema (so the defaults of every upstream apply),
 * and merges them after `upstreams`, checking their ids against every other id. Every file read, or tried, is
 * added to `touched`, so that hot reload watches it.
 */
import { homedir } from 'node:os';
import path from 'node:path';
import { parseEnv } from 'node:util';
import type { Environment } from '../interpolate.js';
import { ConfigError, formatPath, type ConfigIssue } from '../issues.js';
import { readTextFile } from '../read-text-file.js';
import { resolveReconnect, UpstreamSchema, type GatewayConfig, type UpstreamConfig } from '../schema.js';
import { withSecretExpansions } from '../secrets.js';
import { importClientConfig, type ImportedServer, type ImportNote } from './import.js';

export interface ImportedConfig {
    config: GatewayConfig;
    notes: ImportNote[];
    /** Where each imported upstream stands, by id: "/home/me/.cursor/mcp.json: mcpServers.github". */
    origins: Map<string, string>;
}

/** `~` and `~/...` in the home folder; other relative paths against `baseDir`. */
export function resolveUserPath(baseDir: string, file: string, home = homedir()): string {
    if (file === '~' || file.startsWith('~/')) return path.join(home, file.slice(1));
    return path.resolve(baseDir, file);
}

/** Where an id came from, for messages that name both sides of a clash. */
interface IdOrigin {
    source: string;
    path: (string | number)[];
    what: string;
}

interface LoadContext {
    /** Names the gateway config in errors. */
    source: string;
    env: Environment;
    touched: Set<string>;
}

/**
 * `config` with the upstreams of its `upstreamsFrom` files appended. `source` names the gateway config in errors;
 * `fromConfig` is how many of the entries it lists itself (the rest came from `--from`).
 */
export async function importUpstreams(config: GatewayConfig, source: string, fromConfig: number, env: Environment, touched: Set<string>): Promise<ImportedConfig> {
    const notes: ImportNote[] = [];
    const owners = new Map<string, IdOrigin>();
    config.upstreams.forEach((upstream, index) => owners.set(upstream.id, { source, path: ['upstreams', index, 'id'], what: `upstreams[${index}]` }));
    const imported: UpstreamConfig[] = [];
    const origins = new Map<string, string>();
    const secrets: string[] = [];
    for (const [index, from] of config.upstreamsFrom.entries()) {
        const entry = index < fromConfig ? `upstreamsFrom[${index}]` : undefined;
        const file = await importFile(config, index, entry, { source, env, touched });
        notes.push(...file.notes);
        secrets.push(...file.secrets);
        for (const { server, upstream } of file.upstreams) {
            claimId(owners, upstream.id, { source: from.file, path: server.path, what: `server ${JSON.stringify(server.name)} of ${from.file}` }, entry);
            checkSeparator(upstream.id, config.namespace.separator, from.file, server.path);
            imported.push(upstream);
            origins.set(upstream.id, `${from.file}: ${formatPath(server.path)}`);
        }
    }
    const upstreams = [...config.upstreams, ...imported];
    if (upstreams.length === 0) {
        throw new ConfigError(source, [
            { path: ['upstreamsFrom'], message: 'no servers to put behind the gateway: the files hold none (or all are left out or disabled); add one, or add "upstreams"' }
        ]);
    }
    return { config: withSecretExpansions({ ...config, upstreams }, secrets), notes, origins };
}

/** One entry of upstreamsFrom: its file read, imported and validated, its env files read. */
async function importFile(config: GatewayConfig, index: number, entry: string | undefined, context: LoadContext) {
    const from = config.upstreamsFrom[index]!;
    context.touched.add(from.file);
    const field =
        entry === undefined
            ? { source: from.file, path: [], fix: 'fix the path given to --from' }
            : { source: context.source, path: ['upstreamsFrom', index, 'file'], fix: 'fix the path' };
    const text = await readTextFile(from.file, 'client config files', field);
    const result = importClientConfig(text, {
        file: from.file,
        format: from.format,
        env: context.env,
        home: homedir(),
        inputs: from.inputs,
        include: from.include,
        exclude: from.exclude,
        entry
    });
    const notes = [...result.notes];
    if (entry !== undefined) checkSelection(result.names, from, index, context.source, notes);
    checkReconnect(config, index, context.source);
    const withDefaults = result.servers.map(server => ({ ...server, upstream: { ...from.defaults, ...server.upstream } }));
    const upstreams = await validateAll(withDefaults, from.file, context.touched);
    return {
        upstreams: upstreams.map((upstream, position) => ({ server: result.servers[position]!, upstream })),
        notes,
        secrets: result.secrets
    };
}

/** An `include` naming no server of the file is an error (it was asked for); an `exclude` one only a warning. */
function checkSelection(names: readonly string[], from: GatewayConfig['upstreamsFrom'][number], index: number, source: string, notes: ImportNote[]): void {
    const known = names.length === 0 ? 'it has no servers' : `its servers: ${names.map(name => JSON.stringify(name)).join(', ')}`;
    const missing = (from.include ?? []).flatMap((name, position) => (names.includes(name) ? [] : [{ name, position }]));
    if (missing.length > 0) {
        throw new ConfigError(
            source,
            missing.map(({ name, position }) => ({
                path: ['upstreamsFrom', index, 'include', position],
                message: `no server ${JSON.stringify(name)} in ${from.file} (${known}); fix the name`
            }))
        );
    }
    for (const name of from.exclude) {
        if (!names.includes(name)) notes.push({ level: 'warning', message: `upstreamsFrom[${index}].exclude: no server ${JSON.stringify(name)} in ${from.file} (${known})` });
    }
}

/** The upstream schema's verdict on each server, with its env file's variables under `env`; problems point into the client file. */
async function validateAll(servers: readonly ImportedServer[], file: string, touched: Set<string>): Promise<UpstreamConfig[]> {
    const issues: ConfigIssue[] = [];
    const upstreams: UpstreamConfig[] = [];
    for (const server of servers) {
        let upstream = server.upstream;
        if (server.envFile !== undefined) {
            touched.add(server.envFile);
            const text = await readTextFile(server.envFile, 'env files', { source: file, path: [...server.path, 'envFile'], fix: 'fix envFile' });
            // The entry's own env wins over the file's, as a variable set explicitly should.
            upstream = { ...upstream, env: { ...parseEnv(text), ...(upstream.env as Record<string, string>) } };
        }
        const parsed = UpstreamSchema.safeParse(upstream);
        if (parsed.success) upstreams.push(parsed.data);
        else issues.push(...parsed.error.issues.map(issue => ({ path: [...server.path, ...clientPath(issue.path)], message: issue.message })));
    }
    if (issues.length > 0) throw new ConfigError(file, issues);
    return upstreams;
}

/** The gateway's field names as the client file spells them. */
function clientPath(path: readonly PropertyKey[]): (string | number)[] {
    const [head, ...rest] = path.map(part => (typeof part === 'symbol' ? String(part) : part));
    if (head === 'transport') return ['type'];
    if (head === 'id' || head === undefined) return [];
    return [head, ...rest];
}

function claimId(origins: Map<string, IdOrigin>, id: string, origin: IdOrigin, entry: string | undefined): void {
    const first = origins.get(id);
    if (first === undefined) {
        origins.set(id, origin);
        return;
    }
    const leaveOut = entry === undefined ? 'list the files in a gateway config\'s upstreamsFrom and leave one out with "exclude"' : `leave it out with ${entry}.exclude`;
    throw new ConfigError(first.source, [
        { path: first.path, message: `the upstream id "${id}" is taken twice: by ${first.what} and by ${origin.what}; rename one, or ${leaveOut}` }
    ]);
}

/** The file's reconnect settings over the global ones must still make a backoff (as checked for "upstreams"). */
function checkReconnect(config: GatewayConfig, index: number, source: string): void {
    const defaults = config.upstreamsFrom[index]!.defaults;
    const backoff = resolveReconnect(config.reconnect, defaults);
    if (defaults.reconnect === undefined || backoff.maxMs >= backoff.initialMs) return;
    const field = defaults.reconnect.maxMs === undefined ? 'initialMs' : 'maxMs';
    throw new ConfigError(source, [
        {
            path: ['upstreamsFrom', index, 'defaults', 'reconnect', field],
            message: `makes a backoff from ${backoff.initialMs} ms to ${backoff.maxMs} ms; maxMs must be at least initialMs`
        }
    ]);
}

function checkSeparator(id: string, separator: string, file: string, at: (string | number)[]): void {
    if (!id.includes(separator)) return;
    throw new ConfigError(file, [
        { path: at, message: `its upstream id "${id}" contains the namespace separator "${separator}"; change namespace.separator in the gateway config` }
    ]);
}
