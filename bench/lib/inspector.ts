/**
 * The V8 inspector of a process started with `--inspect`, over the Chrome DevTools Protocol: a full garbage
 * collection (what DevTools' "collect garbage" does), the process's own `process.memoryUsage()`, and a CPU profile
 * of a chosen window. Nothing is added to the measured process's code.
 */
import { WebSocket } from 'undici';

export interface CpuProfileNode {
    id: number;
    callFrame: { functionName: string; url: string };
    children?: number[];
}

export interface CpuProfile {
    nodes: CpuProfileNode[];
    samples: number[];
    timeDeltas: number[];
}

export class Inspector {
    #nextId = 1;
    readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

    private constructor(private readonly socket: WebSocket) {
        socket.onmessage = event => {
            const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
            const pending = message.id === undefined ? undefined : this.#pending.get(message.id);
            if (pending === undefined) return;
            this.#pending.delete(message.id!);
            if (message.error !== undefined) pending.reject(new Error(`inspector: ${message.error.message}`));
            else pending.resolve(message.result);
        };
        socket.onclose = () => {
            for (const pending of this.#pending.values()) pending.reject(new Error('inspector connection closed'));
            this.#pending.clear();
        };
    }

    static async attach(url: string): Promise<Inspector> {
        const socket = new WebSocket(url);
        await new Promise((resolve, reject) => {
            socket.onopen = resolve;
            socket.onerror = () => reject(new Error(`cannot attach to the inspector at ${url}`));
        });
        return new Inspector(socket);
    }

    send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
        const id = this.#nextId++;
        return new Promise<T>((resolve, reject) => {
            this.#pending.set(id, { resolve: value => resolve(value as T), reject });
            this.socket.send(JSON.stringify({ id, method, params }));
        });
    }

    /** Heap and external memory after a full GC (twice: what the first frees may hold what the second can free). */
    async memoryAfterGc(): Promise<NodeJS.MemoryUsage> {
        await this.send('HeapProfiler.collectGarbage');
        await this.send('HeapProfiler.collectGarbage');
        const answer = await this.send<{ result: { value: string } }>('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
        return JSON.parse(answer.result.value) as NodeJS.MemoryUsage;
    }

    /** A sampling CPU profile of the process's main thread while `during` runs. */
    async profile<T>(during: () => Promise<T>, intervalUs = 200): Promise<{ value: T; profile: CpuProfile }> {
        await this.send('Profiler.enable');
        await this.send('Profiler.setSamplingInterval', { interval: intervalUs });
        await this.send('Profiler.start');
        const value = await during();
        const { profile } = await this.send<{ profile: CpuProfile }>('Profiler.stop');
        await this.send('Profiler.disable');
        return { value, profile };
    }

    close(): void {
        this.socket.close();
    }
}
