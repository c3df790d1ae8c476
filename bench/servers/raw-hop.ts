/**
 * The reference hop: what one forwarding HTTP hop costs in plain node:http. Each POST's JSON-RPC message is parsed,
 * a prompt name `<prefix><name>` is renamed to `<name>`, the message is forwarded to the upstream over a keep-alive
 * agent, and the upstream's answer (status, content type, session id, body) is relayed as it comes. Sessions are
 * the upstream's: initialize goes through like any other message. No validation, limits or policy: a floor for a
 * gateway, not a gateway.
 *
 *   node --import tsx bench/servers/raw-hop.ts --upstream <url> [--prefix up__]
 */
import { Agent, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { readBody, serve } from './serve.js';

const { values } = parseArgs({ options: { upstream: { type: 'string' }, prefix: { type: 'string', default: 'up__' } } });
if (values.upstream === undefined) throw new Error('--upstream <url> is required');
const upstream = new URL(values.upstream);
const prefix = values.prefix;
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** Request headers that mean something to an MCP server. */
const FORWARDED = ['content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];
/** Answer headers a client needs back. */
const RELAYED = ['content-type', 'mcp-session-id', 'cache-control'];

function pick(headers: Record<string, string | string[] | undefined>, names: string[]): Record<string, string> {
    const picked: Record<string, string> = {};
    for (const name of names) {
        const value = headers[name];
        if (typeof value === 'string') picked[name] = value;
    }
    return picked;
}

function renamed(body: string): string {
    if (body === '') return body;
    const message = JSON.parse(body) as { method?: string; params?: { name?: unknown } };
    const name = message.params?.name;
    if (message.method === 'prompts/get' && typeof name === 'string' && name.startsWith(prefix)) {
        message.params!.name = name.slice(prefix.length);
    }
    return JSON.stringify(message);
}

async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = renamed(await readBody(req));
    const headers = pick(req.headers, FORWARDED);
    if (body !== '') headers['content-length'] = String(Buffer.byteLength(body));
    const out = request(upstream, { method: req.method, agent, headers }, answer => {
        res.writeHead(answer.statusCode ?? 502, pick(answer.headers, RELAYED));
        answer.pipe(res);
    });
    out.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
    });
    // A client that goes away ends its exchange upstream too.
    res.on('close', () => {
        if (!res.writableFinished) out.destroy();
    });
    out.end(body);
}

await serve((req, res) => {
    forward(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(400);
        res.end();
    });
});
