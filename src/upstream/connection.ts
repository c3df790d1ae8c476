/**
 * One upstream MCP server: its SDK client, its connection state, reconnects
 * with backoff, and the three prompt calls the gateway makes. A failure here is
 * contained: it changes this upstream's state and is reported, never thrown at
 * the gateway as a whole.
 */
import type { Readable } from 'node:stream';
import type { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client, ProtocolError, ProtocolErrorCode, SdkHttpError, type Transport } from '@modelcontextprotocol/client';
import type {
    CompleteRequest,
    CompleteResult,
    GetPromptResult,
    Prompt,
    ServerCapabilities
} from '@modelcontextprotocol/client';
import type { UpstreamConfig } from '../config/schema.js';
import { Bus } from '../lib/bus.js';
import { describeError, type Logger } from '../observability/logger.js';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.js';
import { toUpstreamError, UpstreamFailedError } from './errors.js';
import { LineSplitter } from './lines.js';
import { collectPages, type Collected } from './pages.js';
import { httpTransport, stdioTransport, type WireProtocol } from './transports.js';

const STABLE_AFTER_MS = 30_000;
const MAX_STDERR_LINE = 4096;

export type UpstreamState = 'idle' | 'connecting' | 'ready' | 'down' | 'closed';

export type UpstreamEvent =
    | { type: 'state'; upstreamId: string; state: UpstreamState; previous: UpstreamState }
    | { type: 'prompts-changed'; upstreamId: string };

export interface ConnectionOptions {
    logger: Logger;
    clientInfo: { name: string; version: string };
    backoff?: BackoffPolicy;
}

export class UpstreamConnection {
    readonly id: string;
    readonly events: Bus<UpstreamEvent>;
    #state: UpstreamState = 'idle';
    #lastError: string | undefined;
    #client: Client | undefined;
    #wire: WireProtocol | undefined;
    #attempt = 0;
    #retryTimer: NodeJS.Timeout | undefined;
    #stableTimer: NodeJS.Timeout | undefined;
    /** The client of a handshake in progress, so close() can stop it too. */
    #connecting: Client | undefined;
    readonly #log: Logger;

    constructor(
        readonly config: UpstreamConfig,
        readonly index: number,
        private readonly options: ConnectionOptions
    ) {
        this.id = config.id;
        this.#log = options.logger.child({ upstream: config.id });
        this.events = new Bus(error => this.#log.error({ err: describeError(error) }, 'upstream event listener failed'));
    }

    get state(): UpstreamState {
        return this.#state;
    }

    get lastError(): string | undefined {
        return this.#lastError;
    }

    get wire(): WireProtocol | undefined {
        return this.#wire;
    }

    get capabilities(): ServerCapabilities | undefined {
        return this.#state === 'ready' ? this.#client?.getServerCapabilities() : undefined;
    }

    /** Resolves after the first connection attempt, whatever its outcome. */
    async start(): Promise<void> {
        if (this.#state !== 'idle') return;
        await this.#connect();
    }

    async close(): Promise<void> {
        this.#setState('closed');
        clearTimeout(this.#retryTimer);
        clearTimeout(this.#stableTimer);
        const clients = [this.#client, this.#connecting].filter(client => client !== undefined);
        this.#client = undefined;
        this.#connecting = undefined;
        await Promise.all(clients.map(client => client.close().catch(() => {})));
    }

    /** Every prompt of the upstream, read page by page; empty if it has no prompts capability. */
    async listPrompts(): Promise<Collected<Prompt>> {
        const client = this.#readyClient();
        if (client.getServerCapabilities()?.prompts === undefined) return { items: [] };
        const timeout = this.config.timeoutMs;
        try {
            return await collectPages(async cursor => {
                const page = await client.request({ method: 'prompts/list', params: cursor === undefined ? {} : { cursor } }, { timeout });
                return { items: page.prompts, nextCursor: page.nextCursor };
            });
        } catch (error) {
            throw toUpstreamError(this.id, error, timeout);
        }
    }

    async getPrompt(name: string, args: Record<string, string> | undefined, signal?: AbortSignal): Promise<GetPromptResult> {
        const client = this.#readyClient();
        const timeout = this.config.timeoutMs;
        try {
            return await client.getPrompt({ name, ...(args === undefined ? {} : { arguments: args }) }, { timeout, ...(signal ? { signal } : {}) });
        } catch (error) {
            throw toUpstreamError(this.id, error, timeout);
        }
    }

    /** undefined when the upstream does not offer completions. */
    async complete(params: CompleteRequest['params'], signal?: AbortSignal): Promise<CompleteResult | undefined> {
        const client = this.#readyClient();
        if (client.getServerCapabilities()?.completions === undefined) return undefined;
        const timeout = this.config.timeoutMs;
        try {
            return await client.complete(params, { timeout, ...(signal ? { signal } : {}) });
        } catch (error) {
            if (error instanceof ProtocolError && error.code === ProtocolErrorCode.MethodNotFound) return undefined;
            throw toUpstreamError(this.id, error, timeout);
        }
    }

    #readyClient(): Client {
        if (this.#state !== 'ready' || this.#client === undefined) {
            throw new UpstreamFailedError(this.id, this.#state === 'connecting' ? 'still connecting' : 'not connected');
        }
        return this.#client;
    }

    async #connect(): Promise<void> {
        this.#setState('connecting');
        try {
            const client = await this.#openClient();
            if (this.#state === 'closed') {
                await client.close().catch(() => {});
                return;
            }
            this.#client = client;
            this.#lastError = undefined;
            // Backoff starts over only once a connection has held for a while, so a server that dies right after
            // connecting is not restarted several times a second.
            clearTimeout(this.#stableTimer);
            this.#stableTimer = setTimeout(() => (this.#attempt = 0), STABLE_AFTER_MS).unref();
            this.#log.info({ wire: this.#wire, server: client.getServerVersion()?.name, protocol: client.getNegotiatedProtocolVersion() }, 'upstream connected');
            this.#setState('ready');
        } catch (error) {
            if (this.#state === 'closed') return;
            // The mapped reason only: raw errors can quote header values or the upstream's response body.
            const failure = toUpstreamError(this.id, error, this.config.timeoutMs);
            this.#lastError = failure.message;
            this.#scheduleReconnect(`connect failed: ${failure instanceof UpstreamFailedError ? failure.reason : 'rejected'}`);
        }
    }

    async #openClient(): Promise<Client> {
        const config = this.config;
        if (config.transport === 'stdio') return this.#handshake(this.#withStderrLog(stdioTransport(config)), 'stdio');
        if (config.transport !== 'http') return this.#handshake(httpTransport(config, config.transport), config.transport);
        // "http": Streamable HTTP first; a 4xx means a legacy HTTP+SSE server (MCP backwards-compatibility rule).
        if (this.#wire !== 'sse') {
            try {
                return await this.#handshake(httpTransport(config, 'streamable-http'), 'streamable-http');
            } catch (error) {
                if (!(error instanceof SdkHttpError) || error.status < 400 || error.status > 499) throw error;
                this.#log.info({ status: error.status }, 'Streamable HTTP refused; trying legacy HTTP+SSE');
            }
        }
        return this.#handshake(httpTransport(config, 'sse'), 'sse');
    }

    async #handshake(transport: Transport, wire: WireProtocol): Promise<Client> {
        // A fresh Client per attempt: the SDK cannot reconnect a closed one.
        const client = new Client(this.options.clientInfo, { capabilities: {} });
        this.#connecting = client;
        client.setNotificationHandler('notifications/prompts/list_changed', () => {
            this.events.publish({ type: 'prompts-changed', upstreamId: this.id });
        });
        client.onerror = error => this.#log.debug({ err: describeError(error) }, 'upstream transport error');
        try {
            await client.connect(transport, { timeout: this.config.timeoutMs });
        } catch (error) {
            await client.close().catch(() => {});
            throw error;
        } finally {
            if (this.#connecting === client) this.#connecting = undefined;
        }
        client.onclose = () => {
            if (this.#client !== client || this.#state === 'closed') return;
            this.#client = undefined;
            clearTimeout(this.#stableTimer);
            this.#lastError = 'connection closed';
            this.#scheduleReconnect('connection closed');
        };
        this.#wire = wire;
        return client;
    }

    #withStderrLog(transport: StdioClientTransport): StdioClientTransport {
        // With stderr: 'pipe' the SDK hands out a PassThrough; its declared type is the broader Stream.
        const stderr = transport.stderr as Readable | null;
        stderr?.pipe(new LineSplitter(MAX_STDERR_LINE)).on('data', (line: string) => this.#log.info({ stream: 'stderr' }, line));
        return transport;
    }

    #scheduleReconnect(why: string): void {
        const delay = backoffDelay(this.#attempt++, this.options.backoff ?? DEFAULT_BACKOFF);
        this.#log.warn({ retryInMs: delay, attempt: this.#attempt }, `upstream down (${why})`);
        this.#setState('down');
        clearTimeout(this.#retryTimer);
        this.#retryTimer = setTimeout(() => void this.#connect(), delay);
        this.#retryTimer.unref();
    }

    #setState(state: UpstreamState): void {
        const previous = this.#state;
        if (previous === state) return;
        this.#state = state;
        this.events.publish({ type: 'state', upstreamId: this.id, state, previous });
    }
}
