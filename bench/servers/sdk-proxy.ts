/**
 * A naive proxy built from the official SDK the way its README shows: plain node:http, one SDK `Server` and
 * Streamable HTTP transport per session, one SDK `Client` to the upstream shared by all sessions. prompts/list
 * prefixes the upstream's names with `up__`, prompts/get strips it. No limits, policy or caching: a peer that shows
 * what the SDK itself costs per request.
 *
 *   node --import tsx bench/servers/sdk-proxy.ts --upstream <url>
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { Server } from '@modelcontextprotocol/server';
import { serve } from './serve.js';

const PREFIX = 'up__';
const { values } = parseArgs({ options: { upstream: { type: 'string' } } });
if (values.upstream === undefined) throw new Error('--upstream <url> is required');

const upstream = new Client({ name: 'naive-sdk-proxy', version: '1.0.0' });
await upstream.connect(new StreamableHTTPClientTransport(new URL(values.upstream)));

const transports = new Map<string, NodeStreamableHTTPServerTransport>();

async function newSession(): Promise<NodeStreamableHTTPServerTransport> {
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: id => void transports.set(id, transport)
    });
    transport.onclose = () => {
        if (transport.sessionId !== undefined) transports.delete(transport.sessionId);
    };
    const server = new Server({ name: 'naive-sdk-proxy', version: '1.0.0' }, { capabilities: { prompts: { listChanged: true } } });
    server.setRequestHandler('prompts/list', async request => {
        const page = await upstream.listPrompts(request.params);
        return { ...page, prompts: page.prompts.map(prompt => ({ ...prompt, name: `${PREFIX}${prompt.name}` })) };
    });
    server.setRequestHandler('prompts/get', request => upstream.getPrompt({ ...request.params, name: request.params.name.slice(PREFIX.length) }));
    await server.connect(transport);
    return transport;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? transports.get(id) : undefined;
    if (id !== undefined && known === undefined) return void res.writeHead(404).end('unknown session');
    await (known ?? (await newSession())).handleRequest(req, res);
}

await serve((req, res) => void handle(req, res));
