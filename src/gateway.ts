/** Wires the layers together: config -> upstreams -> catalog -> downstream endpoint. */
import pLimit from 'p-limit';
import type { GatewayConfig } from './config/schema.js';
import { Catalog } from './catalog/catalog.js';
import { CursorCodec } from './catalog/cursor.js';
import { PromptService, type Caller } from './catalog/service.js';
import { startHttpEndpoint } from './downstream/http.js';
import { createPromptServer } from './downstream/prompt-server.js';
import { SessionRegistry } from './downstream/sessions.js';
import { startStdioEndpoint } from './downstream/stdio.js';
import type { Logger } from './observability/logger.js';
import { UpstreamConnection } from './upstream/connection.js';
import { GATEWAY_INFO } from './version.js';

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
    const shutdown = async () => {
        sessions.close();
        catalog.close();
        await Promise.allSettled(upstreams.map(upstream => upstream.close()));
    };

    try {
        // Every upstream gets its first attempt before clients are served, so the first list is complete.
        const limit = pLimit(config.upstreamConnectConcurrency);
        await Promise.all(upstreams.map(upstream => limit(() => upstream.start())));
        catalog.discardPendingChanges();

        const createServer = () =>
            createPromptServer({
                service,
                caller: ANONYMOUS,
                // An upstream not connected yet may offer completions later; the answer for it is empty meanwhile.
                completions: upstreams.some(upstream => upstream.state !== 'ready' || upstream.capabilities?.completions !== undefined)
            });
        const health = () => ({
            upstreams: upstreams.map(u => ({ id: u.id, state: u.state, ...(u.lastError ? { error: u.lastError } : {}) }))
        });

        if (options.stdio === true) {
            const stdio = await startStdioEndpoint(createServer(), sessions);
            return running(undefined, stdio.closed, stdio);
        }
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
        return running(http.url, new Promise<void>(() => {}), http);
    } catch (error) {
        await shutdown();
        throw error;
    }

    function running(url: string | undefined, done: Promise<void>, endpoint: { close(): Promise<void> }): RunningGateway {
        return {
            url,
            upstreams,
            catalog,
            done,
            async close() {
                await endpoint.close();
                await shutdown();
            }
        };
    }
}
