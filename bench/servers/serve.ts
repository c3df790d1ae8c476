/**
 * What the bench's own servers share: reading a request body, and listening on 127.0.0.1 with one line on stderr,
 * `listening on <url>`, that the bench waits for (the gateway's CLI prints the same). They exit when the bench
 * that started them goes (its stdin pipe ends), so a killed run leaves no server behind.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exitWhenParentGoes } from '../../test/fixtures/lifetime.js';

export async function readBody(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
}

/** Serves `handler` on 127.0.0.1 (port 0 unless given) and announces `<origin><path>`. */
export async function serve(handler: RequestListener, path = '/mcp', port = 0): Promise<Server> {
    exitWhenParentGoes();
    const server = createServer(handler);
    // Above any client's idle timeout: a keep-alive connection closed by the server under a client's request is a
    // failed request the bench would count against this server.
    server.keepAliveTimeout = 120_000;
    await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve));
    process.stderr.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}${path}\n`);
    return server;
}
