/**
 * Reads one prompt file for the files upstream, with as few system calls as
 * the answer needs: a file already read is stat'ed and read again only when
 * its stamp changed; a new file is opened once, and its stamp comes from that
 * handle (no separate stat). Only a regular file is read, without blocking,
 * its bytes bounded before and while reading (config/read-text-file.ts), and
 * they must be UTF-8.
 */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { FileRefused, readRegularFile } from '../../config/read-text-file.js';
import type { PromptFormat } from '../../config/prompt-formats.js';
import type { FileEntry } from './folder.js';
import { parseByFormat } from './formats/parse-format.js';
import { MAX_PROMPT_FILE_BYTES, type ParseOutcome } from './prompt-file.js';

export type FileRead =
    /** Its stamp is the one given: nothing to do. */
    | { kind: 'unchanged' }
    /** Gone since the scan: the next scan forgets it. */
    | { kind: 'gone' }
    | { kind: 'read'; stamp: string; outcome: ParseOutcome };

// One decoder for every file: without `stream`, each decode stands alone.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Changes when the file does: compared between scans, so only changed files are read again. */
const stampOf = (info: Stats) => `${info.ino}:${info.size}:${info.mtimeMs}`;

const failed = (message: string): ParseOutcome => ({ ok: false, error: { line: undefined, message } });

const LIMIT = { kind: 'prompt files', maxBytes: MAX_PROMPT_FILE_BYTES };

/** Files of one folder read at once. */
export const READ_CONCURRENCY = 64;

/** `known` is the stamp the file had when last read, if it was; the file is parsed as `format` reads it. */
export async function readPromptFile(entry: FileEntry, relativePath: string, known: string | undefined, format: PromptFormat): Promise<FileRead> {
    let read: { bytes: Buffer; info: Stats };
    try {
        if (known !== undefined && stampOf(await stat(entry.absolute)) === known) return { kind: 'unchanged' };
        // A regular file replaced by a link since the listing is not followed (it could point outside the folder).
        read = await readRegularFile(entry.absolute, { ...LIMIT, followLinks: entry.link });
    } catch (error) {
        return refused(error);
    }
    return { kind: 'read', ...parseBytes(read.bytes, read.info, relativePath, format) };
}

function refused(error: unknown): FileRead {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || (error instanceof FileRefused && error.reason === 'missing')) return { kind: 'gone' };
    if (!(error instanceof FileRefused)) return { kind: 'read', stamp: '', outcome: failed(`cannot be read (${code ?? 'error'})`) };
    // Stamped when the handle said what it is: left as refused until the file changes, not opened at every scan.
    const stamp = error.info === undefined ? '' : stampOf(error.info);
    if (error.reason === 'link') return { kind: 'read', stamp, outcome: failed('became a symbolic link; not read') };
    return { kind: 'read', stamp, outcome: failed(`${error.message}; ${error.reason === 'too-large' ? 'split the prompt' : 'not read'}`) };
}

function parseBytes(bytes: Buffer, info: Stats, relativePath: string, format: PromptFormat): { stamp: string; outcome: ParseOutcome } {
    // Grown since the stat: an empty stamp has the next scan read it again (its writer's events bring one).
    if (bytes.length > info.size) return { stamp: '', outcome: failed('changed while being read') };
    const stamp = stampOf(info);
    let text: string;
    try {
        text = UTF8.decode(bytes);
    } catch {
        return { stamp, outcome: failed('not UTF-8 text; save it as UTF-8') };
    }
    return { stamp, outcome: parseByFormat(format, text, relativePath) };
}
