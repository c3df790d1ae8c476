/**
 * The one way the gateway reads a file it is given the name of: its config, client config files, env files, JWKS
 * files and prompt files. Only a regular file is read, opened without blocking (a FIFO would otherwise wait for a
 * writer forever) and its type checked on the handle, so that nothing can swap the file between check and read; and
 * at most a limit per kind of file is read (a device such as /dev/zero never ends). What is refused says why.
 */
import { constants, type Dirent, type Stats } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { ConfigError, type ConfigIssue } from './issues.js';

const MiB = 1_048_576;

/** The most bytes read of each kind of file the config names (docs/configuration.md, "Files the gateway reads"). */
const FILE_LIMITS = {
    'config files': MiB,
    // Claude Code keeps its history in ~/.claude.json beside its mcpServers: several MiB is usual.
    'client config files': 16 * MiB,
    'env files': MiB,
    'JWKS files': MiB
} as const;

export type ConfigFileKind = keyof typeof FILE_LIMITS;

export interface ReadLimit {
    /** Plural, for the message: "prompt files". */
    kind: string;
    maxBytes: number;
    /** false: a symbolic link is refused rather than followed (`reason` "link"). */
    followLinks?: boolean;
}

export type RefusalReason = 'missing' | 'link' | 'not-regular' | 'too-large' | 'unreadable';

/** Why a file was not read, in words that go before its path: "is a FIFO, not a regular file". */
export class FileRefused extends Error {
    constructor(
        readonly reason: RefusalReason,
        message: string,
        /** What the handle said, when the file was opened: a stamp for callers that remember files. */
        readonly info?: Stats
    ) {
        super(message);
    }
}

/** What a file that is not a regular one is, from its stat or its directory entry. */
export function notRegularFile(entry: Stats | Dirent): string | undefined {
    if (entry.isFile()) return undefined;
    if (entry.isDirectory()) return 'is a folder';
    if (entry.isFIFO()) return 'is a FIFO, not a regular file';
    if (entry.isCharacterDevice() || entry.isBlockDevice()) return 'is a device, not a regular file';
    if (entry.isSocket()) return 'is a socket, not a regular file';
    return entry.isSymbolicLink() ? 'is a symbolic link' : 'is not a regular file';
}

// O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; O_NOCTTY: a terminal device never
// becomes the gateway's controlling terminal. Neither changes how a regular file is read.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/** The bytes of the regular file `file` and its stat (from the handle they were read through); else FileRefused. */
export async function readRegularFile(file: string, limit: ReadLimit): Promise<{ bytes: Buffer; info: Stats }> {
    let handle: FileHandle;
    try {
        handle = await open(file, limit.followLinks === false ? OPEN_FLAGS | constants.O_NOFOLLOW : OPEN_FLAGS);
    } catch (error) {
        throw await refusal(file, error, limit);
    }
    try {
        const info = await handle.stat();
        const kind = notRegularFile(info);
        if (kind !== undefined) throw new FileRefused('not-regular', kind, info);
        if (info.size > limit.maxBytes) throw tooLarge(limit, info);
        return { bytes: await readToEnd(handle, info, limit), info };
    } finally {
        await handle.close();
    }
}

const tooLarge = (limit: ReadLimit, info?: Stats) => new FileRefused('too-large', `larger than ${limit.maxBytes} bytes (the limit for ${limit.kind})`, info);

/**
 * Reads until the end of the file, never more than the limit: the file may have grown since its stat, and some
 * (in /proc) say size 0. A first read of one byte more than the stat's size that comes back short ends at once.
 */
async function readToEnd(handle: FileHandle, info: Stats, limit: ReadLimit): Promise<Buffer> {
    let buffer = Buffer.allocUnsafe(info.size + 1);
    let length = 0;
    for (;;) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
        length += bytesRead;
        if (bytesRead === 0 || (length === info.size && length > 0)) return buffer.subarray(0, length);
        if (length > limit.maxBytes) throw tooLarge(limit, info);
        if (length === buffer.length) {
            const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, limit.maxBytes + 1));
            buffer.copy(grown, 0, 0, length);
            buffer = grown;
        }
    }
}

async function refusal(file: string, error: unknown, limit: ReadLimit): Promise<FileRefused> {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return new FileRefused('missing', 'file not found');
    if (code === 'ELOOP' && limit.followLinks === false) return new FileRefused('link', 'is a symbolic link; not followed');
    if (code === 'EISDIR') return new FileRefused('not-regular', 'is a folder');
    // A socket (ENXIO), or a device without a driver: what it is, from its stat, which does not open it.
    const kind = await stat(file).then(notRegularFile, () => undefined);
    if (kind !== undefined) return new FileRefused('not-regular', kind);
    return new FileRefused('unreadable', `cannot be read (${code ?? 'error'})`);
}

/** The config error a file that cannot be read becomes: the config and field that name it, and what to do. */
export interface FileField {
    source: string;
    path: ConfigIssue['path'];
    fix: string;
}

/**
 * The text of `file`, a `kind` of file the config names; if it cannot be read, a ConfigError on `field` that says
 * why and names the file ("is a FIFO, not a regular file (FILE); fix envFile").
 */
export async function readTextFile(file: string, kind: ConfigFileKind, field: FileField): Promise<string> {
    try {
        const { bytes } = await readRegularFile(file, { kind, maxBytes: FILE_LIMITS[kind] });
        return bytes.toString('utf8');
    } catch (error) {
        if (!(error instanceof FileRefused)) throw error;
        throw new ConfigError(field.source, [{ path: field.path, message: `${error.message} (${file}); ${field.fix}` }]);
    }
}
