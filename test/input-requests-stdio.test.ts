/**
 * Input requests across protocol eras (issue 28) over the gateway's stdio downstream (`node dist/cli.js --stdio`, one
 * gateway child per client, as MCP hosts run it): the rows of test/input-requests.test.ts with clients on stdio, and
 * the exact lines a 2025 client sees (a raw driver). Needs `npm run build` first.
 *
 * Upstreams of every gateway child: up26 and up25h (the interactive fixture over Streamable HTTP, one process per era
 * for the whole file, so two gateways' clients meet on them) and up25s (the fixture as each gateway's stdio child).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { closeAfter, connectHttp, ROOT, stopChild, waitFor, type TeardownScope } from './helpers.js';
import { modernMeta } from './raw-http.js';
import {
    ALICE,
    assertOwn,
    BOB,
    bothAtOnce,
    CAROL,
    connectInputClient,
    DAVE,
    INTERACTIVE_SERVER,
    interactiveStats,
    interactiveStdio,
    startInteractiveHttp,
    type FixtureAnswer,
    type InputClient,
    type InputClientOptions,
    type InteractiveFixture,
    type Target
} from './input-clients.js';

const fileTeardown: (() => unknown)[] = [];
const fileScope: TeardownScope = { after: fn => void fileTeardown.push(fn) };
let fx25: InteractiveFixture;
let fx26: InteractiveFixture;
/** The config every gateway child reads. */
let config: string;
/** The same without up25s, for the raw driver (one stdio child less to start). */
let httpOnlyConfig: string;
before(async () => {
    [fx25, fx26] = await Promise.all([startInteractiveHttp(fileScope, '2025'), startInteractiveHttp(fileScope, '2026-07-28')]);
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-input-stdio-'));
    closeAfter(fileScope, () => rm(dir, { recursive: true, force: true }));
    config = path.join(dir, 'gateway.json');
    const upstreams = [{ id: 'up26', transport: 'http', url: fx26.url }, { id: 'up25h', transport: 'http', url: fx25.url }, interactiveStdio('up25s')];
    await writeFile(config, JSON.stringify({ upstreams }));
    httpOnlyConfig = path.join(dir, 'gateway-http-only.json');
    await writeFile(httpOnlyConfig, JSON.stringify({ upstreams: upstreams.slice(0, 2) }));
});
after(async () => {
    for (const close of fileTeardown.reverse()) await close();
});

const gatewayChild = (): Target => ({ command: process.execPath, args: [path.join(ROOT, 'dist/cli.js'), '--stdio', '--config', config] });

/** A client of its own gateway child, once that gateway lists every upstream's prompts. */
async function throughGateway(t: TeardownScope, options: InputClientOptions): Promise<InputClient> {
    const client = await connectInputClient(t, gatewayChild(), options);
    const wanted = ['up26__confirm', 'up25h__confirm', 'up25s__confirm'];
    await waitFor(
        async () => {
            const names = await client.prompts();
            return wanted.every(name => names.includes(name));
        },
        30_000,
        "every upstream's prompts"
    );
    return client;
}

describe('the interactive fixture over stdio, without the gateway', () => {
    test('a 2025 server on stdio asks its client (SDK v1 and v2) while prompts/get is open', { timeout: 60_000 }, async t => {
        const fixture: Target = { command: process.execPath, args: [INTERACTIVE_SERVER, '--era', '2025'] };
        const [alice, bob] = await Promise.all([connectInputClient(t, fixture, ALICE), connectInputClient(t, fixture, BOB)]);
        for (const prompt of ['confirm', 'twice', 'all', 'url']) {
            assertOwn(await alice.get(prompt, { who: 'alice' }), alice, prompt);
            assertOwn(await bob.get(prompt, { who: 'bob' }), bob, prompt);
        }
    });
});

describe('through the gateway over stdio: every row', () => {
    // One gateway child per client, shared by the rows: carol and dave (2026-07-28), alice (v1) and bob (v2) (2025).
    const teardown: (() => unknown)[] = [];
    const scope: TeardownScope = { after: fn => void teardown.push(fn) };
    let modern: [InputClient, InputClient];
    let legacy: [InputClient, InputClient];
    before(async () => {
        const [carol, dave, alice, bob] = await Promise.all([CAROL, DAVE, ALICE, BOB].map(options => throughGateway(scope, options)));
        modern = [carol!, dave!];
        legacy = [alice!, bob!];
    });
    after(async () => {
        for (const close of teardown.reverse()) await close();
    });

    test('row A: carol and dave (2026-07-28, each its own gateway child) at once on a 2026-07-28 upstream', { timeout: 120_000 }, async () => {
        await bothAtOnce(...modern, 'up26__together', { n: '2' });
        for (const prompt of ['confirm', 'twice', 'all']) await bothAtOnce(...modern, `up26__${prompt}`);
    });

    test('rows B and C: alice (v1) and bob (v2), 2025 clients on stdio, asked on their own stdout, at once', { timeout: 120_000 }, async () => {
        for (const upstream of ['up26', 'up25h']) {
            await bothAtOnce(...legacy, `${upstream}__together`, { n: '2' });
            for (const prompt of ['confirm', 'twice']) await bothAtOnce(...legacy, `${upstream}__${prompt}`);
        }
        await bothAtOnce(...legacy, 'up26__all');
        for (const prompt of ['confirm', 'twice']) await bothAtOnce(...legacy, `up25s__${prompt}`);
    });

    test("row D: carol and dave (2026-07-28) get a 2025 upstream's question as input_required and answer it on the retry", { timeout: 120_000 }, async () => {
        await bothAtOnce(...modern, 'up25h__together', { n: '2' });
        for (const upstream of ['up25h', 'up25s']) for (const prompt of ['confirm', 'twice']) await bothAtOnce(...modern, `${upstream}__${prompt}`);
    });
});

interface Line {
    jsonrpc: '2.0';
    id?: string | number;
    method?: string;
    params?: Record<string, unknown>;
    result?: Record<string, unknown>;
    error?: { code: number; message: string };
}

/** The gateway child driven by hand: lines written to its stdin, lines read from its stdout in order. */
function rawGateway(t: TeardownScope) {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist/cli.js'), '--stdio', '--config', httpOnlyConfig], { cwd: ROOT, stdio: ['pipe', 'pipe', 'ignore'] });
    closeAfter(t, () => stopChild(child));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const lines: Line[] = [];
    const waiters: (() => void)[] = [];
    createInterface({ input: child.stdout }).on('line', line => {
        lines.push(JSON.parse(line) as Line);
        for (const wake of waiters.splice(0)) wake();
    });
    let read = 0;
    return {
        send: (message: Record<string, unknown>) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`),
        /** The next line not read yet. */
        next: async (): Promise<Line> => {
            while (lines.length <= read) await new Promise<void>(resolve => waiters.push(resolve));
            return lines[read++]!;
        },
        /** Closes its stdin, as a host does when it is done; resolves with the exit code. */
        end: async (): Promise<number | null> => {
            child.stdin.end();
            return (await exited)[0];
        }
    };
}

/** Sends prompts/list until `name` is listed (the upstreams connect in the background), each list read from its own line. */
async function untilListed(gateway: ReturnType<typeof rawGateway>, name: string, meta?: Record<string, unknown>): Promise<void> {
    for (let id = 100; ; id++) {
        gateway.send({ id, method: 'prompts/list', params: meta === undefined ? {} : { _meta: meta } });
        const listed = await gateway.next();
        if ((listed.result?.['prompts'] as { name: string }[] | undefined)?.some(prompt => prompt.name === name)) return;
    }
}

describe('through the gateway over stdio: the lines a 2025 client sees', () => {
    test('the question is one line with a string id; the answer is taken from stdin; a response to an unknown id writes nothing', { timeout: 60_000 }, async t => {
        const gateway = rawGateway(t);
        gateway.send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } } });
        assert.equal((await gateway.next()).id, 1);
        gateway.send({ method: 'notifications/initialized' });
        // Wait until the upstream is there (its prompt listed), each list read from the line it answers.
        for (let id = 100; ; id++) {
            gateway.send({ id, method: 'prompts/list' });
            const listed = await gateway.next();
            if ((listed.result?.['prompts'] as { name: string }[] | undefined)?.some(prompt => prompt.name === 'up25h__confirm')) break;
        }
        gateway.send({ id: 2, method: 'prompts/get', params: { name: 'up25h__confirm', arguments: { who: 'raw' } } });
        const question = await gateway.next();
        assert.equal(question.method, 'elicitation/create', JSON.stringify(question));
        assert.equal(typeof question.id, 'string');
        assert.deepEqual(Object.keys(question).sort(), ['id', 'jsonrpc', 'method', 'params']);
        assert.equal(question.params?.['message'], 'Confirm for raw?');
        assert.equal(question.params?.['mode'], undefined, '2025-06-18 has no mode');
        gateway.send({ id: 'not-a-question-of-the-gateway', result: { action: 'accept', content: { ok: true, by: 'nobody' } } });
        gateway.send({ id: question.id, result: { action: 'accept', content: { ok: true, by: 'raw' } } });
        const answer = await gateway.next();
        assert.equal(answer.id, 2, `the next line answers the get (nothing for the unknown id): ${JSON.stringify(answer)}`);
        const text = (answer.result?.['messages'] as { content: { text: string } }[] | undefined)?.[0]?.content.text ?? '';
        assert.deepEqual((JSON.parse(text) as FixtureAnswer).answers, { ok: { action: 'accept', content: { ok: true, by: 'raw' } } });
        gateway.send({ id: 3, method: 'ping' });
        assert.equal((await gateway.next()).id, 3, 'nothing was written for the unknown id');
    });

    test("stopped while it holds a 2025 upstream's question for a 2026-07-28 client: the upstream's request is refused and cancelled", { timeout: 60_000 }, async t => {
        const gateway = rawGateway(t);
        const meta = modernMeta('2026-07-28', { elicitation: { form: {} } });
        await untilListed(gateway, 'up25h__confirm', meta);
        gateway.send({ id: 2, method: 'prompts/get', params: { name: 'up25h__confirm', arguments: { who: 'held-at-shutdown' }, _meta: meta } });
        const held = await gateway.next();
        assert.equal(held.result?.['resultType'], 'input_required', JSON.stringify(held));
        assert.equal(await gateway.end(), 0);
        // Nobody can retry into a stopped gateway: the upstream hears so at once rather than waiting out its own timeout.
        const fixture = await connectHttp(fx25.url);
        closeAfter(t, () => fixture.close());
        const { errors } = await interactiveStats(fixture);
        assert.deepEqual(
            errors.filter(error => error.startsWith('confirm held-at-shutdown: ')),
            ['confirm held-at-shutdown: The client cannot answer elicitation/create'],
            JSON.stringify(errors)
        );
    });
});
