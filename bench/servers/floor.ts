/**
 * The floor: a node:http server that answers every POST with a canned JSON-RPC result under the request's id: a
 * prompts/list page of `--page N` bench prompts (and a cursor) for prompts/list, a prompts/get answer for anything
 * else. What a round trip from the bench's client costs when the server does next to nothing.
 *
 *   node --import tsx bench/servers/floor.ts [--page 50]
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { benchPrompt } from './prompt-names.js';
import { readBody, serve } from './serve.js';

const { values } = parseArgs({ options: { page: { type: 'string', default: '50' } } });
const GET = JSON.stringify({ description: 'canned', messages: [{ role: 'user', content: { type: 'text', text: 'prompt-0001: tell me about benchmarks' } }] });
// A page as the gateway writes one: namespaced names and an opaque cursor of about its length.
const page = Array.from({ length: Number(values.page) }, (_, i) => ({ ...benchPrompt(i), name: `u00__${benchPrompt(i).name}` }));
const LIST = JSON.stringify({ prompts: page, nextCursor: 'c'.repeat(120) });

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { id, method } = JSON.parse(await readBody(req)) as { id?: unknown; method?: unknown };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(id ?? null)},"result":${method === 'prompts/list' ? LIST : GET}}`);
}

await serve((req, res) => void answer(req, res));
