/**
 * Finds a stdio upstream's program the way spawn will (execvp's rules, as libuv
 * applies them), to say why it cannot be started instead of a bare ENOENT: a
 * name without "/" is searched on the PATH of the child's own environment (no
 * PATH there: /usr/bin:/bin; an empty or relative entry is relative to the
 * child's working directory), a name with "/" is taken relative to that
 * directory, and only executable files count. The file system is read through a
 * probe, so the rules themselves are pure.
 *
 * Windows resolves commands differently (extensions, no execute bit): there the
 * command is taken as found.
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

export interface CommandSpec {
    command: string;
    /** The child's working directory; undefined = the gateway's. */
    cwd?: string | undefined;
    /** The child's whole environment. */
    env: Readonly<Record<string, string>>;
}

export type FileKind = 'executable' | 'not-executable' | 'directory' | 'missing';
export type Probe = (file: string) => FileKind;

export type CommandResolution =
    | { ok: true; path: string }
    | {
          ok: false;
          /** The config field at fault. */
          field: 'command' | 'cwd';
          problem: string;
          /** What to do about it, for people reading a config check. */
          fix: string;
      };

/** libuv's search path when the child's environment has no PATH (glibc's _PATH_DEFPATH). */
const DEFAULT_PATH = '/usr/bin:/bin';
/** A PATH longer than this is cut in messages. */
const MAX_SHOWN_PATH = 1000;

function probeFile(file: string): FileKind {
    try {
        if (statSync(file).isDirectory()) return 'directory';
    } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // EACCES on a folder on the way: exec would fail the same way as for a file it may not run.
        return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : 'not-executable';
    }
    try {
        accessSync(file, constants.X_OK);
        return 'executable';
    } catch {
        return 'not-executable';
    }
}

export function resolveCommand(spec: CommandSpec, probe: Probe = probeFile, platform: NodeJS.Platform = process.platform): CommandResolution {
    const { command } = spec;
    if (platform === 'win32') return { ok: true, path: command };
    const cwd = path.resolve(spec.cwd ?? '.');
    const folder = probe(cwd);
    if (folder !== 'directory') {
        const problem = `working directory "${cwd}" ${folder === 'missing' ? 'not found' : 'is not a directory'}`;
        return { ok: false, field: 'cwd', problem, fix: 'create it, or fix the path (relative to the config file)' };
    }
    if (command.includes('/')) {
        const file = path.resolve(cwd, command);
        const kind = probe(file);
        if (kind === 'executable') return { ok: true, path: file };
        if (kind === 'missing') {
            const where = path.isAbsolute(command) ? '' : ` in ${cwd}`;
            return { ok: false, field: 'command', problem: `command "${command}" not found${where}`, fix: "fix the path (relative to the upstream's cwd)" };
        }
        return notExecutable(command, file);
    }
    const searched = spec.env.PATH ?? DEFAULT_PATH;
    let refused: string | undefined;
    for (const entry of searched.split(':')) {
        const file = path.resolve(cwd, entry, command);
        const kind = probe(file);
        if (kind === 'executable') return { ok: true, path: file };
        // execvp goes on past a file it may not run, and reports EACCES if nothing else is found.
        if (kind !== 'missing') refused ??= file;
    }
    if (refused !== undefined) return notExecutable(command, refused);
    return {
        ok: false,
        field: 'command',
        problem: `command "${command}" not found (searched PATH: ${shorten(searched)})`,
        fix: "install it, fix the name, or give its full path (or set PATH in the upstream's env)"
    };
}

/**
 * Why spawn failed with `code` (ENOENT or EACCES): the resolution's problem, or, when the command is there, what
 * else can cause it.
 */
export function explainSpawnFailure(spec: CommandSpec, code: string, probe: Probe = probeFile): string {
    const resolution = resolveCommand(spec, probe);
    if (!resolution.ok) return resolution.problem;
    const started = `command "${spec.command}" (${resolution.path}) could not be started (${code})`;
    // The kernel reports a script whose #! interpreter is missing as if the script itself were.
    return code === 'ENOENT' ? `${started}: if it is a script, is the interpreter on its #! line installed?` : started;
}

function notExecutable(command: string, file: string): CommandResolution {
    const where = file === command ? '' : ` (${file})`;
    return { ok: false, field: 'command', problem: `command "${command}" is not executable${where}`, fix: 'make it executable (chmod +x), or name the program that runs it' };
}

function shorten(text: string): string {
    return text.length <= MAX_SHOWN_PATH ? text : `${text.slice(0, MAX_SHOWN_PATH)}...`;
}

/** spawn failed with ENOENT or EACCES; the message says why, in the config's terms. */
export class CommandNotStartedError extends Error {
    override readonly name = 'CommandNotStartedError';

    constructor(
        message: string,
        /** spawn's error code, kept for callers that look at it. */
        readonly code: string,
        options?: ErrorOptions
    ) {
        super(message, options);
    }
}
