/**
 * The floor: a node:http server that answers every POST with a canned JSON-RPC result (a prompts/get answer)
 * under the request's id. What a round trip from the bench's client costs when the server does next to nothing.
 *
 *   node --import tsx bench/servers/floor.ts
 */
import { readBody, serve } from './serve.js';

const RESULT = JSON.stringify({ description: 'canned', messages: [{ role: 'user', content: { type: 'text', text: 'prompt-0001: tell me about benchmarks' } }] });

await serve(async (req, res) => {
    const { id } = JSON.parse(await readBody(req)) as { id?: unknown };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(id ?? null)},"result":${RESULT}}`);
});
