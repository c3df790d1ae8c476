/** The downstream side over stdio: one session on the process's stdin/stdout. */
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { Endpoint } from './endpoint.js';
import type { InFlight } from './in-flight.js';
import type { Session, SessionRegistry, SessionServer } from './sessions.js';

export interface StdioEndpoint extends Endpoint {
    /** Resolves when the client closes stdin. */
    closed: Promise<void>;
}

/** One client, so draining means refusing its new requests (with an error answer) while the ones taken finish. */
export async function startStdioEndpoint(
    { server, scope }: SessionServer,
    sessions: SessionRegistry,
    inFlight: InFlight
): Promise<StdioEndpoint> {
    const transport = new StdioServerTransport();
    let initialized = false;
    const session: Session = { id: 'stdio', transport: 'stdio', server, scope, notificationPending: false, canReceive: () => initialized };
    sessions.add(session);
    // Notifications wait until the client has finished the handshake; one held back meanwhile is sent then.
    server.oninitialized = () => {
        initialized = true;
        sessions.flushPending(session);
    };
    const closed = new Promise<void>(resolve => {
        transport.onclose = () => {
            initialized = false;
            sessions.delete('stdio');
            resolve();
        };
    });
    // The SDK's stdio transport does not notice end of input on its own.
    process.stdin.once('end', () => void transport.close());
    await server.connect(transport);
    return {
        closed,
        drain: () => inFlight.refuseNew('Gateway is shutting down; try again later'),
        settled: timeoutMs => inFlight.drained(timeoutMs),
        close: () => server.close()
    };
}
