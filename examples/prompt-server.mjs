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
 * Plain ESM JavaScript: runs with `node`, no build step. Logs go to stderr, so
 * stdout stays free for the protocol in stdio mode.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { McpServer, completable, isInitializeRequest } from '@modelcontextprotocol/server';
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
                    '```' + (language ?? '') + '\n' + code + '\n```'
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
        ({ text, style }) =>
            userMessage(
                `Summarize the following text${style ? ` as ${style}` : ''}. ` +
                    'Keep names, numbers and decisions; leave out filler.\n\n' + text
            )
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
                    'a blank line, then a body explaining what changed and why.\n\n```diff\n' + diff + '\n```'
            )
    );

    return server;
}

/**
 * Stateful Streamable HTTP: one transport and one server per session.
 * @param {number} port
 */
async function serveHttp(port) {
    // Loaded here, not at the top: they are development dependencies of the gateway, absent from an installed
    // package, where this server runs over stdio as the upstream of the starter config that `init` writes.
    const { createMcpExpressApp } = await import('@modelcontextprotocol/express');
    const { NodeStreamableHTTPServerTransport } = await import('@modelcontextprotocol/node');
    const app = createMcpExpressApp({ host: HOST });
    /** @type {Map<string, import('@modelcontextprotocol/node').NodeStreamableHTTPServerTransport>} */
    const sessions = new Map();

    /** @param {import('express').Request} req */
    const sessionOf = req => {
        const id = req.headers['mcp-session-id'];
        return typeof id === 'string' ? sessions.get(id) : undefined;
    };
    /**
     * @param {import('express').Response} res
     * @param {number} status
     * @param {string} message
     */
    const reject = (res, status, message) => {
        res.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
    };

    app.post('/mcp', async (req, res) => {
        const existing = sessionOf(req);
        if (existing) return existing.handleRequest(req, res, req.body);
        if (req.headers['mcp-session-id'] !== undefined) return reject(res, 404, 'Session not found');
        if (!isInitializeRequest(req.body)) return reject(res, 400, 'Bad Request: missing mcp-session-id');

        const transport = new NodeStreamableHTTPServerTransport({
            sessionIdGenerator: randomUUID,
            onsessioninitialized: id => void sessions.set(id, transport),
            onsessionclosed: id => void sessions.delete(id)
        });
        transport.onclose = () => {
            if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await createPromptServer().connect(transport);
        await transport.handleRequest(req, res, req.body);
    });

    /** GET opens the server-to-client stream, DELETE ends the session. */
    const forward = async (/** @type {import('express').Request} */ req, /** @type {import('express').Response} */ res) => {
        const existing = sessionOf(req);
        if (!existing) return reject(res, 404, 'Session not found');
        await existing.handleRequest(req, res);
    };
    app.get('/mcp', forward);
    app.delete('/mcp', forward);

    const httpServer = app.listen(port, HOST, error => {
        if (error) {
            console.error(`cannot listen on ${HOST}:${port}: ${error.message}`);
            process.exit(1);
        }
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
