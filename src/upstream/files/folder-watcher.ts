/**
 * Watches a folder tree for changes with one non-recursive watcher per folder.
 * (`fs.watch(..., { recursive: true })` works on Linux from Node 20, but it
 * watches every file on its own and sets them all up synchronously: over a
 * second of blocked event loop and 10,000 inotify watches for 10,000 files.)
 * The owner rescans on each burst of changes and hands the folders it found
 * to `follow`, which watches new ones and lets go of removed ones.
 */
import { watch, type FSWatcher } from 'node:fs';

export class FolderWatcher {
    readonly #watchers = new Map<string, FSWatcher>();
    #closed = false;

    /** `onChange` runs on any change below; `onError` when a folder can no longer be watched. */
    constructor(
        private readonly onChange: () => void,
        private readonly onError: (folder: string, error: Error) => void
    ) {}

    /** Watches exactly `folders`; true when a folder was added (its content may have changed before it was watched). */
    follow(folders: readonly string[]): boolean {
        if (this.#closed) return false;
        const wanted = new Set(folders);
        for (const [folder, watcher] of this.#watchers) {
            if (wanted.has(folder)) continue;
            watcher.close();
            this.#watchers.delete(folder);
        }
        let added = false;
        for (const folder of wanted) {
            if (this.#watchers.has(folder)) continue;
            try {
                const watcher = watch(folder, { persistent: false }, () => this.onChange());
                watcher.on('error', error => {
                    watcher.close();
                    this.#watchers.delete(folder);
                    this.onError(folder, error);
                });
                this.#watchers.set(folder, watcher);
                added = true;
            } catch (error) {
                // Gone since the scan (the next scan sees it), or out of inotify watches (reported).
                if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.onError(folder, error as Error);
            }
        }
        return added;
    }

    close(): void {
        this.#closed = true;
        for (const watcher of this.#watchers.values()) watcher.close();
        this.#watchers.clear();
    }
}
