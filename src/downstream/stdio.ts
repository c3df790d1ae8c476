/** The downstream side over stdio: one session on the process's stdin/stdout. */
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { Server } from '@modelcontextprotocol/server';
import type { SessionRegistry } from './sessions.js';

export interface StdioEndpoint {
    /** Resolves when the client closes stdin. */
    closed: Promise<void>;
    close(): Promise<void>;
}

export async function startStdioEndpoint(server: Server, sessions: SessionRegistry): Promise<StdioEndpoint> {
    const transport = new StdioServerTransport();
    let connected = false;
    sessions.add({
        id: 'stdio',
        server,
        transport: 'stdio',
        notificationPending: false,
        canReceive: () => connected
    });
    const closed = new Promise<void>(resolve => {
        transport.onclose = () => {
            connected = false;
            sessions.delete('stdio');
            resolve();
        };
    });
    // The SDK's stdio transport does not notice end of input on its own.
    process.stdin.once('end', () => void transport.close());
    await server.connect(transport);
    connected = true;
    return { closed, close: () => server.close() };
}
