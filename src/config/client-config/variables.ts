/**
 * `${...}` placeholders in client config files. Each client gives them its own meaning (see the format modules);
 * this scans a string and asks the format what each one means. What a format does not know stays as written, as
 * the clients themselves leave it.
 */
import path from 'node:path';
import type { Environment } from '../interpolate.js';
import { isPlainEnvName } from '../secrets.js';

/**
 * What a placeholder stands for: a value (`secret` when the operator supplied it, from the environment or as an
 * input, rather than the file: see config/secrets.ts), a problem to report, or nothing (it stays as written).
 */
export type Resolution = { value: string; secret?: boolean } | { problem: string } | undefined;

export interface VariableScope {
    env: Environment;
    home: string;
    /** The project folder a client would open the file with (see workspaceFolderOf). */
    workspaceFolder: string;
    /** The server the value belongs to, for messages. */
    server: string;
}

/** Reads one placeholder's inside (`env:HOME` of `${env:HOME}`). */
export type VariableReader = (inside: string, scope: VariableScope) => Resolution;

const PLACEHOLDER = /\$\{([^}]*)\}/g;

/** What expanding a string tells its caller: each problem, and each value that is a secret. */
export interface ExpansionReport {
    problem(problem: string): void;
    secret(value: string): void;
}

/** `text` with its placeholders replaced. */
export function expand(text: string, read: VariableReader, scope: VariableScope, report: ExpansionReport): string {
    if (!text.includes('${')) return text;
    return text.replace(PLACEHOLDER, (match, inside: string) => {
        const resolution = read(inside, scope);
        if (resolution === undefined) return match;
        if ('problem' in resolution) {
            report.problem(resolution.problem);
            return '';
        }
        if (resolution.secret === true) report.secret(resolution.value);
        return resolution.value;
    });
}

/** A variable of the operator's environment: a secret unless it holds a location or setting (PATH, HOME, ...). */
export function fromEnvironment(name: string, value: string): Resolution {
    return { value, secret: !isPlainEnvName(name) };
}

/** `${env:NAME}` (Cursor, VS Code): unlike those clients, an unset variable is an error rather than "". */
function envVariable(name: string, env: Environment): Resolution {
    const value = Object.hasOwn(env, name) ? env[name] : undefined;
    if (value !== undefined) return fromEnvironment(name, value);
    return { problem: `environment variable ${name} is not set; set it before starting the gateway (the client would have used an empty string)` };
}

/** The predefined variables Cursor and VS Code share. */
export function editorVariable(inside: string, scope: VariableScope): Resolution {
    if (inside.startsWith('env:')) return envVariable(inside.slice('env:'.length), scope.env);
    switch (inside) {
        case 'userHome':
            return { value: scope.home };
        case 'workspaceFolder':
            return { value: scope.workspaceFolder };
        case 'workspaceFolderBasename':
            return { value: path.basename(scope.workspaceFolder) };
        case 'pathSeparator':
        case '/':
            return { value: path.sep };
        default:
            return undefined;
    }
}

/**
 * The folder a client opens a project file with: the parent of `.vscode/` or `.cursor/` for files inside them
 * (`.vscode/mcp.json`), else the file's own folder (`.mcp.json` at a project's root, a user-level file).
 */
export function workspaceFolderOf(file: string): string {
    const folder = path.dirname(file);
    return ['.vscode', '.cursor'].includes(path.basename(folder)) ? path.dirname(folder) : folder;
}
