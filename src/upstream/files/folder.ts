/**
 * Finds the prompt files below a folder: every file its format reads
 * (`*.md`, `*.prompt.md`, `*.toml`, `SKILL.md`: formats/names.ts), subfolders
 * included, leaving out names starting with "." (`.git`, editors' swap files). Symbolic
 * links are followed only to files inside the folder; a linked folder is not
 * entered (no loops, no second copy). What is left out for a reason the
 * author should hear of becomes a problem (a prompt file that is a FIFO, socket,
 * device or folder among them). Files are not stat'ed here: a new
 * file's stamp comes from the handle it is read through (file-read.ts).
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { notRegularFile } from '../../config/read-text-file.js';
import type { PromptFormat } from '../../config/prompt-formats.js';
import type { UpstreamProblem } from '../upstream.js';
import { isPromptFileOf } from './formats/names.js';

const MAX_FOLDER_DEPTH = 16;

export interface FileEntry {
    absolute: string;
    /** A symbolic link (to a file inside the folder): opened following it; any other entry is opened refusing links. */
    link: boolean;
}

export interface FolderScan {
    /** By path below the folder, "/"-separated. */
    files: Map<string, FileEntry>;
    /** Absolute paths of the folder and every subfolder scanned (what to watch). */
    directories: string[];
    problems: UpstreamProblem[];
    /** Files beyond `maxFiles` were not taken. */
    truncated: boolean;
}

export class FolderUnreadable extends Error {}

/** Throws FolderUnreadable when the folder itself is missing or not a folder. */
export async function scanFolder(root: string, maxFiles: number, format: PromptFormat): Promise<FolderScan> {
    let realRoot: string;
    try {
        realRoot = await realpath(root);
        if (!(await stat(realRoot)).isDirectory()) throw new FolderUnreadable(`${root} is not a folder`);
    } catch (error) {
        if (error instanceof FolderUnreadable) throw error;
        const code = (error as NodeJS.ErrnoException).code;
        throw new FolderUnreadable(code === 'ENOENT' ? `folder not found: ${root}` : `folder cannot be read (${code ?? 'error'}): ${root}`);
    }
    const scan: FolderScan = { files: new Map(), directories: [], problems: [], truncated: false };
    await walk(scan, { root, realRoot, maxFiles, format }, root, '', 0);
    return scan;
}

interface Walk {
    root: string;
    realRoot: string;
    maxFiles: number;
    format: PromptFormat;
}

async function walk(scan: FolderScan, context: Walk, directory: string, relative: string, depth: number): Promise<void> {
    if (depth > MAX_FOLDER_DEPTH) {
        scan.problems.push({ source: relative, message: `folder nested deeper than ${MAX_FOLDER_DEPTH} levels; not read` });
        return;
    }
    let entries;
    try {
        entries = await readdir(directory, { withFileTypes: true });
    } catch (error) {
        // The root itself vanishing is seen by the next scan; a subfolder may go between listing and reading.
        if (relative === '') throw new FolderUnreadable(`folder cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ${context.root}`);
        return;
    }
    scan.directories.push(directory);
    const subfolders: Promise<void>[] = [];
    const links: Promise<void>[] = [];
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
        if (entry.name.startsWith('.')) continue;
        const absolute = path.join(directory, entry.name);
        const below = relative === '' ? entry.name : `${relative}/${entry.name}`;
        const promptFile = isPromptFileOf(context.format, below);
        if (entry.isDirectory()) {
            // Named as the format names its files (a skill's SKILL.md made a folder): the author may have meant a
            // file, so they hear of it; but nothing is lost (its files are read as any subfolder's), so it is a
            // warning, which does not fail --check.
            if (promptFile)
                scan.problems.push({
                    source: below,
                    message: "is a folder named like a prompt file: not a prompt itself; the files in it are read as any folder's",
                    warning: true
                });
            subfolders.push(walk(scan, context, absolute, below, depth + 1));
        } else if (!promptFile) continue;
        else if (isSpecial(entry)) scan.problems.push({ source: below, message: `${notRegularFile(entry)}; not read` });
        else {
            if (scan.files.size >= context.maxFiles) {
                scan.truncated = true;
                continue;
            }
            const link = entry.isSymbolicLink();
            scan.files.set(below, { absolute, link });
            if (link) links.push(checkLink(scan, context, absolute, below));
        }
    }
    await Promise.all([...links, ...subfolders]);
}

/** A FIFO, socket or device: never opened (what a link points to is checked on the handle it is read through). */
const isSpecial = (entry: Dirent) => entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice();

/** A link is followed only to a file inside the folder; what it points to is checked again when read. */
async function checkLink(scan: FolderScan, context: Walk, absolute: string, below: string): Promise<void> {
    try {
        const target = await realpath(absolute);
        if (target.startsWith(context.realRoot + path.sep)) return;
        scan.problems.push({ source: below, message: 'a symbolic link to outside the folder; not read' });
    } catch (error) {
        // Gone since the listing: the next scan does not see it. Dangling or in a loop: its prompt is missing, and
        // its author should hear of it.
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ELOOP' || (code === 'ENOENT' && (await exists(absolute)))) {
            scan.problems.push({ source: below, message: 'a symbolic link to a missing file, or in a loop; not read' });
        }
    }
    scan.files.delete(below);
}

/** Whether the entry itself (not what it links to) is still there. */
const exists = (file: string) =>
    lstat(file).then(
        () => true,
        () => false
    );
