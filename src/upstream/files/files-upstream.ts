/**
 * An upstream whose prompts are files in a folder, in the gateway's Markdown
 * format or another tool's (its `format`; docs/prompt-files.md).
 * It reads them all at start, then watches the folder: after each burst of
 * changes it rescans, reads again only the files whose stamp changed (or that
 * the watcher named), and tells the catalog its prompts changed. A file with an
 * error is left out and reported (log, /healthz, dashboard) until fixed; its
 * siblings are served on; a file served with a warning is reported the same
 * way. The folder missing is the upstream down, rechecked
 * until it is back.
 */
import type { CompleteRequest, CompleteResult, GetPromptResult } from '@modelcontextprotocol/client';
import type { FilesUpstreamConfig } from '../../config/schema.js';
import { Bus } from '../../lib/bus.js';
import { forEachBounded } from '../../lib/for-each-bounded.js';
import type { FaultKind } from '../../diagnostics/faults.js';
import { describeError, type Logger } from '../../diagnostics/logger.js';
import type { UpstreamLimits, UpstreamObserver } from '../connection.js';
import { UpstreamFailedError, UpstreamRejectedError } from '../../catalog/upstream-port.js';
import { FaultLog } from '../fault-log.js';
import type { Collected } from '../pages.js';
import type { UpstreamPrompt } from '../prompt-bounds.js';
import type { GatewayUpstream, UpstreamEvent, UpstreamProblem, UpstreamState } from '../upstream.js';
import { readPromptFile, READ_CONCURRENCY } from './file-read.js';
import { FolderUnreadable, scanFolder, type FolderScan } from './folder.js';
import { FolderWatcher } from './folder-watcher.js';
import type { PromptFile } from './prompt-file.js';
import { PromptSet } from './prompt-set.js';
import { completeArgument, renderPrompt } from './render.js';
import { oneLine } from '../../lib/one-line.js';

/** Quiet time that ends a burst of file changes (an editor's save is several events). */
const SETTLE_MS = 50;
/** How often a missing folder is looked for again. */
const RECHECK_MS = 1000;

export interface FilesUpstreamOptions {
    logger: Logger;
    limits: () => UpstreamLimits;
    observer?: UpstreamObserver | undefined;
}

export class FilesUpstream implements GatewayUpstream {
    readonly id: string;
    readonly events: Bus<UpstreamEvent>;
    readonly load = { active: 0, queued: 0 };
    readonly offersCompletions = true;
    #state: UpstreamState = 'idle';
    #downReason: string | undefined;
    #attempted = false;
    readonly #files = new PromptSet();
    #byName: ReadonlyMap<string, PromptFile> = new Map();
    #listed: UpstreamPrompt[] = [];
    #problems: UpstreamProblem[] = [];
    #truncated = false;
    readonly #watcher: FolderWatcher;
    #settleTimer: NodeJS.Timeout | undefined;
    #recheckTimer: NodeJS.Timeout | undefined;
    /** A rescan in progress, and whether another was asked for meanwhile. */
    #scanning: Promise<void> | undefined;
    #rescan = false;
    readonly #log: Logger;
    readonly #faults: FaultLog;

    constructor(
        readonly config: FilesUpstreamConfig,
        private readonly options: FilesUpstreamOptions
    ) {
        this.id = config.id;
        this.#log = options.logger.child({ upstream: config.id });
        this.events = new Bus(error => this.#log.error({ err: describeError(error) }, 'upstream event listener failed'));
        this.#faults = new FaultLog(this.#log, kind => options.observer?.fault(this.id, kind));
        this.#watcher = new FolderWatcher(
            () => this.#changed(),
            (folder, error) => {
                this.#log.warn({ folder, err: describeError(error) }, 'cannot watch a prompt folder; its changes are seen when another folder changes or the folder is rechecked');
                this.#changed();
            }
        );
    }

    get state(): UpstreamState {
        return this.#state;
    }

    get attempted(): boolean {
        return this.#attempted;
    }

    get problems(): readonly UpstreamProblem[] {
        return this.#problems;
    }

    get lastError(): string | undefined {
        if (this.#downReason !== undefined) return this.#downReason;
        const leftOut = this.#problems.filter(problem => problem.warning !== true);
        const [first] = leftOut;
        if (first === undefined) return this.#firstWarning();
        const others = leftOut.length - 1;
        return `${describeProblem(first)}${others > 0 ? ` (and ${others} more file${others > 1 ? 's' : ''} left out)` : ''}`;
    }

    /** With no file left out, a warning is what the dashboard and /healthz show as the upstream's last error. */
    #firstWarning(): string | undefined {
        const [first] = this.#problems;
        if (first === undefined) return undefined;
        const others = this.#problems.length - 1;
        return `warning: ${describeProblem(first)}${others > 0 ? ` (and ${others} more warning${others > 1 ? 's' : ''})` : ''}`;
    }

    async start(): Promise<void> {
        if (this.#state !== 'idle') return;
        this.#setState('connecting');
        await this.#scan();
        this.#attempted = true;
    }

    async close(): Promise<void> {
        this.#setState('closed');
        clearTimeout(this.#settleTimer);
        clearTimeout(this.#recheckTimer);
        this.#watcher.close();
        await this.#scanning;
    }

    reportFault(kind: FaultKind, message: string, details: Record<string, unknown> = {}): void {
        this.#faults.report(kind, message, details);
    }

    /** Its folder is watched: every change is announced. */
    readonly announcesChanges = true;

    listPrompts(): Promise<Collected<UpstreamPrompt>> {
        this.#assertReady();
        return Promise.resolve({ items: this.#listed, ...(this.#truncated ? { truncated: 'too-many-items' as const } : {}) });
    }

    getPrompt(name: string, args: Record<string, string> | undefined): Promise<GetPromptResult> {
        this.#assertReady();
        const file = this.#byName.get(name);
        if (file === undefined) return Promise.reject(new UpstreamRejectedError(`Unknown prompt: ${JSON.stringify(name.slice(0, 64))}`));
        return Promise.resolve(renderPrompt(file, args));
    }

    complete(params: CompleteRequest['params']): Promise<CompleteResult | undefined> {
        this.#assertReady();
        const file = params.ref.type === 'ref/prompt' ? this.#byName.get(params.ref.name) : undefined;
        if (file === undefined) return Promise.resolve({ completion: { values: [] } });
        return Promise.resolve(completeArgument(file, params.argument.name, params.argument.value));
    }

    /** A method, not a comparison: the state changes across awaits, which the compiler's narrowing does not see. */
    #isClosed(): boolean {
        return this.#state === 'closed';
    }

    #assertReady(): void {
        if (this.#state !== 'ready') throw new UpstreamFailedError(this.id, this.#downReason ?? 'not ready', undefined);
    }

    /** A watcher event: the rescan waits for the burst to settle. */
    #changed(): void {
        if (this.#state === 'closed') return;
        clearTimeout(this.#settleTimer);
        this.#settleTimer = setTimeout(() => void this.#scan(), SETTLE_MS).unref();
    }

    /** One scan at a time; asked for during one, another follows it. */
    #scan(): Promise<void> {
        if (this.#scanning !== undefined) {
            this.#rescan = true;
            return this.#scanning;
        }
        const scanning = (async () => {
            do {
                this.#rescan = false;
                await this.#scanOnce();
            } while (this.#rescan && !this.#isClosed());
        })().finally(() => (this.#scanning = undefined));
        this.#scanning = scanning;
        return scanning;
    }

    async #scanOnce(): Promise<void> {
        let scan: FolderScan;
        try {
            scan = await scanFolder(this.config.path, this.options.limits().maxPromptsPerUpstream, this.config.format);
        } catch (error) {
            if (!(error instanceof FolderUnreadable)) throw error;
            return this.#down(error.message);
        }
        if (this.#isClosed()) return;
        const changed = await this.#readChanged(scan);
        if (this.#isClosed()) return;
        // A folder new since the last scan may have had files written before it was watched: look once more.
        if (this.#watcher.follow(scan.directories) && this.#state !== 'connecting') this.#rescan = true;
        const wasReady = this.#state === 'ready';
        if (changed || !wasReady || scan.truncated !== this.#truncated) this.#publish(scan);
        else this.#report([...this.#served().problems, ...scan.problems]);
        if (!wasReady) {
            this.#downReason = undefined;
            this.#log.info({ path: this.config.path, prompts: this.#listed.length, leftOut: this.#problems.length }, 'prompt folder read');
            this.#setState('ready');
        } else if (changed) {
            this.options.observer?.listChanged(this.id);
            this.events.publish({ type: 'prompts-changed', upstreamId: this.id });
        }
    }

    /** Reads what is new or changed, forgets what is gone; whether anything did change. */
    async #readChanged(scan: FolderScan): Promise<boolean> {
        let changed = false;
        for (const path of [...this.#files.paths]) {
            if (!scan.files.has(path)) changed = this.#files.delete(path) || changed;
        }
        await forEachBounded([...scan.files], READ_CONCURRENCY, async ([path, entry]) => {
            const read = await readPromptFile(entry, path, this.#files.stampOf(path), this.config.format);
            if (read.kind === 'unchanged') return;
            changed = true;
            if (read.kind === 'read') this.#files.set(path, read.stamp, read.outcome);
            else this.#files.delete(path);
        });
        return changed;
    }

    #served() {
        return this.#files.serve(this.options.limits());
    }

    #publish(scan: FolderScan): void {
        const served = this.#served();
        this.#listed = served.listed;
        this.#byName = served.byName;
        this.#truncated = scan.truncated;
        if (scan.truncated) this.reportFault('list_truncated', 'more prompt files than limits.maxPromptsPerUpstream; the rest are left out', { prompts: served.listed.length });
        this.#report([...served.problems, ...scan.problems]);
    }

    /** Logs each problem and warning once, when it appears, and each file left out once fixed. */
    #report(problems: UpstreamProblem[]): void {
        const before = new Set(this.#problems.map(problemKey));
        const leftOut = (list: UpstreamProblem[]) => new Set(list.filter(problem => problem.warning !== true).map(problem => problem.source));
        const now = leftOut(problems);
        for (const problem of problems) {
            if (before.has(problemKey(problem))) continue;
            const fields = { file: problem.source, line: problem.line, problem: problem.message };
            // A file's name is anyone's text: on one line, so that it cannot forge a line of a pretty (text) log.
            const described = oneLine(describeProblem(problem));
            if (problem.warning === true) this.#log.warn(fields, `prompt file served with a warning: ${described}`);
            else this.#log.warn(fields, `prompt file left out: ${described}`);
        }
        for (const source of leftOut(this.#problems)) if (!now.has(source)) this.#log.info({ file: source }, 'prompt file served again');
        this.#problems = problems;
    }

    #down(reason: string): void {
        if (this.#state === 'closed') return;
        this.#watcher.follow([]);
        this.#files.clear();
        this.#listed = [];
        this.#byName = new Map();
        this.#problems = [];
        if (this.#downReason !== reason) this.#log.warn({ path: this.config.path, retryInMs: RECHECK_MS }, `prompt folder unavailable (${reason})`);
        this.#downReason = reason;
        this.#setState('down');
        clearTimeout(this.#recheckTimer);
        this.#recheckTimer = setTimeout(() => void this.#scan(), RECHECK_MS).unref();
    }

    #setState(state: UpstreamState): void {
        const previous = this.#state;
        if (previous === state) return;
        this.#state = state;
        this.events.publish({ type: 'state', upstreamId: this.id, state, previous });
    }
}

const problemKey = (problem: UpstreamProblem) => `${problem.warning === true ? 'warning' : 'error'} ${describeProblem(problem)}`;

function describeProblem(problem: UpstreamProblem): string {
    return `${problem.source}${problem.line === undefined ? '' : `:${problem.line}`}: ${problem.message}`;
}
