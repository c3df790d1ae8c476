/**
 * What every HTTP listener of the gateway shares: binding, and the defaults of
 * the Host and Origin checks that follow from the address it binds.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLoopback } from '../lib/loopback.js';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** What hostChecks needs of a logger: the gateway's own fits, and src/http stays free of observability. */
interface WarningLogger {
    warn(fields: object, message: string): void;
}

/** Loopback binds accept only loopback names; other binds check nothing unless configured (and say so). */
export function hostChecks(
    host: string,
    configured: { allowedHosts?: string[] | undefined; allowedOrigins?: string[] | undefined },
    logger: WarningLogger,
    field: string
): { allowedHosts: string[] | undefined; allowedOrigins: string[] | undefined } {
    const loopback = isLoopback(host);
    const allowedHosts = configured.allowedHosts ?? (loopback ? [...new Set([...LOOPBACK_NAMES, host])] : undefined);
    const allowedOrigins = configured.allowedOrigins ?? (loopback ? LOOPBACK_NAMES : undefined);
    if (allowedHosts === undefined) {
        logger.warn({ host }, `not bound to loopback and ${field} is not set: Host header checks (DNS-rebinding protection) are off`);
    }
    return { allowedHosts, allowedOrigins };
}

export interface Listening {
    /** http://host:port, with the port actually bound. */
    origin: string;
    close(): Promise<void>;
}

/**
 * Idle keep-alive connections are kept longer than common clients keep theirs (undici 4 s, browsers and many
 * proxies up to 60 s): the server closing one just as a client reuses it fails that request (seen under load with
 * Node's default 5 s). Headers must come within headersTimeout of a request's start (a little more than the
 * keep-alive time, as Node advises), a whole request body within requestTimeout.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
const HEADERS_TIMEOUT_MS = 66_000;
const REQUEST_TIMEOUT_MS = 120_000;

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export function listen(handler: RequestHandler, host: string, port: number): Promise<Listening> {
    const server = createServer(handler);
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    server.headersTimeout = HEADERS_TIMEOUT_MS;
    server.requestTimeout = REQUEST_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
            server.off('error', reject);
            const address = server.address() as AddressInfo;
            const bound = address.family === 'IPv6' ? `[${address.address}]` : address.address;
            resolve({
                origin: `http://${bound}:${address.port}`,
                close: async () => {
                    server.closeAllConnections();
                    await new Promise<void>(done => server.close(() => done()));
                }
            });
        });
    });
}
