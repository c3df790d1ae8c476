/**
 * Finds the prompt files below a folder: every `*.md`, subfolders included,
 * leaving out names starting with "." (`.git`, editors' swap files). Symbolic
 * links are followed only to files inside the folder; a linked folder is not
 * entered (no loops, no second copy). What is left out for a reason the
 * author should hear of becomes a problem.
 */
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { UpstreamProblem } from '../upstream.js';

const MAX_FOLDER_DEPTH = 16;

/** Changes when the file does: compared between scans, so only changed files are read again. */
export interface FileEntry {
    absolute: string;
    stamp: string;
    size: number;
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
export async function scanFolder(root: string, maxFiles: number): Promise<FolderScan> {
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
    await walk(scan, { root, realRoot, maxFiles }, root, '', 0);
    return scan;
}

interface Walk {
    root: string;
    realRoot: string;
    maxFiles: number;
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
    const stamps: Promise<void>[] = [];
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
        if (entry.name.startsWith('.')) continue;
        const absolute = path.join(directory, entry.name);
        const below = relative === '' ? entry.name : `${relative}/${entry.name}`;
        if (entry.isDirectory()) subfolders.push(walk(scan, context, absolute, below, depth + 1));
        else if (entry.name.endsWith('.md') && (entry.isFile() || entry.isSymbolicLink())) {
            if (scan.files.size >= context.maxFiles) {
                scan.truncated = true;
                continue;
            }
            scan.files.set(below, { absolute, stamp: '', size: 0 });
            stamps.push(stampOf(scan, context, absolute, below, entry.isSymbolicLink()));
        }
    }
    await Promise.all([...stamps, ...subfolders]);
}

async function stampOf(scan: FolderScan, context: Walk, absolute: string, below: string, link: boolean): Promise<void> {
    try {
        if (link) {
            const target = await realpath(absolute);
            if (!target.startsWith(context.realRoot + path.sep)) {
                scan.files.delete(below);
                scan.problems.push({ source: below, message: 'a symbolic link to outside the folder; not read' });
                return;
            }
        }
        const info = link ? await stat(absolute) : await lstat(absolute);
        if (!info.isFile()) {
            scan.files.delete(below);
            return;
        }
        const entry = scan.files.get(below)!;
        entry.stamp = `${info.ino}:${info.size}:${info.mtimeMs}`;
        entry.size = info.size;
    } catch {
        // Gone between listing and stat: the watcher reports it, and the next scan no longer lists it.
        scan.files.delete(below);
    }
}
