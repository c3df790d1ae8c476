/**
 * What applies to every prompt file applies to every format (issue 26, item 6): one gateway serves a real folder
 * of each format (claude-commands, codex-prompts, vscode-prompts, gemini-commands, skills) to clients of both
 * eras, with API keys. Per format: a client's allow-list hides one prompt (hidden is missing: the same error as an
 * unknown name), an override renames, retitles and redescribes one, completions answer, live reload tells exactly
 * the clients whose list changed (an edit of a hidden prompt tells only the client that sees it; a touch that
 * changes nothing tells nobody), and the metrics count each format's upstream. "Nothing was sent" is asserted once
 * every notification the gateway sent has arrived (notificationsSettled), after another client heard the change.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, connectModernHttp, listAllPages, notificationsSettled, rpcError, startTestGateway } from './helpers.js';
import { sampleList, scrape, value } from './prometheus.js';

const keyOf = (clientId: string) => `key-of-${clientId}-0123456789abcdef`;
const bearer = (clientId: string) => ({ authorization: `Bearer ${keyOf(clientId)}` });
const METRICS_TOKEN = 'operator-token-0123456789abcdef';

/** How one format writes a prompt with a description and one argument, and what the gateway makes of it. */
interface Format {
    id: string;
    format: string;
    /** The file a prompt called `name` is kept in, below the folder (in a subfolder where the format allows one). */
    file: (name: string) => string;
    content: (description: string) => string;
    /** What the upstream lists the prompt as. */
    listed: (name: string) => string;
    argument: string;
}

const FORMATS: Format[] = [
    {
        id: 'claude',
        format: 'claude-commands',
        file: name => `team/${name}.md`,
        content: description => `---\ndescription: ${description}\nargument-hint: [target]\n---\nWork on $1.\n`,
        listed: name => name,
        argument: 'target'
    },
    {
        id: 'codex',
        format: 'codex-prompts',
        file: name => `${name}.md`,
        content: description => `---\ndescription: ${description}\n---\nWork on $TARGET.\n`,
        listed: name => name,
        argument: 'TARGET'
    },
    {
        id: 'vscode',
        format: 'vscode-prompts',
        file: name => `prompts/${name}.prompt.md`,
        content: description => `---\ndescription: ${description}\n---\nWork on \${input:target:What to work on}.\n`,
        listed: name => name,
        argument: 'target'
    },
    {
        id: 'gemini',
        format: 'gemini-commands',
        file: name => `team/${name}.toml`,
        content: description => `description = "${description}"\nprompt = "Work on {{args}}."\n`,
        listed: name => `team.${name}`,
        argument: 'args'
    },
    {
        id: 'skills',
        format: 'skills',
        file: name => `${name}/SKILL.md`,
        content: description => `---\ndescription: ${description}\n---\nWork on $ARGUMENTS.\n`,
        listed: name => name,
        argument: 'arguments'
    }
];

/** Each folder holds these prompts: one edited, one hidden from the narrow client, one touched, one overridden. */
const PROMPTS = ['edited', 'hidden', 'touched', 'renamed'];
const exposed = (format: Format, name: string) => `${format.id}__${format.listed(name)}`;

/** Written beside it under a name the scan leaves out, then renamed over it: a reader never sees half a file. */
async function replaceFile(file: string, text: string): Promise<void> {
    const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
    await writeFile(temporary, text);
    await rename(temporary, file);
}

/** A client and the list_changed notifications it has heard. */
interface Heard {
    client: Client;
    count: number;
    /** Resolves once `count` has reached `total`. */
    reached(total: number): Promise<void>;
}

function hear(client: Client): Heard {
    const waiting = new Set<{ total: number; resolve: () => void }>();
    const heard: Heard = {
        client,
        count: 0,
        reached: total => (heard.count >= total ? Promise.resolve() : new Promise(resolve => waiting.add({ total, resolve })))
    };
    client.setNotificationHandler('notifications/prompts/list_changed', () => {
        heard.count++;
        for (const waiter of waiting) {
            if (heard.count < waiter.total) continue;
            waiting.delete(waiter);
            waiter.resolve();
        }
    });
    return heard;
}

/** The error with the requested name taken out: what tells a hidden prompt from a missing one, if anything does. */
async function shapeOf(request: Promise<unknown>, name: string): Promise<{ code: number; message: string }> {
    const error = await rpcError(request);
    return { code: error.code, message: error.message.split(name).join('<name>') };
}

describe('every format: allow-lists, overrides, completions, live reload and metrics', { timeout: 300_000 }, () => {
    const folders = new Map<string, string>();
    let root: string;
    let gateway: RunningGateway;
    let wide: Heard;
    let narrow: Heard;
    let modern: Heard;
    let closeListen: () => Promise<void> = () => Promise.resolve();
    const heardBy = () => [wide.count, narrow.count, modern.count];
    const settled = () => notificationsSettled(gateway, () => wide.count + narrow.count + modern.count);

    before(async () => {
        root = await mkdtemp(path.join(tmpdir(), 'prompt-formats-features-'));
        for (const format of FORMATS) {
            const folder = path.join(root, format.id);
            folders.set(format.id, folder);
            for (const name of PROMPTS) {
                const file = path.join(folder, format.file(name));
                await mkdir(path.dirname(file), { recursive: true });
                await writeFile(file, format.content(`The ${name} prompt`));
            }
        }
        gateway = await startTestGateway({
            auth: { mode: 'apiKey' },
            metrics: { bearerToken: METRICS_TOKEN },
            notifications: { debounceMs: 50, maxDelayMs: 500 },
            limits: { rateLimit: { requestsPerSecond: 0, burst: 1 } },
            clients: [
                { id: 'wide', apiKey: keyOf('wide') },
                { id: 'narrow', apiKey: keyOf('narrow'), prompts: { deny: FORMATS.map(format => exposed(format, 'hidden')) } }
            ],
            upstreams: FORMATS.map(format => ({
                id: format.id,
                transport: 'files',
                path: folders.get(format.id),
                format: format.format,
                overrides: { [format.listed('renamed')]: { name: `${format.id}-overridden`, title: `Overridden ${format.id}`, description: 'Described by the gateway' } }
            }))
        });
        wide = hear(await connectHttp(gateway.url!, { headers: bearer('wide') }));
        narrow = hear(await connectHttp(gateway.url!, { headers: bearer('narrow') }));
        modern = hear(await connectModernHttp(gateway.url!, { headers: bearer('narrow') }));
        const subscription = await modern.client.listen({ promptsListChanged: true });
        closeListen = () => subscription.close();
    });

    after(async () => {
        await closeListen();
        await Promise.all([wide, narrow, modern].map(heard => heard?.client.close()));
        await gateway?.close();
        await rm(root, { recursive: true, force: true });
    });

    test("each format's prompts are listed; a client's allow-list hides one of each, and hidden is missing", async () => {
        const everything = FORMATS.flatMap(format => ['edited', 'hidden', 'touched'].map(name => exposed(format, name)).concat(`${format.id}__${format.id}-overridden`)).sort();
        assert.deepEqual((await listAllPages(wide.client)).names.sort(), everything);
        const visible = everything.filter(name => !name.endsWith('hidden'));
        assert.deepEqual((await listAllPages(narrow.client)).names.sort(), visible);
        assert.deepEqual((await listAllPages(modern.client)).names.sort(), visible);

        for (const format of FORMATS) {
            const hidden = exposed(format, 'hidden');
            const unknown = `${format.id}__no-such-prompt`;
            const args = { [format.argument]: 'x' };
            assert.match((await wide.client.getPrompt({ name: hidden, arguments: args })).messages[0]?.content.type ?? '', /^text$/, 'the wide client gets it');
            for (const client of [narrow.client, modern.client]) {
                assert.deepEqual(
                    await shapeOf(client.getPrompt({ name: hidden, arguments: args }), hidden),
                    await shapeOf(client.getPrompt({ name: unknown, arguments: args }), unknown)
                );
                const complete = (name: string) => client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: format.argument, value: '' } });
                assert.deepEqual(await shapeOf(complete(hidden), hidden), await shapeOf(complete(unknown), unknown), `${format.id}: completing a hidden prompt`);
            }
        }
    });

    test('an override renames, retitles and redescribes a prompt of each format; the old name is unknown', async () => {
        const listed = (await wide.client.listPrompts()).prompts;
        for (const format of FORMATS) {
            const name = `${format.id}__${format.id}-overridden`;
            const prompt = listed.find(candidate => candidate.name === name);
            assert.deepEqual(
                [prompt?.title, prompt?.description, prompt?.arguments?.map(argument => argument.name)],
                [`Overridden ${format.id}`, 'Described by the gateway', [format.argument]],
                format.id
            );
            const got = await wide.client.getPrompt({ name, arguments: { [format.argument]: 'the parser' } });
            assert.deepEqual(got.messages, [{ role: 'user', content: { type: 'text', text: 'Work on the parser.' } }], format.id);
            const old = exposed(format, 'renamed');
            assert.deepEqual(
                await shapeOf(wide.client.getPrompt({ name: old }), old),
                await shapeOf(wide.client.getPrompt({ name: `${format.id}__no-such` }), `${format.id}__no-such`)
            );
        }
    });

    test('completions: no format declares values, so an argument of each completes to nothing, not to an error', async () => {
        for (const format of FORMATS) {
            for (const client of [wide.client, modern.client]) {
                const completed = await client.complete({ ref: { type: 'ref/prompt', name: exposed(format, 'edited') }, argument: { name: format.argument, value: 'p' } });
                assert.deepEqual(completed.completion.values, [], format.id);
            }
        }
    });

    for (const format of FORMATS) {
        test(`${format.format}: an edit tells exactly the clients that see the prompt, a touch tells nobody, the lists follow`, async () => {
            const folder = folders.get(format.id)!;
            const descriptionOf = async (client: Client, name: string) => (await client.listPrompts()).prompts.find(prompt => prompt.name === name)?.description;
            const received = async () =>
                value(await scrape(gateway.operatorUrls.metrics!, { authorization: `Bearer ${METRICS_TOKEN}` }), 'mcp_gateway_list_changed_received_total', {
                    upstream: format.id
                });
            const receivedBefore = await received();
            await settled();
            const [w0, n0, m0] = heardBy() as [number, number, number];

            // The hidden prompt edited: only the wide client sees it change.
            await replaceFile(path.join(folder, format.file('hidden')), format.content('Hidden, edited'));
            await wide.reached(w0 + 1);
            await settled();
            assert.deepEqual(heardBy(), [w0 + 1, n0, m0], 'the narrow clients (both eras) hear nothing of a prompt they do not see');
            assert.equal(await descriptionOf(wide.client, exposed(format, 'hidden')), 'Hidden, edited');

            // A touch (no change) and, after it, an edit only the wide client sees: once the wide client has heard
            // of the edit, the touch has been read too; the narrow clients, who see the touched prompt, hear nothing.
            const touched = path.join(folder, format.file('touched'));
            const later = new Date((await stat(touched)).mtimeMs + 60_000);
            await utimes(touched, later, later);
            await replaceFile(path.join(folder, format.file('hidden')), format.content('Hidden, edited twice'));
            await wide.reached(w0 + 2);
            await settled();
            assert.deepEqual(heardBy(), [w0 + 2, n0, m0], 'a touch that changes nothing is announced to nobody');

            // An edit every client sees: each hears of it once, and lists the change.
            await replaceFile(path.join(folder, format.file('edited')), format.content('Edited'));
            await Promise.all([wide.reached(w0 + 3), narrow.reached(n0 + 1), modern.reached(m0 + 1)]);
            await settled();
            assert.deepEqual(heardBy(), [w0 + 3, n0 + 1, m0 + 1], 'one notification each');
            for (const client of [wide.client, narrow.client, modern.client]) assert.equal(await descriptionOf(client, exposed(format, 'edited')), 'Edited');
            assert.ok((await received()) > receivedBefore, 'the upstream announced its change (mcp_gateway_list_changed_received_total)');
        });
    }

    test("metrics count each format's upstream: up, its prompts, gets and completions by exposed name, denials", async () => {
        const metricsOf = () => scrape(gateway.operatorUrls.metrics!, { authorization: `Bearer ${METRICS_TOKEN}` });
        const gets = (families: Awaited<ReturnType<typeof metricsOf>>, labels: Record<string, string>) =>
            sampleList(families, 'mcp_gateway_prompt_gets_total')
                .filter(sample => Object.entries(labels).every(([label, wanted]) => sample.labels[label] === wanted))
                .reduce((sum, sample) => sum + sample.value, 0);
        const before = await metricsOf();
        for (const format of FORMATS) {
            await wide.client.getPrompt({ name: exposed(format, 'edited'), arguments: { [format.argument]: 'x' } });
            await rpcError(narrow.client.getPrompt({ name: exposed(format, 'hidden') }));
            await wide.client.complete({ ref: { type: 'ref/prompt', name: exposed(format, 'edited') }, argument: { name: format.argument, value: '' } });
        }
        const now = await metricsOf();
        for (const format of FORMATS) {
            assert.equal(value(now, 'mcp_gateway_upstream_up', { upstream: format.id }), 1, format.id);
            assert.equal(value(now, 'mcp_gateway_upstream_prompts', { upstream: format.id }), PROMPTS.length, format.id);
            const ok = { upstream: format.id, prompt: exposed(format, 'edited'), client: 'wide', outcome: 'ok' };
            assert.equal(gets(now, ok) - gets(before, ok), 1, `${format.id}: a get`);
            const denied = { upstream: format.id, prompt: exposed(format, 'hidden'), client: 'narrow', outcome: 'denied' };
            assert.equal(gets(now, denied) - gets(before, denied), 1, `${format.id}: a denied get`);
            const completion = { upstream: format.id, prompt: exposed(format, 'edited'), outcome: 'ok' };
            assert.equal(value(now, 'mcp_gateway_completions_total', completion) - value(before, 'mcp_gateway_completions_total', completion), 1, `${format.id}: a completion`);
        }
    });
});
