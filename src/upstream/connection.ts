/**
 * One upstream MCP server: its SDK client, its connection state, reconnects
 * with backoff, and the three prompt calls the gateway makes. A failure here is
 * contained: it changes this upstream's state and is reported, never thrown at
 * the gateway as a whole.
 */
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
import type { FaultKind } from '../observability/faults.js';
import { describeError, type Logger } from '../observability/logger.js';
import { backoffDelay, type BackoffPolicy } from './backoff.js';
import { Bulkhead, BulkheadFullError } from './bulkhead.js';
import { toUpstreamError, UpstreamFailedError } from './errors.js';
import { collectPages, type Collected } from './pages.js';
import { FaultLog } from './fault-log.js';
import { httpTransport, stdioTransport, type WireProtocol } from './transports.js';

const STABLE_AFTER_MS = 30_000;
/** More list_changed than this within a second is a flood: counted and logged (the catalog coalesces them anyway). */
const FLOOD_PER_SECOND = 100;

export type UpstreamState = 'idle' | 'connecting' | 'ready' | 'down' | 'closed';

export type UpstreamEvent =
    | { type: 'state'; upstreamId: string; state: UpstreamState; previous: UpstreamState }
    | { type: 'prompts-changed'; upstreamId: string };

export interface ConnectionOptions {
    logger: Logger;
    clientInfo: { name: string; version: string };
    reconnect: BackoffPolicy;
    onFault?: (upstreamId: string, kind: FaultKind) => void;
}

export class UpstreamConnection {
    readonly id: string;
    readonly events: Bus<UpstreamEvent>;
    #state: UpstreamState = 'idle';
    #lastError: string | undefined;
    #client: Client | undefined;
    #wire: WireProtocol | undefined;
    #attempt = 0;
    #attempted = false;
    #closing: Promise<void> | undefined;
    readonly #bulkhead: Bulkhead;
    readonly #faults: FaultLog;
    #floodWindow = { start: 0, count: 0 };
    /** Backoff for reconnects; a reload may change it without restarting the connection. */
    reconnect: BackoffPolicy;
    #retryTimer: NodeJS.Timeout | undefined;
    #stableTimer: NodeJS.Timeout | undefined;
    /** The client of a handshake in progress, so close() can stop it too. */
    #connecting: Client | undefined;
    readonly #log: Logger;

    constructor(
        readonly config: UpstreamConfig,
        private readonly options: ConnectionOptions
    ) {
        this.id = config.id;
        this.reconnect = options.reconnect;
        this.#log = options.logger.child({ upstream: config.id });
        this.events = new Bus(error => this.#log.error({ err: describeError(error) }, 'upstream event listener failed'));
        this.#bulkhead = new Bulkhead(config);
        this.#faults = new FaultLog(this.#log, kind => options.onFault?.(this.id, kind));
    }

    get state(): UpstreamState {
        return this.#state;
    }

    get lastError(): string | undefined {
        return this.#lastError;
    }

    /** Whether the first connection attempt has finished, successfully or not. */
    get attempted(): boolean {
        return this.#attempted;
    }

    get load(): { active: number; queued: number } {
        return { active: this.#bulkhead.active, queued: this.#bulkhead.queued };
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
        this.#attempted = true;
    }

    /** Stops reconnecting and closes the connection (a stdio child is stopped with its whole process group). */
    close(): Promise<void> {
        this.#closing ??= this.#close();
        return this.#closing;
    }

    async #close(): Promise<void> {
        this.#setState('closed');
        clearTimeout(this.#retryTimer);
        clearTimeout(this.#stableTimer);
        const clients = [this.#client, this.#connecting].filter(client => client !== undefined);
        this.#client = undefined;
        this.#connecting = undefined;
        await Promise.all(clients.map(client => client.close().catch(() => {})));
    }

    /** Counts a fault of this upstream and logs it (rate-limited per kind). */
    reportFault(kind: FaultKind, message: string, details: Record<string, unknown> = {}): void {
        this.#faults.report(kind, message, details);
    }

    /** Every prompt of the upstream, read page by page; empty if it has no prompts capability. */
    async listPrompts(): Promise<Collected<Prompt>> {
        const client = this.#readyClient();
        if (client.getServerCapabilities()?.prompts === undefined) return { items: [] };
        const collected = await collectPages(cursor =>
            this.#call(client, async options => {
                const page = await client.request({ method: 'prompts/list', params: cursor === undefined ? {} : { cursor } }, options);
                return { items: page.prompts, nextCursor: page.nextCursor };
            })
        );
        if (collected.truncated !== undefined) {
            this.reportFault('list_truncated', 'upstream prompt list cut short', { reason: collected.truncated, prompts: collected.items.length });
        }
        return collected;
    }

    getPrompt(name: string, args: Record<string, string> | undefined, signal?: AbortSignal): Promise<GetPromptResult> {
        const client = this.#readyClient();
        return this.#call(client, options => client.getPrompt({ name, ...(args === undefined ? {} : { arguments: args }) }, options), signal);
    }

    /** undefined when the upstream does not offer completions. */
    async complete(params: CompleteRequest['params'], signal?: AbortSignal): Promise<CompleteResult | undefined> {
        const client = this.#readyClient();
        if (client.getServerCapabilities()?.completions === undefined) return undefined;
        return this.#call(client, async options => {
            try {
                return await client.complete(params, options);
            } catch (error) {
                if (error instanceof ProtocolError && error.code === ProtocolErrorCode.MethodNotFound) return undefined;
                throw error;
            }
        }, signal);
    }

    /**
     * One request through the bulkhead. The timeout covers the wait for a slot too, so no request takes longer
     * than `timeoutMs` in all; failures become UpstreamRejectedError or UpstreamFailedError and faults are counted.
     */
    async #call<T>(client: Client, request: (options: { timeout: number; signal?: AbortSignal }) => Promise<T>, signal?: AbortSignal): Promise<T> {
        const timeoutMs = this.config.timeoutMs;
        const deadline = Date.now() + timeoutMs;
        try {
            return await this.#bulkhead.run(() => {
                const timeout = deadline - Date.now();
                if (timeout <= 0) throw new UpstreamFailedError(this.id, `timed out after ${timeoutMs} ms (waiting for a free slot)`, 'timeout');
                return request(signal === undefined ? { timeout } : { timeout, signal });
            }, signal);
        } catch (error) {
            const failure =
                signal?.aborted === true
                    ? new UpstreamFailedError(this.id, 'cancelled', undefined)
                    : error instanceof BulkheadFullError
                      ? new UpstreamFailedError(this.id, 'upstream busy, try again later', 'busy')
                      : toUpstreamError(this.id, error, timeoutMs);
            if (failure instanceof UpstreamFailedError) {
                if (failure.fault !== undefined) this.reportFault(failure.fault, 'upstream request failed', { reason: failure.reason });
                if (failure.connectionLost) this.#lost(client, failure.reason);
            }
            throw failure;
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
            this.#startPings(client);
        } catch (error) {
            if (this.#state === 'closed') return;
            // The mapped reason only: raw errors can quote header values or the upstream's response body.
            const failure = toUpstreamError(this.id, error, this.config.timeoutMs);
            this.#lastError = failure.message;
            const reason = failure instanceof UpstreamFailedError ? failure.reason : 'rejected';
            this.#faults.count('connect_failed');
            this.#scheduleReconnect(`connect failed: ${reason}`);
        }
    }

    async #openClient(): Promise<Client> {
        const config = this.config;
        if (config.transport === 'stdio') {
            const transport = stdioTransport(config, {
                onStderrLine: line => this.#log.info({ stream: 'stderr' }, line),
                onNoise: line => this.reportFault('garbage_output', 'upstream wrote a line that is not JSON-RPC to stdout', { line })
            });
            return this.#handshake(transport, 'stdio');
        }
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
            this.#watchFlood();
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
            this.#faults.count('disconnected');
            this.#scheduleReconnect('connection closed');
        };
        this.#wire = wire;
        return client;
    }

    /** The connection of `client` is gone although its transport did not say so (typical of HTTP): rebuild it. */
    #lost(client: Client, why: string): void {
        if (this.#client !== client || this.#state === 'closed') return;
        this.#client = undefined;
        clearTimeout(this.#stableTimer);
        this.#lastError = `Upstream ${this.id} failed: ${why}`;
        this.#faults.count('disconnected');
        this.#scheduleReconnect(why);
        client.close().catch(() => {});
    }

    /**
     * Liveness while idle: an HTTP upstream that went away is otherwise noticed only by the next request, and a
     * hung stdio child never. Two failed pings in a row, or one that shows the connection is gone, rebuild it.
     */
    #startPings(client: Client): void {
        const every = this.config.pingIntervalMs;
        if (every === 0) return;
        let failures = 0;
        const timer = setInterval(() => {
            if (this.#client !== client) {
                clearInterval(timer);
                return;
            }
            if (this.#bulkhead.active > 0) return;
            this.#call(client, options => client.ping(options)).then(
                () => (failures = 0),
                (error: unknown) => {
                    const lost = error instanceof UpstreamFailedError && error.connectionLost;
                    if (!lost && ++failures >= 2) this.#lost(client, 'no answer to ping');
                }
            );
        }, every);
        timer.unref();
    }

    #watchFlood(): void {
        const now = Date.now();
        const window = this.#floodWindow;
        if (now - window.start >= 1000) {
            window.start = now;
            window.count = 0;
        }
        if (++window.count === FLOOD_PER_SECOND) {
            this.reportFault('list_changed_flood', 'upstream floods notifications/prompts/list_changed', { perSecond: `>${FLOOD_PER_SECOND}` });
        }
    }

    #scheduleReconnect(why: string): void {
        const delay = backoffDelay(this.#attempt++, this.reconnect);
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
