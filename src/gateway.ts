/** Wires the layers together: config -> upstreams -> catalog -> downstream endpoint. */
import pLimit from 'p-limit';
import type { GatewayConfig } from './config/schema.js';
import { Catalog } from './catalog/catalog.js';
import { CursorCodec } from './catalog/cursor.js';
import { PromptService, type Caller } from './catalog/service.js';
import { startHttpEndpoint } from './downstream/http.js';
import { createPromptServer, GATEWAY_INFO } from './downstream/prompt-server.js';
import { SessionRegistry } from './downstream/sessions.js';
import { startStdioEndpoint } from './downstream/stdio.js';
import type { Logger } from './observability/logger.js';
import { UpstreamConnection } from './upstream/connection.js';

export interface GatewayOptions {
    logger: Logger;
    /** Serve the downstream side on stdin/stdout instead of HTTP. */
    stdio?: boolean;
}

export interface RunningGateway {
    /** The HTTP endpoint's URL; undefined in stdio mode. */
    url: string | undefined;
    upstreams: readonly UpstreamConnection[];
    catalog: Catalog;
    /** Resolves when a stdio client closes the connection; never in HTTP mode. */
    done: Promise<void>;
    close(): Promise<void>;
}

/** Until clients and policies exist, every caller shares one anonymous view. */
const ANONYMOUS: Caller = { scope: '' };

export async function startGateway(config: GatewayConfig, options: GatewayOptions): Promise<RunningGateway> {
    const { logger } = options;
    const upstreams = config.upstreams.map(
        (upstream, index) => new UpstreamConnection(upstream, index, { logger, clientInfo: GATEWAY_INFO })
    );
    const catalog = new Catalog(upstreams, {
        naming: { separator: config.namespace.separator },
        logger,
        notifications: config.notifications
    });
    const service = new PromptService(catalog, new CursorCodec(config.cursorSecret), { pageSize: config.pagination.pageSize });
    const sessions = new SessionRegistry(catalog.changes, logger);

    // Every upstream gets its first attempt before clients are served, so the first list is complete.
    const limit = pLimit(config.upstreamConnectConcurrency);
    await Promise.all(upstreams.map(upstream => limit(() => upstream.start())));

    const createServer = () =>
        createPromptServer({
            service,
            caller: ANONYMOUS,
            completions: upstreams.some(upstream => upstream.capabilities?.completions !== undefined)
        });
    const health = () => ({ upstreams: upstreams.map(u => ({ id: u.id, state: u.state, ...(u.lastError ? { error: u.lastError } : {}) })) });

    let endpoint: { close(): Promise<void> };
    let url: string | undefined;
    let done: Promise<void>;
    if (options.stdio === true) {
        const stdio = await startStdioEndpoint(createServer(), sessions);
        endpoint = stdio;
        done = stdio.closed;
    } else {
        const http = await startHttpEndpoint({
            ...config.listen,
            maxBodyBytes: config.limits.maxBodyBytes,
            idleTimeoutMs: config.sessions.idleTimeoutMs,
            maxSessions: config.sessions.max,
            sessions,
            createServer,
            health,
            logger
        });
        endpoint = http;
        url = http.url;
        done = new Promise<void>(() => {});
    }

    return {
        url,
        upstreams,
        catalog,
        done,
        async close() {
            await endpoint.close();
            sessions.close();
            catalog.close();
            await Promise.allSettled(upstreams.map(upstream => upstream.close()));
        }
    };
}
