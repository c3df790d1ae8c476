#!/usr/bin/env node
/**
 * Example MCP prompt server: three everyday prompts for software work.
 *
 *   node examples/prompt-server.mjs                     # stdio
 *   node examples/prompt-server.mjs --http --port 3001  # Streamable HTTP on http://127.0.0.1:3001/mcp
 *
 * Prompts:
 *   code-review     review a piece of code        (code, language?)
 *   summarize       summarize a text              (text, style?)
 *   commit-message  write a commit message        (diff)
 *
 * Behind the gateway, add it to the `upstreams` of the gateway's config file,
 * either as a child process the gateway starts (stdio; the relative path below
 * assumes the gateway runs from this repository's root, otherwise set `cwd`):
 *
 *   { "id": "dev", "transport": "stdio", "command": "node", "args": ["examples/prompt-server.mjs"] }
 *
 * or, with this server already running with --http, by URL:
 *
 *   { "id": "dev", "transport": "streamable-http", "url": "http://127.0.0.1:3001/mcp" }
 *
 * Gateway clients then see these prompts namespaced by the upstream id, e.g.
 * `dev__code-review` with the default separator, merged with the prompts of the
 * other upstreams.
 *
 * Plain ESM JavaScript: runs with `node`, no build step, and imports only the
 * gateway's own dependencies (@modelcontextprotocol/server, zod), so it runs from
 * the installed package and the container image too. Logs go to stderr, so
 * stdout stays free for the protocol in stdio mode.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import {
    McpServer,
    WebStandardStreamableHTTPServerTransport,
    completable,
    hostHeaderValidationResponse,
    isInitializeRequest,
    localhostAllowedHostnames
} from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const HOST = '127.0.0.1';
const LANGUAGES = ['c', 'c++', 'csharp', 'go', 'java', 'javascript', 'kotlin', 'python', 'ruby', 'rust', 'shell', 'sql', 'swift', 'typescript'];
const STYLES = ['bullet points', 'one paragraph', 'one sentence', 'executive summary'];

/**
 * @param {string} text
 * @returns {{ messages: { role: 'user', content: { type: 'text', text: string } }[] }}
 */
function userMessage(text) {
    return { messages: [{ role: 'user', content: { type: 'text', text } }] };
}

/**
 * Completion callback: the candidates that start with what was typed so far.
 * @param {readonly string[]} candidates
 * @returns {(value: string) => string[]}
 */
function startingWith(candidates) {
    return value => candidates.filter(candidate => candidate.startsWith(value.toLowerCase()));
}

/**
 * Builds one server instance with the three prompts registered.
 * @returns {McpServer}
 */
export function createPromptServer() {
    const server = new McpServer({ name: 'example-prompts', version: '1.0.0' });

    server.registerPrompt(
        'code-review',
        {
            title: 'Code review',
            description: 'Review code for bugs, readability and security, with concrete suggestions.',
            argsSchema: z.object({
                code: z.string().describe('The code to review'),
                language: completable(z.string().describe('Programming language of the code'), startingWith(LANGUAGES)).optional()
            })
        },
        ({ code, language }) =>
            userMessage(
                `Please review the following ${language ? `${language} ` : ''}code. ` +
                    'Point out bugs, unclear parts and security problems first, then style. ' +
                    'For each finding, quote the line and suggest a fix.\n\n' +
                    '```' +
                    (language ?? '') +
                    '\n' +
                    code +
                    '\n```'
            )
    );

    server.registerPrompt(
        'summarize',
        {
            title: 'Summarize',
            description: 'Summarize a text, keeping its key facts and decisions.',
            argsSchema: z.object({
                text: z.string().describe('The text to summarize'),
                style: completable(z.string().describe('Shape of the summary, e.g. "bullet points"'), startingWith(STYLES)).optional()
            })
        },
        ({ text, style }) => userMessage(`Summarize the following text${style ? ` as ${style}` : ''}. ` + 'Keep names, numbers and decisions; leave out filler.\n\n' + text)
    );

    server.registerPrompt(
        'commit-message',
        {
            title: 'Commit message',
            description: 'Write a conventional commit message for a diff.',
            argsSchema: z.object({
                diff: z.string().describe('Output of `git diff --staged`')
            })
        },
        ({ diff }) =>
            userMessage(
                'Write a commit message for this diff. Use a short imperative subject line ' +
                    '(at most 72 characters, Conventional Commits prefix such as feat:, fix: or refactor:), ' +
                    'a blank line, then a body explaining what changed and why.\n\n```diff\n' +
                    diff +
                    '\n```'
            )
    );

    return server;
}

/**
 * node:http to the SDK's web-standard transport, which takes a fetch `Request`
 * and answers with a `Response` (Node 18+ has both built in). `signal` ends the
 * request's body when the client goes away.
 * @param {import('node:http').IncomingMessage} req
 * @param {AbortSignal} signal
 * @returns {Request}
 */
function toFetchRequest(req, signal) {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
        for (const item of [value ?? []].flat()) headers.append(name, item);
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    return new Request(new URL(req.url ?? '/', `http://${HOST}`), {
        method: req.method,
        headers,
        signal,
        // duplex: a streamed body needs it (the fetch spec's requirement for request streams).
        ...(hasBody ? { body: /** @type {ReadableStream} */ (Readable.toWeb(req)), duplex: 'half' } : {})
    });
}

/**
 * Writes a fetch `Response` (a JSON body or an SSE stream) to node:http.
 * @param {Response} response
 * @param {import('node:http').ServerResponse} res
 */
async function sendFetchResponse(response, res) {
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body === null) return void res.end();
    // An SSE stream ends when the client disconnects: the pipeline then rejects, which is expected.
    await pipeline(Readable.fromWeb(/** @type {import('node:stream/web').ReadableStream} */ (response.body)), res).catch(() => {});
}

/**
 * @param {number} status
 * @param {string} message
 */
function jsonRpcError(status, message) {
    return Response.json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }, { status });
}

/**
 * Stateful Streamable HTTP: one transport and one server per session, on
 * node:http with nothing but the SDK (runs from an installed package too).
 * @param {number} port
 */
async function serveHttp(port) {
    /** @type {Map<string, WebStandardStreamableHTTPServerTransport>} */
    const sessions = new Map();

    /** @param {Request} request */
    const handle = async request => {
        // Only local pages may reach a server bound to 127.0.0.1 (DNS rebinding).
        const refused = hostHeaderValidationResponse(request, localhostAllowedHostnames());
        if (refused) return refused;
        if (new URL(request.url).pathname !== '/mcp') return jsonRpcError(404, 'Not found: the MCP endpoint is /mcp');
        const sessionId = request.headers.get('mcp-session-id');
        if (sessionId !== null) {
            const existing = sessions.get(sessionId);
            return existing ? existing.handleRequest(request) : jsonRpcError(404, 'Session not found');
        }
        if (request.method !== 'POST') return jsonRpcError(400, 'Bad Request: missing mcp-session-id');
        const body = await request.json().catch(() => undefined);
        if (!isInitializeRequest(body)) return jsonRpcError(400, 'Bad Request: missing mcp-session-id');

        const transport = new WebStandardStreamableHTTPServerTransport({
            sessionIdGenerator: randomUUID,
            onsessioninitialized: id => void sessions.set(id, transport),
            onsessionclosed: id => void sessions.delete(id)
        });
        transport.onclose = () => {
            if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await createPromptServer().connect(transport);
        return transport.handleRequest(request, { parsedBody: body });
    };

    const httpServer = createServer((req, res) => {
        const gone = new AbortController();
        res.once('close', () => gone.abort());
        handle(toFetchRequest(req, gone.signal))
            .then(response => sendFetchResponse(response, res))
            .catch(error => {
                console.error(error instanceof Error ? error.message : error);
                if (!res.headersSent) res.writeHead(500);
                res.end();
            });
    });
    httpServer.once('error', error => {
        console.error(`cannot listen on ${HOST}:${port}: ${error.message}`);
        process.exit(1);
    });
    httpServer.listen(port, HOST, () => {
        const address = httpServer.address();
        const actual = typeof address === 'object' && address ? address.port : port;
        console.error(`listening on http://${HOST}:${actual}/mcp`);
    });
}

async function main() {
    const { values } = parseArgs({
        options: {
            http: { type: 'boolean', default: false },
            port: { type: 'string', default: '3001' }
        }
    });
    if (values.http) {
        const port = Number(values.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --port: ${values.port}`);
        await serveHttp(port);
    } else {
        await createPromptServer().connect(new StdioServerTransport());
    }
}

main().catch(error => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
});
