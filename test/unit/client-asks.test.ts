/**
 * The gateway asking a 2025 client, over the real transports (issue 28 part D): the downstream side alone, with a
 * stand-in catalog whose prompts/get asks through the ClientInput the dispatcher hands it. Over Streamable HTTP the
 * question goes out on the get's own answer stream and the answer comes back in a POST of its own (202); over stdio
 * both are lines. Responses that answer nothing of the gateway's, or another replica's questions, are told apart.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import { describe, test, type TestContext } from 'node:test';
import type { JSONRPCResponse } from '@modelcontextprotocol/client';
import type { PromptService } from '../../src/catalog/service.js';
import type { CallControl } from '../../src/catalog/upstream-port.js';
import { rejecter } from '../../src/http-server/rejections.js';
import type { ClientInput } from '../../src/catalog/interaction.js';
import { McpEndpoint } from '../../src/downstream/http/mcp.js';
import type { Session } from '../../src/downstream/sessions.js';
import { startStdioEndpoint } from '../../src/downstream/stdio.js';
import type { ClientProfile } from '../../src/policy/clients.js';
import type { RateLimiter } from '../../src/policy/rate-limiter.js';
import type { InputAnswer, InputRequest } from '../../src/protocol/input-requests.js';
import { compilePromptFilter } from '../../src/policy/prompt-filter.js';
import { downstreamParts } from './downstream-parts.js';
import { initializeBody, modernMeta, openRawSession, post, postModern, SseReader, type JsonRpcMessage } from '../raw-http.js';

const INSTANCE = 'Inst0001';
const ASKING = { asking: { instance: INSTANCE, timeoutMs: () => 60_000 } };
const CONFIRM: InputRequest = {
    method: 'elicitation/create',
    params: { mode: 'form', message: 'Confirm?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }
};
const ACCEPTED = { action: 'accept', content: { ok: true } };

/** What the stand-in catalog saw of each get, and how its asks ended. */
interface Seen {
    input: ClientInput | undefined;
    control: CallControl;
}

/**
 * A catalog whose every prompts/get asks its client CONFIRM (when it can be asked) and answers with the answer as text.
 * It takes its request both as PLAN-28 section 3's GetRequest and as today's positional arguments.
 */
function standInService(seen: Seen[], ended: (outcome: string) => void): PromptService {
    const get = async (...parameters: unknown[]) => {
        const request = parameters[0] as { input?: ClientInput; control: CallControl } | string;
        const { input, control } = typeof request === 'string' ? { input: parameters[5] as ClientInput | undefined, control: parameters[3] as CallControl } : request;
        seen.push({ input, control });
        if (input?.ask === undefined) return { messages: [] };
        let answer: InputAnswer;
        try {
            // The question follows the get's cancellation (its ticket, no AbortSignal of its own).
            const asking = new AbortController();
            control.signal?.addEventListener('abort', () => asking.abort(control.signal?.reason));
            answer = await input.ask(CONFIRM, asking.signal);
        } catch (error) {
            ended(`rejected: ${(error as Error).message}`);
            throw error;
        }
        ended('answered');
        return { messages: [{ role: 'user', content: { type: 'text', text: JSON.stringify(answer) } }] };
    };
    return { get } as unknown as PromptService;
}

const ANONYMOUS: ClientProfile = { id: 'anonymous', prompts: compilePromptFilter({}), maxSessions: 10, rateLimit: { requestsPerSecond: 100, burst: 100 }, requiredScopes: [] };

/** The MCP endpoint on a real listener (127.0.0.1, port 0); every request admitted as the anonymous client. */
async function httpGateway(t: TestContext, onForeignAnswer?: (session: Session, response: JSONRPCResponse) => void) {
    const seen: Seen[] = [];
    const outcomes: string[] = [];
    let wake: (() => void) | undefined;
    const parts = downstreamParts(
        standInService(seen, outcome => {
            outcomes.push(outcome);
            wake?.();
        }),
        ASKING
    );
    const mcp = new McpEndpoint({
        ...parts,
        limiter: {} as RateLimiter,
        reject: rejecter(),
        maxBodyBytes: 100_000,
        maxJsonDepth: () => 64,
        sessionLifetimeMs: 3_600_000,
        completions: () => false,
        cacheScope: () => 'public',
        onForeignAnswer
    });
    const server = createServer(
        (req: IncomingMessage, res: ServerResponse) => void mcp.post(req, res, { client: ANONYMOUS, quotaKey: '127.0.0.1', address: () => '127.0.0.1' }, 'http-1')
    );
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    t.after(
        () =>
            new Promise<void>(resolve => {
                server.close(() => resolve());
                // Streams still open (a get's SSE answer, keep-alive sockets) would hold the close.
                server.closeAllConnections();
            })
    );
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    /** Resolves once `count` asks have ended (answered or not). */
    const asksEnded = async (count: number) => {
        while (outcomes.length < count) await new Promise<void>(resolve => (wake = resolve));
    };
    return { url, seen, outcomes, asksEnded, sessions: parts.sessions };
}

/** A 2025-06-18 session that declared elicitation (as SDK clients do: `elicitation: {}`). */
async function elicitingSession(url: string, capabilities: Record<string, unknown> = { elicitation: {} }) {
    const initialize = initializeBody('2025-06-18');
    return openRawSession(url, '2025-06-18', {}, { initialize: { ...initialize, params: { ...initialize.params, capabilities } } });
}

function answerText(message: JsonRpcMessage): unknown {
    const [first] = (message.result?.['messages'] as { content: { text: string } }[] | undefined) ?? [];
    return first === undefined ? undefined : JSON.parse(first.content.text);
}

describe('asking a 2025 client over Streamable HTTP', () => {
    test("the question goes out on the get's own stream under a string id; the POSTed answer is taken (202) and ends the get", { timeout: 20_000 }, async t => {
        const gateway = await httpGateway(t);
        const session = await elicitingSession(gateway.url);
        const get = new SseReader(await post(gateway.url, { jsonrpc: '2.0', id: 7, method: 'prompts/get', params: { name: 'p' } }, session.headers));
        t.after(() => get.cancel());
        const question = await get.next();
        assert.deepEqual(question, {
            jsonrpc: '2.0',
            id: `${INSTANCE}.1`,
            method: 'elicitation/create',
            params: { message: 'Confirm?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }
        });
        const [{ input, control }] = gateway.seen as [Seen];
        assert.deepEqual(input?.capabilities, { elicitation: { form: {} } }, "the session's capabilities, normalised");
        assert.equal(input?.revision.version, '2025-06-18');
        assert.equal(input?.holder, '');
        assert.deepEqual(control.client?.capabilities, { elicitation: { form: {} } }, 'what a 2026-07-28 upstream is told this client can answer');
        const answered = await post(gateway.url, { jsonrpc: '2.0', id: question.id, result: ACCEPTED }, session.headers);
        assert.equal(answered.status, 202);
        assert.equal(answered.headers.get('mcp-session-id'), session.id);
        const answer = await get.next();
        assert.equal(answer.id, 7);
        assert.deepEqual(answerText(answer), { result: ACCEPTED });
        await get.closed();
    });

    test('a client that declared nothing is not asked: the catalog is told so, and its upstreams are told nothing', { timeout: 20_000 }, async t => {
        const gateway = await httpGateway(t);
        const session = await elicitingSession(gateway.url, {});
        const response = await post(gateway.url, { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'p' } }, session.headers);
        const [{ input, control }] = gateway.seen as [Seen];
        assert.deepEqual(input?.capabilities, {});
        assert.deepEqual(control.client?.capabilities, {});
        assert.equal(response.status, 200);
        const body = (await response.json()) as JsonRpcMessage;
        assert.equal(body.error?.code, -32603, 'the stand-in catalog does not turn the refusal into -32021 (the real one does)');
        assert.deepEqual(gateway.outcomes, ['rejected: The upstream asks for elicitation, which this client did not declare']);
    });

    test("responses: late ones of this instance 202, another replica's refused saying so (or handed over), others 400", { timeout: 20_000 }, async t => {
        const handed: [string, unknown][] = [];
        const routed = await httpGateway(t, (session, response) => handed.push([session.id, response.id]));
        const gateway = await httpGateway(t);
        for (const { url, replica } of [
            { url: gateway.url, replica: 421 },
            { url: routed.url, replica: 202 }
        ]) {
            const session = await elicitingSession(url);
            const respond = (id: unknown) => post(url, { jsonrpc: '2.0', id, result: ACCEPTED }, session.headers);
            const late = await respond(`${INSTANCE}.99`);
            assert.equal(late.status, 202, 'late: the gateway stopped waiting and said so');
            const elsewhere = await respond('Other001.1');
            assert.equal(elsewhere.status, replica);
            if (replica === 421) {
                const body = (await elsewhere.json()) as JsonRpcMessage;
                assert.match(body.error?.message ?? '', /another gateway replica/);
                assert.equal(body.id, null, 'the id is not echoed');
            } else assert.deepEqual(handed, [[session.id, 'Other001.1']]);
            for (const id of [5, 'not-ours']) {
                const stray = await respond(id);
                assert.equal(stray.status, 400, String(id));
                assert.equal(((await stray.json()) as JsonRpcMessage).error?.code, -32600);
            }
        }
    });

    test("a client gone while asked: the get's ticket ends the question; nothing is left out", { timeout: 20_000 }, async t => {
        const gateway = await httpGateway(t);
        const session = await elicitingSession(gateway.url);
        const stop = new AbortController();
        const get = new SseReader(await post(gateway.url, { jsonrpc: '2.0', id: 8, method: 'prompts/get', params: { name: 'p' } }, session.headers, { signal: stop.signal }));
        const question = await get.next();
        const held = gateway.sessions.get(session.id)!;
        assert.equal(held.asksOut, 1);
        stop.abort();
        await get.cancel();
        await gateway.asksEnded(1);
        assert.match(gateway.outcomes[0]!, /^rejected: /);
        assert.equal(held.asksOut, 0);
        const late = await post(gateway.url, { jsonrpc: '2.0', id: question.id, result: ACCEPTED }, session.headers);
        assert.equal(late.status, 202, 'its answer arriving after all is late, not an error');
    });

    test('the session closes here while its client is asked: the question fails, the client is told on the stream', { timeout: 20_000 }, async t => {
        const gateway = await httpGateway(t);
        const session = await elicitingSession(gateway.url);
        const get = new SseReader(await post(gateway.url, { jsonrpc: '2.0', id: 9, method: 'prompts/get', params: { name: 'p' } }, session.headers));
        t.after(() => get.cancel());
        const question = await get.next();
        gateway.sessions.close(session.id);
        await gateway.asksEnded(1);
        assert.equal(gateway.outcomes[0], 'rejected: The session ended before the client answered');
        const cancelled = await get.next(message => message.method === 'notifications/cancelled');
        assert.deepEqual(cancelled.params, { requestId: question.id, reason: 'The session ended before the client answered' });
    });
});

describe('a 2026-07-28 client over HTTP', () => {
    test('is never asked: the catalog gets what its _meta declares (normalised) and, for the anonymous client, its address to bind state to', { timeout: 20_000 }, async t => {
        const gateway = await httpGateway(t);
        const declared = { elicitation: {}, sampling: { tools: {} }, experimental: { x: {} } };
        const response = await postModern(gateway.url, 'prompts/get', { name: 'p', _meta: modernMeta('2026-07-28', declared) });
        assert.equal(response.status, 200, await response.text());
        const [{ input, control }] = gateway.seen as [Seen];
        assert.equal(input?.ask, undefined);
        assert.deepEqual(input?.capabilities, { elicitation: { form: {} }, sampling: { tools: {} } });
        assert.equal(input?.revision.version, '2026-07-28');
        assert.equal(input?.holder, '127.0.0.1');
        assert.deepEqual(control.client?.capabilities, { elicitation: {}, sampling: { tools: {} } }, 'relayed as declared, sub-settings and all');
    });
});

describe('asking a 2025 client over stdio', () => {
    test('the question is a line with a string id, the answer a line; a response to nothing writes nothing', { timeout: 20_000 }, async t => {
        const seen: Seen[] = [];
        const parts = downstreamParts(
            standInService(seen, () => {}),
            ASKING
        );
        const input = new PassThrough();
        const output = new PassThrough();
        const endpoint = startStdioEndpoint({ ...parts, client: ANONYMOUS, completions: () => false, maxLineBytes: 100_000, maxJsonDepth: () => 64, input, output });
        t.after(() => endpoint.close());
        t.after(() => input.end());
        const lines = createInterface({ input: output })[Symbol.asyncIterator]();
        const next = async () => JSON.parse(((await lines.next()).value as string | undefined) ?? 'null') as JsonRpcMessage;
        const send = (message: Record<string, unknown>) => input.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
        send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } } });
        assert.equal((await next()).id, 1);
        send({ method: 'notifications/initialized' });
        send({ id: 2, method: 'prompts/get', params: { name: 'p' } });
        const question = await next();
        assert.equal(question.method, 'elicitation/create');
        assert.equal(question.id, `${INSTANCE}.1`);
        assert.equal(question.params?.['mode'], undefined, '2025-06-18 has no mode');
        send({ id: 'not-a-question-of-the-gateway', result: { action: 'decline' } });
        send({ id: question.id, result: ACCEPTED });
        const answer = await next();
        assert.equal(answer.id, 2, `the next line answers the get: ${JSON.stringify(answer)}`);
        assert.deepEqual(answerText(answer), { result: ACCEPTED });
        send({ id: 3, method: 'ping' });
        assert.equal((await next()).id, 3, 'nothing was written for the stray response');
        assert.deepEqual(seen[0]?.control.client?.capabilities, { elicitation: { form: {} } });
    });
});
