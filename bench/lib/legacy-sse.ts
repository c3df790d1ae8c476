/**
 * A session over the legacy HTTP+SSE transport (protocol 2024-11-05), as mcp-hub's endpoint serves it: a GET
 * stream whose first event names the endpoint to POST to; every POST is answered 202 and its answer comes on the
 * stream. The stream and the POSTs have a connection each.
 */
import type { Dispatcher } from 'undici';
import { connect, connectStream, initializeParams, readEvents, resultOf, TIMEOUT_MS, type Channel, type JsonRpcMessage, type Result } from './mcp-client.js';

interface Pending {
    resolve: (message: JsonRpcMessage) => void;
    reject: (error: Error) => void;
    timer: NodeJS.Timeout;
}

export class LegacySseChannel implements Channel {
    #nextId = 1;
    #endpoint = '';
    #ended: Error | undefined;
    readonly #pending = new Map<number, Pending>();
    readonly #stream: Dispatcher;
    readonly #posts: Dispatcher;

    private constructor(origin: string) {
        this.#stream = connectStream(origin);
        this.#posts = connect(origin);
    }

    static async open(url: string): Promise<LegacySseChannel> {
        const { origin, pathname } = new URL(url);
        const channel = new LegacySseChannel(origin);
        try {
            await channel.#openStream(pathname);
            await channel.call('initialize', initializeParams('2024-11-05'));
            await channel.#post({ jsonrpc: '2.0', method: 'notifications/initialized' });
            return channel;
        } catch (error) {
            await channel.close();
            throw error;
        }
    }

    async #openStream(path: string): Promise<void> {
        const { statusCode, body } = await this.#stream.request({ path, method: 'GET', headers: { accept: 'text/event-stream' } });
        if (statusCode !== 200) throw new Error(`SSE stream answered HTTP ${statusCode}`);
        const endpoint = new Promise<void>((resolve, reject) => {
            readEvents(body, event => {
                if (event.event === 'endpoint') {
                    this.#endpoint = event.data;
                    resolve();
                } else {
                    this.#answer(JSON.parse(event.data) as JsonRpcMessage);
                }
            });
            body.on('close', () => {
                this.#fail(new Error('the SSE stream ended'));
                reject(new Error('the SSE stream ended before naming its endpoint'));
            });
        });
        await endpoint;
    }

    #answer(message: JsonRpcMessage): void {
        const pending = typeof message.id === 'number' ? this.#pending.get(message.id) : undefined;
        if (pending === undefined || message.method !== undefined) return;
        this.#pending.delete(message.id as number);
        clearTimeout(pending.timer);
        pending.resolve(message);
    }

    #fail(error: Error): void {
        this.#ended = error;
        for (const pending of this.#pending.values()) {
            clearTimeout(pending.timer);
            pending.reject(error);
        }
        this.#pending.clear();
    }

    async #post(message: JsonRpcMessage): Promise<void> {
        const { statusCode, body } = await this.#posts.request({
            path: this.#endpoint,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(message)
        });
        await body.dump();
        if (statusCode !== 202) throw new Error(`${message.method ?? 'message'} answered HTTP ${statusCode}`);
    }

    async call(method: string, params: Record<string, unknown> = {}): Promise<Result> {
        if (this.#ended !== undefined) throw this.#ended;
        const id = this.#nextId++;
        const answered = new Promise<JsonRpcMessage>((resolve, reject) => {
            const timer = setTimeout(() => {
                this.#pending.delete(id);
                reject(new Error(`${method}: no answer on the SSE stream within ${TIMEOUT_MS} ms`));
            }, TIMEOUT_MS);
            this.#pending.set(id, { resolve, reject, timer });
        });
        // Settled before it is awaited when the stream ends while the POST is in flight: not an unhandled rejection.
        answered.catch(() => {});
        try {
            await this.#post({ jsonrpc: '2.0', id, method, params });
        } catch (error) {
            clearTimeout(this.#pending.get(id)?.timer);
            this.#pending.delete(id);
            throw error;
        }
        return resultOf(await answered, id);
    }

    async close(): Promise<void> {
        this.#fail(new Error('channel closed'));
        await Promise.all([this.#stream.destroy(), this.#posts.close()]);
    }
}
