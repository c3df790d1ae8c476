/**
 * An in-memory upstream behind the catalog's own port (src/catalog/upstream-port.ts): the catalog's unit tests
 * script what it lists and answers, and read back what the catalog asked of it. Not a stand-in for a transport:
 * the port is the catalog's boundary, and the upstream layer's own tests cover the other side of it.
 */
import type { CompleteRequest, CompleteResult, GetPromptResult, Prompt } from '@modelcontextprotocol/client';
import pino from 'pino';
import { Bus } from '../../src/lib/bus.js';
import { shortDigest } from '../../src/lib/digest.js';
import type { Logger } from '../../src/diagnostics/logger.js';
import type { FaultKind } from '../../src/diagnostics/faults.js';
import type { TraceContext } from '../../src/protocol/meta.js';
import type { CallControl, ListedPrompt, UpstreamPort, UpstreamPortEvent } from '../../src/catalog/upstream-port.js';

export const silentLogger: Logger = pino({ level: 'silent' });

/** The defaults of caching.relistIntervalMs and caching.minRelistIntervalMs. */
export const RELIST = { relistIntervalMs: 60_000, minRelistIntervalMs: 1000 } as const;

/** A promise the test settles when it chooses. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
    let resolve!: (value: T) => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
    return { promise, resolve, reject };
}

export function prompt(name: string, argumentNames: string[] = [], required = false): Prompt {
    return { name, arguments: argumentNames.map(argument => ({ name: argument, required })) };
}

export function listed(prompts: readonly Prompt[]): ListedPrompt[] {
    return prompts.map(definition => ({ prompt: definition, digest: shortDigest(JSON.stringify(definition)) }));
}

export class FakeUpstream implements UpstreamPort {
    state = 'ready';
    readonly config: { timeoutMs: number; namespace: boolean; relistIntervalMs?: number };
    readonly events = new Bus<UpstreamPortEvent>();
    /**
     * false: an upstream that cannot announce changes (no list_changed, or a 2026-07-28 one without an acknowledged
     * subscription), whose list the catalog reads again on a schedule. `setAnnouncing` changes it as over the wire.
     */
    announcesChanges = true;
    /** The caching hint its lists carry (a 2026-07-28 upstream's ttlMs), if any. */
    ttlMs: number | undefined;
    /** What the next list reads return, unless `nextList` holds a read the test settles itself. */
    prompts: Prompt[];
    nextList: Promise<ListedPrompt[]> | undefined;
    /** The CLIENT spans its list reads say they made (tracing on), if any. */
    listTraces: TraceContext[] | undefined;
    listCalls = 0;
    readonly gets: { name: string; args: Record<string, string> | undefined; control: CallControl | undefined }[] = [];
    readonly completions: CompleteRequest['params'][] = [];
    readonly faults: FaultKind[] = [];
    /** What a get answers (or throws, when it is an Error). */
    getAnswer: GetPromptResult | Error = { messages: [] };
    completeAnswer: CompleteResult | undefined | Error = { completion: { values: [] } };

    constructor(
        readonly id: string,
        prompts: Prompt[] = [],
        config: Partial<FakeUpstream['config']> = {}
    ) {
        this.prompts = prompts;
        this.config = { timeoutMs: 10_000, namespace: true, ...config };
    }

    async listPrompts(): Promise<{ items: ListedPrompt[]; ttlMs?: number; traces?: TraceContext[] }> {
        this.listCalls++;
        const next = this.nextList;
        this.nextList = undefined;
        const items = next === undefined ? listed(this.prompts) : await next;
        const listing = this.ttlMs === undefined ? { items } : { items, ttlMs: this.ttlMs };
        return this.listTraces === undefined ? listing : { ...listing, traces: this.listTraces };
    }

    getPrompt(name: string, args: Record<string, string> | undefined, control?: CallControl): Promise<GetPromptResult> {
        this.gets.push({ name, args, control });
        const answer = this.getAnswer;
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    }

    complete(params: CompleteRequest['params']): Promise<CompleteResult | undefined> {
        this.completions.push(params);
        const answer = this.completeAnswer;
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    }

    reportFault(kind: FaultKind): void {
        this.faults.push(kind);
    }

    /** The upstream announces a new list, as over the wire. */
    changeList(prompts: Prompt[]): void {
        this.prompts = prompts;
        this.events.publish({ type: 'prompts-changed', upstreamId: this.id });
    }

    /** A 2026-07-28 upstream's subscription was acknowledged (true) or dropped (false). */
    setAnnouncing(announcing: boolean): void {
        this.announcesChanges = announcing;
        this.events.publish({ type: 'announcing', upstreamId: this.id });
    }

    setState(state: string): void {
        const previous = this.state;
        this.state = state;
        this.events.publish({ type: 'state', upstreamId: this.id, state, previous });
    }
}
