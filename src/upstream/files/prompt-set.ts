/**
 * The prompt files of a folder as last read, and what they make: the prompts
 * to list (names unique, within the limits), the problems of the files
 * left out and the warnings of those served. Pure: the upstream reads the files and hands the outcomes here.
 */
import { boundPrompt, type PromptLimits, type UpstreamPrompt } from '../prompt-bounds.js';
import type { UpstreamProblem } from '../upstream.js';
import type { ParseOutcome, PromptFile } from './prompt-file.js';

interface ReadFile {
    stamp: string;
    outcome: ParseOutcome;
}

export interface Served {
    listed: UpstreamPrompt[];
    byName: ReadonlyMap<string, PromptFile>;
    problems: UpstreamProblem[];
}

export class PromptSet {
    readonly #files = new Map<string, ReadFile>();

    stampOf(path: string): string | undefined {
        return this.#files.get(path)?.stamp;
    }

    get paths(): IterableIterator<string> {
        return this.#files.keys();
    }

    set(path: string, stamp: string, outcome: ParseOutcome): void {
        this.#files.set(path, { stamp, outcome });
    }

    delete(path: string): boolean {
        return this.#files.delete(path);
    }

    clear(): void {
        this.#files.clear();
    }

    /** In path order, so which of two files claiming one name wins does not depend on reading order. */
    serve(limits: PromptLimits & { maxListBytes: number }): Served {
        const served: Served = { listed: [], byName: new Map(), problems: [] };
        const byName = new Map<string, PromptFile>();
        const owners = new Map<string, string>();
        let bytes = 0;
        for (const path of [...this.#files.keys()].sort()) {
            const { outcome } = this.#files.get(path)!;
            if (!outcome.ok) {
                served.problems.push({ source: path, line: outcome.error.line, message: outcome.error.message });
                continue;
            }
            const { file } = outcome;
            const owner = owners.get(file.prompt.name);
            if (owner !== undefined) {
                served.problems.push({
                    source: path,
                    message: `prompt name "${file.prompt.name}" is already taken by ${owner}, which is served (the first in path order); rename one of them`
                });
                continue;
            }
            const bounded = boundPrompt(file.prompt, limits);
            if (typeof bounded === 'string' || bytes + bounded.bytes > limits.maxListBytes) {
                const why =
                    bounded === 'too_deep' ? 'limits.maxJsonDepth' : typeof bounded === 'string' ? 'limits.maxPromptBytes' : 'limits.maxListBytes (all prompts of the folder)';
                served.problems.push({ source: path, message: `prompt definition over ${why}; shorten it` });
                continue;
            }
            bytes += bounded.bytes;
            owners.set(file.prompt.name, path);
            byName.set(file.prompt.name, file);
            served.listed.push(bounded);
            for (const warning of outcome.warnings ?? []) served.problems.push({ source: path, line: warning.line, message: warning.message, warning: true });
        }
        return { ...served, byName };
    }
}
