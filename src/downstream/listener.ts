/**
 * What every HTTP listener of the gateway shares: binding, and the defaults of
 * the Host and Origin checks that follow from the address it binds.
 */
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Logger } from '../observability/logger.js';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

export function isLoopback(host: string): boolean {
    return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Loopback binds accept only loopback names; other binds check nothing unless configured (and say so). */
export function hostChecks(
    host: string,
    configured: { allowedHosts?: string[] | undefined; allowedOrigins?: string[] | undefined },
    logger: Logger,
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

export function listen(app: Express, host: string, port: number): Promise<Listening> {
    return new Promise((resolve, reject) => {
        const server = app.listen(port, host, error => {
            if (error) return reject(error);
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
