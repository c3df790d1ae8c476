/**
 * The SDK's Streamable HTTP server transport for one session, served on
 * node:http the way the SDK's own Node adapter serves it (@hono/node-server
 * turns the node request into a web Request and writes the web Response back),
 * with one difference: the transport's answer is seen before it is written.
 *
 * The transport answers any exception thrown while it handles a POST with
 * `-32700 "Parse error"` and the exception's text in `data` (a stack overflow's
 * message, say). Such an answer is the gateway's failure, not the client's: it
 * becomes HTTP 500 `-32603 "Internal error"`, and the text goes to the log only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';

export interface SessionTransportOptions {
    sessionIdGenerator: () => string;
    onsessioninitialized: (sessionId: string) => void;
    /** An answer that carried exception text, with that text; the client got "Internal error" instead. */
    onHidden: (data: unknown) => void;
}

export class SessionTransport {
    readonly sdk: WebStandardStreamableHTTPServerTransport;
    readonly #onHidden: (data: unknown) => void;

    constructor(options: SessionTransportOptions) {
        this.sdk = new WebStandardStreamableHTTPServerTransport({
            sessionIdGenerator: options.sessionIdGenerator,
            onsessioninitialized: options.onsessioninitialized
        });
        this.#onHidden = options.onHidden;
    }

    get sessionId(): string | undefined {
        return this.sdk.sessionId;
    }

    /** Answers one request; resolves once the answer (a whole SSE stream included) is written or cut off. */
    async handleRequest(req: IncomingMessage, res: ServerResponse, parsedBody?: unknown): Promise<void> {
        const listener = getRequestListener(
            async request => withoutExceptionText(await this.sdk.handleRequest(request, { parsedBody }), this.#onHidden),
            { overrideGlobalObjects: false }
        );
        await listener(req, res);
    }

    close(): Promise<void> {
        return this.sdk.close();
    }
}

/** A JSON-RPC error answer keeps its text unless it carries `data`, which only the transport's catch-all sets. */
export async function withoutExceptionText(response: Response, onHidden: (data: unknown) => void): Promise<Response> {
    if (response.status < 400 || !(response.headers.get('content-type') ?? '').includes('application/json')) return response;
    const body = (await response
        .clone()
        .json()
        .catch(() => undefined)) as { error?: { data?: unknown } } | undefined;
    if (body?.error?.data === undefined) return response;
    onHidden(body.error.data);
    return Response.json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }, { status: 500 });
}
