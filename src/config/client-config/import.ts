/**
 * The pure importer: the text of an MCP client's config file in, gateway upstreams out (not yet validated by the
 * upstream schema), with the warnings and notices to show the operator. No I/O: the caller reads the file and,
 * afterwards, the env files the servers name. Every problem of the file is collected into one ConfigError.
 */
import type { Environment } from '../interpolate.js';
import { ConfigError, formatPath, type ConfigIssue } from '../issues.js';
import { chooseFormat } from './detect.js';
import type { ClientConfigFormat, ClientFormat } from './format.js';
import { upstreamIdFor } from './ids.js';
import { parseJsonc, type JsoncDocument } from './jsonc.js';
import { readServerEntry } from './server-entry.js';
import { workspaceFolderOf, type VariableReader } from './variables.js';
import { VsCodeInputs } from './vscode-inputs.js';
import { isRecord } from '../../lib/is-record.js';

export interface ImportOptions {
    /** Absolute path of the file: named in messages, and the base of relative paths and `${workspaceFolder}`. */
    file: string;
    format: ClientConfigFormat;
    env: Environment;
    home: string;
    /** Values for VS Code's `${input:ID}`, by ID. */
    inputs: Readonly<Record<string, string>>;
    /** Server names (as in the file) to take; all when undefined. */
    include?: readonly string[] | undefined;
    /** Server names to leave out. */
    exclude: readonly string[];
    /** How the gateway config names this file's entry ("upstreamsFrom[0]"); undefined for `--from`. */
    entry?: string | undefined;
}

export interface ImportedServer {
    /** As in the file. */
    name: string;
    id: string;
    /** A gateway upstream, before validation. */
    upstream: Record<string, unknown>;
    /** Absolute path of an env file whose variables go under `env`. */
    envFile: string | undefined;
    /** Where the server stands in the file (["mcpServers", name]). */
    path: (string | number)[];
}

export interface ImportNote {
    level: 'warning' | 'notice';
    message: string;
}

export interface ClientConfigImport {
    /** The format the file was read as. */
    format: string;
    /** Every server name in the file, taken or not. */
    names: string[];
    servers: ImportedServer[];
    notes: ImportNote[];
    /** The values of secret expansions (`${env:X}`, an operator's `${input:ID}`, ...): kept out of every output. */
    secrets: string[];
}

export function importClientConfig(text: string, options: ImportOptions): ClientConfigImport {
    const { file } = options;
    const document = parseJsonc(text, file);
    const root = document.value;
    const fail = (path: Path, message: string): never => {
        throw new ConfigError(file, [{ path, message: `${message}${document.where(path)}` }]);
    };
    if (!isRecord(root)) return fail([], "must be a JSON object (an MCP client's config file)");
    const format = chooseFormat(options.format, root);
    if ('problem' in format) return fail([], format.problem);
    const servers = root[format.serversKey];
    if (!isRecord(servers)) return fail([format.serversKey], 'must be an object that maps server names to servers');

    const report = new Report(file, document);
    const inputs =
        format.serversKey === 'servers'
            ? new VsCodeInputs(root.inputs, { values: options.inputs, env: options.env, entry: options.entry }, (path, message) => report.problem(path, message))
            : undefined;
    const reading: Reading = { options, format, variables: format.variables(inputs), workspaceFolder: workspaceFolderOf(file), report, taken: new Map(), secrets: new Set() };
    const names = Object.keys(servers);
    const selected = names.filter(name => (options.include === undefined || options.include.includes(name)) && !options.exclude.includes(name));
    const imported = selected.flatMap(name => importServer(name, servers[name], reading) ?? []);
    if (report.issues.length > 0) throw new ConfigError(file, report.issues);
    // Only a gateway config's entry has inputs of its own (--from reads the environment alone).
    for (const id of Object.keys(options.inputs)) {
        if (!text.includes(`\${input:${id}}`)) {
            report.notes.push({ level: 'warning', message: `${options.entry}.inputs[${JSON.stringify(id)}]: no server in ${file} uses \${input:${id}}; check the spelling` });
        }
    }
    return { format: format.name, names, servers: imported, notes: report.notes, secrets: [...reading.secrets] };
}

type Path = (string | number)[];

/** The problems (one ConfigError in the end) and notes of a file, each with where it stands. */
class Report {
    readonly issues: ConfigIssue[] = [];
    readonly notes: ImportNote[] = [];

    constructor(
        private readonly file: string,
        private readonly document: JsoncDocument
    ) {}

    problem(path: Path, message: string): void {
        this.issues.push({ path, message: `${message}${this.document.where(path)}` });
    }

    note(level: ImportNote['level'], path: Path, message: string): void {
        this.notes.push({ level, message: `${this.file}: ${formatPath(path)}: ${message}${this.document.where(path)}` });
    }
}

/** What reading every server of one file shares. */
interface Reading {
    options: ImportOptions;
    format: ClientFormat;
    variables: VariableReader | undefined;
    workspaceFolder: string;
    report: Report;
    /** The ids made so far, with the name each was made from. */
    taken: Map<string, string>;
    secrets: Set<string>;
}

function importServer(name: string, entry: unknown, reading: Reading): ImportedServer | undefined {
    const { report, options } = reading;
    const at = [reading.format.serversKey, name];
    if (!isRecord(entry)) {
        report.problem(at, 'must be an object (a server)');
        return undefined;
    }
    if (entry.disabled === true) {
        report.note('notice', at, 'disabled in the client, so left out');
        return undefined;
    }
    if (entry.disabled !== undefined && entry.disabled !== false) report.problem([...at, 'disabled'], 'must be true or false');
    const id = idFor(name, at, reading);
    if (id === undefined) return undefined;
    const read = readServerEntry(entry, {
        format: reading.format,
        variables: reading.variables,
        scope: { env: options.env, home: options.home, workspaceFolder: reading.workspaceFolder, server: name },
        problem: (path, message) => report.problem([...at, ...path], message),
        warn: (path, message) => report.note('warning', [...at, ...path], message),
        secret: value => reading.secrets.add(value)
    });
    return read === undefined ? undefined : { name, id, upstream: { id, ...read.upstream }, envFile: read.envFile, path: at };
}

/** The server's id, unless its name makes none or the id of a server before it. */
function idFor(name: string, at: Path, { options, report, taken }: Reading): string | undefined {
    const leaveOut = options.entry === undefined ? 'with "exclude" of an upstreamsFrom entry in a gateway config' : `with ${options.entry}.exclude`;
    const id = upstreamIdFor(name);
    if (id === undefined) {
        report.problem(at, `the name cannot be made an upstream id (lowercase letters, digits and "-"); rename the server in the file, or leave it out ${leaveOut}`);
        return undefined;
    }
    const other = taken.get(id);
    if (other !== undefined) {
        report.problem(at, `servers ${JSON.stringify(other)} and ${JSON.stringify(name)} both make the upstream id "${id}"; rename one in the file, or leave one out ${leaveOut}`);
        return undefined;
    }
    taken.set(id, name);
    return id;
}
