/**
 * The upstream of the benchmark: an MCP server over Streamable HTTP in plain node:http that answers as cheaply as
 * a server can, so that what the bench times is whatever stands in front of it. It serves `--prompts N` prompts
 * prompt-0000 ..., each with one optional argument `topic`, on every path: a gateway given /mcp/u00, /mcp/u01, ...
 * sees that many upstreams in one process.
 *
 * initialize opens a session (Mcp-Session-Id; later POSTs need a known one: 400 without, 404 unknown), and answers
 * the client's protocol version when it knows it; prompts/list answers the whole list in one page; prompts/get one
 * user message; ping {}; notifications and responses 202; DELETE ends a session; anything else 405.
 *
 *   node --import tsx bench/servers/upstream.ts [--prompts N]
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { benchPrompt } from './prompt-names.js';
import { readBody, serve } from './serve.js';

const { values } = parseArgs({ options: { prompts: { type: 'string', default: '100' } } });
const PROMPTS = Number(values.prompts);
const VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];

const prompts = Array.from({ length: PROMPTS }, (_, i) => benchPrompt(i));
/** Every server's list is the same, written once. */
const LIST = JSON.stringify({ prompts });
const known = new Set(prompts.map(prompt => prompt.name));
const sessions = new Set<string>();

interface Message {
    id?: string | number;
    method?: string;
    params?: { name?: string; arguments?: { topic?: string }; protocolVersion?: string };
}

const answer = (res: ServerResponse, id: Message['id'], result: string, headers: Record<string, string> = {}) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`);
};

function request(res: ServerResponse, { id, method, params }: Message): void {
    if (method === 'initialize') {
        const session = randomUUID();
        sessions.add(session);
        const version = VERSIONS.includes(params?.protocolVersion ?? '') ? params!.protocolVersion : VERSIONS.at(-1);
        const info = { protocolVersion: version, capabilities: { prompts: { listChanged: true } }, serverInfo: { name: 'bench-upstream', version: '1' } };
        answer(res, id, JSON.stringify(info), { 'mcp-session-id': session });
    } else if (method === 'prompts/list') {
        answer(res, id, LIST);
    } else if (method === 'prompts/get' && known.has(params?.name ?? '')) {
        const text = `${params!.name}: tell me about ${params?.arguments?.topic ?? 'anything'}`;
        answer(res, id, JSON.stringify({ description: 'Benchmark prompt', messages: [{ role: 'user', content: { type: 'text', text } }] }));
    } else if (method === 'ping') {
        answer(res, id, '{}');
    } else {
        const error = method === 'prompts/get' ? { code: -32602, message: 'Unknown prompt' } : { code: -32601, message: 'Method not found' };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, error }));
    }
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const session = req.headers['mcp-session-id'];
    if (req.method === 'DELETE' && typeof session === 'string') {
        res.writeHead(sessions.delete(session) ? 200 : 404).end();
        return;
    }
    if (req.method !== 'POST') {
        res.writeHead(405, { allow: 'POST, DELETE' }).end();
        return;
    }
    const message = JSON.parse(await readBody(req)) as Message;
    if (message.method !== 'initialize') {
        if (typeof session !== 'string') return void res.writeHead(400).end('Mcp-Session-Id required');
        if (!sessions.has(session)) return void res.writeHead(404).end('unknown session');
    }
    if (message.id === undefined || message.method === undefined) res.writeHead(202).end();
    else request(res, message);
}

await serve((req, res) => void handle(req, res));
