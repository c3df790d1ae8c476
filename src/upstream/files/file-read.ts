/**
 * Reads one prompt file for the files upstream, with as few system calls as
 * the answer needs: a file already read is stat'ed and read again only when
 * its stamp changed; a new file is opened once, and its stamp comes from that
 * handle (no separate stat). The bytes are bounded before and while reading,
 * and must be UTF-8.
 */
import { constants, type Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { FileEntry } from './folder.js';
import { MAX_PROMPT_FILE_BYTES, parsePromptFile, type ParseOutcome } from './prompt-file.js';

export type FileRead =
    /** Its stamp is the one given: nothing to do. */
    | { kind: 'unchanged' }
    /** Gone since the scan, or no longer a file: the next scan forgets it. */
    | { kind: 'gone' }
    | { kind: 'read'; stamp: string; outcome: ParseOutcome };

// One decoder for every file: without `stream`, each decode stands alone.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Changes when the file does: compared between scans, so only changed files are read again. */
const stampOf = (info: Stats) => `${info.ino}:${info.size}:${info.mtimeMs}`;

const failed = (message: string): ParseOutcome => ({ ok: false, error: { line: undefined, message } });

/** `known` is the stamp the file had when last read, if it was. */
export async function readPromptFile(entry: FileEntry, relativePath: string, known: string | undefined): Promise<FileRead> {
    try {
        if (known !== undefined && stampOf(await stat(entry.absolute)) === known) return { kind: 'unchanged' };
        // A regular file replaced by a link since the listing is not followed (it could point outside the folder).
        const handle = await open(entry.absolute, entry.link ? constants.O_RDONLY : constants.O_RDONLY | constants.O_NOFOLLOW);
        try {
            const info = await handle.stat();
            if (!info.isFile()) return { kind: 'gone' };
            return { kind: 'read', ...(await readBounded(handle, info, relativePath)) };
        } finally {
            await handle.close();
        }
    } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'gone' };
        if (code === 'ELOOP') return { kind: 'read', stamp: '', outcome: failed('became a symbolic link; not read') };
        return { kind: 'read', stamp: '', outcome: failed(`cannot be read (${code ?? 'error'})`) };
    }
}

type FileHandle = Awaited<ReturnType<typeof open>>;

async function readBounded(handle: FileHandle, info: Stats, relativePath: string): Promise<{ stamp: string; outcome: ParseOutcome }> {
    const stamp = stampOf(info);
    const tooLarge = { stamp, outcome: failed(`larger than ${MAX_PROMPT_FILE_BYTES} bytes; split the prompt`) };
    if (info.size > MAX_PROMPT_FILE_BYTES) return tooLarge;
    // One byte more than its size: a read that fills it means the file grew while being read.
    const buffer = Buffer.allocUnsafe(info.size + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    // Grown since the stat: an empty stamp has the next scan read it again (its writer's events bring one).
    if (bytesRead > info.size) return { stamp: '', outcome: failed('changed while being read') };
    let text: string;
    try {
        text = UTF8.decode(buffer.subarray(0, bytesRead));
    } catch {
        return { stamp, outcome: failed('not UTF-8 text; save it as UTF-8') };
    }
    return { stamp, outcome: parsePromptFile(text, relativePath) };
}
